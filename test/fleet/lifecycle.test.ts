import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  PaneInputBusyError,
  PaneLocks,
  deleteFleetLocked,
  deleteMemberLocked,
  placementLockKey,
  type ConcretePlacement,
  type PaneLockGuard,
} from '../../src/fleet/index.js';
import { FakeClock, fakeSpans, openFixture, seedFleet } from './support.js';

/** Real locks that record each attempt, report `busy` keys as held elsewhere, and can run a hook first. */
class ScriptedLocks extends PaneLocks {
  readonly attempts: string[] = [];
  readonly busy = new Set<string>();
  beforeAttempt: ((key: string) => Promise<void>) | undefined;

  override async tryAcquire(key: string): Promise<PaneLockGuard | null> {
    this.attempts.push(key);
    await this.beforeAttempt?.(key);
    return this.busy.has(key) ? null : super.tryAcquire(key);
  }
}

async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker);
  // carol shares bob's pane: duplicate placements share one lock key.
  const carol = await fixture.broker.registerMember({
    fleetId: seeded.fleet.fleetId,
    name: 'carol',
    codingAgent: 'shell',
    placement: { backend: 'tmux', session: 's1', window: '@1', pane: '%2' },
  });
  const locks = new ScriptedLocks(fixture.locks.directory);
  const clock = new FakeClock();
  const { spans } = fakeSpans();
  const keyOf = (placement: unknown) => placementLockKey(placement as ConcretePlacement);
  return { ...fixture, ...seeded, carol, locks, clock, spans, keyOf };
}

describe('deleteFleetLocked', () => {
  it('takes every active placement key once, in sorted order, then deletes the fleet', async (t) => {
    const s = await setup(t);
    const result = await deleteFleetLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, fleetId: s.fleet.fleetId });
    const keys = [...new Set([s.director, s.alice, s.bob, s.carol].map((m) => s.keyOf(m.placement)))].sort();
    assert.equal(keys.length, 3);
    assert.deepEqual(s.locks.attempts, keys);
    assert.equal(result.deregisteredCount, 4);
    assert.deepEqual(result.placements.map((p) => p.memberId), [s.director, s.alice, s.bob, s.carol].map((m) => m.memberId));
    assert.ok((await s.broker.getFleet(s.fleet.fleetId)).deletedAt);
    for (const key of keys) {
      const guard = await new PaneLocks(s.locks.directory).tryAcquire(key);
      assert.ok(guard, 'every lock is released afterwards');
      guard.release();
    }
  });

  it('gives up after five seconds on a busy pane, naming its member, with nothing changed and no lock kept', async (t) => {
    const s = await setup(t);
    const busyKey = s.keyOf(s.alice.placement);
    s.locks.busy.add(busyKey);
    const start = s.clock.now();
    await assert.rejects(deleteFleetLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, fleetId: s.fleet.fleetId }), (error: unknown) => {
      assert.ok(error instanceof PaneInputBusyError);
      assert.equal(error.message, `fleet ${s.fleet.fleetId} pane input remained busy for 5 seconds at member ${s.alice.memberId}; fleet was not deleted.`);
      return true;
    });
    assert.equal(s.clock.now() - start, 5000);
    assert.equal((await s.broker.getFleet(s.fleet.fleetId)).deletedAt, null);
    assert.equal((await s.broker.listMembers(s.fleet.fleetId)).length, 4);
    for (const member of [s.director, s.bob]) {
      const guard = await new PaneLocks(s.locks.directory).tryAcquire(s.keyOf(member.placement));
      assert.ok(guard, 'locks taken before the busy one were released');
      guard.release();
    }
  });

  it('starts over within the same deadline when the placement set changes meanwhile', async (t) => {
    const s = await setup(t);
    let moved = false;
    s.locks.beforeAttempt = async () => {
      if (moved) return;
      moved = true;
      await s.broker.setPlacement(s.alice.memberId, { backend: 'tmux', session: 's1', window: '@1', pane: '%7' });
    };
    const result = await deleteFleetLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, fleetId: s.fleet.fleetId });
    assert.equal(result.deregisteredCount, 4);
    assert.ok(result.placements.some((p) => p.placement.pane === '%7'), 'the deletion used the revalidated set');
    assert.ok(s.locks.attempts.includes(placementLockKey({ backend: 'tmux', session: 's1', pane: '%7' })));
    assert.ok(s.locks.attempts.length > 3, 'a second round of locking');
  });

  it('refuses an unknown fleet before locking anything', async (t) => {
    const s = await setup(t);
    await assert.rejects(deleteFleetLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, fleetId: 77 }), { message: "fleet '77' not found." });
    assert.deepEqual(s.locks.attempts, []);
  });
});

describe('deleteMemberLocked', () => {
  it('closes the pane while holding its lock, then deregisters the member', async (t) => {
    const s = await setup(t);
    const closed: string[] = [];
    const outsider = new PaneLocks(s.locks.directory);
    const result = await deleteMemberLocked({
      broker: s.broker,
      locks: s.locks,
      clock: s.clock,
      spans: s.spans,
      memberId: s.alice.memberId,
      closePane: async (placement) => {
        assert.equal(await outsider.tryAcquire(placementLockKey(placement)), null, 'the pane lock is held while closing');
        assert.equal(s.spans.depth, 1, 'closing runs inside a termination span');
        closed.push(placement.pane);
      },
    });
    assert.deepEqual(closed, ['%1']);
    assert.equal(result.placement?.pane, '%1');
    await assert.rejects(() => s.broker.getMember(s.alice.memberId), /not found/);
  });

  it('refuses the root director before touching its pane', async (t) => {
    const s = await setup(t);
    let closed = false;
    const closePane = () => {
      closed = true;
      return Promise.resolve();
    };
    await assert.rejects(deleteMemberLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, memberId: s.director.memberId, closePane }), {
      message: "cannot deregister the root Director; use 'drover fleet delete' instead",
    });
    assert.equal(closed, false);
    assert.deepEqual(s.locks.attempts, []);
  });

  it('deregisters a member with a pending placement without locking or closing anything', async (t) => {
    const s = await setup(t);
    const pending = await s.broker.registerMember({ fleetId: s.fleet.fleetId, name: 'p', codingAgent: 'claude', placement: { backend: 'tmux', session: 's1', window: '@1' } });
    const result = await deleteMemberLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, memberId: pending.memberId, closePane: () => Promise.reject(new Error('must not close')) });
    assert.equal(result.placement?.pane, null);
    assert.deepEqual(s.locks.attempts, []);
  });

  it('reports a pane busy for five seconds and leaves the member and its pane alone', async (t) => {
    const s = await setup(t);
    s.locks.busy.add(s.keyOf(s.bob.placement));
    await assert.rejects(
      deleteMemberLocked({ broker: s.broker, locks: s.locks, clock: s.clock, spans: s.spans, memberId: s.bob.memberId, closePane: () => Promise.reject(new Error('must not close')) }),
      { name: 'PaneInputBusyError', message: `member ${s.bob.memberId}'s pane input remained busy for 5 seconds; member was not deleted.` },
    );
    assert.equal((await s.broker.getMember(s.bob.memberId)).status, 'active');
  });
});
