import assert from 'node:assert/strict';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import {
  AbortedError,
  ArgumentError,
  DecodeError,
  LimitError,
  LongLivedChild,
  SpawnError,
  TimeoutError,
  run,
} from '../../src/process/index.js';
import { childPids, openFdCount } from '../support/proc.js';
import { eventually } from '../support/wait.js';

describe('run', () => {
  it('captures stdout and stderr separately with status, pid and timing', async () => {
    const result = await run(['sh', '-c', 'printf out; printf err >&2; exit 3']);
    assert.equal(result.stdout.toString(), 'out');
    assert.equal(result.stderr.toString(), 'err');
    assert.equal(result.exitCode, 3);
    assert.equal(result.ok, false);
    assert.ok(result.pid > 0);
    assert.ok(result.elapsedMs > 0);
    assert.deepEqual(result.argv, ['sh', '-c', 'printf out; printf err >&2; exit 3']);
  });

  it('passes argv without a shell and feeds stdin bytes', async () => {
    const result = await run(['cat'], { input: Buffer.from([0, 1, 2, 255]) });
    assert.deepEqual([...result.stdout], [0, 1, 2, 255]);
    const echoed = await run(['printf', '%s', '$(whoami); `id` *']);
    assert.equal(echoed.text(), '$(whoami); `id` *');
  });

  it('decodes UTF-8 only when asked, strictly', async () => {
    const result = await run(['printf', '\\377ok']);
    assert.throws(() => result.text(), DecodeError);
    assert.equal(result.lossyText(), '\ufffdok');
  });

  it('reports a signal exit', async () => {
    const result = await run(['sh', '-c', 'kill -TERM $$']);
    assert.equal(result.exitCode, null);
    assert.equal(result.signal, 'SIGTERM');
  });

  it('keeps large output intact up to the cap and fails past it', async () => {
    const big = await run(['head', '-c', String(1024 * 1024), '/dev/zero']);
    assert.equal(big.stdout.length, 1024 * 1024);
    await assert.rejects(run(['head', '-c', String(1024 * 1024 + 1), '/dev/zero']), (error: unknown) => {
      assert.ok(error instanceof LimitError);
      assert.equal(error.limit, 'stdout');
      return true;
    });
    await assert.rejects(run(['sh', '-c', 'head -c 300000 /dev/zero >&2']), LimitError);
  });

  it('rejects oversized argv and stdin before starting anything', async () => {
    const before = (await import('../../src/process/index.js')).processDiagnostics().spawned;
    await assert.rejects(run(['echo', 'x'.repeat(300 * 1024)]), (error: unknown) => {
      assert.ok(error instanceof LimitError);
      assert.equal(error.delivery, 'not_sent');
      return true;
    });
    await assert.rejects(run(['cat'], { input: Buffer.alloc(2 * 1024 * 1024) }), LimitError);
    await assert.rejects(run([]), ArgumentError);
    await assert.rejects(run(['echo', 'a\0b']), ArgumentError);
    assert.equal((await import('../../src/process/index.js')).processDiagnostics().spawned, before);
  });

  it('reports a missing executable as a spawn error with nothing sent', async () => {
    await assert.rejects(run(['/nonexistent/drover-no-such-binary']), (error: unknown) => {
      assert.ok(error instanceof SpawnError);
      assert.equal(error.delivery, 'not_sent');
      return true;
    });
  });

  it('kills and reaps at the deadline', async () => {
    const started = Date.now();
    await assert.rejects(run(['sleep', '10'], { timeoutMs: 200 }), (error: unknown) => {
      assert.ok(error instanceof TimeoutError);
      assert.equal(error.delivery, 'possibly_sent');
      return true;
    });
    assert.ok(Date.now() - started < 1500);
    assert.deepEqual(childPids(), []);
  });

  it('ends with the child, not at the deadline, when a descendant holds the pipe open', async () => {
    // The background sleep keeps both pipes open for 30 s; a runner that waited for EOF would
    // reach the 20 s deadline and throw TimeoutError instead of returning the child's result.
    const result = await run(['sh', '-c', 'sleep 30 & printf "%s" "$!"; exit 7'], { timeoutMs: 20_000 });
    try {
      assert.equal(result.exitCode, 7);
      assert.match(result.stdout.toString(), /^\d+$/);
    } finally {
      process.kill(Number(result.stdout.toString()), 'SIGKILL');
    }
  });

  /**
   * Keeps this process busy for `ms` from a check-phase turn of the event loop: the next turn then
   * runs its due timers before it reads any pipe, as after a long callback in real use.
   */
  const busyFromCheckPhase = async (ms: number): Promise<void> => {
    await new Promise((resolve) => setImmediate(resolve));
    const until = performance.now() + ms;
    while (performance.now() < until);
  };

  it('reads output that arrived while the event loop was busy before the drain bound ends the run', async () => {
    // The child exits at once; its background writer prints 300 ms later and holds the pipe
    // open a while after that. Busy from 100 ms to 800 ms, this process finds the drain bound
    // (500 ms after the exit) and the output both due when its loop turns again.
    const running = run(['sh', '-c', '(sleep 0.3; printf late; sleep 2) & exit 0'], { timeoutMs: 20_000 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await busyFromCheckPhase(700);
    const result = await running;
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout.toString(), 'late');
  });

  it('keeps the result of a child that exited in time but was seen only after its deadline', async () => {
    // The child waits 100 ms, so this process is busy (from 50 ms to 650 ms) when it exits.
    const running = run(['sh', '-c', 'sleep 0.1; printf done'], { timeoutMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await busyFromCheckPhase(600);
    const result = await running;
    assert.equal(result.exitCode, 0);
    assert.equal(result.stdout.toString(), 'done');
  });

  it('keeps the signal of a child that died while a descendant holds the pipe open', async () => {
    const result = await run(['sh', '-c', 'sleep 30 & printf "%s" "$!"; kill -TERM $$'], { timeoutMs: 20_000 });
    try {
      assert.equal(result.exitCode, null);
      assert.equal(result.signal, 'SIGTERM');
      assert.equal(result.ok, false);
    } finally {
      process.kill(Number(result.stdout.toString()), 'SIGKILL');
    }
  });

  it('honours an AbortSignal', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(run(['sleep', '10'], { signal: controller.signal }), AbortedError);
    const aborted = AbortSignal.abort();
    await assert.rejects(run(['true'], { signal: aborted }), (error: unknown) => {
      assert.ok(error instanceof AbortedError);
      assert.equal(error.delivery, 'not_sent');
      return true;
    });
  });

  it('leaks no descriptors and no children over 500 timeouts', async () => {
    await run(['true']);
    const fdsBefore = openFdCount();
    const batch = 25;
    for (let i = 0; i < 500; i += batch) {
      const calls = Array.from({ length: batch }, () => run(['sleep', '5'], { timeoutMs: 20 }).then(
        () => assert.fail('expected a timeout'),
        (error: unknown) => assert.ok(error instanceof TimeoutError),
      ));
      await Promise.all(calls);
    }
    // The event loop closes the last handles on its own schedule; a real leak never drains,
    // and the assertions below then say what is left.
    await eventually('every child reaped and every descriptor closed', () => childPids().length === 0 && openFdCount() <= fdsBefore, 5_000).catch(() => undefined);
    assert.deepEqual(childPids(), []);
    assert.ok(openFdCount() <= fdsBefore, `fds grew from ${fdsBefore} to ${openFdCount()}`);
  });
});

describe('LongLivedChild', () => {
  it('stops a child that ignores SIGTERM within its grace', async () => {
    const child = await LongLivedChild.start(['sh', '-c', 'trap "" TERM; echo trapped; while :; do sleep 0.05; done']);
    // Stopping before the shell has run `trap` would end it by SIGTERM and prove nothing.
    await once(child.stdout, 'data');
    const started = Date.now();
    const exit = await child.stop(200);
    assert.equal(exit.signal, 'SIGKILL');
    assert.ok(Date.now() - started < 1500);
    assert.deepEqual(childPids(), []);
  });

  it('reports a missing executable', async () => {
    await assert.rejects(LongLivedChild.start(['/nonexistent/drover-no-such-binary']), SpawnError);
  });
});
