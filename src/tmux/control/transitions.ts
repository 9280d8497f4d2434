/**
 * One control client at a time starts or ends, per tmux server, across drover's processes.
 *
 * tmux before 3.7 crashes (the whole server, every session in it) when an attached client goes
 * away while a control client is still identifying itself: the server writes
 * `%client-detached` to a client whose control state does not exist yet. drover ends a control
 * client every time a wait, a delivery or a command's connection closes, so several of them
 * opening and closing at once (a few waits through MCP, the page and the fleet) would meet that
 * window sooner or later. Each start (from the spawn until tmux has answered on the new client,
 * which it does only once the client is set up) and each end (from closing its input until the
 * client has exited) waits here for the one before it on the same server: first for this
 * process's own (in order), then for every other drover process's, through a lock file beside
 * the server's socket (`SOCKET.drover-clients.lock`). Where that file cannot be made, this
 * process's own order still holds.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortedError, FileLockError, TimeoutError, tryLockFile, type FileLock } from '../../process/index.js';
import type { Deadline } from '../deadline.js';

const turns = new Map<string, Promise<void>>();
/** How often a busy lock file is tried again: a start or an end takes a few milliseconds. */
const LOCK_RETRY_MS = 2;
/** An end waits for other processes this long at most, then ends its client anyway. */
const END_WAIT_MS = 2000;

/**
 * Runs `work` once no other start or end of a control client on the server at `socketPath` is
 * under way, here or in another drover process. A start (given its `deadline`) waits within
 * it: a wait past it, or aborted, runs nothing. An end waits for this process's earlier ones
 * (each bounded by its own deadline or grace) and for other processes END_WAIT_MS at most.
 */
export async function controlClientTransition<T>(socketPath: string, deadline: Deadline | undefined, work: () => Promise<T>): Promise<T> {
  const before = turns.get(socketPath) ?? Promise.resolve();
  let finished!: () => void;
  const mine = new Promise<void>((resolve) => (finished = resolve));
  const queue = before.then(() => mine);
  turns.set(socketPath, queue);
  try {
    if (deadline !== undefined) await withinDeadline(before, deadline);
    else await before;
    const lock = await otherProcessesTurn(socketPath, deadline);
    try {
      return await work();
    } finally {
      lock?.release();
    }
  } finally {
    finished();
    if (turns.get(socketPath) === queue) turns.delete(socketPath);
  }
}

async function withinDeadline(turn: Promise<void>, deadline: Deadline): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      turn,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(`another control client of this tmux server was still starting or ending after ${deadline.timeoutMs} ms`, deadline.timeoutMs, { phase: 'connect', delivery: 'not_sent' })), deadline.remaining());
        onAbort = () => reject(new AbortedError('opening the control connection was aborted', { delivery: 'not_sent' }));
        deadline.signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) deadline.signal?.removeEventListener('abort', onAbort);
  }
}

/** The lock other drover processes take for the same server, or undefined where there is none to take (or an end waited long enough). */
async function otherProcessesTurn(socketPath: string, deadline: Deadline | undefined): Promise<FileLock | undefined> {
  const path = `${socketPath}.drover-clients.lock`;
  const endBy = performance.now() + END_WAIT_MS;
  for (;;) {
    let lock: FileLock | null;
    try {
      lock = await tryLockFile(path, 'control client lock file');
    } catch (error) {
      if (error instanceof FileLockError) return undefined;
      throw error;
    }
    if (lock !== null) return lock;
    // A start keeps to its own deadline (a timeout or an abort there runs nothing).
    if (deadline !== undefined) deadline.remaining();
    else if (performance.now() >= endBy) return undefined;
    await sleep(LOCK_RETRY_MS);
  }
}
