import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PaneGoneError, deliverPending, formatNotificationLine, sendAndNotify, waitForMessages, type DeliveryOptions, type Member } from '../../src/fleet/index.js';
import { FakeClock, FakePort, fakeSpans, openFixture, screenAgentRules, seedFleet } from './support.js';

/** A fleet whose members run a coding agent read off its screen (the test agent of support.ts). */
async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker, 's1', 'claude');
  const clock = new FakeClock();
  const port = new FakePort(clock);
  port.costMs = 5;
  const { spans } = fakeSpans();
  const drafts: string[] = [];
  let opened = 0;
  const options = (recipient: Member, extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
    broker: fixture.broker,
    locks: fixture.locks,
    recipientId: recipient.memberId,
    fleetId: seeded.fleet.fleetId,
    openPort: (placement) => {
      opened += 1;
      return port.open(placement, 0);
    },
    clock,
    spans,
    agentRules: () => screenAgentRules,
    onDraftCleared: (_member, draft) => drafts.push(draft),
    ...extra,
  });
  const send = (from: Member, to: Member, text: string) => fixture.broker.sendMessage({ from: from.memberId, to: to.memberId, text });
  return { ...fixture, ...seeded, clock, port, options, send, drafts, opened: () => opened };
}

describe('fleet delivery to a coding agent', () => {
  it('pastes one line per hold at the composer, never sends Escape, and stamps only on evidence', async (t) => {
    const s = await setup(t);
    const first = await s.send(s.alice, s.bob, 'first update');
    const second = await s.send(s.alice, s.bob, 'second update');
    assert.deepEqual(await deliverPending(s.options(s.bob)), { notified: [first.messageId], held: null, diagnostic: null });
    assert.equal((await s.broker.showMessage(second.messageId)).notifiedAt, null, 'the next line waits for the next hold, without a diagnostic');
    assert.deepEqual(await deliverPending(s.options(s.bob)), { notified: [second.messageId], held: null, diagnostic: null });
    assert.deepEqual(s.port.agent.submitted, [formatNotificationLine(first, { escapeLead: false }), formatNotificationLine(second, { escapeLead: false })]);
    assert.ok(s.port.agent.submitted.every((line) => !line.includes('Escape')), 'no clause about an Escape that was never sent');
    assert.deepEqual(s.port.inputs.map((call) => call.op), ['paste', 'enter', 'paste', 'enter'], 'the second line waited for the first turn to end');
    assert.ok(!s.port.calls.some((call) => call.op === 'escape'));
    for (const message of [first, second]) assert.ok((await s.broker.showMessage(message.messageId)).notifiedAt);
  });

  it('never types into a turn that does not end within the budget, and keeps the message pending with a diagnostic', async (t) => {
    const s = await setup(t);
    s.port.agent.phase = 'busy';
    s.port.agent.busyReads = 0;
    const message = await s.send(s.alice, s.bob, 'while you work');
    const attempt = await deliverPending(s.options(s.bob));
    assert.deepEqual(attempt.notified, []);
    assert.match(attempt.diagnostic!.diagnostic, /not notified to member .*: failed: the agent is busy with a turn/);
    assert.deepEqual(s.port.inputs, [], 'nothing typed, nothing interrupted');
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);
  });

  it('message wait retries a line that met the turn its previous line started, until the turn ends', async (t) => {
    const s = await setup(t);
    // The first line's turn outlasts one hold's five-second budget of screen reads.
    s.port.agent.busyReads = 150;
    const first = await s.send(s.alice, s.bob, 'first of two');
    const second = await s.send(s.alice, s.bob, 'second of two');
    // The wait ends when bob answers the Director, right after the second line went in.
    let pastes = 0;
    s.port.onCall = async (call) => {
      if (call.op === 'paste' && ++pastes === 2) await s.send(s.bob, s.director, 'both read');
    };
    // Fake time only moves while a line is tried: a second line never retried would wait forever, so real time bounds it.
    const waited = await waitForMessages({ ...s.options(s.bob), memberId: s.director.memberId, timeoutMs: 60_000, pollIntervalMs: 0, rotationIntervalMs: 0, signal: AbortSignal.timeout(10_000) });
    assert.deepEqual(waited.messages.map((message) => message.text), ['both read']);
    assert.deepEqual(waited.notified, [first.messageId, second.messageId], 'the second line went in once the turn was over');
    assert.deepEqual(waited.diagnostics, [], 'a message notified in the end carries no diagnostic');
    assert.deepEqual(s.port.agent.submitted, [formatNotificationLine(first, { escapeLead: false }), formatNotificationLine(second, { escapeLead: false })]);
    assert.ok(s.port.inputs.filter((call) => call.op === 'paste').length === 2, 'each line typed once');
  });

  it('leaves a dialog alone: nothing typed, nothing stamped', async (t) => {
    const s = await setup(t);
    s.port.agent.phase = 'dialog';
    const message = await s.send(s.alice, s.bob, 'are you there');
    const attempt = await deliverPending(s.options(s.bob));
    assert.match(attempt.diagnostic!.reason, /shows a dialog/);
    assert.deepEqual(s.port.inputs, []);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);
  });

  it('clears a draft instead of gluing the line to it, and reports the draft', async (t) => {
    const s = await setup(t);
    s.port.agent.composer = 'half-typed by a person';
    const message = await s.send(s.alice, s.bob, 'hello');
    const attempt = await deliverPending(s.options(s.bob));
    assert.deepEqual(attempt.notified, [message.messageId]);
    assert.deepEqual(s.drafts, ['half-typed by a person']);
    assert.deepEqual(s.port.agent.submitted, [formatNotificationLine(message, { escapeLead: false })]);
  });

  it('does not stamp a line that never showed in the composer', async (t) => {
    const s = await setup(t);
    s.port.agent.ignorePaste = true;
    const message = await s.send(s.alice, s.bob, 'lost on the way');
    const attempt = await deliverPending(s.options(s.bob));
    assert.deepEqual(attempt.notified, []);
    assert.match(attempt.diagnostic!.reason, /the composer did not show the text/);
    assert.deepEqual(s.port.inputs.map((call) => [call.op, call.text]), [['paste', formatNotificationLine(message, { escapeLead: false })]]);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);
  });

  it('marks a member whose pane is gone, keeps its messages, and says so on later sends without touching a multiplexer', async (t) => {
    const s = await setup(t);
    s.port.readScreen = () => Promise.reject(new PaneGoneError('%2'));
    const message = await s.send(s.alice, s.bob, 'anyone?');
    const attempt = await deliverPending(s.options(s.bob));
    assert.match(attempt.diagnostic!.reason, /its pane %2 no longer exists \(the member is marked gone/);
    assert.ok((await s.broker.getMember(s.bob.memberId)).placement!.goneAt, 'the placement records when the pane was found gone');
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);

    const opened = s.opened();
    const later = await sendAndNotify({ ...s.options(s.bob), from: s.alice.memberId, to: s.bob.memberId, text: 'still there?' });
    assert.equal(later.notificationSent, false);
    assert.match(later.diagnostic!.diagnostic, /its pane %2 no longer exists/);
    assert.equal(s.opened(), opened, 'a gone pane is not looked up again');
    assert.equal((await s.broker.pollMessages(s.bob.memberId)).length, 2, 'both messages are stored for the member');
  });
});
