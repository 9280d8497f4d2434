import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  SqlBroker,
  PaneLocks,
  WaitError,
  listenForMessages,
  placementLockKey,
  sendAndNotify,
  waitForMessages,
  type ConcretePlacement,
  type DeliverySnapshot,
} from '../../src/fleet/index.js';
import { FakeClock, FakePort, fakeSpans, openFixture, seedFleet } from './support.js';

/** Fake time that also moves 100 ms each time it is read, so a wait's deadline comes without real waiting. */
class TickingClock extends FakeClock {
  override now(): number {
    this.time += 100;
    return this.time;
  }
}

async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker);
  const clock = new TickingClock();
  const port = new FakePort(clock);
  const { spans } = fakeSpans();
  const notify = { broker: fixture.broker, locks: fixture.locks, openPort: port.open, clock, spans };
  return { ...fixture, ...seeded, clock, port, notify };
}

describe('waitForMessages', () => {
  it("returns the subject's message once it arrives, retrying held deliveries to other members meanwhile", async (t) => {
    const s = await setup(t);
    const held = await s.broker.sendMessage({ from: s.alice.memberId, to: s.bob.memberId, text: 'held for bob' });
    s.port.onCall = async (call) => {
      if (call.op === 'enter') await s.broker.sendMessage({ from: s.bob.memberId, to: s.director.memberId, text: 'bob is done' });
    };
    const result = await waitForMessages({ ...s.notify, memberId: s.director.memberId, timeoutMs: 60_000, pollIntervalMs: 0, rotationIntervalMs: 0 });
    assert.equal(result.timedOut, false);
    assert.deepEqual(
      result.messages.map((m) => m.text),
      ['bob is done'],
    );
    assert.deepEqual(result.notified, [held.messageId]);
    assert.deepEqual(result.diagnostics, []);
    assert.ok(s.port.calls.every((call) => call.pane === '%2'), "only bob's pane received input");
  });

  it('never types into the Director or the subject, and attempts each pending message once per invocation', async (t) => {
    const s = await setup(t);
    await s.broker.sendMessage({ from: s.bob.memberId, to: s.director.memberId, text: 'for the Director' });
    const forBob = await s.broker.sendMessage({ from: s.director.memberId, to: s.bob.memberId, text: 'for bob' });
    const busy = (await new PaneLocks(s.locks.directory).tryAcquire(placementLockKey(s.bob.placement as ConcretePlacement)))!;
    t.after(() => busy.release());
    const result = await waitForMessages({ ...s.notify, memberId: s.alice.memberId, timeoutMs: 20_000, pollIntervalMs: 0, rotationIntervalMs: 0 });
    assert.equal(result.timedOut, true);
    assert.deepEqual(result.messages, []);
    assert.deepEqual(
      result.diagnostics.map((d) => d.diagnostic),
      [`message ${forBob.messageId} was not notified to member ${s.bob.memberId}: pane input remained busy; the next send to member ${s.bob.memberId} or the next message wait retries it.`],
    );
    assert.deepEqual(s.port.calls, []);
  });

  it('ends with the cause and the diagnostics gathered so far when storage fails', async (t) => {
    const s = await setup(t);
    class Corrupt extends SqlBroker {
      override deliverySnapshot(): Promise<DeliverySnapshot> {
        throw Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
      }
    }
    await s.broker.sendMessage({ from: s.alice.memberId, to: s.bob.memberId, text: 'x' });
    await assert.rejects(
      waitForMessages({ ...s.notify, broker: new Corrupt(s.store), memberId: s.director.memberId, timeoutMs: 20_000, pollIntervalMs: 0, rotationIntervalMs: 0 }),
      (error: unknown) => error instanceof WaitError && error.message === 'message wait failed: database disk image is malformed' && error.diagnostics.length === 0,
    );
  });
});

describe('sendAndNotify after a storage failure', () => {
  it('keeps the committed message and reports the cause with the persisted prefix', async (t) => {
    const s = await setup(t);
    class Corrupt extends SqlBroker {
      override deliverySnapshot(): Promise<DeliverySnapshot> {
        throw new Error('database disk image is malformed');
      }
    }
    const sent = await sendAndNotify({ ...s.notify, broker: new Corrupt(s.store), from: s.alice.memberId, to: s.bob.memberId, text: 'hello' });
    assert.equal(sent.notificationSent, false);
    assert.equal(sent.failure?.diagnostic, `message ${sent.message.messageId} was persisted, but notifying member ${s.bob.memberId} failed: database disk image is malformed`);
    assert.equal((await s.broker.showMessage(sent.message.messageId)).text, 'hello');
  });
});

describe('listenForMessages', () => {
  it('yields the unacknowledged backlog oldest first, then each new message once, and stops when aborted', async (t) => {
    const s = await setup(t);
    const acked = await s.broker.sendMessage({ from: s.alice.memberId, to: s.director.memberId, text: 'already handled' });
    await s.broker.ackMessage(s.director.memberId, acked.messageId);
    await s.broker.sendMessage({ from: s.alice.memberId, to: s.director.memberId, text: 'backlog 1' });
    await s.broker.sendMessage({ from: s.bob.memberId, to: s.director.memberId, text: 'backlog 2' });
    await s.broker.sendMessage({ from: s.director.memberId, to: s.bob.memberId, text: 'not for the Director' });
    const stop = new AbortController();
    const stream = listenForMessages({ broker: s.broker, memberId: s.director.memberId, pollIntervalMs: 0, signal: stop.signal });
    const texts: string[] = [];
    for await (const message of stream) {
      texts.push(message.text);
      if (texts.length === 2) await s.broker.sendMessage({ from: s.alice.memberId, to: s.director.memberId, text: 'fresh' });
      if (texts.length === 3) stop.abort();
    }
    assert.deepEqual(texts, ['backlog 1', 'backlog 2', 'fresh']);
    assert.deepEqual(s.port.calls, [], 'listening types nothing');
  });

  it('ends with an error when the member leaves', async (t) => {
    const s = await setup(t);
    const stream = listenForMessages({ broker: s.broker, memberId: s.alice.memberId, pollIntervalMs: 0 });
    await s.broker.deregisterMember(s.alice.memberId);
    await assert.rejects(stream.next(), { message: `Member ${s.alice.memberId} not found` });
  });
});
