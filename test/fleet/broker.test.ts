import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { RegistryNotFoundError } from '../../src/fleet/index.js';
import { openFixture, seedFleet } from './support.js';

describe('fleets', () => {
  it('bootstraps a fleet and its placed root director in one step', (t) => {
    const { broker } = openFixture(t);
    const { fleet, director } = broker.createFleet({
      name: 'team',
      codingAgent: 'claude',
      directorPlacement: { backend: 'tmux', session: '$1', window: '@2', pane: '%3' },
    });
    assert.equal(fleet.directorMemberId, director.memberId);
    assert.equal(fleet.deletedAt, null);
    assert.match(fleet.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    assert.equal(director.name, 'Director');
    assert.equal(director.kind, 'director');
    assert.equal(director.status, 'active');
    assert.deepEqual(
      { ...director.placement, createdAt: undefined },
      { memberId: director.memberId, backend: 'tmux', session: '$1', window: '@2', pane: '%3', createdAt: undefined, goneAt: null, server: null, staleAt: null },
    );
  });

  it('validates input before writing anything', (t) => {
    const { broker, store } = openFixture(t);
    const placement = { backend: 'tmux', session: 's', window: '@1', pane: '%1' } as const;
    assert.throws(() => broker.createFleet({ name: ' ', codingAgent: 'claude', directorPlacement: placement }), { message: 'fleet name may not be empty.' });
    assert.throws(() => broker.createFleet({ name: 'x', codingAgent: 'vim' as 'claude', directorPlacement: placement }), /coding agent must be one of claude, codex, gemini, opencode, shell \(got 'vim'\)/);
    assert.throws(() => broker.createFleet({ name: 'x', codingAgent: 'claude', directorPlacement: { ...placement, backend: 'screen' as 'tmux' } }), ArgumentError);
    assert.throws(() => broker.createFleet({ name: 'x', codingAgent: 'claude', directorPlacement: { ...placement, pane: null } }), /pane may not be empty/);
    assert.deepEqual(store.db.prepare('SELECT count(*) AS n FROM fleets').get(), { n: 0 });
    assert.deepEqual(store.db.prepare('SELECT count(*) AS n FROM members').get(), { n: 0 });
  });

  it('lists live fleets newest first with active member counts, and shows deleted ones', (t) => {
    const { broker } = openFixture(t);
    const first = seedFleet(broker);
    const second = broker.createFleet({ name: 'solo', codingAgent: 'codex', directorPlacement: { backend: 'herdr', session: 'w1', window: 't1', pane: 'w1:p1' } });
    assert.deepEqual(broker.listFleets().map((f) => [f.fleetId, f.memberCount]), [
      [second.fleet.fleetId, 1],
      [first.fleet.fleetId, 3],
    ]);
    assert.deepEqual(broker.deleteFleet(first.fleet.fleetId), { status: 'deleted', deregisteredCount: 3 });
    assert.deepEqual(broker.listFleets().map((f) => f.fleetId), [second.fleet.fleetId]);
    const shown = broker.getFleet(first.fleet.fleetId);
    assert.ok(shown.deletedAt !== null);
    assert.throws(() => broker.getFleet(999), { name: 'RegistryNotFoundError', message: "fleet '999' not found." });
  });

  it('soft-deletes idempotently: members deregistered, placements dropped, messages kept', (t) => {
    const { broker, store } = openFixture(t);
    const { fleet, alice, bob } = seedFleet(broker);
    const message = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'hi' });
    broker.deleteFleet(fleet.fleetId);
    assert.deepEqual(broker.deleteFleet(fleet.fleetId), { status: 'deleted', deregisteredCount: 0 });
    assert.throws(() => broker.getMember(alice.memberId), RegistryNotFoundError);
    assert.deepEqual(store.db.prepare('SELECT count(*) AS n FROM placements').get(), { n: 0 });
    assert.equal(broker.showMessage(message.messageId).text, 'hi');
    assert.throws(() => broker.registerMember({ fleetId: fleet.fleetId, name: 'late', codingAgent: 'claude' }), {
      message: `fleet ${fleet.fleetId} is deleted`,
    });
  });

  it('refuses to delete when the active placement set moved since it was read', (t) => {
    const { broker } = openFixture(t);
    const { fleet, alice } = seedFleet(broker);
    const seen = broker.activePlacements(fleet.fleetId);
    assert.equal(seen.length, 3);
    broker.setPlacement(alice.memberId, { backend: 'tmux', session: 's1', window: '@1', pane: '%7' });
    assert.deepEqual(broker.deleteFleet(fleet.fleetId, seen), { status: 'placements_changed' });
    assert.equal(broker.getFleet(fleet.fleetId).deletedAt, null);
    assert.equal(broker.deleteFleet(fleet.fleetId, broker.activePlacements(fleet.fleetId)).status, 'deleted');
  });
});

