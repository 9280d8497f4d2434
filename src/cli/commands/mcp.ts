import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  Application,
  ToolPolicy,
  toolCatalog,
  tmuxTools,
  libraryTools,
  paneTools,
  waitTools,
  workspaceTools,
  fleetTools,
  fleetDatabaseExists,
  boundedLines,
  DEFAULT_REQUEST_TIMEOUT_MS,
  MAX_REQUEST_BYTES,
} from '../../mcp/index.js';
import type { Server } from '../../tmux/index.js';
import { openServer, resolveEndpoint, serverNotRunning, type SocketFlags } from '../endpoint.js';
import { EXIT, UsageError, parseMilliseconds, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { packageVersion } from '../version.js';

interface McpOptions extends SocketFlags {
  enableTool: string[];
  tier?: string;
  timeoutMs?: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * `drover mcp`: an MCP server on stdin/stdout over a borrowed tmux server. stdout carries
 * protocol only; diagnostics go to stderr. It never starts a tmux server; one that is not
 * running yet is reported by each call that needs it.
 */
async function mcp(options: McpOptions, io: CliIO): Promise<number> {
  const fleetReady = fleetDatabaseExists(io.env);
  const missingFleet = options.enableTool.filter((name) => !fleetReady && fleetTools.some((tool) => tool.name === name));
  if (missingFleet.length > 0) throw new UsageError(`${missingFleet.join(', ')} need a fleet database, and there is none at DROVER_DB (or the default path); create a fleet first`);
  const tools = [...tmuxTools, ...libraryTools, ...waitTools, ...paneTools, ...workspaceTools, ...(fleetReady ? fleetTools : [])];
  const policy = ToolPolicy.resolve({ tier: options.tier, enable: options.enableTool }, toolCatalog(tools));
  let requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
  if (options.timeoutMs !== undefined) {
    requestTimeoutMs = parseMilliseconds('--timeout-ms', options.timeoutMs, 100);
    if (requestTimeoutMs > 600_000) throw new UsageError('--timeout-ms must be a whole number of milliseconds from 100 to 600000');
  }
  // Checked now (-L beside -S is a usage error); the server itself is borrowed by the first
  // call that needs it, so drover mcp starts, and lists its tools, before any tmux server runs.
  resolveEndpoint(options, io);
  let server: Server | undefined;
  const application = new Application({
    server: async () => (server = await openServer(options, io)),
    describeUnreachable: () => serverNotRunning(options, io),
    tools,
    policy,
    requestTimeoutMs,
    env: io.env,
    version: packageVersion(),
  });
  const transport = new StdioServerTransport(boundedLines(io.stdin, MAX_REQUEST_BYTES, (refusal) => io.stdout.write(refusal)), io.stdout);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    io.stdin.once('end', resolve);
    io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  try {
    await application.mcp.connect(transport);
    await closed;
  } finally {
    await application.close().catch(() => undefined);
    await server?.close().catch(() => undefined);
  }
  return io.signal.aborted ? EXIT.interrupted : EXIT.ok;
}

export function registerMcpCommands(program: Command, context: CommandContext): void {
  program
    .command('mcp')
    .description('serve drover as MCP tools over stdio (read-only unless tools are enabled)')
    .option('--enable-tool <name>', 'enable a tool beyond the tier (repeatable)', collect, [])
    .option('--tier <tier>', 'enable every tool up to this tier: readonly, mutating or destructive', 'readonly')
    .option('--timeout-ms <ms>', `per-request deadline (default ${DEFAULT_REQUEST_TIMEOUT_MS})`)
    .action(context.action(mcp));
}
