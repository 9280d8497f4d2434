import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { openBroker, PANE_INPUT_WAIT_MS, paneLockDirectory, PaneLocks, placementLockKey, type PaneLockGuard } from '../../src/fleet/index.js';
import { tmuxIds } from '../../src/mux/index.js';
import { run } from '../../src/process/index.js';
import { cliSandbox } from '../support/cli.js';
import { eventually } from '../support/wait.js';

const LINE_SINK = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'line-sink.js');

describe('drover pane deliver and the pane input lock the fleet types under', () => {
  const sandbox = cliSandbox();
  const socket = join(sandbox.dir, 'tmux.sock');
  const received = join(sandbox.dir, 'received.txt');
  let pane: string;
  /** The pane's key, as a hub names the pane to the host it is on. */
  let paneKey: string;
  /** What a fleet dispatcher on this machine holds while it types into the pane. */
  let lockKey: string;
  let locks: PaneLocks;

  const tmux = (...args: string[]) => run(['tmux', '-S', socket, ...args], { env: sandbox.env, timeoutMs: 20_000 });
  const lines = (): string[] => (existsSync(received) ? readFileSync(received, 'utf8').split('\n').filter((line) => line !== '') : []);
  const deliverTo = (target: string, text: string, ...extra: string[]) => sandbox.drover(['-S', socket, 'pane', 'deliver', target, '--text', text, '--json', ...extra], { timeoutMs: 60_000 });
  const deliver = (text: string, ...extra: string[]) => deliverTo(pane, text, ...extra);
  const holdLock = async (): Promise<PaneLockGuard> => {
    const guard = await locks.tryAcquire(lockKey);
    assert.ok(guard, 'the test holds the lock');
    return guard;
  };

  before(async () => {
    const started = await tmux('new-session', '-d', '-s', 'sink', '-x', '80', '-y', '24', '-P', '-F', '#{pane_id} #{session_id}', process.execPath, LINE_SINK, received);
    assert.equal(started.exitCode, 0, started.stderrText());
    const [paneId, sessionId] = started.text().trim().split(' ');
    pane = paneId!;
    lockKey = placementLockKey({ backend: 'tmux', session: tmuxIds.space(sessionId!), pane });
    locks = new PaneLocks(paneLockDirectory(sandbox.env.DROVER_DB!));
    await eventually('the sink to show its prompt', async () => (await tmux('capture-pane', '-p', '-t', pane)).text().includes('>'));
    paneKey = (JSON.parse((await sandbox.drover(['-S', socket, 'pane', 'capture', pane, '--json'])).text()) as { pane_key: string }).pane_key;
  });
  after(async () => {
    await tmux('kill-server');
  });

  it('waits while a fleet line is being typed, then types its own', async () => {
    const guard = await holdLock();
    const delivering = deliver('after the fleet line');
    // Longer than a delivery into this pane takes when nothing holds it (about 1.5 s, start-up included).
    await sleep(3000);
    assert.deepEqual(lines(), [], 'nothing typed while the lock is held');
    const released = performance.now();
    guard.release();
    const answer = await delivering;
    assert.equal(answer.exitCode, 0, answer.stderrText());
    assert.equal((JSON.parse(answer.text()) as { status: string }).status, 'submitted');
    assert.deepEqual(lines(), ['after the fleet line']);
    assert.ok(performance.now() - released < PANE_INPUT_WAIT_MS, 'typed once the lock was free, not at the end of the wait');
  });

  it('refuses, typing nothing, when the lock stays held, and leaves its delivery id free for the resend', async () => {
    const guard = await holdLock();
    let refused;
    try {
      refused = await deliver('held out', '--delivery-id', 'held-1');
    } finally {
      guard.release();
    }
    assert.equal(refused.exitCode, 1, refused.stderrText());
    const error = (JSON.parse(refused.text()) as { error: { phase: string; delivery: string; delivery_id: string } }).error;
    assert.deepEqual([error.phase, error.delivery, error.delivery_id], ['lock', 'not_sent', 'held-1']);
    assert.match(refused.stderrText(), /input stayed busy .* nothing was typed/);
    assert.deepEqual(lines(), ['after the fleet line'], 'nothing typed');

    // Named by its key, as a hub names it to this host, the pane is held just the same.
    const byKey = await holdLock();
    let refusedByKey;
    try {
      refusedByKey = await deliverTo(paneKey, 'held out by key');
    } finally {
      byKey.release();
    }
    assert.equal(refusedByKey.exitCode, 1, refusedByKey.stderrText());
    assert.deepEqual(lines(), ['after the fleet line'], 'nothing typed');

    const resend = await deliver('held out', '--delivery-id', 'held-1');
    assert.equal(resend.exitCode, 0, resend.stderrText());
    assert.equal((JSON.parse(resend.text()) as { replayed?: boolean }).replayed, undefined, 'typed now, not answered from a record');
    assert.deepEqual(lines(), ['after the fleet line', 'held out']);
  });

  it("holds a member's lock after the member's pane was moved to another session", async () => {
    // The member's dispatcher keeps taking the key of the session it was placed in.
    const sink = (await tmux('display-message', '-p', '-t', pane, '#{session_id} #{window_id}')).text().trim().split(' ');
    const broker = await openBroker({ env: sandbox.env });
    try {
      const { fleet } = await broker.createFleet({ name: 'moved', codingAgent: 'claude', directorPlacement: { backend: 'tmux', session: '$99', window: '@99', pane: '%99' } });
      await broker.registerMember({ fleetId: fleet.fleetId, name: 'sink', codingAgent: 'claude', placement: { backend: 'tmux', session: tmuxIds.space(sink[0]!), window: tmuxIds.tab(sink[1]!), pane } });
    } finally {
      await broker.close();
    }
    assert.equal((await tmux('new-session', '-d', '-s', 'elsewhere', 'sleep', '600')).exitCode, 0);
    const moved = await tmux('move-window', '-s', sink[1]!, '-t', 'elsewhere:');
    assert.equal(moved.exitCode, 0, moved.stderrText());
    assert.notEqual((await tmux('display-message', '-p', '-t', pane, '#{session_id}')).text().trim(), sink[0], 'the pane stands in another session now');

    const guard = await holdLock();
    let refused;
    try {
      refused = await deliver('typed past the member');
    } finally {
      guard.release();
    }
    assert.equal(refused.exitCode, 1, refused.stderrText());
    assert.match(refused.stderrText(), /input stayed busy .* nothing was typed/);
    assert.deepEqual(lines(), ['after the fleet line', 'held out'], 'nothing typed');
  });
});
