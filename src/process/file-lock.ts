/**
 * An exclusive advisory lock on a file, shared by every drover process of the machine: the
 * operating system's fcntl lock, taken through SQLite's own file locking (an exclusive
 * transaction on the file that writes nothing and is never committed), since Node has no
 * flock(). Taking or refusing it costs about a tenth of a millisecond. It belongs to this
 * process: a second holder here or in any other process is refused at once, and the kernel
 * drops it when the process dies. SQLite is loaded on the first lock, not with this module.
 */
import { closeSync, constants as fs, existsSync, openSync } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { DroverError, messageOf } from './errors.js';
import { systemClock, type Clock } from './time.js';

type Database = BetterSqlite3.Database;

let sqlite: typeof BetterSqlite3 | undefined;

/** Why a lock file could not be made, opened or locked (never because another holder has it). */
export class FileLockError extends DroverError {
  constructor(
    message: string,
    readonly path: string,
    options: { cause?: unknown } = {},
  ) {
    super(message, { phase: 'lock', delivery: 'not_sent', ...options });
  }
}

/** A held lock: released by `release()` or by this process's death, whichever comes first. */
export class FileLock {
  private holder: Database | undefined;

  constructor(
    readonly path: string,
    holder: Database,
  ) {
    this.holder = holder;
  }

  get held(): boolean {
    return this.holder !== undefined;
  }

  release(): void {
    if (this.holder === undefined) return;
    const holder = this.holder;
    this.holder = undefined;
    holder.close();
  }
}

/**
 * One attempt at the lock on `path` (its directory must exist): the lock, or null while another
 * holder has it. The file is created 0600 when missing and never written; `what` names it in
 * errors ("pane lock file"). A file there that is not an empty or SQLite file is refused.
 */
export async function tryLockFile(path: string, what: string): Promise<FileLock | null> {
  sqlite ??= (await import('better-sqlite3')).default;
  // Created here with owner-only permissions, never opened here otherwise: closing any
  // descriptor of a file drops every fcntl lock this process holds on it. A file that exists
  // may be locked by this process, so it is left to SQLite, which keeps such descriptors open
  // until its locks are gone.
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, fs.O_RDWR | fs.O_CREAT | fs.O_EXCL, 0o600));
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') throw new FileLockError(`cannot create ${what} ${path}: ${messageOf(cause)}`, path, { cause });
    }
  }
  let holder: Database;
  try {
    holder = new sqlite(path, { fileMustExist: true, timeout: 0 });
  } catch (cause) {
    throw new FileLockError(`cannot open ${what} ${path}: ${messageOf(cause)}`, path, { cause });
  }
  try {
    // No journal: the transaction only holds the lock and never writes.
    holder.pragma('journal_mode = OFF');
    holder.exec('BEGIN EXCLUSIVE');
    return new FileLock(path, holder);
  } catch (cause) {
    holder.close();
    if ((cause as { code?: unknown }).code === 'SQLITE_BUSY') return null;
    throw new FileLockError(`cannot lock ${what} ${path}: ${messageOf(cause)}`, path, { cause });
  }
}

export interface LockWait {
  /** Monotonic deadline (clock.now() units) after which a still-busy lock is given up. */
  deadline: number;
  clock?: Clock;
  /** Stops the wait: an interrupted command gives up before it did anything under the lock. */
  signal?: AbortSignal;
}

/**
 * Takes a lock by `attempt` (null while another holder has it), tried again every `retryMs`
 * until the deadline, with one last attempt at the deadline, so a lock released just before
 * the wait ends is still taken. Null: still busy. An abort throws `interrupted()`, also when it
 * came while the lock was being taken (the lock is then released again).
 */
export async function waitForLock<L extends { release(): void }>(attempt: () => Promise<L | null>, wait: LockWait, retryMs: number, interrupted: () => Error): Promise<L | null> {
  const clock = wait.clock ?? systemClock;
  for (;;) {
    if (wait.signal?.aborted) throw interrupted();
    const lock = await attempt();
    if (lock && wait.signal !== undefined) {
      // The lock is taken without a turn of the event loop, so an interrupt that came while
      // it was busy would not have been heard yet: one turn lets its handler run first, and
      // it wins over the lock coming free.
      await new Promise((resolve) => setImmediate(resolve));
      if (wait.signal.aborted) {
        lock.release();
        throw interrupted();
      }
    }
    if (lock) return lock;
    const remaining = wait.deadline - clock.now();
    if (remaining <= 0) return null;
    await clock.sleep(Math.min(retryMs, remaining));
  }
}