describe('members and placements', () => {
  it('registers with a pending placement, records the pane, lists the roster director first', (t) => {
    const { broker } = openFixture(t);
    const { fleet, director } = seedFleet(broker);
    const carol = broker.registerMember({ fleetId: fleet.fleetId, name: 'carol', description: 'reviews', codingAgent: 'opencode', placement: { backend: 'tmux', session: 's1', window: '@1' } });
    assert.equal(carol.placement?.pane, null);
    assert.equal(carol.kind, 'member');
    assert.equal(carol.description, 'reviews');
    assert.equal(broker.recordPane(carol.memberId, '%5').pane, '%5');
    const roster = broker.listMembers(fleet.fleetId);
    assert.deepEqual(roster.map((m) => m.name), ['Director', 'alice', 'bob', 'carol']);
    assert.equal(roster[0]!.memberId, director.memberId);
    assert.equal(roster[3]!.placement?.pane, '%5');
  });

  it('tracks last sent, received and acknowledged per member', (t) => {
    const { broker } = openFixture(t);
    const { fleet, alice, bob } = seedFleet(broker);
    const message = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'hi' });
    const acked = broker.ackMessage(bob.memberId, message.messageId);
    const roster = new Map(broker.listMembers(fleet.fleetId).map((m) => [m.name, m]));
    // Activity follows status_timestamp, which the ACK moved.
    assert.ok(acked.statusTimestamp > message.statusTimestamp);
    assert.equal(roster.get('alice')!.lastSent, acked.statusTimestamp);
    assert.equal(roster.get('alice')!.lastRecv, null);
    assert.equal(roster.get('bob')!.lastAck, acked.statusTimestamp);
    assert.equal(roster.get('bob')!.lastRecv, acked.statusTimestamp);
    assert.equal(roster.get('Director')!.lastSent, null);
  });

  it('deregisters ordinary members only, dropping the placement', (t) => {
    const { broker } = openFixture(t);
    const { director, alice } = seedFleet(broker);
    assert.throws(() => broker.deregisterMember(director.memberId), {
      name: 'RegistryStateError',
      message: "cannot deregister the root Director; use 'drover fleet delete' instead",
    });
    assert.deepEqual(broker.deregisterMember(alice.memberId, { ...alice.placement!, pane: '%other' }), { status: 'placement_changed' });
    assert.deepEqual(broker.deregisterMember(alice.memberId, alice.placement), { status: 'deregistered' });
    assert.throws(() => broker.getMember(alice.memberId), { message: `Member ${alice.memberId} not found` });
    assert.throws(() => broker.deregisterMember(alice.memberId), RegistryNotFoundError);
  });

  it('refuses a member into a fleet that does not exist', (t) => {
    const { broker } = openFixture(t);
    assert.throws(() => broker.registerMember({ fleetId: 42, name: 'x', codingAgent: 'claude' }), { message: "fleet '42' not found." });
    assert.throws(() => broker.registerMember({ fleetId: 0, name: 'x', codingAgent: 'claude' }), { message: 'fleet id must be a positive integer, got 0' });
  });

  it('clears and replaces placements; recordPane needs a placement row', (t) => {
    const { broker, store } = openFixture(t);
    const { fleet } = seedFleet(broker);
    const loose = broker.registerMember({ fleetId: fleet.fleetId, name: 'loose', codingAgent: 'shell' });
    assert.equal(loose.placement, null);
    assert.throws(() => broker.recordPane(loose.memberId, '%9'), /has no placement row/);
    broker.setPlacement(loose.memberId, { backend: 'herdr', session: 'w', window: 't', pane: 'w:p2' });
    assert.equal(broker.getMember(loose.memberId).placement?.backend, 'herdr');
    assert.equal(broker.clearPlacement(loose.memberId), true);
    assert.equal(broker.clearPlacement(loose.memberId), false);
    assert.deepEqual(store.db.prepare('SELECT count(*) AS n FROM placements WHERE member_id = ?').get(loose.memberId), { n: 0 });
  });
});

