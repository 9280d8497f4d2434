import type { z } from 'zod';
import type { MuxName, MuxPort } from '../mux/index.js';
import type { OperationOptions, PaneId, Server } from '../tmux/index.js';
import type { CaptureStore } from './captures.js';
import type { HostAccess } from './hosts.js';
import type { Tier, ToolGroup } from './policy.js';

/** What every tool call gets: the multiplexer (as a port, and on tmux the borrowed server), retained captures, its deadline. */
export interface ToolContext {
  /** The multiplexer this MCP server drives. */
  readonly mux: MuxName;
  /**
   * The borrowed tmux server. On another multiplexer, and for a tool that runs without one
   * (`needsServer: false`), reading it throws why there is none.
   */
  readonly server: Server;
  /** The panes through the mux port: on tmux over the borrowed server. */
  readonly port: MuxPort;
  readonly captures: CaptureStore;
  /** The pane this MCP server runs in, when it runs inside a pane of the multiplexer it drives. */
  readonly selfPane: string | undefined;
  /** The request's deadline in milliseconds; waits are clamped to it. */
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
  /** The deadline and signal as tmux operations take them. */
  readonly operation: OperationOptions;
  readonly env: NodeJS.ProcessEnv;
  /** The other machines a call may name panes on. */
  readonly hosts: HostAccess;
}

/**
 * A tool's input is a strict object (an argument the schema does not name is refused, never
 * dropped), and its output schema is strict all the way down, so a result key the schema
 * lacks fails the server's own check before any client sees it.
 */
export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly tier: Tier;
  readonly group: ToolGroup;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  /**
   * The panes whose screens the call reads through capture-pane, or 'all': the call is refused
   * while a capture hook is set where those captures would find it.
   */
  readonly screens?: (input: z.infer<I>) => readonly PaneId[] | 'all';
  /** The tool answers without a tmux server (it reports on one when there is one). */
  readonly needsServer?: false;
  /**
   * The call reaches other machines (a pane on a host, or all hosts): it runs without this
   * machine's server when there is none, and the capture-hook check is then skipped, as no
   * screen here is read.
   */
  readonly elsewhere?: (input: z.infer<I>) => boolean;
  /**
   * The tool reaches panes only through the mux port, so it is offered on every multiplexer.
   * Without it the tool is a tmux-library tool (options, hooks, buffers, environment, tmux's
   * sessions and windows), offered on tmux only.
   */
  readonly everyMux?: true;
  run(context: ToolContext, input: z.infer<I>): Promise<z.infer<O>>;
}

/** Declares a tool with its input and output schemas; the result type follows the output schema. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(definition: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return Object.freeze(definition);
}
