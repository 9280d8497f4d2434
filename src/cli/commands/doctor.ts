import type { Command } from 'commander';
import { AGENT_KINDS, BUILTIN_PROVIDERS, DEFAULT_ROLE, installerFor, planAgentSetup, providersFor, resolveLaunchCommand, type Provider } from '../../agents/index.js';
import { fleetDoctorSection, userConfigPath, type FleetDoctorSection } from '../../fleet/index.js';
import { readHostsConfig } from '../../hosts/index.js';
import { agentProgram } from '../../panes/index.js';
import { findExecutable, run } from '../../process/index.js';
import { outsideAnySession, type SocketFlags } from '../endpoint.js';
import { droverArgv, droverCommand } from '../invocation.js';
import { EXIT, UsageError, messageOf, writeJson, writeLine, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { openResolvedMux, plural, resolveMux, unreachableMessage, type ResolvedMux } from './mux.js';

const SECTIONS = ['multiplexer', 'tools', 'agents', 'hosts', 'fleet'] as const;
type SectionName = (typeof SECTIONS)[number];

/** One line of the report; a failed check is one issue. */
interface DoctorCheck {
  readonly section: SectionName;
  readonly check: string;
  readonly ok: boolean;
  readonly detail: string;
  /** Fine, but absent (an agent not installed): marked · rather than ✓. */
  readonly absent?: boolean;
}

const TOOLS = ['tmux', 'git'] as const;
const VERSION_TIMEOUT_MS = 5_000;

interface MultiplexerReport {
  readonly json: Record<string, unknown>;
  readonly checks: DoctorCheck[];
  /** Absent when no multiplexer could be chosen. */
  readonly resolved?: ResolvedMux;
}

async function tmuxVersion(executable: string, io: CliIO): Promise<{ version: string | null; problem?: string }> {
  try {
    const result = await run([executable, '-V'], { env: io.env, timeoutMs: VERSION_TIMEOUT_MS });
    if (result.ok) return { version: result.text().trim() };
    return { version: null, problem: `${executable} -V failed: ${result.stderrText().trim() || `exit ${result.exitCode}`}` };
  } catch (error) {
    return { version: null, problem: `${executable} -V cannot be run: ${messageOf(error)}` };
  }
}

/** The backend, how it was chosen, where it lives, tmux's version, and whether it answers. */
async function multiplexerReport(flags: SocketFlags, io: CliIO): Promise<MultiplexerReport> {
  const check = (name: string, ok: boolean, detail: string): DoctorCheck => ({ section: 'multiplexer', check: name, ok, detail });
  let resolved: ResolvedMux;
  try {
    resolved = resolveMux(flags, io);
  } catch (error) {
    // Giving both -L and -S is a usage error, not a finding about this machine.
    if (error instanceof UsageError) throw error;
    return {
      json: { backend: null, chosen_by: null, endpoint: null, tmux_version: null, reachable: false },
      checks: [check('backend', false, messageOf(error))],
    };
  }
  const checks = [check('backend', true, `${resolved.mux} (chosen by ${resolved.chosenBy})`), check('endpoint', true, resolved.where)];
  let version: string | null = null;
  if (resolved.tmuxEndpoint !== undefined) {
    const answer = await tmuxVersion(resolved.tmuxEndpoint.executable, io);
    version = answer.version;
    checks.push(check('tmux version', answer.problem === undefined, answer.problem ?? answer.version!));
  }
  const port = openResolvedMux(resolved, io);
  let reachable = false;
  try {
    const snapshot = await port.snapshot();
    reachable = true;
    checks.push(check('reachable', true, `${plural(snapshot.spaces.length, 'space')}, ${plural(snapshot.panes.length, 'pane')}`));
  } catch (error) {
    checks.push(check('reachable', false, unreachableMessage(resolved, error)));
  } finally {
    await port.close();
  }
  return {
    resolved,
    json: { backend: resolved.mux, chosen_by: resolved.chosenBy, endpoint: resolved.endpoint, tmux_version: version, reachable },
    checks,
  };
}

function toolsReport(io: CliIO): { json: Record<string, string | null>; checks: DoctorCheck[] } {
  const json: Record<string, string | null> = {};
  const checks = TOOLS.map((tool): DoctorCheck => {
    const path = findExecutable(tool, io.env) ?? null;
    json[tool] = path;
    return { section: 'tools', check: tool, ok: path !== null, detail: path ?? `${tool} was not found on PATH` };
  });
  return { json, checks };
}

/**
 * Each agent drover knows: where the program its `pane open` command starts is found (the
 * PATH a pane gets, as `pane open` checks it), and whether its configuration has this drover's
 * state hooks. An agent not installed, or without the hooks, is no issue (drover then reads
 * its state off the screen); a configuration that cannot be read is one, as is a project
 * configuration that names providers wrongly.
 */
function agentsReport(io: CliIO): { json: Record<string, unknown>; checks: DoctorCheck[] } {
  const check = (name: string, ok: boolean, detail: string, absent = false): DoctorCheck => ({ section: 'agents', check: name, ok, detail, ...(absent ? { absent } : {}) });
  const checks: DoctorCheck[] = [];
  let providers: Readonly<Record<string, Provider>>;
  try {
    providers = providersFor(io.cwd);
  } catch (error) {
    checks.push(check('providers', false, messageOf(error)));
    providers = BUILTIN_PROVIDERS;
  }
  const drover = droverArgv();
  const json: Record<string, unknown> = {};
  for (const agent of AGENT_KINDS) {
    let command: string | null = null;
    let program: string | null = null;
    let throughShell = false;
    const problems: string[] = [];
    try {
      command = resolveLaunchCommand(providers, agent, DEFAULT_ROLE, io.env).command;
      const found = agentProgram(command, io.env);
      throughShell = found.executable === undefined;
      program = found.executable ?? null;
    } catch (error) {
      problems.push(`its provider cannot start it: ${messageOf(error)}`);
    }
    let hooks: 'installed' | 'absent' | 'unreadable' = 'unreadable';
    const config = installerFor(agent).configPath(io.env);
    try {
      hooks = planAgentSetup(drover, { agent, path: config, env: io.env }).changed ? 'absent' : 'installed';
    } catch (error) {
      problems.push(`its configuration cannot be read: ${messageOf(error)}`);
    }
    json[agent] = { command, program, through_shell: throughShell, hooks, hooks_config: config };
    const where = throughShell ? `started through a shell (${command})` : (program ?? 'not on PATH');
    // The issue's own words name the agent: the JSON lists issues without their check.
    if (problems.length > 0) checks.push(check(agent, false, `${agent}: ${problems.join('; ')}`));
    else if (program === null && !throughShell) checks.push(check(agent, true, where, true));
    else if (hooks === 'installed') checks.push(check(agent, true, `${where}; state hooks in ${config}`));
    else {
      const setup = `${droverCommand(io.env)} agent setup --agent ${agent}`;
      checks.push(check(agent, true, `${where}; no state hooks of this drover in ${config} (\`${setup}\` adds them; until then its state is read off its screen)`));
    }
  }
  return { json, checks };
}

/**
 * The hosts of drover's config file, read as `drover host` reads them; their links are not
 * opened (that is `drover host check`, which may wait on ssh), so doctor stays quick and local.
 */
function hostsReport(io: CliIO): { json: Record<string, unknown>; checks: DoctorCheck[] } {
  try {
    const config = readHostsConfig(io.env);
    const names = config.hosts.map((host) => host.name);
    const json = { config_path: config.path, names };
    if (names.length === 0) return { json, checks: [{ section: 'hosts', check: 'config', ok: true, absent: true, detail: `no hosts in ${config.path}` }] };
    const detail = `${plural(names.length, 'host')} in ${config.path} (${names.join(', ')}); \`${droverCommand(io.env)} host check\` opens their links`;
    return { json, checks: [{ section: 'hosts', check: 'config', ok: true, detail }] };
  } catch (error) {
    // The file that could not be read is named: it is the one to fix.
    return { json: { config_path: userConfigPath(io.env), names: [] }, checks: [{ section: 'hosts', check: 'config', ok: false, detail: messageOf(error) }] };
  }
}

/**
 * The fleet's environment: -L/-S name a tmux server, and outside any multiplexer session the
 * server is found as every command finds it; to the fleet either is exactly DROVER_MUX=tmux
 * with DROVER_MUX_ENDPOINT_TMUX set, so its backend check judges the same choice.
 */
function fleetEnvironment(resolved: ResolvedMux | undefined, flags: SocketFlags, io: CliIO): NodeJS.ProcessEnv {
  const explicit = flags.socketName !== undefined || flags.socketPath !== undefined;
  if (!(explicit || outsideAnySession(flags, io.env)) || resolved?.tmuxEndpoint === undefined) return io.env;
  return { ...io.env, DROVER_MUX: 'tmux', DROVER_MUX_ENDPOINT_TMUX: resolved.tmuxEndpoint.socketPath };
}

/** The facts that are fine as ✓ lines, then each of the fleet's problems as a ✗ line. */
function fleetChecks(section: FleetDoctorSection): DoctorCheck[] {
  const check = (name: string, ok: boolean, detail: string): DoctorCheck => ({ section: 'fleet', check: name, ok, detail });
  const checks: DoctorCheck[] = [];
  const store = section.store;
  const usable = store.schemaVersion !== null && store.schemaVersion <= store.latestSchemaVersion! && (store.kind === 'sqlite' || store.listens === true);
  if (store.kind !== null && usable) {
    const schema = store.schemaVersion === 0 ? 'nothing stored yet' : `schema ${store.schemaVersion} of ${store.latestSchemaVersion}`;
    const state = store.kind === 'sqlite' ? (store.reachable ? schema : 'not created yet') : `${schema}, notifications arrive`;
    checks.push(check('store', true, `${store.kind} ${store.location} (${state}; chosen by ${store.chosenBy})`));
  }
  const locks = section.lockDirectory;
  if (locks.path !== null && (!locks.exists || locks.writable)) checks.push(check('pane locks', true, `${locks.path}${locks.exists ? '' : ' (created on first use)'}`));
  if (section.backend.resolved !== null && section.backend.resolved !== 'zellij') checks.push(check('fleet backend', true, section.backend.resolved));
  for (const problem of section.problems) checks.push(check('problem', false, problem));
  return checks;
}

function fleetJson(section: FleetDoctorSection): Record<string, unknown> {
  return {
    store: {
      kind: section.store.kind,
      location: section.store.location,
      chosen_by: section.store.chosenBy,
      reachable: section.store.reachable,
      schema_version: section.store.schemaVersion,
      latest_schema_version: section.store.latestSchemaVersion,
      listens: section.store.listens,
    },
    lock_directory: { ...section.lockDirectory },
    backend: { ...section.backend },
    problems: [...section.problems],
  };
}

function issueCount(count: number): string {
  return count === 0 ? 'no issues found' : `${count} issue${count === 1 ? '' : 's'} found`;
}

async function doctor(options: SocketFlags & { json?: boolean }, io: CliIO): Promise<number> {
  const multiplexer = await multiplexerReport(options, io);
  const tools = toolsReport(io);
  const agents = agentsReport(io);
  const hosts = hostsReport(io);
  const fleet = await fleetDoctorSection(fleetEnvironment(multiplexer.resolved, options, io));
  // A fleet problem already reported above (the multiplexer that cannot be chosen) is one issue, not two.
  const earlier = new Set([...multiplexer.checks, ...tools.checks].filter((check) => !check.ok).map((check) => check.detail));
  const checks = [...multiplexer.checks, ...tools.checks, ...agents.checks, ...hosts.checks, ...fleetChecks(fleet).filter((check) => check.ok || !earlier.has(check.detail))];
  const issues = checks.filter((check) => !check.ok).map((check) => check.detail);

  if (options.json) {
    writeJson(io, {
      ok: issues.length === 0,
      issues,
      multiplexer: multiplexer.json,
      tools: tools.json,
      agents: agents.json,
      hosts: hosts.json,
      fleet: fleetJson(fleet),
      checks: checks.map((check) => ({ section: check.section, check: check.check, ok: check.ok, detail: check.detail })),
    });
  } else {
    for (const section of SECTIONS) {
      writeLine(io.stdout, section);
      for (const check of checks.filter((candidate) => candidate.section === section)) {
        const mark = !check.ok ? '✗' : check.absent ? '·' : '✓';
        // A detail that already names its check (an agent's issue, listed alone in the JSON) is printed as it is.
        const named = check.check === 'problem' || check.detail.startsWith(`${check.check}: `);
        writeLine(io.stdout, `  ${mark} ${named ? check.detail : `${check.check}: ${check.detail}`}`);
      }
    }
    writeLine(io.stdout, issueCount(issues.length));
  }
  return issues.length === 0 ? EXIT.ok : EXIT.failure;
}

export function registerDoctorCommands(program: Command, context: CommandContext): void {
  program
    .command('doctor')
    .description("check the multiplexer, the tools drover runs, the agents and their state hooks, the hosts' config and the fleet store; exit 1 when anything is wrong")
    .option('--json', 'print one JSON document')
    .action(context.action(doctor));
}
