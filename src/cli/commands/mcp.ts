import { Option, type Command } from 'commander';
import {
  Application,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_RESPONSE_BYTES,
  DEFAULT_STDIO_LIMITS,
  GROUP_NAMES,
  MUTATION_EVIDENCE_BYTES,
  StdioTransport,
  ToolPolicy,
  fleetTools,
  libraryTools,
  offeredOn,
  tmuxLibraryRefusal,
  paneTools,
  tmuxTools,
  toolCatalog,
  workspaceTools,
  type HostAccess,
} from '../../mcp/index.js';
import { Hosts } from '../../hosts/index.js';
import { rememberedRows } from '../all-hosts.js';
import { droverCommand } from '../invocation.js';
import { fleetStoreExists } from '../../fleet/index.js';
import { endpointVariable, MUX_NAMES, type MuxPort } from '../../mux/index.js';
import type { Server } from '../../tmux/index.js';
import { resolveEndpoint, serverNotRunning, type SocketFlags } from '../endpoint.js';
import { EXIT, UsageError, parseMilliseconds, writeWarning, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { packageVersion } from '../version.js';
import { openResolvedMux, openResolvedTmux, releaseResolvedTmux, resolveMux, unreachableMessage } from './mux.js';

interface McpOptions extends SocketFlags {
  mux?: string;
  allow: string[];
  enableTool: string[];
  tier?: string;
  timeoutMs?: string;
  maxResponseBytes?: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

const MAX_RESPONSE_BYTES_CEILING = DEFAULT_STDIO_LIMITS.maxQueuedBytes;

function parseResponseBytes(value: string): number {
  const bytes = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(bytes) || bytes < 1024 || bytes > MAX_RESPONSE_BYTES_CEILING) {
    throw new UsageError(`--max-response-bytes takes a whole number of bytes from 1024 to ${MAX_RESPONSE_BYTES_CEILING} (got ${JSON.stringify(value)})`);
  }
  return bytes;
}

/**
 * `drover mcp`: an MCP server on stdin/stdout over the multiplexer `drover mux` would choose
 * (or --mux): on tmux a borrowed server and every tool; on herdr or zellij a port and the tools
 * that reach panes through it. stdout carries protocol only; diagnostics go to stderr. It never
 * starts a server; one that is not running yet is reported by each call that needs it.
 */
async function mcp(options: McpOptions, io: CliIO): Promise<number> {
  const resolved = resolveMux(options, io);
  const everyTool = [...tmuxTools, ...libraryTools, ...paneTools, ...workspaceTools, ...fleetTools];
  const tmuxOnly = options.enableTool.filter((name) => everyTool.some((tool) => tool.name === name && !offeredOn(resolved.mux, tool)));
  if (tmuxOnly.length > 0) throw new UsageError(tmuxLibraryRefusal(resolved.mux, tmuxOnly.join(', ')).message);
  const fleetReady = fleetStoreExists(io.env);
  const missingFleet = options.enableTool.filter((name) => !fleetReady && fleetTools.some((tool) => tool.name === name));
  if (missingFleet.length > 0) throw new UsageError(`${missingFleet.join(', ')} need a fleet database, and there is none at DROVER_DB (or the default path); create a fleet first`);
  const tools = everyTool.filter((tool) => offeredOn(resolved.mux, tool) && (fleetReady || !fleetTools.includes(tool)));
  const policy = ToolPolicy.resolve({ tier: options.tier, allow: options.allow, enable: options.enableTool }, toolCatalog(tools));
  let requestTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS;
  if (options.timeoutMs !== undefined) {
    requestTimeoutMs = parseMilliseconds('--timeout-ms', options.timeoutMs, 100);
    if (requestTimeoutMs > 600_000) throw new UsageError('--timeout-ms must be a whole number of milliseconds from 100 to 600000');
  }
  const responseBytes = options.maxResponseBytes === undefined ? DEFAULT_RESPONSE_BYTES : parseResponseBytes(options.maxResponseBytes);
  // Checked now (-L beside -S is a usage error); a tmux server itself is borrowed by the first
  // call that needs it, so drover mcp starts, and lists its tools, before any tmux server runs.
  if (resolved.mux === 'tmux') resolveEndpoint(options, io);
  const transport = new StdioTransport(io.stdin, io.stdout, { requestTimeoutMs });
  let server: Server | undefined;
  let port: MuxPort | undefined;
  const backend =
    resolved.mux === 'tmux'
      ? {
          // Resolved again at each attempt: a server `drover up` starts later is found then.
          server: async () => (server = await openResolvedTmux(resolveMux(options, io), io)),
          // A server named by the multiplexer's endpoint variable is described as drover mux describes it.
          describeUnreachable: (error: unknown) => (resolved.endpoint.source === endpointVariable('tmux') ? unreachableMessage(resolved, error) : serverNotRunning(options, io)),
        }
      : { port: (port = openResolvedMux(resolved, io)), describeUnreachable: (error: unknown) => unreachableMessage(resolved, error) };
  // The hosts' links open with the first call that names a host, and stay up for the session.
  let hosts: Hosts | undefined;
  const hostAccess: HostAccess = {
    hosts: () => (hosts ??= Hosts.open({ env: io.env, droverCommand: droverCommand(io.env), timings: { downAfterFailures: 1 } })),
    remembered: rememberedRows(io.env),
  };
  const application = new Application({
    ...backend,
    hosts: hostAccess,
    tools,
    policy,
    requestTimeoutMs,
    responseBytes,
    remainingMs: (id) => transport.remainingMs(id),
    stdioLimits: transport.limits,
    env: io.env,
    version: packageVersion(),
  });
  const interrupted = new Promise<void>((resolve) => io.signal.addEventListener('abort', () => resolve(), { once: true }));
  try {
    await application.mcp.connect(transport);
    await Promise.race([transport.ended, interrupted]);
  } finally {
    await transport.close();
    await application.close().catch(() => undefined);
    await hosts?.close().catch(() => undefined);
    await releaseResolvedTmux(server, io).catch(() => undefined);
    await port?.close().catch(() => undefined);
  }
  if (io.signal.aborted) return EXIT.interrupted;
  const end = await transport.ended;
  if (end.reason === 'failed') {
    writeWarning(io, `the MCP session ended: ${end.message}`);
    if (end.output === 'abandoned') io.abandonOutput?.();
    return EXIT.failure;
  }
  return EXIT.ok;
}

export function registerMcpCommands(program: Command, context: CommandContext): void {
  program
    .command('mcp')
    .description('serve drover as MCP tools over stdio (capabilities and snapshot unless more is allowed)')
    .addOption(new Option('--mux <name>', 'the multiplexer: tmux, herdr or zellij (default: chosen as drover mux chooses; -L/-S mean tmux); off tmux only the pane tools are offered').choices(MUX_NAMES))
    .option('--allow <groups>', `enable tool groups (repeatable, or comma-separated): ${GROUP_NAMES.filter((name) => name !== 'core').join(', ')}`, collect, [])
    .option('--enable-tool <name>', 'enable one tool beyond the groups (repeatable)', collect, [])
    .option('--tier <tier>', 'enable every tool up to this tier, whatever its group: readonly, mutating or destructive')
    .option('--timeout-ms <ms>', `per-request deadline, waiting for a turn included (default ${DEFAULT_REQUEST_TIMEOUT_MS})`)
    .option('--max-response-bytes <n>', `largest result a tool may return (default ${DEFAULT_RESPONSE_BYTES}; at least ${MUTATION_EVIDENCE_BYTES} when a tool that changes things is on)`)
    .action(context.action(mcp));
}
