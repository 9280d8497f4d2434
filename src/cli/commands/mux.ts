import { Option, type Command } from 'commander';
import {
  declarationJson,
  describeEndpoint,
  endpointVariable,
  MUX_CAPABILITIES,
  MUX_DECLARATIONS,
  MUX_NAMES,
  MuxError,
  muxSnapshotJson,
  openMux,
  selectMux,
  tmuxEndpointOf,
  withTmuxBinary,
  type MuxDeclaration,
  type MuxName,
  type MuxPane,
  type MuxPort,
  type MuxSelection,
  type MuxSnapshot,
} from '../../mux/index.js';
import type { conformance } from '../../mux/index.js';
import { Server, ServerUnreachableError, type Endpoint } from '../../tmux/index.js';
import { STALE_TMUX_REMEDY, defaultServerRemedy, outsideAnySession, resolveEndpoint, serverNotRunningMessage, type EndpointSource, type SocketFlags } from '../endpoint.js';
import { foldBody } from '../../panes/index.js';
import { EXIT, ExitError, UsageError, messageOf, writeJson, writeLine, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';

/** Per-call deadline for the multiplexer's transport: generous, because a zellij call is a process start. */
const MUX_TIMEOUT_MS = 10_000;

interface MuxFlags extends SocketFlags {
  mux?: MuxName;
  json?: boolean;
}

interface SnapshotFlags extends MuxFlags {
  allHosts?: boolean;
}

/** A multiplexer chosen for one command, with what an operator needs to know about the choice. */
export interface ResolvedMux {
  readonly mux: MuxName;
  /** How it was chosen, in the operator's words: --mux, -L, -S, DROVER_MUX, HERDR_ENV or TMUX. */
  readonly chosenBy: string;
  /** Where it lives, in the operator's words. */
  readonly where: string;
  /** The endpoint as JSON (snake_case). */
  readonly endpoint: Readonly<Record<string, string | null>>;
  readonly selection: MuxSelection;
  /** The tmux server, when the multiplexer is tmux. */
  readonly tmuxEndpoint?: Endpoint;
  /** What to do when the multiplexer does not answer, when drover knows (tmux's default server, or the one $TMUX names). */
  readonly remedy?: string;
  /** On tmux, the whole message for a server that is not running, where drover can say more than tmux. */
  readonly notRunning?: string;
}

const TMUX_SOURCES: Readonly<Record<Exclude<EndpointSource, 'flag'>, string>> = {
  'tmux-env': '$TMUX',
  'drover-up': 'the server drover up started',
  'tmux-default': "tmux's default socket",
};

function explicitSocket(flags: SocketFlags): string | undefined {
  return flags.socketPath !== undefined ? '-S' : flags.socketName !== undefined ? '-L' : undefined;
}

/** The tmux server: -L/-S, else DROVER_MUX_ENDPOINT_TMUX, else $TMUX, the `drover up` server, tmux's default. */
function tmuxServer(selection: MuxSelection, flags: SocketFlags, io: CliIO): { endpoint: Endpoint; source: string; remedy?: string; notRunning?: string } {
  const spec = selection.endpoint;
  const socketFlag = explicitSocket(flags);
  if (socketFlag === undefined && spec.mux === 'tmux' && spec.kind !== 'environment') {
    return { endpoint: tmuxEndpointOf(spec, io.env), source: endpointVariable('tmux') };
  }
  const resolved = resolveEndpoint(flags, io);
  const endpoint = withTmuxBinary(resolved.endpoint, io.env);
  const source = resolved.source;
  const notRunning = serverNotRunningMessage(source, endpoint, io);
  if (source === 'tmux-default') return { endpoint, source: TMUX_SOURCES[source], remedy: defaultServerRemedy(io), notRunning };
  if (source === 'tmux-env') return { endpoint, source: TMUX_SOURCES[source], remedy: STALE_TMUX_REMEDY, notRunning };
  return { endpoint, source: source === 'flag' ? socketFlag! : TMUX_SOURCES[source] };
}

/** How resolveMux reports tmux chosen because nothing else decided (outside any multiplexer session). */
const TMUX_BY_DEFAULT = 'default';

/**
 * Which multiplexer a command drives. --mux wins; then -L/-S, which only ever name a tmux
 * server; then selectMux (DROVER_MUX, else HERDR_ENV or TMUX); outside any multiplexer
 * session, tmux, whose server is then found as every command finds it (the `drover up`
 * server, else tmux's default). Throws a MuxSelectionError (with its remedy) when the
 * environment is ambiguous, and a UsageError for -L/-S beside another --mux.
 */
export function resolveMux(flags: SocketFlags & { mux?: string }, io: CliIO): ResolvedMux {
  const socketFlag = explicitSocket(flags);
  if (socketFlag !== undefined && flags.mux !== undefined && flags.mux !== 'tmux') {
    throw new UsageError(`${socketFlag} names a tmux server, but --mux chose ${flags.mux}`);
  }
  const undecided = flags.mux === undefined && outsideAnySession(flags, io.env);
  const selection = selectMux({ mux: flags.mux ?? (socketFlag !== undefined || undecided ? 'tmux' : undefined), env: io.env });
  const chosenBy = flags.mux !== undefined ? '--mux' : (socketFlag ?? (undecided ? TMUX_BY_DEFAULT : selection.chosenBy));
  const spec = selection.endpoint;
  if (spec.mux !== 'tmux') {
    const where = describeEndpoint(spec);
    const endpoint: Record<string, string | null> =
      spec.mux === 'herdr' ? { description: where, socket_path: spec.socketPath, source: spec.source } : { description: where, session: spec.session ?? null };
    return { mux: selection.mux, chosenBy, where, endpoint, selection };
  }
  const { endpoint, source, remedy, notRunning } = tmuxServer(selection, flags, io);
  const where = `${endpoint.toString()} (from ${source})`;
  return {
    mux: 'tmux',
    chosenBy,
    where,
    endpoint: { description: where, socket_path: endpoint.socketPath, socket_name: endpoint.socketName ?? null, source },
    selection,
    tmuxEndpoint: endpoint,
    remedy,
    notRunning,
  };
}

/** A port on the chosen multiplexer; on tmux over `tmuxServer` when the caller opened (and closes) that binding. */
export function openResolvedMux(resolved: ResolvedMux, io: CliIO, tmuxServer?: Server): MuxPort {
  return openMux(resolved.selection, { env: io.env, timeoutMs: MUX_TIMEOUT_MS, tmuxEndpoint: resolved.tmuxEndpoint, tmuxServer });
}

/**
 * Opens the tmux server a tmux selection names, explaining which one was meant when none runs.
 * Under a long-lived caller the binding is borrowed from its held ones (always over a control
 * connection); give it back with releaseResolvedTmux.
 */
export async function openResolvedTmux(resolved: ResolvedMux, io: CliIO, transport?: 'spawn' | 'control'): Promise<Server> {
  try {
    if (io.tmuxBindings !== undefined) return await io.tmuxBindings.borrow(resolved.tmuxEndpoint!, io.env);
    return await Server.open(resolved.tmuxEndpoint!, { env: io.env, transport });
  } catch (error) {
    if (error instanceof ServerUnreachableError && resolved.notRunning !== undefined) throw new ServerUnreachableError(resolved.notRunning);
    throw error;
  }
}

/** Closes a binding openResolvedTmux gave, or gives it back when it was borrowed from a long-lived caller's held ones. */
export async function releaseResolvedTmux(server: Server | undefined, io: CliIO): Promise<void> {
  if (server === undefined) return;
  if (io.tmuxBindings !== undefined) io.tmuxBindings.giveBack(server);
  else await server.close();
}

/** A multiplexer that does not answer, in the words of a report: where it was looked for, and what to do. */
export function unreachableMessage(resolved: ResolvedMux, error: unknown): string {
  const remedy = resolved.remedy === undefined ? '' : `; ${resolved.remedy}`;
  return `${resolved.mux} is not reachable at ${resolved.where}: ${messageOf(error)}${remedy}`;
}

/** A multiplexer failure as the CLI reports it: exit 1, and in JSON the refusal reason it stands for. */
function muxFailure(error: unknown, resolved: ResolvedMux): unknown {
  if (!(error instanceof MuxError)) return error;
  const message = error.reason === 'unreachable' ? unreachableMessage(resolved, error) : error.message;
  return new ExitError(message, EXIT.failure, { code: error.reason, mux: error.mux ?? null, phase: error.phase, delivery: error.delivery });
}

async function withPort<T>(flags: MuxFlags, io: CliIO, body: (port: MuxPort, resolved: ResolvedMux) => Promise<T>): Promise<T> {
  const resolved = resolveMux(flags, io);
  // A held binding when the caller lends one; a server that cannot be bound is left for the port to report as it always does.
  const held = io.tmuxBindings !== undefined && resolved.tmuxEndpoint !== undefined ? await io.tmuxBindings.borrow(resolved.tmuxEndpoint, io.env).catch(() => undefined) : undefined;
  const port = openResolvedMux(resolved, io, held);
  try {
    return await body(port, resolved);
  } catch (error) {
    throw muxFailure(error, resolved);
  } finally {
    await port.close();
    if (held !== undefined) io.tmuxBindings?.giveBack(held);
  }
}

// ---- snapshot --------------------------------------------------------------------------------

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function paneLine(pane: MuxPane): string {
  const facts = [
    pane.cwd === '' ? '-' : pane.cwd,
    pane.paneLabel === undefined ? undefined : `label ${JSON.stringify(pane.paneLabel)}`,
    pane.terminalTitle === undefined ? undefined : `title ${JSON.stringify(pane.terminalTitle)}`,
    pane.foregroundCommand === undefined ? undefined : `running ${pane.foregroundCommand}`,
  ].filter((fact) => fact !== undefined);
  return `    ${pane.paneId} ${pane.agent}/${pane.status}${pane.alive ? '' : ' (dead)'}${pane.focused ? ' *' : ''}  ${foldBody(facts.join('  '))}`;
}

/** Spaces, their tabs and their panes as an indented tree; `*` marks the focused tab and pane. */
function renderMuxSnapshot(snapshot: MuxSnapshot): string[] {
  if (snapshot.spaces.length === 0) return ['(no spaces)'];
  const lines: string[] = [];
  for (const space of snapshot.spaces) {
    lines.push(`${foldBody(space.label)} ${space.spaceId}${space.focused ? ' (focused)' : ''}  ${plural(space.tabCount, 'tab')}, ${plural(space.paneCount, 'pane')}`);
    for (const tab of snapshot.tabs.filter((candidate) => candidate.spaceId === space.spaceId).sort((a, b) => a.number - b.number)) {
      lines.push(`  ${tab.number}: ${foldBody(tab.label)} ${tab.tabId}${tab.focused ? ' *' : ''}`);
      for (const pane of snapshot.panes.filter((candidate) => candidate.tabId === tab.tabId)) lines.push(paneLine(pane));
    }
  }
  return lines;
}

/** How long a host may take over its snapshot (one multiplexer read). */
const HOST_SNAPSHOT_BUDGET_MS = 30_000;

const SNAPSHOT_TABLES = [
  { list: 'spaces', title: 'Spaces', columns: [{ header: 'Space', fields: ['space_id'] }, { header: 'Label', fields: ['label'] }, { header: 'Tabs', fields: ['tab_count'] }, { header: 'Panes', fields: ['pane_count'] }] },
  { list: 'tabs', title: 'Tabs', columns: [{ header: 'Space', fields: ['space_id'] }, { header: 'Tab', fields: ['tab_id'] }, { header: 'Label', fields: ['label'] }] },
  { list: 'panes', title: 'Panes', columns: [{ header: 'Space', fields: ['space_label'] }, { header: 'Pane', fields: ['pane_id'] }, { header: 'Agent', fields: ['agent', 'status'], join: '/' }, { header: 'Cwd', fields: ['cwd'] }] },
];

/** Every host's snapshot, merged (see runAcrossHosts); each host reads the multiplexer its own environment selects. */
async function snapshotAcrossHosts(options: SnapshotFlags, io: CliIO): Promise<number> {
  // Loaded only when asked for: a plain snapshot never loads the hosts layer.
  const { runAcrossHosts } = await import('../all-hosts.js');
  return runAcrossHosts(
    {
      method: 'mux.snapshot',
      params: {},
      hostBudgetMs: HOST_SNAPSHOT_BUDGET_MS,
      tables: SNAPSHOT_TABLES,
      local: () => withPort(options, io, async (port, resolved) => muxSnapshotJson(resolved.mux, await port.snapshot())),
    },
    io,
    options.json === true,
  );
}

async function snapshotCommand(options: SnapshotFlags, io: CliIO): Promise<number | void> {
  if (options.allHosts) return snapshotAcrossHosts(options, io);
  await withPort(options, io, async (port, resolved) => {
    const snapshot = await port.snapshot();
    if (options.json) {
      writeJson(io, { mux: resolved.mux, chosen_by: resolved.chosenBy, endpoint: resolved.endpoint, ...muxSnapshotJson(resolved.mux, snapshot) });
      return;
    }
    writeLine(io.stdout, `${resolved.mux} at ${resolved.where}`);
    for (const line of renderMuxSnapshot(snapshot)) writeLine(io.stdout, line);
  });
}

// ---- probe -----------------------------------------------------------------------------------

type CheckStatus = 'pass' | 'fail' | 'skipped';
type ProbeVerdict = 'pass' | 'fail' | 'proves_nothing';

function statusOf(result: conformance.ConformanceResult): CheckStatus {
  return result.problems.length > 0 ? 'fail' : result.skipped !== undefined ? 'skipped' : 'pass';
}

/**
 * The verdict of a read-only run. A multiplexer that could not be read fails the first check and
 * skips the rest: that run proves nothing, which is never reported as a pass.
 */
function probeVerdict(results: readonly conformance.ConformanceResult[]): ProbeVerdict {
  if (results.length === 0 || statusOf(results[0]!) === 'fail') return 'proves_nothing';
  return results.some((result) => statusOf(result) === 'fail') ? 'fail' : 'pass';
}

const MARKS: Readonly<Record<CheckStatus, string>> = { pass: '✓', fail: '✗', skipped: '-' };

async function probeCommand(options: MuxFlags, io: CliIO): Promise<number> {
  return withPort(options, io, async (port, resolved) => {
    // The checks load only here: the pane verbs share this module and need none of them.
    const { conformance: checks } = await import('../../mux/index.js');
    const results = await checks.runReadOnlyChecks(port);
    const verdict = probeVerdict(results);
    const count = (status: CheckStatus): number => results.filter((result) => statusOf(result) === status).length;
    if (options.json) {
      writeJson(io, {
        mux: resolved.mux,
        chosen_by: resolved.chosenBy,
        endpoint: resolved.endpoint,
        verdict,
        reachable: verdict !== 'proves_nothing',
        passed: count('pass'),
        failed: count('fail'),
        skipped: count('skipped'),
        checks: results.map((result) => ({ check: result.check, status: statusOf(result), problems: result.problems, skipped: result.skipped ?? null })),
      });
    } else {
      writeLine(io.stdout, `probing ${resolved.mux} at ${resolved.where} (read-only checks)`);
      for (const result of verdict === 'proves_nothing' ? results.slice(0, 1) : results) {
        const status = statusOf(result);
        writeLine(io.stdout, `${MARKS[status]} ${result.check}${status === 'skipped' ? ` (skipped: ${result.skipped})` : ''}`);
        for (const problem of result.problems) writeLine(io.stdout, `    ${problem}`);
      }
      if (verdict === 'proves_nothing') {
        writeLine(io.stdout, `${resolved.mux} could not be read, so this probe proves nothing (${plural(results.length - 1, 'check')} not run)`);
      } else {
        const applicable = count('pass') + count('fail');
        writeLine(io.stdout, `${count('pass')} of ${plural(applicable, 'applicable check')} passed${count('skipped') > 0 ? `, ${count('skipped')} not applicable` : ''}`);
      }
    }
    return verdict === 'pass' ? EXIT.ok : EXIT.failure;
  });
}

// ---- capabilities ----------------------------------------------------------------------------

function renderDeclaration(mux: MuxName, declaration: MuxDeclaration): string[] {
  const latency = declaration.topologyLatency.kind === 'push' ? 'pushed' : `seen within ${declaration.topologyLatency.ms} ms`;
  const lines = [`${mux}: ${declaration.spaces === 'one' ? 'one space' : 'many spaces'}, topology changes ${latency}`];
  for (const capability of MUX_CAPABILITIES) {
    const note = declaration.notes[capability];
    lines.push(`  ${declaration.supports[capability] ? '✓' : '✗'} ${capability}${note === undefined ? '' : ` — ${note}`}`);
  }
  if (declaration.unsupportedKeys.length > 0) lines.push(`  keys it cannot send: ${declaration.unsupportedKeys.join(', ')}`);
  return lines;
}

async function capabilitiesCommand(options: MuxFlags, io: CliIO): Promise<void> {
  const muxes = options.mux === undefined ? MUX_NAMES : [options.mux];
  if (options.json) {
    writeJson(io, { muxes: muxes.map((mux) => declarationJson(mux, MUX_DECLARATIONS[mux])) });
    return;
  }
  muxes.forEach((mux, index) => {
    if (index > 0) writeLine(io.stdout);
    for (const line of renderDeclaration(mux, MUX_DECLARATIONS[mux])) writeLine(io.stdout, line);
  });
}

const MUX_DEFAULT = 'the multiplexer (default: DROVER_MUX, else the session this runs in, else tmux)';

export function registerMuxCommands(program: Command, context: CommandContext): void {
  const mux = program
    .command('mux')
    .description('the multiplexer port: snapshot, live read-only probe, declared capabilities');
  const muxOption = (what: string): Option => new Option('--mux <name>', what).choices(MUX_NAMES);

  mux
    .command('snapshot')
    .description('list spaces, tabs and panes as the mux port publishes them')
    .addOption(muxOption(MUX_DEFAULT))
    .option('--all-hosts', 'this machine and every host of `drover host list`, merged: each row carries "host", "stale" and "stale_age_ms", and "hosts" each machine\'s health (see drover pane map --help)')
    .option('--json', 'print one JSON document')
    .action(context.action(snapshotCommand));

  mux
    .command('probe')
    .description('run the read-only conformance checks against the live multiplexer (exit 1 unless all applicable checks pass)')
    .addOption(muxOption(MUX_DEFAULT))
    .option('--json', 'print one JSON document')
    .action(context.action(probeCommand));

  mux
    .command('capabilities')
    .description("what each multiplexer's adapter declares: capabilities, keys it cannot send, notes and facts")
    .addOption(muxOption('only this multiplexer (default: all of them)'))
    .option('--json', 'print one JSON document')
    .action(context.action(capabilitiesCommand));
}
