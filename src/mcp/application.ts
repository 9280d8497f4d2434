import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { AbortedError, DroverError } from '../process/index.js';
import { isPaneId, type OperationOptions, type PaneId, type Server } from '../tmux/index.js';
import { CaptureStore, DEFAULT_CAPTURE_LIMITS, type CaptureLimits } from './captures.js';
import { ToolPolicy, type Tier } from './policy.js';
import type { ToolContext, ToolDefinition } from './tool.js';

export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
export const DEFAULT_RESPONSE_BYTES = 1024 * 1024;

export interface ApplicationOptions {
  /** The borrowed tmux server; the application never starts or kills it. */
  server: Server;
  tools: readonly ToolDefinition[];
  policy: ToolPolicy;
  /** Per-request deadline; waits are clamped to it. */
  requestTimeoutMs?: number;
  /** Largest serialized result a tool may return. */
  responseBytes?: number;
  captureLimits?: CaptureLimits;
  /** The environment the server runs in ($TMUX, $TMUX_PANE identify its own pane). */
  env?: NodeJS.ProcessEnv;
  version?: string;
}

/** Tier and name of every tool in a set, for policy validation. */
export function toolCatalog(tools: readonly ToolDefinition[]): Map<string, Tier> {
  return new Map(tools.map((t) => [t.name, t.tier]));
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

function errorResult(error: unknown): CallToolResult {
  // Messages only: never the raw input or tmux output a failure may carry.
  const message = error instanceof Error ? error.message : String(error);
  const detail = error instanceof DroverError ? { type: error.name, phase: error.phase, delivery: error.delivery } : { type: error instanceof Error ? error.name : 'Error' };
  return { isError: true, content: [{ type: 'text', text: JSON.stringify({ error: { message, ...detail } }) }] };
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

  constructor(options: ApplicationOptions) {
    this.options = options;
    this.policy = options.policy;
    this.captures = new CaptureStore(options.captureLimits ?? DEFAULT_CAPTURE_LIMITS);
    this.mcp = new McpServer(
      { name: 'drover', version: options.version ?? '0.0.0' },
      {
        instructions:
          'drover drives coding agents in tmux panes. Ids: $session, @window, %pane. Tools that change things are only present when the operator enabled them. Typing tools report dispatch, not what the program did: capture, wait_for_text or deliver (verified) tell you more.',
      },
    );
    for (const tool of options.tools) if (this.policy.allows(tool.name)) this.register(tool);
  }

  private register(tool: ToolDefinition): void {
    const requestTimeoutMs = this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const responseBytes = this.options.responseBytes ?? DEFAULT_RESPONSE_BYTES;
    const env = this.options.env ?? process.env;
    this.mcp.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: { readOnlyHint: tool.tier === 'readonly', destructiveHint: tool.tier === 'destructive', openWorldHint: false },
      },
      (async (input: unknown, extra: { signal: AbortSignal }) => {
        const deadline = AbortSignal.timeout(requestTimeoutMs);
        const signal = AbortSignal.any([extra.signal, deadline]);
        try {
          const context: ToolContext = {
            server: this.options.server,
            captures: this.captures,
            selfPane: await selfPaneOf(this.options.server, env, { timeoutMs: requestTimeoutMs, signal }),
            deadlineMs: requestTimeoutMs,
            signal,
            operation: { timeoutMs: requestTimeoutMs, signal },
            env,
          };
          const result = await tool.run(context, input as never);
          const text = JSON.stringify(result);
          if (Buffer.byteLength(text) > responseBytes) {
            return errorResult(new DroverError(`the result is larger than ${responseBytes} bytes; ask for less (fewer lines, narrower criteria)`, { phase: 'respond', delivery: tool.tier === 'readonly' ? 'not_sent' : 'observed' }));
          }
          return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown> } satisfies CallToolResult;
        } catch (error) {
          if (deadline.aborted && !(error instanceof DroverError)) {
            return errorResult(new AbortedError(`the request did not finish within ${requestTimeoutMs} ms`, { delivery: 'possibly_sent' }));
          }
          return errorResult(error);
        }
      }) as never,
    );
  }

  async close(): Promise<void> {
    this.captures.clear();
    await this.mcp.close();
  }
}
