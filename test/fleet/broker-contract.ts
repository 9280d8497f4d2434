/**
 * The broker contract: what every store drover keeps fleets in must do, asserted through the
 * Broker port alone. broker.test.ts runs this same suite against every store.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { RegistryNotFoundError, RegistryStateError, type Broker, type ClaimRequest, type StoreKind } from '../../src/fleet/index.js';
import { seedFleet, TestWall } from './support.js';

export interface ContractStore {
  kind: StoreKind;
  /** The store is reached through a `drover broker serve` socket (StoreInfo.via names it). */
  served?: boolean;
  /**
   * A broker on a new, empty store whose timestamps come from `wall`, and a way to open a
   * second broker on the same store (another process's connection). Everything opened is
   * closed after the test.
   */
  open(t: { after(fn: () => unknown): void }, wall: () => number): Promise<{ broker: Broker; another(): Promise<Broker> }>;
}

function claim(claimant: string, exclude: Iterable<number> = [], leaseMs = 10_000): ClaimRequest {
  return { claimant, voids: `${claimant.split('/')[0]}/`, exclude: new Set(exclude), leaseMs };
}

export function brokerContract(store: ContractStore): void {
  async function open(t: { after(fn: () => unknown): void }) {
    const wall = new TestWall();
    const opened = await store.open(t, wall.read);
    return { ...opened, wall };
  }

  describe(`the broker contract on ${store.kind}${store.served ? ' served over a socket' : ''}`, () => {
    describe('the store', () => {
      it('says which store it is, opened for writing at the latest schema', async (t) => {
        const { broker } = await open(t);
        assert.equal(broker.store.kind, store.kind);
        assert.equal(broker.store.readOnly, false);
        assert.deepEqual(broker.store.schema, { openedAt: 0, current: broker.store.schema.latest, latest: broker.store.schema.latest });
        assert.match(broker.timestamp(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
      });

      it('tells a member the environment that reaches this same store', async (t) => {
        const { broker } = await open(t);
        const env = broker.connectionEnvironment();
        if (store.served) assert.deepEqual(env, { DROVER_BROKER: broker.store.via });
        else if (store.kind === 'sqlite') assert.deepEqual([env.DROVER_BROKER, env.DROVER_DB], ['sqlite', broker.store.location]);
        else assert.match(env.DROVER_BROKER!, /^postgres(ql)?:\/\//);
      });
    });

    describe('fleets', () => {
      it('bootstraps a fleet and its placed root director in one step', async (t) => {
        const { broker } = await open(t);
        const { fleet, director } = await broker.createFleet({ name: 'team', codingAgent: 'claude', directorPlacement: { backend: 'tmux', session: '$1', window: '@2', pane: '%3' } });
        assert.equal(fleet.directorMemberId, director.memberId);
        assert.equal(fleet.deletedAt, null);
        assert.match(fleet.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
        assert.deepEqual([director.name, director.kind, director.status, director.codingAgent], ['Director', 'director', 'active', 'claude']);
        assert.deepEqual(
          { ...director.placement, createdAt: undefined },
          { memberId: director.memberId, backend: 'tmux', session: '$1', window: '@2', pane: '%3', createdAt: undefined, goneAt: null, server: null, endpoint: null, staleAt: null, host: null },
        );
      });

      it('validates input before writing anything', async (t) => {
        const { broker } = await open(t);
        const placement = { backend: 'tmux', session: 's', window: '@1', pane: '%1' } as const;
        await assert.rejects(broker.createFleet({ name: ' ', codingAgent: 'claude', directorPlacement: placement }), { message: 'fleet name may not be empty.' });
        await assert.rejects(broker.createFleet({ name: 'x', codingAgent: 'vim' as 'claude', directorPlacement: placement }), /coding agent must be one of claude, codex, gemini, opencode, shell \(got 'vim'\)/);
        await assert.rejects(broker.createFleet({ name: 'x', codingAgent: 'claude', directorPlacement: { ...placement, backend: 'screen' as 'tmux' } }), ArgumentError);
        await assert.rejects(broker.createFleet({ name: 'x', codingAgent: 'claude', directorPlacement: { ...placement, pane: null } }), /pane may not be empty/);
        await assert.rejects(broker.getMember(1.5), ArgumentError);
        await assert.rejects(broker.showMessage(-1), { message: 'message id must be a positive integer, got -1' });
        assert.deepEqual(await broker.listFleets(), []);
      });

      it('lists live fleets newest first with active member counts, and shows deleted ones', async (t) => {
        const { broker } = await open(t);
        const first = await seedFleet(broker);
        const second = await broker.createFleet({ name: 'solo', codingAgent: 'codex', directorPlacement: { backend: 'herdr', session: 'w1', window: 't1', pane: 'w1:p1' } });
        assert.deepEqual((await broker.listFleets()).map((f) => [f.fleetId, f.memberCount]), [
          [second.fleet.fleetId, 1],
          [first.fleet.fleetId, 3],
        ]);
        assert.deepEqual(await broker.deleteFleet(first.fleet.fleetId), { status: 'deleted', deregisteredCount: 3 });
        assert.deepEqual((await broker.listFleets()).map((f) => f.fleetId), [second.fleet.fleetId]);
        assert.ok((await broker.getFleet(first.fleet.fleetId)).deletedAt !== null);
        await assert.rejects(broker.getFleet(999), { name: 'RegistryNotFoundError', message: "fleet '999' not found." });
      });

      it('soft-deletes idempotently: members deregistered, placements dropped, messages kept', async (t) => {
        const { broker } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const message = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'hi' });
        await broker.deleteFleet(fleet.fleetId);
        assert.deepEqual(await broker.deleteFleet(fleet.fleetId), { status: 'deleted', deregisteredCount: 0 });
        await assert.rejects(broker.getMember(alice.memberId), RegistryNotFoundError);
        assert.deepEqual(await broker.activePlacements(fleet.fleetId), []);
        assert.equal((await broker.showMessage(message.messageId)).text, 'hi');
        await assert.rejects(broker.registerMember({ fleetId: fleet.fleetId, name: 'late', codingAgent: 'claude' }), { message: `fleet ${fleet.fleetId} is deleted` });
      });

      it('refuses to delete when the active placement set moved since it was read', async (t) => {
        const { broker } = await open(t);
        const { fleet, alice } = await seedFleet(broker);
        const seen = await broker.activePlacements(fleet.fleetId);
        assert.equal(seen.length, 3);
        await broker.setPlacement(alice.memberId, { backend: 'tmux', session: 's1', window: '@1', pane: '%7' });
        assert.deepEqual(await broker.deleteFleet(fleet.fleetId, seen), { status: 'placements_changed' });
        assert.equal((await broker.getFleet(fleet.fleetId)).deletedAt, null);
        assert.equal((await broker.deleteFleet(fleet.fleetId, await broker.activePlacements(fleet.fleetId))).status, 'deleted');
      });

      it('finds the members placed in one pane across fleets, and not after they left', async (t) => {
        const { broker } = await open(t);
        const { alice } = await seedFleet(broker);
        const other = await seedFleet(broker, 's2');
        await broker.setPlacement(other.bob.memberId, { backend: 'tmux', session: 's2', window: '@4', pane: '%1' });
        const inPane = await broker.placementsInPane('tmux', '%1');
        assert.deepEqual(inPane.map((entry) => [entry.memberId, entry.placement.session]), [
          [alice.memberId, 's1'],
          [other.alice.memberId, 's2'],
          [other.bob.memberId, 's2'],
        ]);
        assert.deepEqual(await broker.placementsInPane('herdr', '%1'), []);
        await broker.deleteFleet(other.fleet.fleetId);
        assert.deepEqual((await broker.placementsInPane('tmux', '%1')).map((entry) => entry.memberId), [alice.memberId]);
      });

      it('never reuses an id, in one connection or across two', async (t) => {
        const { broker, another } = await open(t);
        const other = await another();
        const ids = [];
        for (const at of [broker, other, broker]) ids.push((await seedFleet(at)).fleet.fleetId);
        assert.equal(new Set(ids).size, 3);
        assert.deepEqual([...ids].sort((a, b) => a - b), ids);
      });
    });

    describe('members and placements', () => {
      it('registers with a pending placement, records the pane, lists the roster director first', async (t) => {
        const { broker } = await open(t);
        const { fleet, director } = await seedFleet(broker);
        const carol = await broker.registerMember({ fleetId: fleet.fleetId, name: 'carol', description: 'reviews', codingAgent: 'opencode', placement: { backend: 'tmux', session: 's1', window: '@1' } });
        assert.deepEqual([carol.placement?.pane, carol.kind, carol.description], [null, 'member', 'reviews']);
        assert.equal((await broker.recordPane(carol.memberId, '%5')).pane, '%5');
        const roster = await broker.listMembers(fleet.fleetId);
        assert.deepEqual(roster.map((m) => m.name), ['Director', 'alice', 'bob', 'carol']);
        assert.equal(roster[0]!.memberId, director.memberId);
        assert.equal(roster[3]!.placement?.pane, '%5');
      });

      it('keeps the host a placement names, null for this machine however it was given', async (t) => {
        const { broker } = await open(t);
        const { fleet, alice } = await seedFleet(broker);
        assert.equal(alice.placement?.host, null);
        const remote = await broker.registerMember({ fleetId: fleet.fleetId, name: 'far', codingAgent: 'shell', placement: { host: 'gpu', backend: 'tmux', session: 's', window: '@3', server: 'run-1' } });
        assert.equal(remote.placement?.host, 'gpu');
        const recorded = await broker.recordPane(remote.memberId, '%7');
        assert.deepEqual([recorded.host, recorded.pane], ['gpu', '%7']);
        const local = await broker.setPlacement(remote.memberId, { host: 'local', backend: 'tmux', session: 's', window: '@3', pane: '%7' });
        assert.equal(local.host, null);
        // The same pane id on another host is another pane: a guard taken for one never passes for the other.
        assert.deepEqual(await broker.deregisterMember(remote.memberId, { ...local, host: 'gpu' }), { status: 'placement_changed' });
        await assert.rejects(broker.registerMember({ fleetId: fleet.fleetId, name: 'x', codingAgent: 'shell', placement: { host: ' ', backend: 'tmux', session: 's', window: '@1' } }), /placement host may not be empty/);
      });

      it('tracks last sent, received and acknowledged per member', async (t) => {
        const { broker } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const message = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'hi' });
        const acked = await broker.ackMessage(bob.memberId, message.messageId);
        const roster = new Map((await broker.listMembers(fleet.fleetId)).map((m) => [m.name, m]));
        // Activity follows status_timestamp, which the ACK moved.
        assert.ok(acked.statusTimestamp > message.statusTimestamp);
        assert.equal(roster.get('alice')!.lastSent, acked.statusTimestamp);
        assert.equal(roster.get('alice')!.lastRecv, null);
        assert.equal(roster.get('bob')!.lastAck, acked.statusTimestamp);
        assert.equal(roster.get('bob')!.lastRecv, acked.statusTimestamp);
        assert.equal(roster.get('Director')!.lastSent, null);
      });

      it('deregisters ordinary members only, dropping the placement', async (t) => {
        const { broker } = await open(t);
        const { director, alice } = await seedFleet(broker);
        await assert.rejects(broker.deregisterMember(director.memberId), {
          name: 'RegistryStateError',
          message: "cannot deregister the root Director; use 'drover fleet delete' instead",
        });
        assert.deepEqual(await broker.deregisterMember(alice.memberId, { ...alice.placement!, pane: '%other' }), { status: 'placement_changed' });
        assert.deepEqual(await broker.deregisterMember(alice.memberId, alice.placement), { status: 'deregistered' });
        await assert.rejects(broker.getMember(alice.memberId), { message: `Member ${alice.memberId} not found` });
        await assert.rejects(broker.deregisterMember(alice.memberId), RegistryNotFoundError);
      });

      it('refuses a member into a fleet that does not exist', async (t) => {
        const { broker } = await open(t);
        await assert.rejects(broker.registerMember({ fleetId: 42, name: 'x', codingAgent: 'claude' }), { message: "fleet '42' not found." });
        await assert.rejects(broker.registerMember({ fleetId: 0, name: 'x', codingAgent: 'claude' }), { message: 'fleet id must be a positive integer, got 0' });
        await assert.rejects(broker.listMembers(42), { message: "fleet '42' not found." });
      });

      it('clears and replaces placements; recordPane needs a placement row', async (t) => {
        const { broker } = await open(t);
        const { fleet } = await seedFleet(broker);
        const loose = await broker.registerMember({ fleetId: fleet.fleetId, name: 'loose', codingAgent: 'shell' });
        assert.equal(loose.placement, null);
        await assert.rejects(broker.recordPane(loose.memberId, '%9'), /has no placement row/);
        await broker.setPlacement(loose.memberId, { backend: 'herdr', session: 'w', window: 't', pane: 'w:p2' });
        assert.equal((await broker.getMember(loose.memberId)).placement?.backend, 'herdr');
        assert.equal(await broker.clearPlacement(loose.memberId), true);
        assert.equal(await broker.clearPlacement(loose.memberId), false);
        assert.equal((await broker.getMember(loose.memberId)).placement, null);
      });

      it('marks a pane gone, or its server replaced, once and only while the placement names that pane', async (t) => {
        const { broker } = await open(t);
        const { alice, bob } = await seedFleet(broker);
        assert.equal(await broker.markPaneGone(alice.memberId, '%other'), false);
        assert.equal(await broker.markPaneGone(alice.memberId, '%1'), true);
        assert.equal(await broker.markPaneGone(alice.memberId, '%1'), false);
        assert.ok((await broker.getMember(alice.memberId)).placement?.goneAt);
        assert.equal(await broker.markServerReplaced(bob.memberId, '%2'), true);
        assert.equal(await broker.markServerReplaced(bob.memberId, '%2'), false);
        assert.ok((await broker.getMember(bob.memberId)).placement?.staleAt);
      });
    });

    describe('messages', () => {
      it('persists a unicast exactly, input_required and unnotified', async (t) => {
        const { broker } = await open(t);
        const { alice, bob } = await seedFleet(broker);
        const text = '  multi\nline\twith 🚀, \'quotes\', "doubles", \\ and trailing space ';
        const message = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text });
        assert.equal(message.text, text);
        assert.deepEqual(
          [message.ownerMemberId, message.toMemberId, message.type, message.statusState, message.originMessageId, message.notifiedAt],
          [bob.memberId, bob.memberId, 'unicast', 'input_required', null, null],
        );
        assert.equal(message.createdAt, message.statusTimestamp);
        assert.deepEqual(await broker.showMessage(message.messageId), message);
      });

      it('refuses unknown senders and recipients, cross-fleet sends and blank text with their messages', async (t) => {
        const { broker } = await open(t);
        const one = await seedFleet(broker, 's1');
        const two = await seedFleet(broker, 's2');
        await assert.rejects(broker.sendMessage({ from: 999, to: one.bob.memberId, text: 'x' }), { message: 'Sender member not found or not active: 999' });
        await assert.rejects(broker.sendMessage({ from: one.alice.memberId, to: 998, text: 'x' }), { message: 'Destination member not found: 998' });
        await assert.rejects(broker.sendMessage({ from: one.alice.memberId, to: two.bob.memberId, text: 'x' }), {
          name: 'RegistryStateError',
          message: `members ${one.alice.memberId} and ${two.bob.memberId} are not in the same fleet.`,
        });
        await assert.rejects(broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: ' \n ' }), { message: 'text may not be empty.' });
      });

      it("polls only the member's own input_required deliveries", async (t) => {
        const { broker } = await open(t);
        const { director, alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'one' });
        const second = await broker.sendMessage({ from: director.memberId, to: bob.memberId, text: 'two' });
        await broker.sendMessage({ from: bob.memberId, to: alice.memberId, text: 'for alice' });
        assert.deepEqual((await broker.pollMessages(bob.memberId)).map((m) => m.messageId), [second.messageId, first.messageId]);
        await broker.ackMessage(bob.memberId, first.messageId);
        assert.deepEqual((await broker.pollMessages(bob.memberId)).map((m) => m.messageId), [second.messageId]);
        await assert.rejects(broker.pollMessages(999), { message: 'Member 999 not found' });
      });

      it("lets only the recipient ACK, only once, and hides other fleets' messages", async (t) => {
        const { broker } = await open(t);
        const one = await seedFleet(broker, 's1');
        const two = await seedFleet(broker, 's2');
        const message = await broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: 'x' });
        await assert.rejects(broker.ackMessage(one.alice.memberId, message.messageId), { name: 'RegistryStateError', message: 'Only the recipient can ACK a message' });
        await assert.rejects(broker.ackMessage(two.bob.memberId, message.messageId), { name: 'RegistryNotFoundError', message: `Message ${message.messageId} not found` });
        const acked = await broker.ackMessage(one.bob.memberId, message.messageId);
        assert.equal(acked.statusState, 'completed');
        assert.ok(acked.statusTimestamp > message.statusTimestamp);
        await assert.rejects(broker.ackMessage(one.bob.memberId, message.messageId), { message: 'Cannot ACK message in state completed' });
        await assert.rejects(broker.ackMessage(one.bob.memberId, 12345), { message: 'Message 12345 not found' });
      });

      it('shows a message within its fleet; another fleet reads it as not found', async (t) => {
        const { broker } = await open(t);
        const one = await seedFleet(broker, 's1');
        const two = await seedFleet(broker, 's2');
        const message = await broker.sendMessage({ from: one.alice.memberId, to: one.bob.memberId, text: 'x' });
        assert.equal((await broker.showMessage(message.messageId, one.fleet.fleetId)).messageId, message.messageId);
        assert.equal((await broker.showMessage(message.messageId)).messageId, message.messageId);
        await assert.rejects(broker.showMessage(message.messageId, two.fleet.fleetId), { message: `Message ${message.messageId} not found` });
      });

      it('writes a broadcast as N+1 rows grouped by the summary', async (t) => {
        const { broker } = await open(t);
        const { director, alice, bob } = await seedFleet(broker);
        const result = await broker.broadcastMessage({ from: alice.memberId, text: 'all hands' });
        assert.equal(result.recipients, 2);
        assert.deepEqual(
          [result.summary.type, result.summary.text, result.summary.statusState, result.summary.toMemberId, result.summary.ownerMemberId, result.summary.originMessageId],
          ['broadcast_summary', 'Broadcast sent to 2 recipients', 'completed', null, alice.memberId, result.summary.messageId],
        );
        assert.deepEqual(result.deliveries.map((m) => m.ownerMemberId).sort(), [director.memberId, bob.memberId].sort());
        for (const delivery of result.deliveries) {
          assert.deepEqual([delivery.originMessageId, delivery.type, delivery.text, delivery.statusState], [result.summary.messageId, 'unicast', 'all hands', 'input_required']);
        }
        assert.deepEqual(await broker.pollMessages(alice.memberId), [], "the summary is not in the sender's inbox");
      });

      it("gives a listener the member's deliveries after an id, and the highest id stored", async (t) => {
        const { broker } = await open(t);
        const { director, alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'one' });
        const other = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'not for the Director' });
        const all = await broker.deliveriesAfter(director.memberId, 0);
        assert.deepEqual([all.messages.map((m) => m.messageId), all.latestMessageId], [[first.messageId], other.messageId]);
        const second = await broker.sendMessage({ from: bob.memberId, to: director.memberId, text: 'two' });
        const fresh = await broker.deliveriesAfter(director.memberId, all.latestMessageId);
        assert.deepEqual([fresh.messages.map((m) => m.text), fresh.latestMessageId], [['two'], second.messageId]);
      });
    });

    describe('idempotency keys', () => {
      it('stores a send once however often it is retried with its key', async (t) => {
        const { broker } = await open(t);
        const { alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'once', idempotencyKey: 'k-1' });
        const retried = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'once', idempotencyKey: 'k-1' });
        assert.deepEqual(retried, first);
        assert.equal((await broker.pollMessages(bob.memberId)).length, 1);
        // Keys belong to their sender; without one every send is new.
        await broker.sendMessage({ from: bob.memberId, to: alice.memberId, text: 'once', idempotencyKey: 'k-1' });
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'once' });
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'once' });
        assert.equal((await broker.pollMessages(bob.memberId)).length, 3);
      });

      it('refuses a key used again for another message, and a key that is not one', async (t) => {
        const { broker } = await open(t);
        const { director, alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'one', idempotencyKey: 'k' });
        const reused = `idempotency key "k" was already used for message ${first.messageId}, which differs from this one`;
        await assert.rejects(broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'two', idempotencyKey: 'k' }), { name: 'RegistryStateError', message: reused });
        await assert.rejects(broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'one', idempotencyKey: 'k' }), RegistryStateError);
        await assert.rejects(broker.broadcastMessage({ from: alice.memberId, text: 'one', idempotencyKey: 'k' }), RegistryStateError);
        await assert.rejects(broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'x', idempotencyKey: '' }), ArgumentError);
        await assert.rejects(broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'x', idempotencyKey: 'a\nb' }), ArgumentError);
        assert.equal((await broker.pollMessages(bob.memberId)).length, 1);
      });

      it('stores a broadcast once however often it is retried with its key', async (t) => {
        const { broker } = await open(t);
        const { alice, bob } = await seedFleet(broker);
        const first = await broker.broadcastMessage({ from: alice.memberId, text: 'all hands', idempotencyKey: 'b-1' });
        const retried = await broker.broadcastMessage({ from: alice.memberId, text: 'all hands', idempotencyKey: 'b-1' });
        assert.deepEqual(retried, first);
        assert.equal((await broker.pollMessages(bob.memberId)).length, 1);
        await assert.rejects(broker.broadcastMessage({ from: alice.memberId, text: 'other words', idempotencyKey: 'b-1' }), RegistryStateError);
      });

      it('stores one message when two connections send with the same key at once', async (t) => {
        const { broker, another } = await open(t);
        const other = await another();
        const { alice, bob } = await seedFleet(broker);
        for (let round = 0; round < 5; round += 1) {
          const input = { from: alice.memberId, to: bob.memberId, text: `race ${round}`, idempotencyKey: `race-${round}` };
          const [a, b] = await Promise.all([broker.sendMessage(input), other.sendMessage(input)]);
          assert.equal(a.messageId, b.messageId);
        }
        assert.equal((await broker.pollMessages(bob.memberId)).length, 5);
      });
    });

    describe('delivery', () => {
      it('orders pending messages by (created_at, message_id) and skips attempted ones', async (t) => {
        const { broker, wall } = await open(t);
        const { fleet, alice, bob, director } = await seedFleet(broker);
        const a = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'a' });
        // b at a's very time (a higher id: after a), c long before both.
        wall.frozen = true;
        const b = await broker.sendMessage({ from: director.memberId, to: bob.memberId, text: 'b' });
        assert.equal(b.createdAt, a.createdAt);
        wall.micros = Date.UTC(2000, 0, 1) * 1000;
        const c = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'c' });
        wall.frozen = false;
        const order: number[] = [];
        const attempted = new Set<number>();
        for (;;) {
          const snapshot = await broker.deliverySnapshot(bob.memberId, fleet.fleetId, attempted);
          assert.equal(snapshot.eligibility, 'eligible');
          if (!snapshot.next) break;
          order.push(snapshot.next.messageId);
          attempted.add(snapshot.next.messageId);
        }
        assert.deepEqual(order, [c.messageId, a.messageId, b.messageId]);
      });

      it('never offers pane delivery to the director, other fleets, the inactive or self-sends', async (t) => {
        const { broker } = await open(t);
        const { fleet, director, alice, bob } = await seedFleet(broker);
        await broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'to director' });
        assert.equal((await broker.deliverySnapshot(director.memberId, fleet.fleetId)).eligibility, 'director');
        assert.equal((await broker.deliverySnapshot(alice.memberId, fleet.fleetId + 1)).eligibility, 'fleet_mismatch');
        await broker.sendMessage({ from: alice.memberId, to: alice.memberId, text: 'note to self' });
        assert.equal((await broker.deliverySnapshot(alice.memberId, fleet.fleetId)).next, null);
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'x' });
        await broker.deregisterMember(bob.memberId);
        assert.equal((await broker.deliverySnapshot(bob.memberId, fleet.fleetId)).eligibility, 'inactive');
      });

      it('holds for a pending placement, excludes a member without one, and reports a gone pane with its messages', async (t) => {
        const { broker } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const pending = await broker.registerMember({ fleetId: fleet.fleetId, name: 'p', codingAgent: 'claude', placement: { backend: 'tmux', session: 's1', window: '@1' } });
        const loose = await broker.registerMember({ fleetId: fleet.fleetId, name: 'l', codingAgent: 'claude' });
        await broker.sendMessage({ from: alice.memberId, to: pending.memberId, text: 'x' });
        await broker.sendMessage({ from: alice.memberId, to: loose.memberId, text: 'x' });
        const held = await broker.deliverySnapshot(pending.memberId, fleet.fleetId);
        assert.equal(held.eligibility, 'pending_placement');
        assert.ok(held.next);
        assert.equal((await broker.deliverySnapshot(loose.memberId, fleet.fleetId)).eligibility, 'no_placement');
        const kept = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'kept' });
        await broker.markPaneGone(bob.memberId, '%2');
        const gone = await broker.deliverySnapshot(bob.memberId, fleet.fleetId);
        assert.deepEqual([gone.eligibility, gone.placement?.pane, gone.next?.messageId], ['pane_gone', '%2', kept.messageId]);
      });

      it('stamps notified_at only while pending and reports why it did not', async (t) => {
        const { broker } = await open(t);
        const { alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'a' });
        const second = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'b' });
        assert.equal(await broker.stampNotified(first.messageId), 'stamped');
        const stampedAt = (await broker.showMessage(first.messageId)).notifiedAt;
        assert.ok(stampedAt);
        assert.equal(await broker.stampNotified(first.messageId), 'already_notified');
        assert.equal((await broker.showMessage(first.messageId)).notifiedAt, stampedAt);
        await broker.ackMessage(bob.memberId, second.messageId);
        assert.equal(await broker.stampNotified(second.messageId), 'acked');
        assert.deepEqual([(await broker.showMessage(second.messageId)).notifiedAt, (await broker.showMessage(second.messageId)).statusState], [null, 'completed']);
        assert.equal(await broker.stampNotified(99999), 'missing');
      });

      it('finds ordinary members with concrete panes and messages awaiting notification, oldest first', async (t) => {
        const { broker } = await open(t);
        const { fleet, director, alice, bob } = await seedFleet(broker);
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'older' });
        await broker.sendMessage({ from: bob.memberId, to: alice.memberId, text: 'newer' });
        await broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'director reads natively' });
        assert.deepEqual(await broker.recipientsAwaitingNotification(fleet.fleetId), [bob.memberId, alice.memberId]);
        assert.deepEqual(await broker.recipientsAwaitingNotification(fleet.fleetId, [bob.memberId]), [alice.memberId]);
        await broker.markPaneGone(alice.memberId, '%1');
        assert.deepEqual(await broker.recipientsAwaitingNotification(fleet.fleetId), [bob.memberId]);
      });
    });

    describe('delivery claims', () => {
      it("claims a recipient's oldest message; another host's dispatcher gets neither it nor anything younger", async (t) => {
        const { broker } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'first' });
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'second' });
        const mine = await broker.claimNext(bob.memberId, fleet.fleetId, claim('hub/1'));
        assert.deepEqual([mine.eligibility, mine.next?.messageId, mine.claimedElsewhere], ['eligible', first.messageId, null]);
        const theirs = await broker.claimNext(bob.memberId, fleet.fleetId, claim('other-host/2'));
        assert.deepEqual([theirs.next, theirs.claimedElsewhere?.messageId], [null, first.messageId]);
        // The holder claims again freely; a claim is not a snapshot of what was attempted.
        assert.equal((await broker.claimNext(bob.memberId, fleet.fleetId, claim('hub/1'))).next?.messageId, first.messageId);
      });

      it('lets a claim go by stamping, releasing, its lease running out, or the pane lock of its own host', async (t) => {
        const { broker, wall } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'first' });
        const second = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'second' });
        const next = async (claimant: string) => (await broker.claimNext(bob.memberId, fleet.fleetId, claim(claimant))).next?.messageId ?? null;

        assert.equal(await next('a/1'), first.messageId);
        await broker.releaseClaim(first.messageId, 'b/2');
        assert.equal(await next('b/2'), null, "releasing another's claim does nothing");
        await broker.releaseClaim(first.messageId, 'a/1');
        assert.equal(await next('b/2'), first.messageId, 'released');

        // A claim made on this host under its pane lock: whoever holds the lock now may take it over.
        assert.equal(await next('b/3'), first.messageId);

        assert.equal(await broker.stampNotified(first.messageId), 'stamped');
        assert.equal(await next('c/4'), second.messageId, 'stamped: the next message is claimed');
        wall.micros += 10_001 * 1000;
        assert.equal(await next('d/5'), second.messageId, 'the lease ran out');
        assert.equal(await broker.stampNotified(second.messageId), 'stamped');
        assert.equal(await next('d/5'), null);
      });

      it('says when the message it claims carried a claim neither stamped nor released: an attempt that may have typed it', async (t) => {
        const { broker, wall } = await open(t);
        const { fleet, alice, bob } = await seedFleet(broker);
        const message = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'first' });
        const take = (claimant: string) => broker.claimNext(bob.memberId, fleet.fleetId, claim(claimant));
        assert.deepEqual([(await take('hub/1')).earlierAttempt], [false], 'never claimed before');
        await broker.releaseClaim(message.messageId, 'hub/1');
        assert.equal((await take('hub/2')).earlierAttempt, false, 'given back: that attempt sent nothing');
        const voided = await take('hub/3');
        assert.deepEqual([voided.next?.messageId, voided.earlierAttempt], [message.messageId, true], "a claim of this host's that its holder left");
        wall.micros += 10_001 * 1000;
        assert.equal((await take('other-host/4')).earlierAttempt, true, 'a claim whose lease ran out');
        const elsewhere = await take('hub/5');
        assert.deepEqual([elsewhere.next, elsewhere.earlierAttempt], [null, false], "another host's live claim: nothing claimed");
      });

      it('claims nothing for a recipient that is not eligible, and skips what the claimant attempted', async (t) => {
        const { broker } = await open(t);
        const { fleet, director, alice, bob } = await seedFleet(broker);
        await broker.sendMessage({ from: alice.memberId, to: director.memberId, text: 'x' });
        const none = await broker.claimNext(director.memberId, fleet.fleetId, claim('a/1'));
        assert.deepEqual([none.eligibility, none.next, none.claimedElsewhere], ['director', null, null]);
        const first = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'first' });
        const second = await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'second' });
        assert.equal((await broker.claimNext(bob.memberId, fleet.fleetId, claim('a/1', [first.messageId]))).next?.messageId, second.messageId);
      });

      it('never gives one message to two dispatchers claiming at once', async (t) => {
        const { broker, another } = await open(t);
        const other = await another();
        const { fleet, alice, bob } = await seedFleet(broker);
        await broker.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'contested' });
        const results = await Promise.all([broker, other, broker, other].map((at, i) => at.claimNext(bob.memberId, fleet.fleetId, claim(`host-${i}/1`))));
        assert.equal(results.filter((result) => result.next !== null).length, 1);
        assert.equal(results.filter((result) => result.claimedElsewhere !== null).length, 3);
      });
    });

    describe('watching for changes', () => {
      it("lets a waiting reader see another connection's message", async (t) => {
        const { broker, another } = await open(t);
        const other = await another();
        const { fleet, alice, bob } = await seedFleet(broker);
        const watch = await broker.watch({ fleetId: fleet.fleetId, pollMs: 50 });
        t.after(() => watch.close());
        const sent = await other.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'news' });
        const started = Date.now();
        await watch.next(30_000);
        assert.ok(Date.now() - started < 10_000, 'the wait ended on the change, not at its timeout');
        assert.deepEqual((await broker.pollMessages(bob.memberId)).map((m) => m.messageId), [sent.messageId]);
      });

      it('ends a wait when its signal aborts', async (t) => {
        const { broker } = await open(t);
        const watch = await broker.watch({ pollMs: 60_000 });
        t.after(() => watch.close());
        const stop = new AbortController();
        setTimeout(() => stop.abort(), 50);
        const started = Date.now();
        await watch.next(60_000, stop.signal);
        assert.ok(Date.now() - started < 10_000);
      });
    });
  });
}
