import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { processDiagnostics } from '../../../src/process/index.js';
import {
  AbortedError,
  ArgumentError,
  CapacityError,
  ConnectionLostError,
  NoMatchError,
  Server,
  SubscriptionOverflowError,
  TimeoutError,
  type ControlEvent,
  type Session,
  type Subscription,
} from '../../../src/tmux/index.js';
import { useTestServer, withServer } from '../../support/tmux.js';
import { eventually } from '../../support/wait.js';

/** Reads events until one matches; a generous bound only guards against a hang. */
async function nextMatching(subscription: Subscription, matches: (event: ControlEvent) => boolean): Promise<ControlEvent> {
  for (;;) {
    const result = await subscription.next({ timeoutMs: 10_000 });
    assert.equal(result.done, false, 'the subscription ended before the expected event');
    if (matches(result.value)) return result.value;
  }
}

/** Polls a condition that depends on a program in a pane (which runs on its own schedule). */
describe('control connection', () => {
  const t = useTestServer();
  let session: Session;

  before(async () => {
    session = await t.server.newSession({ name: 'ctl' });
  });

  it('attaches without resizing or output and answers pipelined commands in order', async () => {
    const connection = await t.server.openControl({ output: false });
    try {
      assert.equal(connection.session, session.id);
      const clients = (await t.server.run(['list-clients', '-F', '#{client_control_mode} #{client_flags}'])).stdout.toString();
      assert.match(clients, /^1 .*ignore-size/m);
      assert.match(clients, /^1 .*no-output/m);
      const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => connection.execute(['display-message', '-p', `reply ${i}`], { timeoutMs: 10_000 })));
      replies.forEach((reply, i) => assert.equal(reply.stdout.toString(), `reply ${i}\n`));
      assert.equal(t.server.diagnostics().controlConnections, 1);
    } finally {
      await connection.close();
    }
    assert.equal(connection.isOpen, false);
    assert.equal(t.server.diagnostics().controlConnections, 0);
  });

  it('takes every block of a line up to a boundary marker, commands it queued included', async () => {
    const connection = await t.server.openControl({ output: false });
    try {
      const branch = await connection.exchange("if-shell -F 1 'display -p T1 ; display -p T2' 'display -p F'");
      assert.equal(branch.attribution, 'boundary_marker');
      assert.deepEqual(branch.blocks.map((b) => b.body.toString()), ['', 'T1\n', 'T2\n']);
      const stopped = await connection.exchange('display -p a ; kill-pane -t %999999 ; display -p b');
      assert.deepEqual(stopped.blocks.map((b) => [b.guardSuccess, b.body.toString()]), [[true, 'a\n'], [false, "can't find pane: %999999\n"]]);
      const unknown = await connection.exchange('drover-no-such-command');
      assert.equal(unknown.blocks.length, 1);
      assert.equal(unknown.blocks[0]!.guardSuccess, false);
      await assert.rejects(connection.exchange('   '), ArgumentError);
      await assert.rejects(connection.exchange('display -p a\ndisplay -p b'), ArgumentError);
      await assert.rejects(connection.execute(['wait-for', 'x'], { timeoutMs: 1000 }), /cannot run over a control connection/);
    } finally {
      await connection.close();
    }
  });

  it('admits a bounded number of exchanges, queues the rest within the byte bound, and keeps order', async () => {
    const connection = await t.server.openControl({ output: false, limits: { maxExchanges: 4, maxQueuedBytes: 200 } });
    try {
      // wait-for holds this client's command queue until the channel is signalled.
      const gate = connection.exchange('wait-for drover-gate', { timeoutMs: 10_000 });
      const queued = Array.from({ length: 6 }, (_, i) => connection.exchange(`display -p q${i}`, { commands: 1, timeoutMs: 10_000 }));
      const diagnostics = connection.diagnostics();
      assert.equal(diagnostics.admitted, 4);
      assert.equal(diagnostics.queued, 3);
      await assert.rejects(connection.exchange(`display -p ${'x'.repeat(300)}`, { commands: 1 }), CapacityError);
      await t.server.run(['wait-for', '-S', 'drover-gate']);
      assert.equal((await gate).blocks.length, 1);
      const bodies = (await Promise.all(queued)).map((reply) => reply.blocks[0]!.body.toString());
      assert.deepEqual(bodies, ['q0\n', 'q1\n', 'q2\n', 'q3\n', 'q4\n', 'q5\n']);
      assert.deepEqual([connection.diagnostics().admitted, connection.diagnostics().queued], [0, 0]);
    } finally {
      await connection.close();
    }
  });

  it('gives up at the deadline or on abort and discards the late reply without losing order', async () => {
    const connection = await t.server.openControl({ output: false });
    try {
      const late = connection.exchange('wait-for drover-late', { timeoutMs: 150 });
      await assert.rejects(late, (error: unknown) => error instanceof TimeoutError && error.delivery === 'possibly_sent');
      const controller = new AbortController();
      const aborted = connection.exchange('display -p aborted', { commands: 1, signal: controller.signal });
      controller.abort();
      await assert.rejects(aborted, (error: unknown) => error instanceof AbortedError && error.delivery === 'possibly_sent');
      assert.equal(connection.diagnostics().incomplete, 2);
      const after = connection.exchange('display -p after', { commands: 1, timeoutMs: 10_000 });
      await t.server.run(['wait-for', '-S', 'drover-late']);
      assert.equal((await after).blocks[0]!.body.toString(), 'after\n');
      assert.equal(connection.diagnostics().incomplete, 0);
    } finally {
      await connection.close();
    }
  });

  it('reports windows added, renamed and closed by another client', async () => {
    const connection = await t.server.openControl({ session, output: false });
    try {
      const events = connection.subscribe({ kinds: ['window-add', 'window-renamed', 'window-close', 'unlinked-window-close'] });
      const window = await session.newWindow({ name: 'first' });
      await window.rename('second é');
      await window.kill();
      const added = await nextMatching(events, (e) => e.kind === 'window-add');
      assert.equal(added.window, window.id);
      const renamed = await nextMatching(events, (e) => e.kind === 'window-renamed' && e.name === 'second é');
      assert.equal(renamed.window, window.id);
      assert.ok(renamed.sequence > added.sequence);
      const closed = await nextMatching(events, (e) => e.kind === 'window-close' || e.kind === 'unlinked-window-close');
      assert.equal(closed.window, window.id);
      assert.equal(closed.generation, 1);
    } finally {
      await connection.close();
    }
  });

  it('round-trips every byte 0x01–0xff that printf writes in a pane through %output', async () => {
    const format = Array.from({ length: 255 }, (_, i) => `\\${(i + 1).toString(8).padStart(3, '0')}`).join('');
    const script = 'read x; stty raw -echo; printf "<<<"; printf "$1"; printf ">>>"; exec sleep 60';
    const target = await t.server.newSession({ command: ['sh', '-c', script, 'sh', format] });
    const pane = (await target.listPanes())[0]!;
    const connection = await t.server.openControl({ session: target, output: true });
    try {
      const events = connection.subscribe({ panes: [pane.id], kinds: ['output'] });
      await pane.sendKeys(['Enter']);
      let received = Buffer.alloc(0);
      while (!received.includes('>>>', received.indexOf('<<<'))) {
        const event = await nextMatching(events, () => true);
        received = Buffer.concat([received, event.data!]);
      }
      const start = received.indexOf('<<<') + 3;
      const bytes = received.subarray(start, received.indexOf('>>>', start));
      assert.deepEqual(bytes, Buffer.from(Array.from({ length: 255 }, (_, i) => i + 1)));
    } finally {
      await connection.close();
      await target.kill();
    }
  });

  it('overflows a slow reliable subscriber after its readable prefix and gives a tail subscriber a counted gap', async () => {
    const connection = await t.server.openControl({ session, output: false });
    try {
      const window = await session.newWindow({ name: 'r' });
      const kinds = ['window-renamed'] as const;
      const reliable = connection.subscribe({ mode: 'reliable', maxEvents: 5, kinds: [...kinds] });
      const tail = connection.subscribe({ mode: 'tail', maxEvents: 5, kinds: [...kinds] });
      const watcher = connection.subscribe({ kinds: [...kinds] });
      for (let i = 0; i < 12; i += 1) await window.rename(`r${i}`);
      await nextMatching(watcher, (e) => e.name === 'r11');
      const prefix: string[] = [];
      for (let i = 0; i < 5; i += 1) prefix.push((await reliable.next()).value!.name!);
      assert.deepEqual(prefix, ['r0', 'r1', 'r2', 'r3', 'r4']);
      await assert.rejects(reliable.next(), (error: unknown) => error instanceof SubscriptionOverflowError && error.lostEvents === 7);
      assert.equal(reliable.diagnostics().overflowed, true);
      const gap = (await tail.next()).value!;
      assert.equal(gap.kind, 'gap');
      assert.equal(gap.lostEvents, 7);
      assert.equal(gap.lastLostSequence! - gap.firstLostSequence!, 6);
      const kept = tail.drain().map((e) => e.name);
      assert.deepEqual(kept, ['r7', 'r8', 'r9', 'r10', 'r11']);
      assert.equal(tail.diagnostics().gaps, 1);
      await window.kill();
    } finally {
      await connection.close();
    }
  });

  it('reconnects as a new generation and gives subscribers a continuity gap, not a replay', async () => {
    const connection = await t.server.openControl({ output: false });
    try {
      const events = connection.subscribe();
      const firstPid = connection.pid;
      await connection.reconnect();
      assert.equal(connection.generation, 2);
      assert.notEqual(connection.pid, firstPid);
      const gap = await nextMatching(events, (e) => e.kind === 'gap');
      assert.deepEqual([gap.reason, gap.generation], ['reconnect', 2]);
      assert.equal((await connection.exchange('display -p again', { commands: 1 })).generation, 2);
    } finally {
      await connection.close();
    }
  });

  it('pauses and resumes a pane with explicit continuity evidence', async () => {
    const pane = (await session.listPanes())[0]!;
    const connection = await t.server.openControl({ session, output: true });
    try {
      const events = connection.subscribe({ kinds: ['pause', 'continue'] });
      await connection.pauseOutput(pane.id);
      await connection.resumeOutput(pane.id);
      assert.deepEqual(
        events.drain().map((e) => [e.kind, e.pane, e.reason]),
        [['pause', pane.id, undefined], ['continue', pane.id, undefined], ['gap', pane.id, 'paused']],
      );
      await assert.rejects(connection.pauseOutput('not-a-pane'), ArgumentError);
    } finally {
      await connection.close();
    }
  });

  it('ends waiters with a typed error when tmux ends the client', async () => {
    const doomed = await t.server.newSession({ name: 'doomed' });
    const connection = await t.server.openControl({ session: doomed, output: false });
    try {
      const events = connection.subscribe();
      const waiting = assert.rejects(nextMatching(events, () => false), (error: unknown) => error instanceof ConnectionLostError && error.reason === 'exit');
      await doomed.kill();
      await waiting;
      assert.equal(connection.isOpen, false);
      await assert.rejects(connection.exchange('display -p x'), (error: unknown) => error instanceof ConnectionLostError && error.delivery === 'not_sent');
    } finally {
      await connection.close();
    }
  });

  it('keeps diagnostics local: frozen counts without identifiers', async () => {
    const connection = await t.server.openControl({ session, output: false });
    try {
      const subscription = connection.subscribe({ mode: 'tail' });
      const diagnostics = connection.diagnostics();
      assert.equal(Object.isFrozen(diagnostics), true);
      assert.equal(Object.isFrozen(diagnostics.limits), true);
      assert.deepEqual([diagnostics.open, diagnostics.generation, diagnostics.subscriptions], [true, 1, 1]);
      const text = JSON.stringify([diagnostics, subscription.diagnostics()]);
      for (const secret of [session.id, String(connection.pid), t.server.endpoint.socketPath]) assert.equal(text.includes(secret), false, secret);
      subscription.close();
      assert.equal(connection.diagnostics().subscriptions, 0);
      assert.deepEqual(await subscription.next(), { done: true, value: undefined });
    } finally {
      await connection.close();
    }
  });

  it('waits for text to appear in a pane, checking what is already there first', async () => {
    const target = await t.server.newSession({ command: ['cat'] });
    const pane = (await target.listPanes())[0]!;
    try {
      const waiting = t.server.waitForOutput(pane, /drover-\d+-ready/, { timeoutMs: 10_000 });
      await pane.sendText('drover-42-ready');
      assert.match(await waiting, /drover-42-ready/);
      // Already on screen: found by the first capture.
      assert.match(await t.server.waitForOutput(pane, 'drover-42', { timeoutMs: 10_000 }), /drover-42-ready/);
      // The budget also covers opening the control connection and the first capture, which
      // fail with their own messages if they alone use it up on a busy machine.
      await assert.rejects(t.server.waitForOutput(pane, 'never shown', { timeoutMs: 2000 }), (error: unknown) => error instanceof TimeoutError && /did not show/.test((error as Error).message));
      assert.equal(t.server.diagnostics().controlConnections, 0);
    } finally {
      await target.kill();
    }
  });

  it('waits for output on events: no capture while the pane is silent, one when it writes', async () => {
    await withServer(async (server) => {
      const [pane] = await (await server.newSession({ command: ['cat'], width: 80, height: 24 })).listPanes();
      const sibling = await pane!.split({ direction: 'vertical', command: ['cat'] });
      let captures = 0;
      const command = server.command.bind(server);
      server.command = (args, options) => {
        if (args[0] === 'capture-pane' && args.includes(pane!.id)) captures += 1;
        return command(args, options);
      };
      const waiting = server.waitForOutput(pane!, 'drover-wake', { timeoutMs: 20_000 });
      await eventually('the first capture', () => captures === 1);
      // Output of another pane reaches the same connection; it is not this pane's, so no capture.
      for (let i = 0; i < 5; i += 1) await sibling.sendText(`noise-${i} `);
      await eventually('the sibling to echo its input', async () => (await sibling.capture()).toString().includes('noise-4'));
      // A quiet spell longer than any re-read interval: a polling waiter would capture here.
      await sleep(600);
      assert.equal(captures, 1, 'no capture while the pane wrote nothing');
      await pane!.sendText('drover-wake');
      assert.match(await waiting, /drover-wake/);
      assert.ok(captures >= 2 && captures <= 3, `the pane's output woke the waiter for a capture or two, not ${captures}`);
    });
  });

  it('waits for a topology change made by another client', async () => {
    const waiting = t.server.waitForTopology((snapshot) => snapshot.windows.where({ field: 'window_name', op: 'eq', value: 'drover-topo' }).size === 1, { timeoutMs: 10_000 });
    const window = await session.newWindow({ name: 'drover-topo' });
    const snapshot = await waiting;
    assert.ok(snapshot.window(window.id));
    await window.kill();
  });
});