describe('messages', () => {
  it('persists a unicast exactly, input_required and unnotified', (t) => {
    const { broker } = openFixture(t);
    const { alice, bob } = seedFleet(broker);
    const text = '  multi\nline\twith 🚀 and trailing space ';
    const message = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text });
    assert.equal(message.text, text);
    assert.equal(message.ownerMemberId, bob.memberId);
    assert.equal(message.toMemberId, bob.memberId);
    assert.equal(message.type, 'unicast');
    assert.equal(message.statusState, 'input_required');
    assert.equal(message.originMessageId, null);
    assert.equal(message.notifiedAt, null);
    assert.equal(message.createdAt, message.statusTimestamp);
  });

  it('refuses unknown senders and recipients, cross-fleet sends and blank text with their messages', (t) => {
    const { broker } = openFixture(t);
    const one = seedFleet(broker, 's1');
    const two = seedFleet(broker, 's2');
    assert.throws(() => broker.sendMessage({ from: 999, to: one.bob.memberId, text: 'x' }), { message: 'Sender member not found or not active: 999' });
    assert.throws(() => broker.sendMessage({ from: one.alice.memberId, to: 998, text: 'x' }), { message: 'Destination member not found: 998' });
    assert.throws(() => broker.sendMessage({ from: one.alice.memberId, to: two.bob.memberId, text: 'x' }), {
      name: 'RegistryStateError',
      message: `members ${one.alice.memberId} and ${two.bob.memberId} are not in the same fleet.`,
    });
    assert.throws(() => broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: ' \n ' }), { message: 'text may not be empty.' });
  });

  it('polls only the member\'s own input_required deliveries', (t) => {
    const { broker } = openFixture(t);
    const { director, alice, bob } = seedFleet(broker);
    const first = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'one' });
    const second = broker.sendMessage({ from: director.memberId, to: bob.memberId, text: 'two' });
    broker.sendMessage({ from: bob.memberId, to: alice.memberId, text: 'for alice' });
    assert.deepEqual(broker.pollMessages(bob.memberId).map((m) => m.messageId), [second.messageId, first.messageId]);
    broker.ackMessage(bob.memberId, first.messageId);
    assert.deepEqual(broker.pollMessages(bob.memberId).map((m) => m.messageId), [second.messageId]);
    assert.throws(() => broker.pollMessages(999), { message: 'Member 999 not found' });
  });

  it('lets only the recipient ACK, only once, and hides other fleets\' messages', (t) => {
    const { broker } = openFixture(t);
    const one = seedFleet(broker, 's1');
    const two = seedFleet(broker, 's2');
    const message = broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: 'x' });
    assert.throws(() => broker.ackMessage(one.alice.memberId, message.messageId), { name: 'RegistryStateError', message: 'Only the recipient can ACK a message' });
    assert.throws(() => broker.ackMessage(two.bob.memberId, message.messageId), { name: 'RegistryNotFoundError', message: `Message ${message.messageId} not found` });
    const acked = broker.ackMessage(one.bob.memberId, message.messageId);
    assert.equal(acked.statusState, 'completed');
    assert.ok(acked.statusTimestamp > message.statusTimestamp);
    assert.throws(() => broker.ackMessage(one.bob.memberId, message.messageId), { message: 'Cannot ACK message in state completed' });
    assert.throws(() => broker.ackMessage(one.bob.memberId, 12345), { message: 'Message 12345 not found' });
  });

  it('shows a message within its fleet; another fleet reads it as not found', (t) => {
    const { broker } = openFixture(t);
    const one = seedFleet(broker, 's1');
    const two = seedFleet(broker, 's2');
    const message = broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: 'x' });
    assert.equal(broker.showMessage(message.messageId, one.fleet.fleetId).messageId, message.messageId);
    assert.equal(broker.showMessage(message.messageId).messageId, message.messageId);
    assert.throws(() => broker.showMessage(message.messageId, two.fleet.fleetId), { message: `Message ${message.messageId} not found` });
  });

  it('writes a broadcast as N+1 rows grouped by the summary', (t) => {
    const { broker } = openFixture(t);
    const { director, alice, bob } = seedFleet(broker);
    const result = broker.broadcastMessage({ from: alice.memberId, text: 'all hands' });
    assert.equal(result.recipients, 2);
    assert.equal(result.summary.type, 'broadcast_summary');
    assert.equal(result.summary.text, 'Broadcast sent to 2 recipients');
    assert.equal(result.summary.statusState, 'completed');
    assert.equal(result.summary.toMemberId, null);
    assert.equal(result.summary.ownerMemberId, alice.memberId);
    assert.equal(result.summary.originMessageId, result.summary.messageId);
    assert.deepEqual(result.deliveries.map((m) => m.ownerMemberId).sort(), [director.memberId, bob.memberId].sort());
    for (const delivery of result.deliveries) {
      assert.equal(delivery.originMessageId, result.summary.messageId);
      assert.equal(delivery.type, 'unicast');
      assert.equal(delivery.text, 'all hands');
      assert.equal(delivery.statusState, 'input_required');
    }
    assert.deepEqual(broker.pollMessages(alice.memberId), [], 'the summary is not in the sender\'s inbox');
  });
});

