import type { Command } from 'commander';
import type { Writable } from 'node:stream';
import {
  Hosts,
  UnknownHostError,
  findHost,
  hostEntry,
  hostEntryJson,
  hostHealthJson,
  installDrover,
  readHostsConfig,
  removeHost,
  saveHost,
  DEFAULT_LINK_TIMINGS,
  type HostEntry,
  type HostHealth,
  type InstallResult,
} from '../../hosts/index.js';
import { EXIT, ExitError, writeJson, writeLine, type CliIO } from '../io.js';
import { droverCommand } from '../invocation.js';
import type { CommandContext } from '../program.js';
import { packageRoot, packageVersion } from '../version.js';

/** A check settles by itself within the link's own deadlines; this only bounds a link that never reports. */
const CHECK_DEADLINE_MS = DEFAULT_LINK_TIMINGS.handshakeTimeoutMs + DEFAULT_LINK_TIMINGS.pingTimeoutMs + 5_000;

interface JsonFlag {
  json?: boolean;
}

interface AddOptions extends JsonFlag {
  ssh?: string;
  drover?: string;
  forwardBroker?: string;
  install?: boolean;
}

/** A host the file does not have is "not found" (exit 2), like a pane that is not there. */
function notFound<T>(action: () => T): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof UnknownHostError) throw new ExitError(error.message, EXIT.notFound, { code: 'not_found', host: error.host });
    throw error;
  }
}

function isTerminal(stream: Writable): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

function describeEntry(entry: HostEntry): string {
  return `ssh ${entry.ssh}${entry.drover === undefined ? '' : `, drover ${entry.drover}`}${entry.forwardBroker === undefined ? '' : `, broker forwarded to ${entry.forwardBroker}`}`;
}

function healthLine(health: HostHealth): string {
  const detail = health.linkState === 'up' ? `drover ${health.version}, ${health.latencyMs} ms` : (health.problem ?? '');
  return `${health.name}  ${health.linkState}  ${detail}`;
}

/** Opens each host's link once and waits for it to settle; a failed attempt is reported, not retried. */
async function checkHosts(entries: readonly HostEntry[], io: CliIO, progress: boolean): Promise<HostHealth[]> {
  const hosts = Hosts.of(entries, { env: io.env, timings: { downAfterFailures: 1 }, droverCommand: droverCommand(io.env), start: false });
  try {
    for (const entry of entries) {
      if (progress) writeLine(io.stderr, `drover: connecting to ${entry.name} (ssh ${entry.ssh})…`);
      hosts.link(entry.name).start();
    }
    return await hosts.settled({ timeoutMs: CHECK_DEADLINE_MS, signal: io.signal });
  } finally {
    await hosts.close();
  }
}

async function add(name: string, options: AddOptions, io: CliIO): Promise<number> {
  const stored = readHostsConfig(io.env).hosts.find((host) => host.name === name);
  // `host add gpu --install` on a host already there installs on it as it is configured.
  const asConfigured = stored !== undefined && options.ssh === undefined && options.drover === undefined && options.forwardBroker === undefined;
  const entry = asConfigured
    ? stored
    : hostEntry({ name, ssh: options.ssh, drover: options.drover, forwardBroker: options.forwardBroker }, { name: 'NAME', ssh: '--ssh', drover: '--drover', forwardBroker: '--forward-broker' });
  const saved = saveHost(entry, { env: io.env });
  const changed = saved.previous === undefined;
  if (!options.json) writeLine(io.stdout, changed ? `added host ${entry.name} (${describeEntry(entry)}) to ${saved.path}` : `host ${entry.name} is already in ${saved.path} (${describeEntry(entry)})`);
  if (!options.install) {
    if (options.json) writeJson(io, { host: hostEntryJson(entry), config_path: saved.path, added: changed, install: null, health: null });
    else writeLine(io.stdout, `check it: ${droverCommand(io.env)} host check ${entry.name}`);
    return EXIT.ok;
  }

  const install: InstallResult = await installDrover(entry, { packageRoot: packageRoot(), env: io.env, signal: io.signal, announce: (line) => writeLine(io.stderr, `drover: ${line}`) });
  let linked = entry;
  if (entry.drover === undefined && install.onPath !== install.installed) {
    // ssh commands there would not run what was just installed: the entry names it.
    linked = { ...entry, drover: install.installed };
    saveHost(linked, { env: io.env, replace: true });
    writeLine(io.stderr, `drover: ${install.onPath === undefined ? 'no drover is' : `${install.onPath} is the drover`} on the PATH ssh commands get on ${entry.name}; host ${entry.name} now runs ${install.installed}`);
  } else if (entry.drover !== undefined && entry.drover !== install.installed) {
    writeLine(io.stderr, `drover: warning: npm installed drover at ${install.installed} on ${entry.name}, and host ${entry.name} runs ${entry.drover}`);
  }
  const [health] = await checkHosts([linked], io, false);
  const current = health!.linkState === 'up' && health!.version === packageVersion();
  if (options.json) {
    writeJson(io, { host: hostEntryJson(linked), config_path: saved.path, added: changed, install: { installed: install.installed, on_path: install.onPath ?? null }, health: hostHealthJson(health!) });
  } else {
    writeLine(io.stdout, `installed drover ${packageVersion()} on ${entry.name} at ${install.installed}`);
    writeLine(io.stdout, healthLine(health!));
  }
  return current ? EXIT.ok : EXIT.failure;
}

