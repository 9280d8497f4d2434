import type { Command } from 'commander';
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { run } from '../../process/index.js';
import { Criteria, Endpoint, Server, ServerUnreachableError, type Snapshot } from '../../tmux/index.js';
import { openServer, resolveEndpoint, type SocketFlags } from '../endpoint.js';
import { UsageError, shellQuote, writeJson, writeLine, type CliIO } from '../io.js';
import { renderSnapshot } from '../render.js';
import { clearUpState, readUpState, writeUpState } from '../state.js';
import type { CommandContext } from '../program.js';

interface UpOptions extends SocketFlags {
  json?: boolean;
  session: string;
}

function attachArgv(endpoint: Endpoint, session: string): string[] {
  return ['tmux', ...(endpoint.socketName !== undefined ? ['-L', endpoint.socketName] : ['-S', endpoint.socketPath]), 'attach', '-t', session];
}

function report(io: CliIO, json: boolean, server: Server, snapshot: Snapshot, session: string, started: 'started' | 'reused' | 'borrowed'): void {
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
      snapshot: snapshot.toJSON(),
    });
    return;
  }
  const what = started === 'started' ? 'started a private tmux server' : started === 'reused' ? 'using the private tmux server started earlier' : 'using the tmux server';
  writeLine(io.stdout, `drover: ${what}${record && started !== 'borrowed' ? ` (pid ${record.pid})` : ''}`);
  writeLine(io.stdout, `socket: ${server.endpoint.socketPath}`);
  for (const line of renderSnapshot(snapshot)) writeLine(io.stdout, line);
  writeLine(io.stdout, `attach: ${attach.map(shellQuote).join(' ')}`);
  if (started !== 'borrowed') writeLine(io.stdout, 'stop:   drover down');
}

async function ensureSession(server: Server, name: string): Promise<void> {
  const snapshot = await server.snapshot();
  if (!snapshot.sessions.toArray().some((s) => s.sessionName === name)) await server.newSession({ name });
}

/** `drover up`: the main job. No -L/-S: a private tmux server drover owns. */
async function up(options: UpOptions, io: CliIO): Promise<void> {
  if (options.session === '') throw new UsageError('--session needs a name');
  if (options.socketName !== undefined || options.socketPath !== undefined) {
    const { endpoint } = resolveEndpoint(options, io);
    let server: Server;
    try {
      server = await Server.open(endpoint, { env: io.env });
    } catch (error) {
      if (!(error instanceof ServerUnreachableError)) throw error;
      // A named server that is not running yet: tmux starts it with the first session. It is the user's, not drover's.
      await startNamedServer(endpoint, options.session, io);
      server = await Server.open(endpoint, { env: io.env });
    }
    try {
      await ensureSession(server, options.session);
      report(io, options.json === true, server, await server.snapshot(), options.session, 'borrowed');
    } finally {
      await server.close();
    }
    return;
  }

  const existing = readUpState(io.env);
  if (existing?.alive) {
    const server = await Server.open(Endpoint.fromSocketPath(existing.record.socketPath, { env: io.env, executable: existing.record.executable }), { env: io.env });
    try {
      await ensureSession(server, options.session);
      report(io, options.json === true, server, await server.snapshot(), options.session, 'reused');
    } finally {
      await server.close();
    }
    return;
  }
  if (existing) discardStale(existing.record.directory, io);

  const server = await Server.start({ persistent: true, env: io.env });
  const record = server.ownedRecord!;
  try {
    await server.newSession({ name: options.session, cwd: io.cwd });
    writeUpState(io.env, { record, session: options.session, startedAt: new Date().toISOString() });
    const snapshot = await server.snapshot();
    // The daemon outlives this process: release the binding, keep the server.
    const borrowed = await Server.open(server.endpoint, { env: io.env });
    report(io, options.json === true, borrowed, snapshot, options.session, 'started');
    await borrowed.close();
  } catch (error) {
    await server.close().catch(() => undefined);
    clearUpState(io.env);
    throw error;
  }
}

async function startNamedServer(endpoint: Endpoint, session: string, io: CliIO): Promise<void> {
  const env = { ...io.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  // tmux makes its per-user socket directory itself only for -L; drover always addresses by path.
  if (endpoint.socketName !== undefined) mkdirSync(dirname(endpoint.socketPath), { recursive: true, mode: 0o700 });
  const result = await run([endpoint.executable, ...endpoint.args, 'new-session', '-d', '-s', session], { env, cwd: io.cwd });
  if (!result.ok) throw new ServerUnreachableError(`could not start tmux at ${endpoint.socketPath}: ${result.stderrText().trim()}`);
}

/** Removes the private directory of a recorded server whose daemon is gone. */
function discardStale(directory: string, io: CliIO): void {
  if (basename(directory).startsWith('drover-')) rmSync(directory, { recursive: true, force: true });
  clearUpState(io.env);
}

async function down(options: SocketFlags & { json?: boolean }, io: CliIO): Promise<void> {
  if (options.socketName !== undefined || options.socketPath !== undefined) {
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
  const state = readUpState(io.env);
  if (!state) {
    if (options.json) writeJson(io, { stopped: false, reason: 'no drover-owned server is recorded' });
    else writeLine(io.stdout, 'drover: no private server is running (nothing to stop)');
    return;
  }
  if (state.alive) {
    const server = await Server.adopt(state.record, { env: io.env });
    await server.close();
  } else {
    discardStale(state.record.directory, io);
  }
  clearUpState(io.env);
  if (options.json) writeJson(io, { stopped: true, socket_path: state.record.socketPath, owned: true, pid: state.record.pid });
  else writeLine(io.stdout, `drover: stopped the private tmux server (pid ${state.record.pid}) and removed ${state.record.directory}`);
}

async function snapshotCommand(options: SocketFlags & { json?: boolean; where?: string; clients?: boolean }, io: CliIO): Promise<void> {
  let criteria: Criteria | undefined;
  if (options.where !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options.where);
    } catch (error) {
      throw new UsageError(`--where is not valid JSON: ${(error as Error).message}`);
    }
    criteria = parsed !== null && typeof parsed === 'object' && 'version' in parsed ? Criteria.fromJSON(parsed) : Criteria.build('pane', parsed);
  }
  const server = await openServer(options, io);
  try {
    const snapshot = await server.snapshot({ clients: options.clients === true, signal: io.signal });
    if (!criteria) {
      if (options.json) writeJson(io, snapshot.toJSON());
      else for (const line of renderSnapshot(snapshot)) writeLine(io.stdout, line);
      return;
    }
    const source = { session: snapshot.sessions, window: snapshot.windows, pane: snapshot.panes, client: options.clients ? snapshot.clients : undefined }[criteria.entity];
    if (!source) throw new UsageError('client criteria need --clients');
    const matches = source.where(criteria);
    if (options.json) writeJson(io, { entity: criteria.entity, matches: matches.toJSON() });
    else for (const record of matches) writeLine(io.stdout, JSON.stringify(record.toJSON()));
  } finally {
    await server.close();
  }
}

export function registerServerCommands(program: Command, context: CommandContext): void {
  program
    .command('up')
    .description('start (or reuse) a private tmux server drover owns, with a session; with -L/-S use that server')
    .option('--session <name>', 'session to create if missing', 'drover')
    .option('--json', 'print one JSON document')
    .action(context.action(up));

  program
    .command('down')
    .description('stop the private server `drover up` started (with -L/-S: kill that server)')
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
