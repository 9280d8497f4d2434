import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AbortedError, FileLockError, tryLockFile, waitForLock, type FileLock, type LockWait } from '../process/index.js';
import { PaneLockError } from './errors.js';
import type { Placement } from './model.js';

export type { LockWait };

export const LOCK_RETRY_MS = 50;

/** SHA-256 hex of UTF-8 `backend NUL session NUL pane`: duplicate placements of one pane share it. */
export function paneLockKey(backend: string, session: string, pane: string): string {
  return createHash('sha256').update(`${backend}\0${session}\0${pane}`, 'utf8').digest('hex');
}

/** A placement's lock key; a pane on another host is keyed apart from any pane of this machine. */
export function placementLockKey(placement: Pick<Placement, 'backend' | 'session'> & { pane: string; host?: string | null }): string {
  const session = placement.host === undefined || placement.host === null ? placement.session : `${placement.host}::${placement.session}`;
  return paneLockKey(placement.backend, session, placement.pane);
}

/**
 * The lock of a pane keyed by where it stands now (its space and id on this machine's
 * multiplexer), which `drover pane deliver` and a page's write take whether or not a member is
 * placed there: a member placed in the pane holds the same key while its placement is current.
 */
export function currentPaneLockKey(mux: Placement['backend'], spaceId: string, paneId: string): string {
  return placementLockKey({ backend: mux, session: spaceId, pane: paneId });
}

/**
 * A held pane input lock. The lock belongs to this process, so it is released by `release()`
 * or by the process's death, whichever comes first.
 */
export class PaneLockGuard {
  constructor(
    readonly key: string,
    private readonly lock: FileLock,
  ) {}

  get path(): string {
    return this.lock.path;
  }

  get held(): boolean {
    return this.lock.held;
  }

  release(): void {
    this.lock.release();
  }
}

export type AcquireAllResult = { guards: PaneLockGuard[] } | { busyKey: string };

/**
 * Process-shared pane input locks: one file per pane, `<key>.lock`, created 0600 and never
 * unlinked (unlinking a held file would let another process lock a different inode for the
 * same pane). Each is a FileLock: the operating system's fcntl lock, taken in a tenth of a
 * millisecond, where starting util-linux `flock` for each attempt took 10–20 ms; held by
 * this process, refused to any other holder here or elsewhere, dropped when the process dies.
 */
export class PaneLocks {
  readonly directory: string;
  private directoryReady = false;

  constructor(directory: string) {
    this.directory = directory;
  }

  pathFor(key: string): string {
    if (!/^[0-9a-f]{64}$/u.test(key)) throw new PaneLockError(`pane lock key must be 64 lowercase hex digits, got '${key}'`, this.directory);
    return join(this.directory, `${key}.lock`);
  }

  /** One exclusive non-blocking attempt: the guard, or null while another holder has it. */
  async tryAcquire(key: string): Promise<PaneLockGuard | null> {
    const path = this.pathFor(key);
    if (!this.directoryReady) {
      try {
        mkdirSync(this.directory, { recursive: true, mode: 0o700 });
      } catch (cause) {
        throw new PaneLockError(`cannot create the pane lock directory ${this.directory}: ${(cause as Error).message}`, this.directory, { cause });
      }
      this.directoryReady = true;
    }
    try {
      const lock = await tryLockFile(path, 'pane lock file');
      return lock === null ? null : new PaneLockGuard(key, lock);
    } catch (cause) {
      if (cause instanceof FileLockError) throw new PaneLockError(cause.message, path, { cause });
      throw cause;
    }
  }

  /** Waits for the lock as waitForLock does, every 50 ms. Null: still busy at the deadline. */
  async acquire(key: string, wait: LockWait): Promise<PaneLockGuard | null> {
    return waitForLock(() => this.tryAcquire(key), wait, LOCK_RETRY_MS, () => new AbortedError('interrupted while waiting for the pane input lock; nothing was typed', { phase: 'lock', delivery: 'not_sent' }));
  }

  /**
   * Takes several pane locks in sorted key order (duplicates once), so two writers that need
   * overlapping sets cannot deadlock. On a busy key every guard taken so far is released.
   */
  async acquireAll(keys: Iterable<string>, wait: LockWait): Promise<AcquireAllResult> {
    const guards: PaneLockGuard[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) {
        const guard = await this.acquire(key, wait);
        if (!guard) {
          releaseAll(guards);
          return { busyKey: key };
        }
        guards.push(guard);
      }
    } catch (error) {
      releaseAll(guards);
      throw error;
    }
    return { guards };
  }
}

export function releaseAll(guards: readonly PaneLockGuard[]): void {
  for (const guard of guards) guard.release();
}

/**
 * Runs `body` holding every lock in `keys` (taken as `acquireAll` takes them) and lets them go
 * after, whatever `body` does. A lock still busy at the deadline runs nothing and throws the
 * error `busy` makes for that key.
 */
export async function holdingKeys<T>(locks: PaneLocks, keys: Iterable<string>, wait: LockWait, busy: (key: string) => Error, body: () => Promise<T>): Promise<T> {
  const taken = await locks.acquireAll(keys, wait);
  if ('busyKey' in taken) throw busy(taken.busyKey);
  try {
    return await body();
  } finally {
    releaseAll(taken.guards);
  }
}