async function list(options: JsonFlag, io: CliIO): Promise<number> {
  const config = readHostsConfig(io.env);
  if (options.json) {
    writeJson(io, { config_path: config.path, hosts: config.hosts.map(hostEntryJson) });
    return EXIT.ok;
  }
  if (config.hosts.length === 0) {
    writeLine(io.stdout, `no hosts yet in ${config.path}; add one: ${droverCommand(io.env)} host add NAME --ssh ALIAS`);
    return EXIT.ok;
  }
  for (const entry of config.hosts) writeLine(io.stdout, `${entry.name}  ${describeEntry(entry)}`);
  writeLine(io.stdout, `config: ${config.path}`);
  return EXIT.ok;
}

async function check(names: readonly string[], options: JsonFlag, io: CliIO): Promise<number> {
  const config = readHostsConfig(io.env);
  const entries = names.length === 0 ? config.hosts : notFound(() => [...new Set(names)].map((name) => findHost(config, name)));
  if (entries.length === 0 && !options.json) {
    writeLine(io.stdout, `no hosts yet in ${config.path}; add one: ${droverCommand(io.env)} host add NAME --ssh ALIAS`);
    return EXIT.ok;
  }
  const health = await checkHosts(entries, io, !options.json && isTerminal(io.stderr));
  if (options.json) writeJson(io, { hosts: health.map(hostHealthJson) });
  else for (const host of health) writeLine(io.stdout, healthLine(host));
  return health.every((host) => host.reachable) ? EXIT.ok : EXIT.failure;
}

async function remove(name: string, options: JsonFlag, io: CliIO): Promise<number> {
  const { path, removed } = notFound(() => removeHost(name, { env: io.env }));
  if (options.json) writeJson(io, { removed: hostEntryJson(removed), config_path: path });
  else writeLine(io.stdout, `removed host ${removed.name} (${describeEntry(removed)}) from ${path}`);
  return EXIT.ok;
}

const HOST_HELP = `
A host is another machine drover reaches with your own ssh (its config, agent, ProxyJump and
known_hosts apply), running \`drover rpc --stdio\` there. Hosts live in drover's config file:
$DROVER_CONFIG, else $XDG_CONFIG_HOME/drover/config.yaml, else ~/.config/drover/config.yaml.`;

export function registerHostCommands(program: Command, context: CommandContext): void {
  const host = program.command('host').description('other machines drover reaches over ssh: add, list, check, remove').addHelpText('after', HOST_HELP);

  host
    .command('add')
    .description('add a host to the config file (nothing is installed or run there unless --install)')
    .argument('<name>', "drover's name for the host (letters, digits, . _ -; `local` means this machine)")
    .option('--ssh <destination>', 'what ssh is given to reach it: an alias of your ssh config, or user@host (default: the name)')
    .option('--drover <program>', 'the drover program there, when it is not `drover` on the PATH of ssh commands (~/ is that host\'s home)')
    .option('--forward-broker <remote-socket>', "while `drover broker serve` runs here, put this machine's broker at this absolute socket path there (members there set DROVER_BROKER=drover+unix://PATH)")
    .option('--install', "install this drover's own release there over ssh (npm pack here, npm install -g there); says what it runs first")
    .option('--json', 'print the host, and with --install the install and the link, as JSON')
    .action(context.action<AddOptions>((options, io, name) => add(name!, options, io)));

  host
    .command('list')
    .description('the hosts of the config file')
    .option('--json', 'print the config file and its hosts as JSON')
    .action(context.action<JsonFlag>((options, io) => list(options, io)));

  host
    .command('check')
    .description('open the link to each host (all by default) and report its health; exit 1 when any is not up')
    .argument('[names...]', 'hosts to check')
    .option('--json', 'print each host\'s health as JSON')
    .action(context.action<JsonFlag>((options, io, ...names) => check(names, options, io)));

  host
    .command('remove')
    .description('remove a host from the config file (nothing on the host is touched)')
    .argument('<name>', 'the host')
    .option('--json', 'print the removed host as JSON')
    .action(context.action<JsonFlag>((options, io, name) => remove(name!, options, io)));
}
