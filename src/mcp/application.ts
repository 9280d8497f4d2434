import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createMuxPort, invokingPane, MuxError, TmuxAdapter, type MuxName, type MuxPort } from '../mux/index.js';
import { failureCode, type FailureCode } from '../panes/index.js';
import { HostCallError, UnknownHostError } from '../hosts/index.js';
import { AbortedError, ArgumentError, DroverError, NotFoundError, TimeoutError } from '../process/index.js';
import { isPaneId, requireNoCaptureHook, type OperationOptions, type PaneId, type Server } from '../tmux/index.js';
import { CaptureStore, DEFAULT_CAPTURE_LIMITS, type CaptureLimits } from './captures.js';
import { HostAnsweredError, NO_HOSTS, type HostAccess } from './hosts.js';
import type { CatalogEntry, ToolPolicy } from './policy.js';
import type { StdioLimits } from './stdio.js';
import { CAPABILITIES_TOOL, capabilitiesTool } from './tools/capabilities.js';
import type { ToolContext, ToolDefinition } from './tool.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
export const DEFAULT_RESPONSE_BYTES = 1024 * 1024;
/**
 * The least response bound under which a tool that changes things is offered: its result or
 * its error, with the evidence of what it did, must always fit.
 */
export const MUTATION_EVIDENCE_BYTES = 4096;

/**
 * The multiplexer the tools drive. On tmux: the borrowed server, or how to borrow it (then the
 * first call that needs it opens it, and until that succeeds each call reports why: no server
 * running yet); every tool is offered. On herdr or zellij: a port on it, and only the tools
 * that reach panes through the port are offered. The application never starts or kills a
 * server, and never closes the port it was given.
 */
export type ApplicationBackend = { server: Server | (() => Promise<Server>); port?: never } | { port: MuxPort; server?: never };

export type ApplicationOptions = ApplicationBackend & ApplicationSettings;

export interface ApplicationSettings {
  tools: readonly ToolDefinition[];
  policy: ToolPolicy;
  /** Per-request deadline; waits are clamped to it. */
  requestTimeoutMs?: number;
  /** Largest serialized result a tool may return; at least 4096 when a tool that changes things is enabled. */
  responseBytes?: number;
  /**
   * How much of a request's deadline is left when its handler starts (the transport counts the
   * time it waited for a turn); the request deadline alone when undefined.
   */
  remainingMs?: (requestId: string | number) => number | undefined;
  /** The stdio bounds the application is served under, for the capabilities tool to report. */
  stdioLimits?: StdioLimits;
  captureLimits?: CaptureLimits;
  /** The environment the server runs in ($TMUX, $TMUX_PANE identify its own pane). */
  env?: NodeJS.ProcessEnv;
  version?: string;
  /** What a call says when the multiplexer cannot be reached (the error says how): which server, and what to do. */
  describeUnreachable?: (error: unknown) => string;
  /** The other machines the pane tools may reach (`HOST::PANE`, all_hosts); none when absent. */
  hosts?: HostAccess;
}

/**
 * Tier and group of every tool a server with these tools offers, for the policy: the
 * capabilities tool, which every server has, and then the tools given.
 */
export function toolCatalog(tools: readonly ToolDefinition[]): Map<string, CatalogEntry> {
  return new Map<string, CatalogEntry>([[CAPABILITIES_TOOL, { tier: 'readonly', group: 'core' }], ...tools.map((t): [string, CatalogEntry] => [t.name, { tier: t.tier, group: t.group }])]);
}

/**
 * The pane this process runs in, if it is a pane of the bound server: $TMUX names that
 * server (its socket through whichever path, and its pid) and $TMUX_PANE is a pane id.
 */
export async function selfPaneOf(server: Server, env: NodeJS.ProcessEnv, options: OperationOptions = {}): Promise<PaneId | undefined> {
  const pane = env.TMUX_PANE;
  if (pane === undefined || !isPaneId(pane)) return undefined;
  return (await server.hosts(env, options)) ? pane : undefined;
}

/** Why a tmux-library tool cannot run on another multiplexer, naming what is missing. */
export function tmuxLibraryRefusal(mux: MuxName, what = 'this tool'): MuxError {
  return new MuxError(mux, `${what} needs the tmux library (tmux options, hooks, buffers, environment, sessions and windows), and ${mux} has none: it is offered on tmux only`, {
    reason: 'unsupported',
    phase: 'validate',
    delivery: 'not_sent',
  });
}

/** Whether a tool is offered on this multiplexer: a tmux-library tool only on tmux. */
export function offeredOn(mux: MuxName, tool: Pick<ToolDefinition, 'everyMux'>): boolean {
  return mux === 'tmux' || tool.everyMux === true;
}

/**
 * What an error result says for failures whose own message would carry the multiplexer's
 * output or the caller's input back (tmux's stderr, the target as typed): a fixed sentence instead.
 */
