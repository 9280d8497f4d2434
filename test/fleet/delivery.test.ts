import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { shellQuote, TimeoutError } from '../../src/process/index.js';
import {
  INSUFFICIENT_BUDGET_MESSAGE,
  PaneLocks,
  broadcastAndNotify,
  deliverPending,
  formatNotificationLine,
  notNotifiedDiagnostic,
  placementLockKey,
  sendAndNotify,
  shellPromptLine,
  type ConcretePlacement,
  type DeliveryAttempt,
  type DeliveryOptions,
  type Member,
  type Message,
  type PaneLockGuard,
} from '../../src/fleet/index.js';
import { FakeClock, FakePort, fakeSpans, notSentError, openFixture, seedFleet } from './support.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker);
  const clock = new FakeClock();
  const port = new FakePort(clock);
  port.costMs = 0;
  const { host, spans } = fakeSpans();
  const opened: ConcretePlacement[] = [];
  const options = (recipient: Member, extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
    broker: fixture.broker,
    locks: fixture.locks,
    recipientId: recipient.memberId,
    fleetId: seeded.fleet.fleetId,
    openPort: (placement) => {
      opened.push(placement);
      return port.open(placement, 0);
    },
    clock,
    spans,
    ...extra,
  });
  const send = (from: Member, to: Member, text: string) => fixture.broker.sendMessage({ from: from.memberId, to: to.memberId, text });
  return { ...fixture, ...seeded, clock, port, host, spans, opened, options, send };
}

/**
 * One delivery to bob whose stamp meets a database another connection holds from Enter on: the
 * line goes in, the stamp fails. The delivery finishes near its deadline, so the stamp waits
 * only the one-second finalization grace; the database is let go and the pane's hook removed after.
 */
async function deliverWithStampBlocked(t: { after(fn: () => unknown): void }, s: Awaited<ReturnType<typeof setup>>): Promise<DeliveryAttempt> {
  const blocker = new Database(s.store.path);
  t.after(() => blocker.close());
  s.port.onCall = (call) => {
    if (call.op !== 'enter') return;
    blocker.exec('BEGIN IMMEDIATE');
    s.clock.advance(3500);
  };
  try {
    return await deliverPending(s.options(s.bob));
  } finally {
    blocker.exec('ROLLBACK');
    s.port.onCall = undefined;
  }
}

