import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DEFAULT_WEB_PORT, DeviceRegistry, PAIRING_CODE_TTL_MS, startBridge, type AgentCensus, type Bridge, type MuxLink } from '../../bridge/index.js';
import { FleetRuntime, chooseStore, describeChoice, fleetStoreExists } from '../../fleet/index.js';
import { Hosts, readHostsConfig } from '../../hosts/index.js';
import { createMuxPort, MUX_NAMES, openMux, TmuxAdapter, type MuxName } from '../../mux/index.js';
import { defaultAgentStatusContext, systemProcessLookup } from '../../agents/index.js';
import { agentNamerFor, paneCensus, paneKeys, paneListings } from '../../panes/index.js';
import { isProcessAlive } from '../../process/index.js';
import { Server } from '../../tmux/index.js';
import type { SocketFlags } from '../endpoint.js';
import { EXIT, UsageError, writeJson, writeLine, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { rememberedRows } from '../all-hosts.js';
import { droverCommand } from '../invocation.js';
import { stateDirectory } from '../state.js';
import { packageVersion } from '../version.js';
import { resolveMux } from './mux.js';

/** Per-call deadline for the multiplexer's transport: generous, because a zellij call is a process start. */
const MUX_TIMEOUT_MS = 10_000;

interface WebOptions extends SocketFlags {
  port?: string;
  host?: string;
  readOnly?: boolean;
  allowHost: string[];
  mux?: MuxName;
  json?: boolean;
}

/** Where `drover web` keeps pairing, devices and its audit log. */
export function webStateDirectory(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'web');
}

/** The running server's address, for `drover web pair` to print. */
interface ServerRecord {
  url: string;
  pid: number;
}

function serverFile(env: NodeJS.ProcessEnv): string {
  return join(webStateDirectory(env), 'server.json');
}

function runningServer(env: NodeJS.ProcessEnv): ServerRecord | undefined {
  try {
    const record = JSON.parse(readFileSync(serverFile(env), 'utf8')) as Partial<ServerRecord>;
    return typeof record.url === 'string' && typeof record.pid === 'number' && isProcessAlive(record.pid) ? { url: record.url, pid: record.pid } : undefined;
  } catch {
    return undefined;
  }
}

/** The page bundled beside the drover bin (dist/cli/web). */
function pageAssets(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'web');
}

/**
 * What tmux cannot say about its panes and drover can: the agent in each pane by its process
 * tree, and the state its hooks reported.
 */
export function tmuxAgentCensus(server: Server, cwd: string): AgentCensus {
  const nameAgent = agentNamerFor(cwd);
  const port = createMuxPort(new TmuxAdapter({ server }));
  return {
    read: async () => {
      const snapshot = await port.snapshot();
      const census = paneCensus(paneListings(snapshot, snapshot.panes, paneKeys(port, snapshot.incarnation)), nameAgent, defaultAgentStatusContext(), await systemProcessLookup());
      return new Map(census.map(({ listing, agent, status }) => [listing.paneId, { agent: agent.name, hook: status.state }]));
    },
  };
}

function parsePort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_WEB_PORT;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new UsageError(`--port must be a whole number from 0 to 65535 (0 picks a free port), got ${JSON.stringify(text)}`);
  return port;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

async function serve(options: WebOptions, io: CliIO): Promise<number> {
  const port = parsePort(options.port);
  const resolved = resolveMux(options, io);
  const closers: (() => Promise<void>)[] = [];
  let bridge: Bridge | undefined;
  /** A port onto whichever run of the multiplexer answers now; drover web opens another after a restart. */
  const openLink = async (): Promise<MuxLink> => {
    const tmuxEndpoint = resolved.tmuxEndpoint;
    if (tmuxEndpoint === undefined) {
      const port = openMux(resolved.selection, { env: io.env, timeoutMs: MUX_TIMEOUT_MS });
      return { port, close: () => port.close() };
    }
    // One control connection carries every read; drover's census of agents shares it.
    const server = await Server.open(tmuxEndpoint, { env: io.env, transport: 'control' });
    const port = openMux(resolved.selection, { env: io.env, timeoutMs: MUX_TIMEOUT_MS, tmuxServer: server });
    return {
      port,
      census: tmuxAgentCensus(server, io.cwd),
      close: async () => {
        await port.close();
        await server.close();
      },
    };
  };
  try {
    // Every host of `drover host list`, each over one long-lived link for as long as drover web runs.
    const hosts = readHostsConfig(io.env).hosts.length === 0 ? undefined : Hosts.open({ env: io.env, droverCommand: droverCommand(io.env) });
    if (hosts !== undefined) closers.push(() => hosts.close());
    const openFleet = async (): Promise<FleetRuntime | undefined> => (fleetStoreExists(io.env) ? FleetRuntime.open({ env: io.env, tmuxEndpoint: resolved.tmuxEndpoint }) : undefined);
    const fleet = await openFleet();
    if (fleet !== undefined) closers.unshift(() => fleet.close());
    // A fleet created after drover web started is opened by the bridge then, and closed after it.
    let laterFleet: FleetRuntime | undefined;
    closers.push(async () => laterFleet?.close());
    bridge = await startBridge({
      openMux: openLink,
      stateDirectory: webStateDirectory(io.env),
      host: options.host,
      port,
      readOnly: options.readOnly === true,
      allowHosts: options.allowHost,
      assets: pageAssets(),
      fleet,
      openFleet: async () => (laterFleet = await openFleet()),
      fleetUnavailable: fleet !== undefined ? undefined : `no fleet database at ${describeChoice(chooseStore(io.env))} (create a fleet with \`${droverCommand(io.env)} fleet create\`)`,
      version: packageVersion(),
      log: (line) => writeLine(io.stderr, `drover web: ${line}`),
      hosts: hosts === undefined ? undefined : { hosts, store: rememberedRows(io.env) },
    });
    closers.unshift(() => bridge!.close());
    mkdirSync(webStateDirectory(io.env), { recursive: true, mode: 0o700 });
    writeFileSync(serverFile(io.env), `${JSON.stringify({ url: bridge.url, pid: process.pid })}\n`, { mode: 0o600 });
    closers.push(async () => rmSync(serverFile(io.env), { force: true }));
    if (options.json) {
      writeJson(io, { url: bridge.url, host: bridge.host, port: bridge.port, mux: resolved.mux, read_only: options.readOnly === true, audit_log: bridge.auditPath, hosts: hosts?.names ?? [] });
    } else {
      writeLine(io.stdout, `drover web: serving ${bridge.url} over ${resolved.mux} at ${resolved.where}`);
      if (hosts !== undefined) writeLine(io.stdout, `hosts: ${hosts.names.join(', ')} (each over its ssh link; their panes beside this machine's)`);
      if (options.readOnly) writeLine(io.stdout, 'read-only: every write is refused');
      writeLine(io.stdout, `pair a browser: ${droverCommand(io.env)} web pair (prints a code and the address to open)`);
      writeLine(io.stdout, `audit log: ${bridge.auditPath}`);
      writeLine(io.stdout, 'stop: Ctrl-C');
    }
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    for (const close of closers) await close().catch(() => undefined);
  }
  return io.signal.aborted ? EXIT.interrupted : EXIT.ok;
}