function fixedMessages(mux: MuxName): Partial<Record<FailureCode, string>> {
  return {
    not_found: `not found: no such session, window or pane on this ${mux} server`,
    pane_not_found: `not found: no such pane on this ${mux} server`,
    tmux_failed: 'tmux refused the command',
    server_replaced: `the pane belongs to another run of the ${mux} server than the one answering (a server restarted), or to another multiplexer, so nothing was done: a pane key of an earlier run names no pane any more, and if the server this MCP server bound was itself replaced, restart drover mcp to use the new one`,
  };
}

/** As fixedMessages, for the codes a host's pane command fails with. */
const FIXED_ON_HOST: Readonly<Record<string, string>> = {
  not_found: 'not found: no such pane there',
  pane_not_found: 'not found: no such pane there',
  tmux_failed: 'tmux refused the command',
  server_replaced: 'the pane key names a pane of another run of the multiplexer there (its server restarted since the key was read), so nothing was done: read the pane map again',
};

/**
 * The error document of a call on another host's pane that failed: the host's own code (its
 * messages fixed as this machine's are, naming the host), or why the host gave no answer.
 */
function hostErrorOf(error: unknown): Record<string, unknown> | undefined {
  if (error instanceof UnknownHostError) return { code: 'not_found', message: error.message, phase: error.phase, delivery: error.delivery, host: error.host };
  if (error instanceof HostCallError) return { code: error.code, message: error.message, phase: error.phase, ...error.details, host: error.host };
  if (!(error instanceof HostAnsweredError)) return undefined;
  const { code, message } = error.body;
  return { ...error.body, code, message: `on ${error.host}: ${FIXED_ON_HOST[code] ?? message}`, host: error.host };
}

/**
 * A failed call as its result: the JSON document `{"error": {code, message, phase, delivery}}`
 * with a stable `code`, as its text. Not as structuredContent: clients check that against the
 * tool's output schema even on errors. Anything drover did not raise itself is reported by its
 * code alone, as its message may hold anything.
 */
function errorResult(error: unknown, mux: MuxName, describeUnreachable: (error: unknown) => string): CallToolResult {
  const host = hostErrorOf(error);
  if (host !== undefined) return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: host }) }] };
  const code = failureCode(error);
  const message =
    code === 'unreachable'
      ? describeUnreachable(error)
      : // An id drover could not find is named in drover's own words, not tmux's: its message stays.
        ((error instanceof NotFoundError ? undefined : fixedMessages(mux)[code]) ?? (error instanceof DroverError ? error.message : 'the tool failed unexpectedly'));
  const context = error instanceof DroverError ? { phase: error.phase, delivery: error.delivery } : {};
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, ...context } }) }] };
}

/**
 * The MCP application: the tools the policy allows and the multiplexer offers (and only those)
 * registered on an SDK server, each with input and output schemas, a deadline, a response
 * bound and structured results. Closing releases retained captures, not the borrowed tmux
 * server or port.
 */
export class Application {
  readonly mcp: McpServer;
  readonly captures: CaptureStore;
  readonly policy: ToolPolicy;
  readonly mux: MuxName;
  private readonly options: ApplicationOptions;
  /** The server once borrowed (or being borrowed); cleared when borrowing failed, so the next call tries again. */
  private binding: Promise<Server> | undefined;

  constructor(options: ApplicationOptions) {
    this.options = options;
    this.policy = options.policy;
    this.mux = options.port?.mux ?? 'tmux';
    const tools = [this.capabilities(), ...options.tools.filter((tool) => offeredOn(this.mux, tool))];
    const responseBytes = options.responseBytes ?? DEFAULT_RESPONSE_BYTES;
    const changing = tools.filter((tool) => tool.tier !== 'readonly' && this.policy.allows(tool.name)).map((tool) => tool.name);
    if (responseBytes < MUTATION_EVIDENCE_BYTES && changing.length > 0) {
      throw new ArgumentError(
        `a response bound of ${responseBytes} bytes leaves no room for the evidence of what a change did: tools that change things (${changing.join(', ')}) need at least ${MUTATION_EVIDENCE_BYTES}`,
      );
    }
    this.captures = new CaptureStore(options.captureLimits ?? DEFAULT_CAPTURE_LIMITS);
    this.mcp = new McpServer(
      { name: 'drover', version: options.version ?? '0.0.0' },
      {
        instructions:
          (this.mux === 'tmux'
            ? 'drover drives coding agents in tmux panes. Ids: $session, @window, %pane.'
            : `drover drives coding agents in ${this.mux} panes; tmux-library tools (options, buffers, environment, sessions and windows) are not offered here.`) +
          ' Every pane row carries pane_key (its id and the server run it lives on): name panes by it, since a key of a restarted server is refused rather than acted on. A pane on another host of drover host list is HOST::ID (gpu::%3) or its key from pane_map with all_hosts. Only the tools the operator enabled are present: call capabilities to see which groups are on and what enables the others. Typing tools report dispatch, not what the program did: capture, wait_for_text or deliver (verified) tell you more.',
      },
    );
    for (const tool of tools) if (tool.name === CAPABILITIES_TOOL || this.policy.allows(tool.name)) this.register(tool);
  }

