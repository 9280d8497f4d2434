import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isProcessAlive } from '../../src/process/index.js';
import { performance } from 'node:perf_hooks';
import { AbortedError, CommandResult, DroverError, ReentrantCloseError, Server } from '../../src/tmux/index.js';
import { TmuxAdapter } from '../../src/mux/index.js';
import { startTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/** Whether a promise has settled, read without waiting for it. */
function watch(promise: Promise<unknown>): { settled: () => boolean; outcome: Promise<unknown> } {
  let settled = false;
  const outcome = promise.then(
    (value) => {
      settled = true;
      return value;
    },
    (error: unknown) => {
      settled = true;
      return error;
    },
  );
  return { settled: () => settled, outcome };
}

describe('bounded bindings', () => {
  it('close() cancels a running request instead of leaving it to run to its deadline', async () => {
    await withServer(async (owner) => {
      const borrowed = await Server.open(owner.endpoint);
      const waiting = watch(borrowed.run(['wait-for', 'drover-never-signalled'], { timeoutMs: 60_000 }));
      await eventually('the wait to reach tmux', async () => borrowed.diagnostics().admittedRequests === 1);
      await borrowed.close();
      assert.equal(waiting.settled(), true, 'the request ended before close() returned');
      const error = await waiting.outcome;
      assert.ok(error instanceof DroverError && /closed/.test(error.message), String(error));
      assert.equal(borrowed.diagnostics().admittedRequests, 0);
    });
  });

  it('aborting a request that waits for an admission slot ends it at once', async () => {
    await withServer(async (owner) => {
      const borrowed = await Server.open(owner.endpoint, { maxRequests: 1 });
      try {
        const blocker = watch(borrowed.run(['wait-for', 'drover-blocker'], { timeoutMs: 60_000 }));
        const controller = new AbortController();
        const queued = borrowed.run(['display-message', '-p', 'queued'], { timeoutMs: 60_000, signal: controller.signal });
        await eventually('the second request to wait for admission', async () => borrowed.diagnostics().waitingRequests === 1);
        controller.abort();
        await assert.rejects(queued, AbortedError);
        assert.equal(borrowed.diagnostics().waitingRequests, 0);
        await owner.waitFor('drover-blocker', 'signal');
        await blocker.outcome;
      } finally {
        await borrowed.close();
      }
    });
  });

  it("close() from inside one of the binding's own map items is refused at once, and the binding stays usable", async () => {
    await withServer(async (server) => {
      const [outcome] = await server.map([0], async () => server.close().then(() => 'closed', (error: unknown) => error));
      assert.ok(outcome instanceof ReentrantCloseError, String(outcome));
      assert.equal(server.isClosed, false);
      assert.deepEqual(await server.listSessions(), []);
    });
  });

  it('close() from inside a running request of the same binding fails at once instead of waiting for itself', async () => {
    await withServer(async (owner) => {
      const borrowed = await Server.open(owner.endpoint);
      let outcome: unknown;
      let waitedMs = Number.NaN;
      borrowed.useTransport({
        kind: 'control',
        execute: async (args) => {
          const asked = performance.now();
          outcome = await borrowed.close().then(() => 'closed', (error: unknown) => error);
          waitedMs = performance.now() - asked;
          return new CommandResult(args, Buffer.alloc(0), Buffer.alloc(0), 0, waitedMs, 'control', undefined, []);
        },
        close: async () => undefined,
      });
      await borrowed.run(['list-sessions']);
      assert.ok(outcome instanceof ReentrantCloseError, String(outcome));
      assert.ok(waitedMs < 250, `close() took ${waitedMs} ms to answer; its bound for running requests is 500 ms`);
      borrowed.useTransport(undefined);
      await borrowed.close();
      assert.equal(borrowed.isClosed, true);
    });
  });

  it('close() from code a finished request left scheduled is an ordinary close', async () => {
    await withServer(async (owner) => {
      const borrowed = await Server.open(owner.endpoint);
      let release!: () => void;
      const requestEnded = new Promise<void>((resolve) => (release = resolve));
      let closing: Promise<void> | undefined;
      await borrowed.map([0], async () => {
        closing = requestEnded.then(() => borrowed.close());
      });
      release();
      await closing;
      assert.equal(borrowed.isClosed, true);
    });
  });

  it("the tmux adapter's reachable() asks the server each time", async () => {
    const server = await startTestServer();
    try {
      const adapter = new TmuxAdapter({ server });
      assert.equal(await adapter.reachable(), true);
      process.kill(server.ownedRecord!.pid, 'SIGKILL');
      await eventually('the killed server to exit', async () => !isProcessAlive(server.ownedRecord!.pid));
      assert.equal(await adapter.reachable(), false);
    } finally {
      await server.close();
    }
  });
});
