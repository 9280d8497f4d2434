import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { failureCode, type FailureCode } from '../panes/index.js';
import { AbortedError, ArgumentError, DroverError } from '../process/index.js';
import { isPaneId, requireNoCaptureHook, type OperationOptions, type PaneId, type Server } from '../tmux/index.js';
import { CaptureStore, DEFAULT_CAPTURE_LIMITS, type CaptureLimits } from './captures.js';
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

export interface ApplicationOptions {
  /**
   * The borrowed tmux server, or how to borrow it: then the first call that needs it opens it,
   * and until that succeeds each call reports why (no server running yet). The application
   * never starts or kills a server.
   */
  server: Server | (() => Promise<Server>);
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
  /** What a call says when the tmux server cannot be reached: which server, and what to do. */
  describeUnreachable?: () => string;
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

/**
 * What an error result says for failures whose own message would carry tmux's output or the
 * caller's input back (tmux's stderr, the target as typed): a fixed sentence instead.
 */
const FIXED_MESSAGES: Partial<Record<FailureCode, string>> = {
  not_found: 'not found: no such session, window or pane on this tmux server',
  pane_not_found: 'not found: no such pane on this tmux server',
  tmux_failed: 'tmux refused the command',
  server_replaced:
    'the pane belongs to another run of the tmux server than the one answering (a server restarted at the same socket), so nothing was done: a pane key of an earlier run names no pane any more, and if the server this MCP server bound was itself replaced, restart drover mcp to use the new one',
};

/**
 * A failed call as its result: the JSON document `{"error": {code, message, phase, delivery}}`
 * with a stable `code`, as its text. Not as structuredContent: clients check that against the
 * tool's output schema even on errors. Anything drover did not raise itself is reported by its
 * code alone, as its message may hold anything.
 */
function errorResult(error: unknown, describeUnreachable: () => string): CallToolResult {
  const code = failureCode(error);
  const message =
    code === 'unreachable' ? describeUnreachable() : (FIXED_MESSAGES[code] ?? (error instanceof DroverError ? error.message : 'the tool failed unexpectedly'));
  const context = error instanceof DroverError ? { phase: error.phase, delivery: error.delivery } : {};
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { code, message, ...context } }) }] };
}

/**
 * The MCP application: the tools the policy allows (and only those) registered on an SDK
 * server, each with input and output schemas, a deadline, a response bound and structured
 * results. Closing releases retained captures, not the borrowed tmux server.
 */
export class Application {
  readonly mcp: McpServer;
  readonly captures: CaptureStore;
  readonly policy: ToolPolicy;
  private readonly options: ApplicationOptions;
  /** The server once borrowed (or being borrowed); cleared when borrowing failed, so the next call tries again. */
  private binding: Promise<Server> | undefined;

  constructor(options: ApplicationOptions) {
    this.options = options;
    this.policy = options.policy;
    const tools = [this.capabilities(), ...options.tools];
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
          'drover drives coding agents in tmux panes. Ids: $session, @window, %pane. Only the tools the operator enabled are present: call capabilities to see which groups are on and what enables the others. Typing tools report dispatch, not what the program did: capture, wait_for_text or deliver (verified) tell you more.',
      },
    );
    for (const tool of tools) if (tool.name === CAPABILITIES_TOOL || this.policy.allows(tool.name)) this.register(tool);
  }

  private capabilities(): ToolDefinition {
    const options = this.options;
    return capabilitiesTool(() => ({
      version: options.version ?? '0.0.0',
      policy: this.policy,
      catalog: toolCatalog(options.tools),
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      responseBytes: options.responseBytes ?? DEFAULT_RESPONSE_BYTES,
      mutationEvidenceBytes: MUTATION_EVIDENCE_BYTES,
      captureLimits: options.captureLimits ?? DEFAULT_CAPTURE_LIMITS,
      stdio: options.stdioLimits,
    }));
  }

  /** The borrowed server, opened by the first call that needs it. */
  server(): Promise<Server> {
    const source = this.options.server;
    if (typeof source !== 'function') return Promise.resolve(source);
    this.binding ??= source().catch((error: unknown) => {
      this.binding = undefined;
      throw error;
    });
    return this.binding;
  }

  /** The context a call runs with; a tool that needs no server gets one whose server says why there is none. */
  private async context(tool: ToolDefinition, deadlineMs: number, signal: AbortSignal): Promise<ToolContext> {
    const env = this.options.env ?? process.env;
    const operation = { timeoutMs: deadlineMs, signal };
    const base = { captures: this.captures, deadlineMs, signal, operation, env };
    let server: Server;
    try {
      server = await this.server();
    } catch (error) {
      if (tool.needsServer !== false) throw error;
      return {
        ...base,
        selfPane: undefined,
        get server(): Server {
          throw error;
        },
      };
    }
    return { ...base, server, selfPane: await selfPaneOf(server, env, operation) };
  }

  private register(tool: ToolDefinition): void {
    const requestTimeoutMs = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const responseBytes = this.options.responseBytes ?? DEFAULT_RESPONSE_BYTES;
    const describeUnreachable = this.options.describeUnreachable ?? (() => 'the tmux server is not running');
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
          const context = await this.context(tool, deadlineMs, signal);
          if (tool.screens !== undefined) await requireNoCaptureHook(context.server, tool.screens(input as never), context.operation);
          const result = await tool.run(context, input as never);
          const text = JSON.stringify(result);
          if (Buffer.byteLength(text) > responseBytes) {
            return errorResult(
              new DroverError(`the result is larger than ${responseBytes} bytes; ask for less (fewer lines, narrower criteria)`, { phase: 'respond', delivery: tool.tier === 'readonly' ? 'not_sent' : 'observed' }),
              describeUnreachable,
            );
          }
          return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown> } satisfies CallToolResult;
        } catch (error) {
          if (deadline.aborted && !(error instanceof DroverError)) {
            return errorResult(new AbortedError(`the request did not finish within ${deadlineMs} ms`, { delivery: 'possibly_sent' }), describeUnreachable);
          }
          return errorResult(error, describeUnreachable);
        }
      }) as never,
    );
  }

  async close(): Promise<void> {
    this.captures.clear();
    await this.mcp.close();
  }
}