describe('delivery queries', () => {
  it('orders pending messages by (created_at, message_id) and skips attempted ones', (t) => {
    const { broker, store } = openFixture(t);
    const { fleet, alice, bob, director } = seedFleet(broker);
    const a = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'a' });
    const b = broker.sendMessage({ from: director.memberId, to: bob.memberId, text: 'b' });
    // Same created_at as a, higher id: still after a.
    store.db.prepare('UPDATE messages SET created_at = ? WHERE message_id = ?').run(a.createdAt, b.messageId);
    const c = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'c' });
    store.db.prepare('UPDATE messages SET created_at = ? WHERE message_id = ?').run('2000-01-01T00:00:00.000000+00:00', c.messageId);
    const order: number[] = [];
    const attempted = new Set<number>();
    for (;;) {
      const snapshot = broker.deliverySnapshot(bob.memberId, fleet.fleetId, attempted);
      assert.equal(snapshot.eligibility, 'eligible');
      if (!snapshot.next) break;
      order.push(snapshot.next.messageId);
      attempted.add(snapshot.next.messageId);
    }
    assert.deepEqual(order, [c.messageId, a.messageId, b.messageId]);
  });

  it('never offers pane delivery to the director, other fleets, the inactive or self-sends', (t) => {
    const { broker } = openFixture(t);
    const { fleet, director, alice, bob } = seedFleet(broker);
    broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'to director' });
    assert.equal(broker.deliverySnapshot(director.memberId, fleet.fleetId).eligibility, 'director');
    assert.equal(broker.deliverySnapshot(alice.memberId, fleet.fleetId + 1).eligibility, 'fleet_mismatch');
    broker.sendMessage({ from: alice.memberId, to: alice.memberId, text: 'note to self' });
    assert.equal(broker.deliverySnapshot(alice.memberId, fleet.fleetId).next, null);
    broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'x' });
    broker.deregisterMember(bob.memberId);
    assert.equal(broker.deliverySnapshot(bob.memberId, fleet.fleetId).eligibility, 'inactive');
  });

  it('holds for a pending placement and excludes a member without one', (t) => {
    const { broker } = openFixture(t);
    const { fleet, alice } = seedFleet(broker);
    const pending = broker.registerMember({ fleetId: fleet.fleetId, name: 'p', codingAgent: 'claude', placement: { backend: 'tmux', session: 's1', window: '@1' } });
    const loose = broker.registerMember({ fleetId: fleet.fleetId, name: 'l', codingAgent: 'claude' });
    broker.sendMessage({ from: alice.memberId, to: pending.memberId, text: 'x' });
    broker.sendMessage({ from: alice.memberId, to: loose.memberId, text: 'x' });
    const held = broker.deliverySnapshot(pending.memberId, fleet.fleetId);
    assert.equal(held.eligibility, 'pending_placement');
    assert.ok(held.next);
    assert.equal(broker.deliverySnapshot(loose.memberId, fleet.fleetId).eligibility, 'no_placement');
  });

  it('stamps notified_at only while pending and reports why it did not', (t) => {
    const { broker } = openFixture(t);
    const { alice, bob } = seedFleet(broker);
    const first = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'a' });
    const second = broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'b' });
    assert.equal(broker.stampNotified(first.messageId), 'stamped');
    const stampedAt = broker.showMessage(first.messageId).notifiedAt;
    assert.ok(stampedAt);
    assert.equal(broker.stampNotified(first.messageId), 'already_notified');
    assert.equal(broker.showMessage(first.messageId).notifiedAt, stampedAt);
    broker.ackMessage(bob.memberId, second.messageId);
    assert.equal(broker.stampNotified(second.messageId), 'acked');
    assert.equal(broker.showMessage(second.messageId).notifiedAt, null);
    assert.equal(broker.showMessage(second.messageId).statusState, 'completed');
    assert.equal(broker.stampNotified(99999), 'missing');
  });

  it('finds ordinary members with concrete panes and messages awaiting notification, oldest first', (t) => {
    const { broker } = openFixture(t);
    const { fleet, director, alice, bob } = seedFleet(broker);
    broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'older' });
    broker.sendMessage({ from: bob.memberId, to: alice.memberId, text: 'newer' });
    broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'director reads natively' });
    assert.deepEqual(broker.recipientsAwaitingNotification(fleet.fleetId), [bob.memberId, alice.memberId]);
    assert.deepEqual(broker.recipientsAwaitingNotification(fleet.fleetId, [bob.memberId]), [alice.memberId]);
  });
});

describe('input validation', () => {
  it('rejects ids that are not positive integers before touching the database', (t) => {
    const { broker } = openFixture(t);
    assert.throws(() => broker.getMember(1.5), ArgumentError);
    assert.throws(() => broker.showMessage(-1), { message: 'message id must be a positive integer, got -1' });
  });
});
