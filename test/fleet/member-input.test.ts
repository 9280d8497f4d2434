import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import {
  PaneInputBusyError,
  PaneLocks,
  PlacementError,
  execInMember,
  placementLockKey,
  promptMember,
  type ConcretePlacement,
  type MemberInputOptions,
  type PaneLockGuard,
} from '../../src/fleet/index.js';
import { FakeClock, FakePort, fakeSpans, openFixture, seedFleet } from './support.js';

async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker);
  const clock = new FakeClock();
  const port = new FakePort(clock);
  const { spans } = fakeSpans();
  let opened = 0;
  const options = (memberId: number, extra: Partial<MemberInputOptions> = {}): MemberInputOptions => ({
    broker: fixture.broker,
    locks: fixture.locks,
    memberId,
    openPort: (placement) => {
      opened += 1;
      return port.open(placement, 0);
    },
    clock,
    spans,
    ...extra,
  });
  return { ...fixture, ...seeded, clock, port, spans, options, opened: () => opened };
}

describe('promptMember and execInMember', () => {
  it('types a prompt with the Escape lead into the member\'s pane', async (t) => {
    const s = await setup(t);
    const result = await promptMember({ ...s.options(s.alice.memberId), text: '/compact now' });
    assert.equal(result.line, '/compact now');
    assert.deepEqual(s.port.inputs.map((c) => [c.op, c.pane, c.text]), [
      ['escape', '%1', undefined],
      ['literal', '%1', '/compact now'],
      ['enter', '%1', undefined],
    ]);
    assert.equal(s.spans.depth, 0);
  });

  it('types a native command as "! COMMAND", the director included', async (t) => {
    const s = await setup(t);
    await execInMember({ ...s.options(s.director.memberId), command: 'git status --short' });
    assert.deepEqual(s.port.literals, ['! git status --short']);
    assert.equal(s.port.calls[0]!.pane, '%0');
  });

  it('validates the text before looking anything up or starting any process', async (t) => {
    const s = await setup(t);
    await assert.rejects(promptMember({ ...s.options(999), text: 'two\nlines' }), { name: 'ArgumentError', message: 'text may not contain newlines.' });
    await assert.rejects(execInMember({ ...s.options(s.alice.memberId), command: 'printf \u0007' }), ArgumentError);
    await assert.rejects(execInMember({ ...s.options(s.alice.memberId), command: '  ' }), { message: 'command may not be empty.' });
    assert.equal(s.port.calls.length, 0);
    assert.equal(s.opened(), 0);
  });

  it('refuses members without a concrete pane', async (t) => {
    const s = await setup(t);
    const pending = await s.broker.registerMember({ fleetId: s.fleet.fleetId, name: 'p', codingAgent: 'claude', placement: { backend: 'tmux', session: 's1', window: '@1' } });
    const loose = await s.broker.registerMember({ fleetId: s.fleet.fleetId, name: 'l', codingAgent: 'claude' });
    await assert.rejects(promptMember({ ...s.options(pending.memberId), text: 'hi' }), {
      name: 'PlacementError',
      message: `member ${pending.memberId} has no pane yet (pending placement) — nothing to prompt.`,
    });
    await assert.rejects(execInMember({ ...s.options(pending.memberId), command: 'ls' }), { message: /nothing to exec\.$/ });
    await assert.rejects(promptMember({ ...s.options(loose.memberId), text: 'hi' }), {
      message: `member ${loose.memberId} has no placement row; it was not spawned via \`drover member create\`.`,
    });
    await assert.rejects(promptMember({ ...s.options(4040), text: 'hi' }), { message: 'Member 4040 not found' });
    assert.equal(s.port.calls.length, 0);
  });

  it('fails with the lock-busy error after at most 1.5 s, dispatching nothing', async (t) => {
    const s = await setup(t);
    const held = (await new PaneLocks(s.locks.directory).tryAcquire(placementLockKey(s.alice.placement as ConcretePlacement)))!;
    t.after(() => held.release());
    const start = s.clock.now();
    await assert.rejects(promptMember({ ...s.options(s.alice.memberId), text: 'hi' }), (error: unknown) => {
      assert.ok(error instanceof PaneInputBusyError);
      assert.equal(error.message, `member ${s.alice.memberId}'s pane input remained busy; prompt was not dispatched.`);
      assert.equal(error.delivery, 'not_sent');
      return true;
    });
    assert.equal(s.clock.now() - start, 1500);
    await assert.rejects(execInMember({ ...s.options(s.alice.memberId), command: 'ls' }), {
      message: `member ${s.alice.memberId}'s pane input remained busy; native command was not dispatched.`,
    });
    assert.equal(s.port.calls.length, 0);
    assert.equal(s.opened(), 0);
  });

  it('refuses to type when the placement changed while it waited for the lock', async (t) => {
    const s = await setup(t);
    const broker = s.broker;
    const alice = s.alice;
    class MovingLocks extends PaneLocks {
      override async acquire(...args: Parameters<PaneLocks['acquire']>): Promise<PaneLockGuard | null> {
        await broker.setPlacement(alice.memberId, { backend: 'tmux', session: 's1', window: '@1', pane: '%6' });
        return super.acquire(...args);
      }
    }
    await assert.rejects(promptMember({ ...s.options(s.alice.memberId, { locks: new MovingLocks(s.locks.directory) }), text: 'hi' }), (error: unknown) => {
      assert.ok(error instanceof PlacementError);
      assert.match(error.message, /placement changed while waiting for its pane input; prompt was not dispatched\.$/);
      return true;
    });
    assert.equal(s.port.calls.length, 0);
  });
});