  private capabilities(): ToolDefinition {
    const options = this.options;
    return capabilitiesTool(() => ({
      version: options.version ?? '0.0.0',
      policy: this.policy,
      catalog: toolCatalog(options.tools.filter((tool) => offeredOn(this.mux, tool))),
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      responseBytes: options.responseBytes ?? DEFAULT_RESPONSE_BYTES,
      mutationEvidenceBytes: MUTATION_EVIDENCE_BYTES,
      captureLimits: options.captureLimits ?? DEFAULT_CAPTURE_LIMITS,
      stdio: options.stdioLimits,
    }));
  }

  /** The borrowed tmux server, opened by the first call that needs it; on another multiplexer, a refusal. */
  server(): Promise<Server> {
    const source = this.options.server;
    if (source === undefined) return Promise.reject(tmuxLibraryRefusal(this.mux));
    if (typeof source !== 'function') return Promise.resolve(source);
    this.binding ??= source().catch((error: unknown) => {
      this.binding = undefined;
      throw error;
    });
    return this.binding;
  }

  /** The context a call runs with; a tool that needs no server gets one whose server says why there is none. */
  private async context(tool: ToolDefinition, deadlineMs: number, signal: AbortSignal, elsewhere: boolean): Promise<{ context: ToolContext; borrowed: boolean }> {
    const env = this.options.env ?? process.env;
    const operation = { timeoutMs: deadlineMs, signal };
    const base = { mux: this.mux, captures: this.captures, deadlineMs, signal, operation, env, hosts: this.options.hosts ?? NO_HOSTS };
    const port = this.options.port;
    if (port !== undefined) {
      const context = {
        ...base,
        port,
        selfPane: invokingPane(port.mux, env),
        get server(): Server {
          throw tmuxLibraryRefusal(port.mux);
        },
      };
      return { context, borrowed: true };
    }
    let server: Server;
    try {
      server = await this.server();
    } catch (error) {
      if (tool.needsServer !== false && !elsewhere) throw error;
      const context = {
        ...base,
        selfPane: undefined,
        get server(): Server {
          throw error;
        },
        get port(): MuxPort {
          throw error;
        },
      };
      return { context, borrowed: false };
    }
    // The pane tools reach tmux through the mux port too, over the borrowed server: a pane key
    // of another run of that server is refused by the port, never acted on.
    return { context: { ...base, server, port: createMuxPort(new TmuxAdapter({ server })), selfPane: await selfPaneOf(server, env, operation) }, borrowed: true };
  }

  private register(tool: ToolDefinition): void {
    const requestTimeoutMs = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const responseBytes = this.options.responseBytes ?? DEFAULT_RESPONSE_BYTES;
    const describeUnreachable = this.options.describeUnreachable ?? (() => `the ${this.mux} server is not running`);
    this.mcp.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        // An argument the schema does not name is refused, not dropped.
        inputSchema: tool.input.strict(),
        outputSchema: tool.output,
        annotations: { readOnlyHint: tool.tier === 'readonly', destructiveHint: tool.tier === 'destructive', openWorldHint: false },
      },
      (async (input: unknown, extra: { signal: AbortSignal; requestId: string | number }) => {
        const deadlineMs = Math.max(1, Math.min(requestTimeoutMs, this.options.remainingMs?.(extra.requestId) ?? requestTimeoutMs));
        const deadline = AbortSignal.timeout(deadlineMs);
        const signal = AbortSignal.any([extra.signal, deadline]);
        try {
          const { context, borrowed } = await this.context(tool, deadlineMs, signal, tool.elsewhere?.(input as never) === true);
          // A capture hook is tmux's: elsewhere reading a screen runs nothing of the user's.
          if (tool.screens !== undefined && this.mux === 'tmux' && borrowed) await requireNoCaptureHook(context.server, tool.screens(input as never), context.operation);
          const result = await tool.run(context, input as never);
          const text = JSON.stringify(result);
          if (Buffer.byteLength(text) > responseBytes) {
            return errorResult(
              new DroverError(`the result is larger than ${responseBytes} bytes; ask for less (fewer lines, narrower criteria)`, { phase: 'respond', delivery: tool.tier === 'readonly' ? 'not_sent' : 'observed' }),
              this.mux,
              describeUnreachable,
            );
          }
          return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown> } satisfies CallToolResult;
        } catch (error) {
          // The request's own deadline cut it short (a tmux call it aborted, or anything not drover's):
          // that is a timeout, not the client's interrupt, and a read-only tool changed nothing.
          if (deadline.aborted && !extra.signal.aborted && (error instanceof AbortedError || !(error instanceof DroverError))) {
            const delivery = tool.tier === 'readonly' ? 'not_sent' : 'possibly_sent';
            return errorResult(new TimeoutError(`the request did not finish within its ${deadlineMs} ms deadline`, deadlineMs, { delivery }), this.mux, describeUnreachable);
          }
          return errorResult(error, this.mux, describeUnreachable);
        }
      }) as never,
    );
  }

  async close(): Promise<void> {
    this.captures.clear();
    await this.mcp.close();
  }
}
