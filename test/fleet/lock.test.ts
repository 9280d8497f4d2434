import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LongLivedChild, run } from '../../src/process/index.js';
import { LOCK_RETRY_MS, PaneLockError, PaneLocks, paneLockKey, placementLockKey, type PaneLockGuard } from '../../src/fleet/index.js';
import { FakeClock, tempDirectory } from './support.js';

const HOLD_LOCK = fileURLToPath(new URL('../fixtures/fleet/hold-lock.js', import.meta.url));
const KEY = paneLockKey('tmux', 's1', '%1');

/** Resolves with the next complete line the stream writes. */
function nextLine(stream: Readable): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const end = buffered.indexOf('\n');
      if (end === -1) return;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.unshift(Buffer.from(buffered.slice(end + 1)));
      resolve(buffered.slice(0, end));
    };
    const onEnd = (): void => reject(new Error(`stream ended before a full line (got '${buffered}')`));
    stream.on('data', onData);
    stream.once('end', onEnd);
  });
}

/** Starts a separate node process that takes the lock and holds it; stopped after the test. */
async function holder(t: { after(fn: () => Promise<unknown>): void }, directory: string, key = KEY): Promise<LongLivedChild> {
  const child = await LongLivedChild.start([process.execPath, HOLD_LOCK, directory, key]);
  t.after(() => child.stop(100, 'SIGKILL'));
  assert.equal(await nextLine(child.stdout), 'locked');
  return child;
}

/** PaneLocks that remembers every attempt, in order. */
class RecordingLocks extends PaneLocks {
  readonly attempts: string[] = [];
  override tryAcquire(key: string): Promise<PaneLockGuard | null> {
    this.attempts.push(key);
    return super.tryAcquire(key);
  }
}

describe('pane lock keys', () => {
  it('is the SHA-256 hex of backend NUL session NUL pane', () => {
    assert.equal(KEY, createHash('sha256').update('tmux\u0000s1\u0000%1').digest('hex'));
    assert.match(KEY, /^[0-9a-f]{64}$/);
    assert.notEqual(paneLockKey('tmux', 's1', '%1'), paneLockKey('herdr', 's1', '%1'));
    // NUL separators keep field boundaries apart.
    assert.notEqual(paneLockKey('tmux', 'ab', 'c'), paneLockKey('tmux', 'a', 'bc'));
  });

  it('is shared by duplicate placements of one pane, whatever member or window they name', () => {
    const first = placementLockKey({ memberId: 1, backend: 'tmux', session: 's1', window: '@1', pane: '%4', createdAt: 'a' } as never);
    const second = placementLockKey({ memberId: 2, backend: 'tmux', session: 's1', window: '@9', pane: '%4', createdAt: 'b' } as never);
    assert.equal(first, second);
  });
});

