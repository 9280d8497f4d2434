import type { z } from 'zod';
import type { OperationOptions, PaneId, Server } from '../tmux/index.js';
import type { CaptureStore } from './captures.js';
import type { Tier } from './policy.js';

/** What every tool call gets: the borrowed server, retained captures, its deadline. */
export interface ToolContext {
  readonly server: Server;
  readonly captures: CaptureStore;
  /** The pane this MCP server runs in, when it runs inside a pane of the same server. */
  readonly selfPane: PaneId | undefined;
  /** The request's deadline in milliseconds; waits are clamped to it. */
  readonly deadlineMs: number;
  readonly signal: AbortSignal;
  /** The deadline and signal as tmux operations take them. */
  readonly operation: OperationOptions;
  readonly env: NodeJS.ProcessEnv;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly tier: Tier;
  readonly title: string;
  readonly description: string;
  readonly input: I;
  readonly output: O;
  run(context: ToolContext, input: z.infer<I>): Promise<z.infer<O>>;
}

/** Declares a tool with its input and output schemas; the result type follows the output schema. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(definition: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return Object.freeze(definition);
}
