import type { Command } from 'commander';
import { closeSync, fstatSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { DroverError, errnoReason, run } from '../../process/index.js';
import {
  Criteria,
  Endpoint,
  Server,
  ServerUnreachableError,
  clientEnvironment,
  defaultConfigFiles,
  loadConfigFiles,
  resolvedSocketPath,
  type ConfigLoad,
  type OwnedDaemonRecord,
  type Snapshot,
} from '../../tmux/index.js';
import { tmuxPaneKeys, withPaneKeys } from '../../mux/index.js';
import { openServer, resolveEndpoint, type SocketFlags } from '../endpoint.js';
import { EXIT, UsageError, collect, shellQuote, writeJson, writeLine, writeWarning, type CliIO } from '../io.js';
import type { LoadFlags, LoadOutcome } from './workspace.js';
import { droverCommand } from '../invocation.js';
import { progressOn } from '../progress.js';
import { renderSnapshot } from '../render.js';
import { clearUpState, readUpState, upFile, upServerRuns, withUpLock, writeUpState } from '../state.js';
import type { CommandContext } from '../program.js';

const DEFAULT_SESSION = 'drover';
/** How long tmux may take over the user's configuration: a plugin manager's `run-shell` can take seconds. */
const CONFIG_LOAD_MS = 60_000;

interface UpOptions extends LoadFlags {
  /** Absent: the default session, or the file's session with FILE. */
  session?: string;
  /** The tmux configuration files a server this call starts loads, instead of tmux's own. */
  tmuxConfig?: string[];
}

type ServerOrigin = 'started' | 'reused' | 'borrowed';

/** What `drover up FILE` adds to the report: the load's JSON and its lines for people. */
interface WorkspaceReport {
  readonly document: Record<string, unknown>;
  readonly lines: readonly string[];
}

export function attachArgv(endpoint: Endpoint, session: string): string[] {
  return ['tmux', ...(endpoint.socketName !== undefined ? ['-L', endpoint.socketName] : ['-S', endpoint.socketPath]), 'attach', '-t', session];
}

function report(io: CliIO, json: boolean, server: Server, snapshot: Snapshot, session: string, target: UpTarget, workspace?: WorkspaceReport): void {
  const started = target.origin;
  const attach = attachArgv(server.endpoint, session);
  const record = server.ownedRecord ?? readUpState(io.env)?.record;
  if (json) {
    writeJson(io, {
      socket_path: server.endpoint.socketPath,
      owned: started !== 'borrowed',
      server: started,
      pid: started === 'borrowed' ? null : (record?.pid ?? null),
      session,
      attach: attach,
      attach_command: attach.map(shellQuote).join(' '),
      tmux_config: target.config ?? null,
      snapshot: snapshot.toJSON(),
      ...(workspace === undefined ? {} : { workspace: workspace.document }),
    });
    return;
  }
  const what =
    started === 'started'
      ? 'started a private tmux server'
      : started === 'reused'
        ? 'using the private tmux server started earlier'
        : target.startedWith !== undefined
          ? `started tmux on the server you named; it is yours, not drover's private one (\`${droverCommand(io.env)} down\` stops it only with --kill-server)`
          : 'using the tmux server';
  writeLine(io.stdout, `drover: ${what}${record && started !== 'borrowed' ? ` (pid ${record.pid})` : ''}`);
  writeLine(io.stdout, `socket: ${server.endpoint.socketPath}`);
  if (target.config !== undefined && target.config.files.length > 0) writeLine(io.stdout, `config: ${target.config.files.join(', ')}`);
  for (const line of workspace?.lines ?? []) writeLine(io.stdout, line);
  for (const line of renderSnapshot(snapshot)) writeLine(io.stdout, line);
  writeLine(io.stdout, `attach: ${attach.map(shellQuote).join(' ')}`);
  if (started !== 'borrowed') writeLine(io.stdout, `stop:   ${droverCommand(io.env)} down`);
}

async function ensureSession(server: Server, name: string, io: CliIO): Promise<void> {
  const snapshot = await server.snapshot();
  if (!snapshot.sessions.toArray().some((s) => s.sessionName === name)) await server.newSession({ name, cwd: io.cwd });
}

/** The server `drover up` works on. `owned`: the binding of a private server this call started (closing it retires it). */
interface UpTarget {
  readonly endpoint: Endpoint;
  readonly origin: ServerOrigin;
  readonly owned?: Server;
  /** A named server this call started, with this session only to keep it alive. */
  readonly startedWith?: string;
  /** The configuration the private server this call started ran, and what tmux reported. */
  readonly config?: ConfigLoad;
}

/**
 * The files of --tmux-config, resolved against the working directory and each opened once
 * here: a name that cannot be read is a usage error before any server starts.
 */
function configFilesOf(options: UpOptions, io: CliIO): string[] | undefined {
  return options.tmuxConfig?.map((given) => {
    const file = resolve(io.cwd, given);
    let reason: string | undefined;
    try {
      const fd = openSync(file, 'r');
      if (fstatSync(fd).isDirectory()) reason = 'it is a directory';
      closeSync(fd);
    } catch (error) {
      reason = errnoReason(error);
    }
    if (reason !== undefined) throw new UsageError(`--tmux-config ${given}: cannot read the tmux configuration file (${reason})`);
    return file;
  });
}

/** Says what tmux reported while running the configuration of the server this call started. */
function warnAboutConfig(config: ConfigLoad, io: CliIO): void {
  if (config.errors.length === 0) return;
  writeWarning(io, [`tmux reported errors in its configuration; the server runs without what failed:`, ...config.errors].join('\n'));
}

/**
 * -L/-S: that server, started with `firstSession` if it is not running (tmux needs a session
 * to stay up). Otherwise drover's private server: the recorded one if it still runs, else a
 * new one, recorded for `drover down` under `recordedSession`. A server started here runs
 * `configFiles`, else the tmux configuration tmux itself would; one already running is left as it is.
 */
async function upServer(options: SocketFlags, io: CliIO, firstSession: string, recordedSession: string, configFiles: string[] | undefined): Promise<UpTarget> {
  const unused = (): void => {
    if (configFiles !== undefined) writeWarning(io, '--tmux-config changed nothing: the server was already running');
  };
  if (options.socketName !== undefined || options.socketPath !== undefined) {
    const { endpoint } = resolveEndpoint(options, io);
    try {
      await (await Server.open(endpoint, { env: io.env })).close();
      unused();
      return { endpoint, origin: 'borrowed' };
    } catch (error) {
      if (!(error instanceof ServerUnreachableError)) throw error;
      // A named server that is not running yet: tmux starts it with the first session. It is the user's, not drover's.
      return { endpoint, origin: 'borrowed', startedWith: await startNamedServer(endpoint, firstSession, io, configFiles) };
    }
  }
  const existing = readUpState(io.env);
  if (existing && (await upServerRuns(existing, io.env))) {
    unused();
    return { endpoint: Endpoint.fromSocketPath(existing.record.socketPath, { env: io.env, executable: existing.record.executable }), origin: 'reused' };
  }
  if (existing) forgetStale(existing.record, io);
  const owned = await Server.start({ persistent: true, env: io.env });
  writeUpState(io.env, { record: owned.ownedRecord!, session: recordedSession, startedAt: new Date().toISOString() });
  const target: UpTarget = { endpoint: owned.endpoint, origin: 'started', owned };
  try {
    // The user attaches to this server: it gets their tmux configuration, run before any session exists as tmux runs it at start.
    const config = await loadConfigFiles(owned, configFiles ?? defaultConfigFiles(io.env), { timeoutMs: CONFIG_LOAD_MS, signal: io.signal });
    warnAboutConfig(config, io);
    return { ...target, config };
  } catch (error) {
    await retire(target, io);
    throw error;
  }
}

/** `drover up [FILE]`: the main job. No -L/-S: a private tmux server drover owns. */
async function up(options: UpOptions, io: CliIO, file?: string): Promise<number | void> {
  if (file !== undefined) return upWorkspace(file, options, io);
  if (options.compensate || options.createDirs || options.expandEnv !== undefined || options.timeoutMs !== undefined) {
    throw new UsageError('--compensate, --create-dirs, --expand-env and --timeout-ms go with a workspace file: drover up FILE');
  }
  const session = options.session ?? DEFAULT_SESSION;
  if (session === '') throw new UsageError('--session needs a name');
  const configFiles = configFilesOf(options, io);
  await withUpLock(io.env, io.signal, async () => {
    const target = await upServer(options, io, session, session, configFiles);
    try {
      // The daemon outlives this process: report through a borrowed binding, keep the server.
      const server = await Server.open(target.endpoint, { env: io.env });
      try {
        await ensureSession(server, session, io);
        report(io, options.json === true, server, await server.snapshot(), session, target);
      } finally {
        await server.close();
      }
    } catch (error) {
      await retire(target, io);
      throw error;
    }
  });
}

/**
 * `drover up FILE`: the workspace's session instead of the default one, loaded exactly as
 * `drover workspace load` does, with its exit codes. A server this call started is removed
 * again when the load leaves it with no session.
 */
async function upWorkspace(file: string, options: UpOptions, io: CliIO): Promise<number> {
  if (options.session !== undefined) throw new UsageError('--session does not go with a workspace file: the file names its session');
  const workspace = await import('./workspace.js');
  const prepared = await workspace.prepareLoad(file, options, io);
  const sessionName = prepared.plan.sessionName;
  const configFiles = configFilesOf(options, io);
  // The load itself runs outside the lock: another up meanwhile finds the server recorded and uses it.
  const target = await withUpLock(io.env, io.signal, () => upServer(options, io, `drover-up-${process.pid}`, sessionName, configFiles));
  let outcome: LoadOutcome;
  try {
    outcome = await workspace.applyWorkspace(target.endpoint, prepared, io, progressOn(io, options));
  } catch (error) {
    await settleStartedServer(target, io).catch(() => undefined);
    throw error;
  }
  await settleStartedServer(target, io);
  if (outcome.error !== undefined) return workspace.reportFailedLoad(io, options.json === true, target.endpoint, outcome, prepared.plan);
  const server = await Server.open(target.endpoint, { env: io.env });
  try {
    const loaded = { document: workspace.loadDocument(target.endpoint, outcome), lines: workspace.loadSummary(outcome, prepared.plan) };
    report(io, options.json === true, server, await server.snapshot(), sessionName, target, loaded);
  } finally {
    await server.close();
  }
  return EXIT.ok;
}

/**
 * Drops the session that only kept a named server up, and retires a server of ours that ended
 * up empty. It holds the lock of up, so an up that meanwhile found the server recorded and is
 * giving it a session cannot lose it; an interrupt does not stop it (the tidying is its answer).
 */
async function settleStartedServer(target: UpTarget, io: CliIO): Promise<void> {
  if (target.startedWith === undefined && target.owned === undefined) return;
  await withUpLock(io.env, undefined, async () => {
    let server: Server | undefined;
    try {
      server = await Server.open(target.endpoint, { env: io.env });
      if (target.startedWith !== undefined) await server.session(target.startedWith).kill();
      if (target.owned !== undefined && (await server.snapshot()).sessions.isEmpty()) await retire(target, io);
    } catch (error) {
      // Its last session gone, tmux exits: nothing is left to tidy.
      if (!(error instanceof ServerUnreachableError)) throw error;
    } finally {
      await server?.close();
    }
  });
}

/** Stops a private server this call started and forgets it. */
async function retire(target: UpTarget, io: CliIO): Promise<void> {
  if (target.owned === undefined) return;
  await target.owned.close().catch(() => undefined);
  clearUpState(io.env);
}

/**
 * Starts a named server with one detached session and returns that session's id. tmux loads
 * its configuration itself (and shows any error in that session's pane), from `configFiles` when given.
 */
async function startNamedServer(endpoint: Endpoint, session: string, io: CliIO, configFiles: string[] | undefined): Promise<string> {
  const env = clientEnvironment(io.env);
  // tmux makes its per-user socket directory itself only for -L; drover always addresses by path.
  if (endpoint.socketName !== undefined) mkdirSync(dirname(endpoint.socketPath), { recursive: true, mode: 0o700 });
  const config = (configFiles ?? []).flatMap((file) => ['-f', file]);
  const result = await run([endpoint.executable, ...endpoint.args, ...config, 'new-session', '-d', '-P', '-F', '#{session_id}', '-s', session], { env, cwd: io.cwd });
  if (!result.ok) throw new ServerUnreachableError(`could not start tmux at ${endpoint.socketPath}: ${result.stderrText().trim()}`);
  return result.text().trim();
}

/**
 * Forgets a recorded server that no longer runs (its pid gone, or given to another process)
 * and removes its private directory, saying so: otherwise the record would wedge `up` and `down`.
 */
function forgetStale(record: OwnedDaemonRecord, io: CliIO): void {
  const removed = basename(record.directory).startsWith('drover-');
  if (removed) rmSync(record.directory, { recursive: true, force: true });
  clearUpState(io.env);
  writeLine(
    io.stderr,
    `drover: the private tmux server \`drover up\` started (pid ${record.pid}, socket ${record.socketPath}) no longer runs; forgot it (${upFile(io.env)})${removed ? ` and removed ${record.directory}` : ''}`,
  );
}

async function down(options: SocketFlags & { json?: boolean; killServer?: boolean }, io: CliIO): Promise<void> {
  await withUpLock(io.env, io.signal, () => downHoldingLock(options, io));
}

async function downHoldingLock(options: SocketFlags & { json?: boolean; killServer?: boolean }, io: CliIO): Promise<void> {
  const state = readUpState(io.env);
  if (options.socketName !== undefined || options.socketPath !== undefined) {
    const { endpoint } = resolveEndpoint(options, io);
    const recorded = state !== undefined && resolvedSocketPath(state.record.socketPath) === resolvedSocketPath(endpoint.socketPath);
    if (!recorded) {
      if (!options.killServer) {
        throw new DroverError(
          `the tmux server at ${endpoint.socketPath} is not the private server \`drover up\` started, and drover down stops only that one; pass --kill-server to kill this server and every session in it`,
          { phase: 'validate', delivery: 'not_sent' },
        );
      }
      const server = await openServer(options, io);
      try {
        const result = await server.kill();
        if (!result.ok) throw new ServerUnreachableError(`kill-server failed: ${result.stderrText()}`);
      } finally {
        await server.close().catch(() => undefined);
      }
      if (options.json) writeJson(io, { stopped: true, socket_path: server.endpoint.socketPath, owned: false });
      else writeLine(io.stdout, `drover: killed the tmux server at ${server.endpoint.socketPath}`);
      return;
    }
  }
  if (!state) {
    if (options.json) writeJson(io, { stopped: false, reason: 'no drover-owned server is recorded' });
    else writeLine(io.stdout, 'drover: no private server is running (nothing to stop)');
    return;
  }
  if (!(await upServerRuns(state, io.env))) {
    forgetStale(state.record, io);
    if (options.json) writeJson(io, { stopped: false, reason: 'the recorded server no longer runs; its record was removed' });
    else writeLine(io.stdout, 'drover: no private server is running (nothing to stop)');
    return;
  }
  const server = await Server.adopt(state.record, { env: io.env });
  await server.close();
  clearUpState(io.env);
  if (options.json) writeJson(io, { stopped: true, socket_path: state.record.socketPath, owned: true, pid: state.record.pid });
  else writeLine(io.stdout, `drover: stopped the private tmux server (pid ${state.record.pid}) and removed ${state.record.directory}`);
}

async function snapshotCommand(options: SocketFlags & { json?: boolean; where?: string; clients?: boolean }, io: CliIO): Promise<void> {
  // Refusals name the place in the criteria, never a value (a value can be a secret).
  const criteria = options.where === undefined ? undefined : Criteria.parse(options.where);
  const server = await openServer(options, io);
  try {
    const snapshot = await server.snapshot({ clients: options.clients === true, signal: io.signal });
    // Every pane row in JSON carries its key, which a script holds instead of the bare id.
    const keyed = async (rows: unknown[]): Promise<unknown[]> => withPaneKeys(rows as { pane_id: string }[], await tmuxPaneKeys(server, { signal: io.signal }));
    if (!criteria) {
      if (options.json) writeJson(io, { ...snapshot.toJSON(), panes: await keyed(snapshot.panes.toJSON()) });
      else for (const line of renderSnapshot(snapshot)) writeLine(io.stdout, line);
      return;
    }
    const source = { session: snapshot.sessions, window: snapshot.windows, pane: snapshot.panes, client: options.clients ? snapshot.clients : undefined }[criteria.entity];
    if (!source) throw new UsageError('client criteria need --clients');
    const matches = source.where(criteria);
    if (options.json) writeJson(io, { entity: criteria.entity, matches: criteria.entity === 'pane' ? await keyed(matches.toJSON()) : matches.toJSON() });
    else for (const record of matches) writeLine(io.stdout, JSON.stringify(record.toJSON()));
  } finally {
    await server.close();
  }
}

export function registerServerCommands(program: Command, context: CommandContext): void {
  program
    .command('up')
    .description('start (or reuse) a private tmux server drover owns, with a session; with -L/-S use that server')
    .argument('[file]', 'a workspace file to load as the session (see `drover workspace load`; exit 3: partial effects)')
    .option('--session <name>', `session to create if missing (default ${DEFAULT_SESSION})`)
    .option(
      '--tmux-config <file>',
      "a server this call starts runs this tmux configuration file instead of tmux's own (/etc/tmux.conf, ~/.tmux.conf, ~/.config/tmux/tmux.conf); repeatable, run in order; /dev/null for none",
      collect,
    )
    .option('--expand-env <name>', 'with FILE: expand ${NAME} and $NAME for this variable (repeatable)', collect)
    .option('--create-dirs', "with FILE: create start directories that do not exist")
    .option('--compensate', 'with FILE: on failure, remove the session the load created')
    .option('--timeout-ms <ms>', 'with FILE: total deadline of the load (default as for workspace load)')
    .option('--json', 'print one JSON document')
    .action(context.action(up));

  program
    .command('down')
    .description('stop the private server `drover up` started (-L/-S naming another server needs --kill-server)')
    .option('--kill-server', 'with -L/-S: kill that server even though drover did not start it')
    .option('--json', 'print one JSON document')
    .action(context.action(down));

  program
    .command('snapshot')
    .description('list sessions, windows and panes')
    .option('--json', 'print one JSON document')
    .option('--where <json>', 'criteria: a pane expression, or {"version":1,"entity":…,"where":…}')
    .option('--clients', 'also list attached clients')
    .action(context.action(snapshotCommand));
}