describe('PaneLocks in one process', () => {
  it('creates <key>.lock 0600 in a 0700 directory, never writes, truncates or unlinks it', async (t) => {
    const directory = join(tempDirectory(t), '.pane-locks');
    const locks = new PaneLocks(directory);
    const path = locks.pathFor(KEY);
    assert.equal(path, join(directory, `${KEY}.lock`));
    const guard = await locks.tryAcquire(KEY);
    assert.ok(guard?.held);
    assert.equal(statSync(directory).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    guard.release();
    assert.equal(guard.held, false);
    assert.ok(existsSync(path), 'the lock file stays after release');
    assert.equal(statSync(path).size, 0, 'taking the lock wrote nothing');
    assert.deepEqual(readdirSync(directory), [`${KEY}.lock`], 'and left no other file');
    // A file drover did not write there is not taken for a lock, and is left as it was.
    writeFileSync(path, 'left by someone');
    await assert.rejects(locks.tryAcquire(KEY), (error: unknown) => error instanceof PaneLockError && error.message.includes(path));
    assert.equal(readFileSync(path, 'utf8'), 'left by someone');
  });

  it('excludes a second holder until the first releases', async (t) => {
    const directory = tempDirectory(t);
    const first = await new PaneLocks(directory).tryAcquire(KEY);
    assert.ok(first);
    const other = new PaneLocks(directory);
    assert.equal(await other.tryAcquire(KEY), null);
    const unrelated = await other.tryAcquire(paneLockKey('tmux', 's1', '%2'));
    assert.ok(unrelated, 'another pane is independent');
    unrelated.release();
    first.release();
    const second = await other.tryAcquire(KEY);
    assert.ok(second);
    second.release();
  });

  it('retries every 50 ms until the deadline, then reports the lock busy', async (t) => {
    const directory = tempDirectory(t);
    const held = (await new PaneLocks(directory).tryAcquire(KEY))!;
    t.after(() => held.release());
    const clock = new FakeClock();
    const locks = new RecordingLocks(directory);
    assert.equal(await locks.acquire(KEY, { deadline: clock.now() + 175, clock }), null);
    assert.deepEqual(clock.sleeps, [LOCK_RETRY_MS, LOCK_RETRY_MS, LOCK_RETRY_MS, 25]);
    assert.equal(locks.attempts.length, 5, 'one last attempt at the deadline');
  });

  it('refuses malformed keys and reports an unusable directory with its path', async (t) => {
    const dir = tempDirectory(t);
    assert.throws(() => new PaneLocks(dir).pathFor('../../etc/passwd'), PaneLockError);
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, '');
    await assert.rejects(new PaneLocks(join(file, 'locks')).tryAcquire(KEY), (error: unknown) => {
      assert.ok(error instanceof PaneLockError);
      assert.ok(error.message.includes(join(file, 'locks')));
      return true;
    });
  });

  it('takes several locks in sorted key order, each duplicate once', async (t) => {
    const locks = new RecordingLocks(tempDirectory(t));
    const keys = ['%3', '%1', '%2', '%1'].map((pane) => paneLockKey('tmux', 's', pane));
    const taken = await locks.acquireAll(keys, { deadline: performance.now() + 1000 });
    assert.ok('guards' in taken);
    const unique = [...new Set(keys)].sort();
    assert.deepEqual(locks.attempts, unique);
    assert.deepEqual(taken.guards.map((guard) => guard.key), unique);
    for (const guard of taken.guards) guard.release();
  });
});

describe('PaneLocks across processes', () => {
  it('makes a second process wait until the holder releases, then hands the lock over', async (t) => {
    const directory = tempDirectory(t);
    const child = await holder(t, directory);
    const locks = new RecordingLocks(directory);
    assert.equal(await locks.tryAcquire(KEY), null, 'held by the other process');

    let settled = false;
    const waiting = locks.acquire(KEY, { deadline: performance.now() + 20_000 }).finally(() => {
      settled = true;
    });
    // Let the waiter try and fail at least twice before the holder lets go.
    while (locks.attempts.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(settled, false, 'the waiter is still waiting while the holder holds the lock');
    child.stdin.end();
    assert.equal(await nextLine(child.stdout), 'released');
    const guard = await waiting;
    assert.ok(guard?.held);
    guard.release();
  });

  it('is released when the holding process is killed', async (t) => {
    const directory = tempDirectory(t);
    const child = await holder(t, directory);
    const locks = new PaneLocks(directory);
    assert.equal(await locks.tryAcquire(KEY), null);
    const exit = await child.stop(0, 'SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');
    const guard = await locks.tryAcquire(KEY);
    assert.ok(guard, 'process death released the lock');
    guard.release();
  });

  it('blocks another process while this one holds the lock', async (t) => {
    const directory = tempDirectory(t);
    const guard = (await new PaneLocks(directory).tryAcquire(KEY))!;
    const attempt = async (): Promise<string> => {
      const result = await run([process.execPath, HOLD_LOCK, directory, KEY, 'once'], { timeoutMs: 20_000 });
      assert.equal(result.exitCode, 0, result.stderrText());
      return result.text().trim();
    };
    assert.equal(await attempt(), 'busy');
    guard.release();
    assert.equal(await attempt(), 'locked');
  });
});
