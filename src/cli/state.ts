import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AbortedError, DroverError, isProcessAlive, tryLockFile, waitForLock, writeFileAtomic } from '../process/index.js';
import { OwnedDaemon, type OwnedDaemonRecord } from '../tmux/index.js';

/** Where drover keeps small state files: $DROVER_STATE_DIR, $XDG_STATE_HOME/drover, ~/.local/state/drover. */
export function stateDirectory(env: NodeJS.ProcessEnv): string {
  if (env.DROVER_STATE_DIR) return env.DROVER_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'drover');
}

/** Where `drover broker serve` listens unless told otherwise, and what host links forward. */
export function defaultBrokerSocket(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'broker', 'broker.sock');
}

/**
 * Where a hub's `drover broker serve` puts its store on this machine when the hub's entry for it
 * names no forward_broker: this drover announces it in its drover-rpc handshake, beside (not
 * instead of) this machine's own broker socket.
 */
export function hubBrokerSocket(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'broker', 'hub.sock');
}

export const BROKER_SOCKET_HELP = 'broker/broker.sock in $DROVER_STATE_DIR, else $XDG_STATE_HOME/drover, else ~/.local/state/drover';

/** Where this machine remembers deliveries by id (see DeliveryLedger). */
export function deliveryLedgerDirectory(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'deliveries');
}

export interface UpState {
  readonly record: OwnedDaemonRecord;
  readonly session: string;
  readonly startedAt: string;
}

/** The file that records the server `drover up` started. */
export function upFile(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'up.json');
}

/** How long `up` or `down` waits for another one: starting a server includes the user's tmux configuration. */
const UP_LOCK_WAIT_MS = 90_000;

/**
 * Runs `work` while no other `drover up` or `drover down` of this state directory runs: each
 * reads the record, may start or stop the server and writes the record, so two at once would
 * each start a server and record only one (the other left running, never stopped by `down`).
 */
export async function withUpLock<T>(env: NodeJS.ProcessEnv, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
  const directory = stateDirectory(env);
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const path = join(directory, 'up.lock');
  const lock = await waitForLock(
    () => tryLockFile(path, 'lock file of drover up'),
    { deadline: performance.now() + UP_LOCK_WAIT_MS, signal },
    20,
    () => new AbortedError('interrupted while waiting for another drover up or down to finish; nothing was started or stopped', { phase: 'lock', delivery: 'not_sent' }),
  );
  if (lock === null) {
    throw new DroverError(`another drover up or down has not finished after ${UP_LOCK_WAIT_MS / 1000} s (it holds ${path}); nothing was started or stopped`, {
      phase: 'lock',
      delivery: 'not_sent',
    });
  }
  try {
    return await work();
  } finally {
    lock.release();
  }
}

function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/**
 * The server `drover up` started, if recorded. `alive` is a cheap guess (its pid runs and its
 * socket is there); upServerRuns() asks the server itself.
 */
export function readUpState(env: NodeJS.ProcessEnv): (UpState & { alive: boolean }) | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(upFile(env), 'utf8'));
  } catch {
    return undefined;
  }
  const state = parsed as Partial<UpState>;
  const record = state.record;
  if (!record || typeof record.socketPath !== 'string' || typeof record.directory !== 'string' || typeof record.pid !== 'number' || typeof record.executable !== 'string') {
    return undefined;
  }
  if (record.startTime !== undefined && typeof record.startTime !== 'number') return undefined;
  return { record, session: String(state.session ?? ''), startedAt: String(state.startedAt ?? ''), alive: isProcessAlive(record.pid) && isSocket(record.socketPath) };
}

/**
 * Whether the recorded server still runs: the server at its socket answers with the recorded
 * pid (and start time). A pid the system has since given to another process does not count.
 */
export async function upServerRuns(state: UpState & { alive: boolean }, env: NodeJS.ProcessEnv): Promise<boolean> {
  return state.alive && (await OwnedDaemon.probe(state.record, { env, timeoutMs: 2000 })) !== undefined;
}

export function writeUpState(env: NodeJS.ProcessEnv, state: UpState): void {
  writeFileAtomic(upFile(env), `${JSON.stringify(state, null, 2)}\n`);
}

export function clearUpState(env: NodeJS.ProcessEnv): void {
  rmSync(upFile(env), { force: true });
}
