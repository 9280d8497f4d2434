import { createHash } from 'node:crypto';
import { closeSync, constants as fs, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { AbortedError, run, SpawnError } from '../process/index.js';
import { systemClock, type Clock } from './clock.js';
import { PaneLockError } from './errors.js';
import type { Placement } from './model.js';

export const LOCK_RETRY_MS = 50;
/** flock(1) exits with this when the lock is held elsewhere (it has no other use for 75). */
const CONFLICT_EXIT_CODE = 75;
/**
 * flock --nonblock returns at once; this only bounds a wedged system. It is the whole
 * five-second input budget because starting a process can take over a second on a
 * loaded machine, and that is slowness, not a missing flock.
 */
const TRY_TIMEOUT_MS = 5000;

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
 * A held pane input lock. The lock belongs to this process's open file description, so it
 * is released by `release()` or by the process's death, whichever comes first.
 */
export class PaneLockGuard {
  readonly key: string;
  readonly path: string;
  private fd: number | undefined;

  constructor(key: string, path: string, fd: number) {
    this.key = key;
    this.path = path;
    this.fd = fd;
  }

  get held(): boolean {
    return this.fd !== undefined;
  }

  release(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }
}

export interface LockWait {
  /** Monotonic deadline (clock.now() units) after which a still-busy lock is given up. */
  deadline: number;
  clock?: Clock;
  /** Stops the wait (AbortedError): an interrupted command gives up before it typed anything. */
  signal?: AbortSignal;
}

export type AcquireAllResult = { guards: PaneLockGuard[] } | { busyKey: string };

/**
 * Process-shared pane input locks: one file per pane, `<key>.lock`, created 0600 without
 * truncation and never unlinked (unlinking a held file would let another process lock a
 * different inode for the same pane). Node has no flock(), so util-linux `flock` takes the
 * lock on a descriptor this process opened and hands down; the lock stays with the
 * descriptor after `flock` exits.
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
    let fd: number;
    try {
      fd = openSync(path, fs.O_RDWR | fs.O_CREAT, 0o600);
    } catch (cause) {
      throw new PaneLockError(`cannot open pane lock file ${path}: ${(cause as Error).message}`, path, { cause });
    }
    try {
      const result = await run(['flock', '--nonblock', '--exclusive', '--conflict-exit-code', String(CONFLICT_EXIT_CODE), '3'], {
        passFds: [fd],
        timeoutMs: TRY_TIMEOUT_MS,
      });
      if (result.exitCode === 0) return new PaneLockGuard(key, path, fd);
      closeSync(fd);
      if (result.exitCode === CONFLICT_EXIT_CODE) return null;
      throw new PaneLockError(
        `cannot lock pane lock file ${path}: flock exited with ${result.exitCode ?? result.signal}: ${result.stderrText().trim()}`,
        path,
      );
    } catch (cause) {
      if (cause instanceof PaneLockError) throw cause;
      closeSync(fd);
      const hint = cause instanceof SpawnError ? ' (util-linux flock is required)' : '';
      throw new PaneLockError(`cannot lock pane lock file ${path}${hint}: ${(cause as Error).message}`, path, { cause });
    }
  }

  /**
   * Retries every 50 ms until the deadline, with one last attempt at the deadline, so a
   * lock released just before the wait ends is still taken. Null: still busy.
   */
  async acquire(key: string, wait: LockWait): Promise<PaneLockGuard | null> {
    const clock = wait.clock ?? systemClock;
    for (;;) {
      if (wait.signal?.aborted) throw new AbortedError('interrupted while waiting for the pane input lock; nothing was typed', { phase: 'lock', delivery: 'not_sent' });
      const guard = await this.tryAcquire(key);
      if (guard) return guard;
      const remaining = wait.deadline - clock.now();
      if (remaining <= 0) return null;
      await clock.sleep(Math.min(LOCK_RETRY_MS, remaining));
    }
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