async function pair(options: { json?: boolean }, io: CliIO): Promise<number> {
  const registry = new DeviceRegistry(webStateDirectory(io.env));
  const { code, expiresAt } = registry.createPairingCode();
  const server = runningServer(io.env);
  const url = server === undefined ? null : `${server.url}#pair=${code}`;
  if (options.json) {
    writeJson(io, { code, expires_at: expiresAt, url });
    return EXIT.ok;
  }
  writeLine(io.stdout, `pairing code: ${code} (valid ${PAIRING_CODE_TTL_MS / 60_000} minutes, once)`);
  if (url !== null) writeLine(io.stdout, `open: ${url}`);
  else writeLine(io.stdout, `start \`${droverCommand(io.env)} web\`, open its address and enter the code`);
  return EXIT.ok;
}

async function devices(options: { json?: boolean }, io: CliIO): Promise<number> {
  const list = new DeviceRegistry(webStateDirectory(io.env)).list();
  if (options.json) {
    writeJson(io, { devices: list.map((device) => ({ device_id: device.deviceId, name: device.name, paired_at: device.pairedAt, revoked_at: device.revokedAt })) });
    return EXIT.ok;
  }
  if (list.length === 0) writeLine(io.stdout, `no device is paired (${droverCommand(io.env)} web pair prints a code)`);
  for (const device of list) writeLine(io.stdout, `${device.deviceId}  ${device.name}  paired ${device.pairedAt}${device.revokedAt === null ? '' : `  revoked ${device.revokedAt}`}`);
  return EXIT.ok;
}

async function revoke(options: { json?: boolean }, io: CliIO, deviceId?: string): Promise<number> {
  if (deviceId === undefined || deviceId === '') throw new UsageError(`web revoke needs a device id (${droverCommand(io.env)} web devices lists them)`);
  const device = new DeviceRegistry(webStateDirectory(io.env)).revoke(deviceId);
  if (options.json) writeJson(io, { device_id: device.deviceId, name: device.name, revoked_at: device.revokedAt });
  else writeLine(io.stdout, `revoked ${device.deviceId} (${device.name}); it loses access on its next request`);
  return EXIT.ok;
}

export function registerWebCommands(program: Command, context: CommandContext): void {
  const web = program
    .command('web')
    .description('serve a live dashboard of every pane over HTTP (loopback, paired devices only)')
    .option('--port <n>', `port to listen on (default ${DEFAULT_WEB_PORT}; 0 picks a free one)`)
    .option('--host <addr>', 'address to listen on (default 127.0.0.1; another needs `drover web pair` first)')
    .option('--read-only', 'refuse every write: the page only shows')
    .option('--allow-host <name>', 'also answer to this host name, e.g. a tailnet name (repeatable)', collect, [])
    .option('--mux <name>', `multiplexer: ${MUX_NAMES.join(', ')}`)
    .option('--json', 'print the address as one JSON document')
    .action(context.action(serve));
  web
    .command('pair')
    .description('print a one-time pairing code (valid 10 minutes) and the address to open')
    .option('--json', 'JSON output')
    .action(context.action(pair));
  web.command('devices').description('list paired devices').option('--json', 'JSON output').action(context.action(devices));
  web
    .command('revoke')
    .argument('<device-id>')
    .description('revoke a paired device; it loses access on its next request')
    .option('--json', 'JSON output')
    .action(context.action(revoke));
}