describe('control connection ownership and loss', () => {
  it('ends every waiter within 100 ms when the server is killed', async () => {
    const killToLastWaiter = async (): Promise<number> =>
      withServer(async (server) => {
        await server.newSession();
        const connection = await server.openControl({ output: false });
        const events = connection.subscribe();
        const ended: number[] = [];
        const record = (promise: Promise<unknown>): Promise<unknown> =>
          promise.then(
            () => assert.fail('the waiter should have failed'),
            (error: unknown) => {
              ended.push(performance.now());
              return error;
            },
          );
        const exchange = record(connection.exchange('wait-for drover-never', { timeoutMs: 30_000 }));
        const next = record(nextMatching(events, () => false));
        const killedAt = performance.now();
        process.kill(server.ownedRecord!.pid, 'SIGKILL');
        const errors = await Promise.all([exchange, next]);
        for (const error of errors) assert.ok(error instanceof ConnectionLostError, String(error));
        return Math.max(...ended) - killedAt;
      });
    // Most of the interval is the kernel scheduling the dying server and the control client, so
    // one stall of a loaded machine can exceed it; a slow drover exceeds it on every attempt.
    const latencies: number[] = [];
    while (latencies.length < 3 && !latencies.some((ms) => ms < 100)) latencies.push(await killToLastWaiter());
    assert.ok(latencies.some((ms) => ms < 100), `waiters ended ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms after the kill`);
  });

  it('anchors a connection on a server without sessions and removes the anchor on close', async () => {
    await withServer(
      async (server) => {
        await assert.rejects(server.openControl({ anchor: false }), NoMatchError);
        const connection = await server.openControl();
        const sessions = (await server.run(['list-sessions', '-F', '#{session_id} #{session_name}'])).stdout.toString().split('\n').filter(Boolean);
        assert.equal(sessions.length, 1);
        assert.equal(sessions[0]!.split(' ')[0], connection.session);
        assert.match(sessions[0]!, / drover-anchor-/);
        await connection.close();
        assert.equal((await server.run(['list-sessions', '-F', '#{session_name}'])).stdout.toString(), '');
        // A borrowed binding removes its anchor when the binding itself closes.
        const borrowed = await Server.open(server.endpoint);
        await borrowed.openControl();
        assert.match((await server.run(['list-sessions', '-F', '#{session_name}'])).stdout.toString(), /^drover-anchor-/);
        await borrowed.close();
        assert.equal((await server.run(['list-sessions', '-F', '#{session_name}'])).stdout.toString(), '');
      },
      { config: 'set -s exit-empty off\n' },
    );
  });

  it('opens a borrowed binding on the control transport', async () => {
    await withServer(async (owner) => {
      const session = await owner.newSession({ name: 'borrowed' });
      const borrowed = await Server.open(owner.endpoint, { transport: 'control' });
      try {
        assert.equal(borrowed.transportKind, 'control');
        assert.equal(borrowed.diagnostics().controlConnections, 1);
        const spawnedBefore = processDiagnostics().spawned;
        assert.deepEqual((await borrowed.listSessions()).map((s) => s.id), [session.id]);
        assert.equal((await borrowed.session(session.id).display('#{session_name}')).toString(), 'borrowed');
        assert.equal(processDiagnostics().spawned, spawnedBefore);
      } finally {
        await borrowed.close();
      }
      assert.equal(borrowed.diagnostics().controlConnections, 0);
      assert.equal((await owner.listSessions()).length, 1);
    });
  });

  it('lists clients over the control transport as a spawned client does, its own connection among them', async () => {
    await withServer(async (owner) => {
      const session = await owner.newSession({ name: 'clients' });
      const borrowed = await Server.open(owner.endpoint, { transport: 'control' });
      // Another program's control client, which both answers must list.
      const other = await owner.openControl({ session, output: false });
      try {
        const format = ['-F', '#{client_pid} #{client_control_mode} #{session_name}'];
        await borrowed.listSessions();
        const spawnedBefore = processDiagnostics().spawned;
        const overControl = (await borrowed.run(['list-clients', ...format])).stdout.toString();
        assert.equal(processDiagnostics().spawned, spawnedBefore, 'answered over the connection');
        const spawned = (await owner.run(['list-clients', ...format])).stdout.toString();
        assert.equal(overControl, spawned);
        const own = borrowed.diagnostics();
        assert.equal(own.controlConnections, 1);
        assert.equal(overControl.split('\n').filter(Boolean).length, 2, "the other program's client and the connection");
        assert.ok(overControl.includes(`${other.pid} 1 clients\n`));
        assert.deepEqual((await borrowed.snapshot({ clients: true })).clients.toArray().map((client) => client.clientPid).sort(), overControl.split('\n').filter(Boolean).map((row) => Number(row.split(' ')[0])).sort());
        assert.equal(processDiagnostics().spawned, spawnedBefore + 1, 'only the spawned listing started a process');
      } finally {
        await other.close();
        await borrowed.close();
      }
    });
  });

  it('holds at most four connections per binding and closes them with it', async () => {
    await withServer(async (server) => {
      await server.newSession();
      const connections = await Promise.all(Array.from({ length: 4 }, () => server.openControl({ output: false })));
      await assert.rejects(server.openControl(), CapacityError);
      await connections[0]!.close();
      connections[0] = await server.openControl({ output: false });
      await server.close();
      for (const connection of connections) assert.equal(connection.isOpen, false);
      assert.equal(connections.some((connection) => connection.pid !== undefined && isRunning(connection.pid)), false);
    });
  });
});