describe('deliverPending', () => {
  it('types into a shell at its prompt an inert line, each after ctrl+c (never Escape, nor the clause about it)', async (t) => {
    const s = await setup(t);
    s.port.foreground = '-bash';
    const messages = await Promise.all([1, "it's `make` time"].map((n) => s.send(s.director, s.bob, `update ${n}`)));
    const attempt = await deliverPending(s.options(s.bob));
    assert.deepEqual(attempt.notified, messages.map((m) => m.messageId));
    // ctrl+c drops a half-typed command (or an open quote) the line would otherwise join.
    assert.deepEqual(s.port.inputs.map((c) => [c.op, c.text]), [['keys', 'ctrl+c'], ['literal', s.port.literals[0]], ['enter', undefined], ['keys', 'ctrl+c'], ['literal', s.port.literals[1]], ['enter', undefined]]);
    assert.deepEqual(s.port.literals, messages.map((m) => shellPromptLine(m)));
    // The notification as the one single-quoted argument of `:`, its own quote closed and escaped.
    const [plain, quoted] = messages.map((m) => formatNotificationLine(m, { escapeLead: false }));
    assert.deepEqual(s.port.literals, [`: '${plain}'`, `: '${quoted!.replace("'", `'\\''`)}'`]);
    assert.ok(s.port.literals.every((line) => !line.includes('Escape')));
  });

  it('drains oldest first under one lock hold: Escape lead first, direct after, each stamped', async (t) => {
    const s = await setup(t);
    const messages = await Promise.all([1, 2, 3, 4, 5].map((n) => s.send(n % 2 ? s.alice : s.director, s.bob, `update ${n}`)));
    const key = placementLockKey(s.bob.placement as ConcretePlacement);
    const outsider = new PaneLocks(s.locks.directory);
    s.port.onCall = async () => {
      assert.equal(await outsider.tryAcquire(key), null, 'the pane lock is held through every keystroke');
    };
    const first = await deliverPending(s.options(s.bob));

    // 5 s hold: Escape line ends at 1.5 s, each direct line takes 1 s and needs 2.5 s left.
    assert.deepEqual(first, { notified: messages.slice(0, 3).map((m) => m.messageId), held: null, diagnostic: null });
    assert.deepEqual(s.port.inputs.map((c) => c.op), ['escape', 'literal', 'enter', 'literal', 'enter', 'literal', 'enter']);
    // Inert even here (a shell may run behind the program), the clause about Escape kept, and a
    // space first for a line editor holding Escape as a key prefix to take instead of the `:`.
    assert.deepEqual(s.port.literals, messages.slice(0, 3).map((m) => ` : ${shellQuote(formatNotificationLine(m))}`));
    assert.ok(s.port.calls.every((c) => c.pane === '%2'));
    for (const m of messages.slice(0, 3)) assert.ok((await s.broker.showMessage(m.messageId)).notifiedAt, `message ${m.messageId} stamped`);
    for (const m of messages.slice(3)) assert.equal((await s.broker.showMessage(m.messageId)).notifiedAt, null, 'left pending without a diagnostic');
    assert.equal(s.spans.depth, 0);

    s.port.calls.length = 0;
    s.port.onCall = undefined;
    const second = await deliverPending(s.options(s.bob));
    assert.deepEqual(second.notified, messages.slice(3).map((m) => m.messageId));
    assert.deepEqual(s.port.inputs.map((c) => c.op), ['escape', 'literal', 'enter', 'literal', 'enter'], 'a new hold leads with Escape again');
    assert.deepEqual((await s.broker.pollMessages(s.bob.memberId)).length, 5, 'delivery leaves every message input_required');
    const after = await outsider.tryAcquire(key);
    assert.ok(after, 'the lock is released afterwards');
    after.release();
  });

  it('gives the director, self-sends and other fleets no pane input and resolves no multiplexer', async (t) => {
    const s = await setup(t);
    await s.send(s.alice, s.director, 'for the director');
    await s.send(s.alice, s.alice, 'note to self');
    for (const attempt of [
      await deliverPending(s.options(s.director)),
      await deliverPending(s.options(s.alice)),
      await deliverPending(s.options(s.bob, { fleetId: s.fleet.fleetId + 1 })),
    ]) {
      assert.deepEqual(attempt, { notified: [], held: null, diagnostic: null });
    }
    assert.equal(s.opened.length, 0);
    assert.equal(s.port.calls.length, 0);
  });

  it('holds delivery for a pending placement, then delivers once the pane is recorded', async (t) => {
    const s = await setup(t);
    const carol = await s.broker.registerMember({ fleetId: s.fleet.fleetId, name: 'carol', codingAgent: 'shell', placement: { backend: 'tmux', session: 's1', window: '@1' } });
    const message = await s.send(s.alice, carol, 'welcome');
    assert.deepEqual(await deliverPending(s.options(carol)), { notified: [], held: 'pending_placement', diagnostic: null });
    assert.equal(s.port.calls.length, 0);
    await s.broker.recordPane(carol.memberId, '%8');
    assert.deepEqual((await deliverPending(s.options(carol))).notified, [message.messageId]);
    assert.equal(s.opened[0]!.pane, '%8');
  });

  it('reports a busy lock naming the oldest unattempted message, types nothing and waits at most 1.5 s', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    const held = (await new PaneLocks(s.locks.directory).tryAcquire(placementLockKey(s.bob.placement as ConcretePlacement)))!;
    t.after(() => held.release());
    const start = s.clock.now();
    const attempted = new Set<number>();
    const attempt = await deliverPending(s.options(s.bob, { attempted }));
    assert.equal(
      attempt.diagnostic?.diagnostic,
      `message ${message.messageId} was not notified to member ${s.bob.memberId}: pane input remained busy; the next send to member ${s.bob.memberId} or the next message wait retries it.`,
    );
    assert.equal(s.clock.now() - start, 1500);
    assert.equal(s.port.calls.length, 0);
    assert.equal(s.opened.length, 0);
    assert.equal(s.spans.depth, 0);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);

    // The same invocation attempts a message once; the next invocation retries it.
    held.release();
    assert.deepEqual(await deliverPending(s.options(s.bob, { attempted })), { notified: [], held: null, diagnostic: null });
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [message.messageId]);
  });

  it('holds when the placement changes while waiting for the lock', async (t) => {
    const s = await setup(t);
    await s.send(s.alice, s.bob, 'hello');
    const broker = s.broker;
    const bob = s.bob;
    class MovingLocks extends PaneLocks {
      override async acquire(...args: Parameters<PaneLocks['acquire']>): Promise<PaneLockGuard | null> {
        await broker.setPlacement(bob.memberId, { backend: 'tmux', session: 's1', window: '@1', pane: '%9' });
        return super.acquire(...args);
      }
    }
    const attempt = await deliverPending(s.options(s.bob, { locks: new MovingLocks(s.locks.directory) }));
    assert.deepEqual(attempt, { notified: [], held: 'placement_changed', diagnostic: null });
    assert.equal(s.opened.length, 0);
    assert.equal(s.port.calls.length, 0);
  });

  it('leaves a message pending after a transport failure and says so, keeping earlier stamps', async (t) => {
    const s = await setup(t);
    const [a, b, c] = (await Promise.all(['a', 'b', 'c'].map((text) => s.send(s.alice, s.bob, text)))) as [Message, Message, Message];
    s.port.failOn('literal', new TimeoutError('send-keys did not finish', 1000), 2);
    const attempt = await deliverPending(s.options(s.bob));
    assert.deepEqual(attempt.notified, [a.messageId]);
    assert.equal(attempt.diagnostic?.messageId, b.messageId);
    assert.match(attempt.diagnostic!.diagnostic, new RegExp(`^message ${b.messageId} was not notified to member ${s.bob.memberId}: typing into pane %2 may have been partial`));
    assert.equal((await s.broker.showMessage(b.messageId)).notifiedAt, null);
    assert.equal((await s.broker.showMessage(c.messageId)).notifiedAt, null);
    assert.deepEqual(s.port.inputs.map((call) => call.op), ['escape', 'literal', 'enter', 'literal'], 'the drain ends at the failure');

    // At-least-once: a later invocation types b again, with Escape.
    s.port.calls.length = 0;
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [b.messageId, c.messageId]);
    assert.equal(s.port.inputs[0]!.op, 'escape');
  });

  it('reports a multiplexer that cannot be resolved, typing nothing', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    const attempt = await deliverPending(s.options(s.bob, { openPort: () => Promise.reject(notSentError('no tmux server on the placement socket')) }));
    assert.equal(attempt.diagnostic?.diagnostic, notNotifiedDiagnostic(message.messageId, s.bob.memberId, 'no tmux server on the placement socket'));
    assert.equal(s.port.calls.length, 0);
  });

  it('fails the first message when the budget cannot cover the Escape lead and a minimal literal', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    const clock = s.clock;
    class SlowLocks extends PaneLocks {
      override tryAcquire(key: string): Promise<PaneLockGuard | null> {
        clock.advance(2001);
        return super.tryAcquire(key);
      }
    }
    const attempt = await deliverPending(s.options(s.bob, { locks: new SlowLocks(s.locks.directory) }));
    assert.equal(attempt.diagnostic?.diagnostic, notNotifiedDiagnostic(message.messageId, s.bob.memberId, INSUFFICIENT_BUDGET_MESSAGE));
    assert.equal(s.port.calls.length, 0);
  });

  it('counts a message ACKed before its stamp as notified, without stamping it', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    s.port.onCall = async (call) => {
      if (call.op === 'enter') await s.broker.ackMessage(s.bob.memberId, message.messageId);
    };
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [message.messageId]);
    const stored = await s.broker.showMessage(message.messageId);
    assert.equal(stored.statusState, 'completed');
    assert.equal(stored.notifiedAt, null);
  });

  it('ends the drain quietly when the recipient departs mid-drain', async (t) => {
    const s = await setup(t);
    const [first] = await Promise.all(['a', 'b'].map((text) => s.send(s.alice, s.bob, text)));
    s.port.onCall = async (call) => {
      if (call.op === 'enter') await s.broker.deregisterMember(s.bob.memberId);
    };
    assert.deepEqual(await deliverPending(s.options(s.bob)), { notified: [first!.messageId], held: null, diagnostic: null });
  });

  it('turns a busy database at the stamp into a diagnostic and leaves the message pending', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    const attempt = await deliverWithStampBlocked(t, s);
    assert.deepEqual(attempt.notified, []);
    assert.equal(attempt.diagnostic?.messageId, message.messageId);
    assert.match(attempt.diagnostic!.reason, /^the database stayed busy/);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);

    // The line went in and has scrolled off the screen since: the next delivery finds it in
    // the scrollback and stamps it without typing it a second time.
    s.port.scrollback = [...s.port.literals];
    s.port.calls.length = 0;
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [message.messageId]);
    assert.deepEqual(s.port.inputs, [], 'nothing typed again');
    assert.equal(s.port.calls.filter((call) => call.op === 'grid').length, 1, 'the scrollback read once');
    assert.notEqual((await s.broker.showMessage(message.messageId)).notifiedAt, null);
  });

  it('keeps the mark of an earlier attempt when the look for its line fails, so the next delivery looks again', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    assert.match((await deliverWithStampBlocked(t, s)).diagnostic!.reason, /^the database stayed busy/);
    s.port.scrollback = [...s.port.literals];

    // The pane cannot be read: nothing is typed, and the message keeps its mark.
    s.port.failOn('grid', notSentError('tmux did not answer'), 1);
    const unread = await deliverPending(s.options(s.bob));
    assert.match(unread.diagnostic!.reason, /could not be read to see whether an earlier delivery of this message left its line there/);
    s.port.calls.length = 0;
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [message.messageId]);
    assert.deepEqual(s.port.inputs, [], 'found in the scrollback on the next look, never typed twice');
    assert.equal(s.port.calls.filter((call) => call.op === 'grid').length, 1);
  });

  it('types a line again when an earlier attempt that sent nothing gave its claim back', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    s.port.failOn('escape', notSentError());
    assert.equal((await deliverPending(s.options(s.bob))).diagnostic?.messageId, message.messageId);
    s.port.calls.length = 0;
    assert.deepEqual((await deliverPending(s.options(s.bob))).notified, [message.messageId]);
    assert.deepEqual(s.port.literals, [shellPromptLine(message, { escapeLead: true })]);
    assert.equal(s.port.calls.filter((call) => call.op === 'grid').length, 0, 'no earlier attempt to look for in the scrollback');
  });

  it('defers a termination signal received mid-drain until the stamp is written and the lock released', async (t) => {
    const s = await setup(t);
    const message = await s.send(s.alice, s.bob, 'hello');
    s.port.onCall = (call) => {
      if (call.op === 'literal') s.host.raise('SIGTERM');
    };
    // Read as the signal takes effect: the store answers in the order it was asked.
    let stampedWhenDelivered: Promise<Message> | undefined;
    s.host.onKill = () => {
      stampedWhenDelivered = s.broker.showMessage(message.messageId);
    };
    await deliverPending(s.options(s.bob));
    assert.deepEqual(s.host.kills, [{ pid: s.host.pid, signal: 'SIGTERM' }]);
    assert.ok((await stampedWhenDelivered)?.notifiedAt, 'notified_at was stamped before the signal took effect');
  });
});

describe('sendAndNotify and broadcastAndNotify', () => {
  it('reports notification_sent only when this invocation delivered the new message', async (t) => {
    const s = await setup(t);
    const notify = { broker: s.broker, locks: s.locks, openPort: s.port.open, clock: s.clock, spans: s.spans };
    const sent = await sendAndNotify({ ...notify, from: s.alice.memberId, to: s.bob.memberId, text: 'first' });
    assert.equal(sent.notificationSent, true);
    assert.equal(sent.diagnostic, null);

    // Three older messages fill the hold, so the new one stays pending.
    for (const text of ['o1', 'o2', 'o3']) await s.send(s.director, s.bob, text);
    const late = await sendAndNotify({ ...notify, from: s.alice.memberId, to: s.bob.memberId, text: 'newest' });
    assert.equal(late.notificationSent, false);
    assert.equal(late.diagnostic, null);
    assert.equal((await s.broker.showMessage(late.message.messageId)).notifiedAt, null);

    const toDirector = await sendAndNotify({ ...notify, from: s.alice.memberId, to: s.director.memberId, text: 'report' });
    assert.equal(toDirector.notificationSent, false);
    const self = await sendAndNotify({ ...notify, from: s.bob.memberId, to: s.bob.memberId, text: 'memo' });
    assert.equal(self.notificationSent, false);
  });

  it('counts the broadcast recipients whose delivery was notified', async (t) => {
    const s = await setup(t);
    const notify = { broker: s.broker, locks: s.locks, openPort: s.port.open, clock: s.clock, spans: s.spans };
    const result = await broadcastAndNotify({ ...notify, from: s.alice.memberId, text: 'standup' });
    assert.equal(result.recipients, 2, 'director and bob');
    assert.equal(result.delivered, 1, 'only bob receives pane input');
    assert.deepEqual(result.diagnostics, []);
    assert.deepEqual(s.port.literals.length, 1);
  });
});