describe('control transport quoting', () => {
  const t = useTestServer();
  const hostile = [
    `it's "quoted" \\back\\slash\\`,
    '$HOME ~ ~root #{pane_id} #(echo no) ;',
    '; { } {x} %if %1 @2 $3',
    'spaces  and\ttabs',
    'emoji 😀 é ß 中文',
    '-leading-dash',
    'trailing backslash \\',
  ];

  it('round-trips hostile arguments through set-option and send-keys -l', async () => {
    await t.server.newSession();
    await t.server.connect();
    const options = t.server.options('global-session');
    const spawnedBefore = processDiagnostics().spawned;
    for (const value of hostile) {
      await options.set('@drover_hostile', value);
      assert.equal((await options.get('@drover_hostile')).as('string'), value);
    }
    assert.equal(processDiagnostics().spawned, spawnedBefore, 'everything went over the control connection');

    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    const file = join(dir, 'typed');
    try {
      const session = await t.server.newSession({ command: ['sh', '-c', 'stty raw -echo; exec cat > "$1"', 'sh', file] });
      const pane = (await session.listPanes())[0]!;
      // raw mode: once stty has run, every byte typed reaches the file unchanged.
      await eventually('the raw-mode recorder to open its file', () => existsSync(file));
      const expected = `${hostile.join('\n')}\n`;
      await pane.sendText(expected);
      await eventually('the typed text to reach the file', () => readFileSync(file, 'utf8').length >= expected.length);
      assert.equal(readFileSync(file, 'utf8'), expected);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
