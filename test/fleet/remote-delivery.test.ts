import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FleetRuntime,
  MemberCreationError,
  RegistryNotFoundError,
  checkMemberPanes,
  createMember,
  deliverPending,
  formatNotificationLine,
  remoteDeliveryId,
  remoteReceiptReason,
  sendAndNotify,
  type DeliveryOptions,
  type Member,
  type RemoteDelivery,
  type RemotePanes,
  type RemoteReceipt,
  type RemoteSpawn,
  type RemoteSpawned,
} from '../../src/fleet/index.js';
import { deliveryIdProblem } from '../../src/hosts/index.js';
import { FakeClock, openFixture, seedFleet, tmuxFleet } from './support.js';

/**
 * A host as the fleet sees it through RemotePanes: it remembers each delivery id's receipt (a
 * resend is answered from that record, never typed again), and can be down, or lose its answer
 * after typing (a link cut mid-delivery).
 */
class FakeHost implements RemotePanes {
  readonly typed: { pane: string; line: string }[] = [];
  readonly deliveries: RemoteDelivery[] = [];
  readonly records = new Map<string, RemoteReceipt>();
  down = false;
  cutAfterTyping = false;
  answer: RemoteReceipt['status'] = 'submitted';
  readonly spawns: RemoteSpawn[] = [];
  readonly closed: string[] = [];
  spawnFailure: Error | undefined;

  async deliver(request: RemoteDelivery): Promise<RemoteReceipt> {
    this.deliveries.push(request);
    if (this.down) throw new Error(`host ${request.host}: the link is down`);
    const known = this.records.get(request.deliveryId);
    if (known !== undefined) return { ...known, replayed: true };
    this.typed.push({ pane: request.pane, line: request.line });
    const receipt: RemoteReceipt = { status: this.answer, reason: this.answer === 'submitted' ? 'the line left the input line' : 'the pane did not react to Enter', typed: true, replayed: false };
    this.records.set(request.deliveryId, receipt);
    if (this.cutAfterTyping) throw new Error(`host ${request.host}: pane.deliver: the link was lost`);
    return receipt;
  }

  async spawn(request: RemoteSpawn): Promise<RemoteSpawned> {
    this.spawns.push(request);
    if (this.spawnFailure !== undefined) throw this.spawnFailure;
    return { backend: 'tmux', pane: '%41', session: '$4', window: '@4', server: 'remote-run', warnings: [] };
  }

  async close(_host: string, pane: string): Promise<void> {
    this.closed.push(pane);
  }
}

async function setup(t: { after(fn: () => unknown): void }) {
  const fixture = openFixture(t);
  const seeded = await seedFleet(fixture.broker);
  const far = await fixture.broker.registerMember({ fleetId: seeded.fleet.fleetId, name: 'far', codingAgent: 'shell', placement: { host: 'box', backend: 'tmux', session: '$4', window: '@4', server: 'remote-run' } });
  await fixture.broker.recordPane(far.memberId, '%40');
  const host = new FakeHost();
  const clock = new FakeClock();
  const options = (recipient: Member, extra: Partial<DeliveryOptions> = {}): DeliveryOptions => ({
    broker: fixture.broker,
    locks: fixture.locks,
    recipientId: recipient.memberId,
    fleetId: seeded.fleet.fleetId,
    openPort: () => assert.fail('a pane on another host is never opened on this machine'),
    remote: host,
    clock,
    ...extra,
  });
  return { ...fixture, ...seeded, far: await fixture.broker.getMember(far.memberId), host, clock, options };
}

describe('delivery id of a message on another host', () => {
  it('is the same for every attempt of one message of one store, and a delivery id the host accepts', () => {
    const id = remoteDeliveryId('/home/me/.local/state/drover/drover.db', 7);
    assert.equal(id, remoteDeliveryId('/home/me/.local/state/drover/drover.db', 7));
    assert.notEqual(id, remoteDeliveryId('/home/me/.local/state/drover/drover.db', 8));
    assert.notEqual(id, remoteDeliveryId('postgresql://hub/drover', 7), 'two hubs sharing a host never share an id');
    assert.match(id, /^msg-[0-9a-f]{12}-7$/);
    assert.equal(deliveryIdProblem(id), undefined);
  });

  it('says what the host answered, and that a typed line is never typed again', () => {
    assert.equal(
      remoteReceiptReason('box', { status: 'staged_unconfirmed', reason: 'no echo', typed: true, replayed: false }),
      'host box answered staged unconfirmed: no echo; it is never typed again under its delivery id',
    );
    assert.equal(remoteReceiptReason('box', { status: 'failed', reason: 'busy', typed: false, replayed: false }), 'host box answered failed: busy');
  });
});

describe('delivery to a member on another host', () => {
  it("goes through the host's pane deliver under the message's id and is stamped on its submitted receipt", async (t) => {
    const s = await setup(t);
    const sent = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'hello there' });
    assert.equal(sent.notificationSent, true, JSON.stringify(sent.diagnostic));
    assert.deepEqual(s.host.typed, [{ pane: '%40', line: formatNotificationLine(sent.message, { escapeLead: false }) }]);
    assert.equal(s.host.deliveries[0]!.deliveryId, remoteDeliveryId(s.store.path, sent.message.messageId));
    assert.equal(s.host.deliveries[0]!.host, 'box');
    assert.ok((await s.broker.showMessage(sent.message.messageId)).notifiedAt);
  });

  it('leaves the message pending with a diagnostic naming the host while it is down, and the retry uses the same id', async (t) => {
    const s = await setup(t);
    s.host.down = true;
    const sent = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'while down' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic!.diagnostic, new RegExp(`^message ${sent.message.messageId} was not notified to member ${s.far.memberId}: host box: the link is down;`));
    assert.equal((await s.broker.showMessage(sent.message.messageId)).notifiedAt, null);

    s.host.down = false;
    const retried = await deliverPending(s.options(s.far));
    assert.deepEqual(retried.notified, [sent.message.messageId]);
    assert.deepEqual(
      s.host.deliveries.map((delivery) => delivery.deliveryId),
      [remoteDeliveryId(s.store.path, sent.message.messageId), remoteDeliveryId(s.store.path, sent.message.messageId)],
    );
    assert.equal(s.host.typed.length, 1);
  });

  it('after an answer lost to a cut link, the retry is answered from the host record: typed once, then stamped', async (t) => {
    const s = await setup(t);
    s.host.cutAfterTyping = true;
    const sent = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'once only' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic!.reason, /host box: pane\.deliver: the link was lost/);
    assert.equal((await s.broker.showMessage(sent.message.messageId)).notifiedAt, null, 'never stamped without a receipt');

    s.host.cutAfterTyping = false;
    assert.deepEqual((await deliverPending(s.options(s.far))).notified, [sent.message.messageId]);
    assert.equal(s.host.typed.length, 1, 'the line typed before the cut is not typed again');
  });

  it('stamps nothing on a receipt that is not submitted', async (t) => {
    const s = await setup(t);
    s.host.answer = 'staged_unconfirmed';
    const sent = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'staged' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic!.reason, /^host box answered staged unconfirmed: the pane did not react to Enter/);
    assert.equal((await s.broker.showMessage(sent.message.messageId)).notifiedAt, null);
  });

  it('drains several pending lines into a shell there in one hold, oldest first', async (t) => {
    const s = await setup(t);
    s.host.down = true;
    const first = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'one' });
    const second = await sendAndNotify({ ...s.options(s.far), from: s.bob.memberId, to: s.far.memberId, text: 'two' });
    s.host.down = false;
    assert.deepEqual((await deliverPending(s.options(s.far))).notified, [first.message.messageId, second.message.messageId]);
  });

  it('refuses, naming the host, when no way to other hosts was given', async (t) => {
    const s = await setup(t);
    const sent = await sendAndNotify({ ...s.options(s.far, { remote: undefined }), from: s.alice.memberId, to: s.far.memberId, text: 'nowhere' });
    assert.match(sent.diagnostic!.reason, new RegExp(`member ${s.far.memberId}'s pane is on host box, and this command cannot reach other hosts`));
    assert.equal(s.host.deliveries.length, 0);
  });
});

describe('creating a member on another host', () => {
  async function runtimeFor(t: { after(fn: () => unknown): void }) {
    const s = await setup(t);
    const runtime = await FleetRuntime.open({ broker: s.broker, remote: s.host, env: { ...process.env, SHELL: '/bin/sh' } });
    t.after(() => runtime.close());
    return { ...s, runtime };
  }

  it('records the pane the host split, on that host, its multiplexer run and location', async (t) => {
    const s = await runtimeFor(t);
    const created = await createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'gpu-worker', agent: 'shell', cwd: '/', host: 'box', beside: '%0', hostCwd: '/srv' });
    assert.equal(created.pane, '%41');
    const { memberId: _memberId, createdAt: _createdAt, ...placement } = created.member.placement!;
    assert.deepEqual(placement, { host: 'box', backend: 'tmux', session: '$4', window: '@4', pane: '%41', server: 'remote-run', goneAt: null, staleAt: null });
    assert.deepEqual([s.host.spawns[0]!.beside, s.host.spawns[0]!.cwd, s.host.spawns[0]!.command], ['%0', '/srv', ['/bin/sh']]);
    assert.equal(s.host.spawns[0]!.env.DROVER_DB, undefined, "this machine's SQLite path means nothing there");
  });

  it('needs the pane to split off there, before anything is registered', async (t) => {
    const s = await runtimeFor(t);
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'x', agent: 'shell', cwd: '/', host: 'box' }), /a member on host box needs --beside PANE/);
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'x', agent: 'shell', cwd: '/', beside: '%0' }), /give --host HOST with them/);
    assert.deepEqual((await s.broker.listMembers(s.fleet.fleetId)).map((member) => member.name), ['Director', 'alice', 'bob', 'far']);
  });

  it('deregisters the member when the host could not split a pane, closing nothing it did not make', async (t) => {
    const s = await runtimeFor(t);
    s.host.spawnFailure = new Error('host box: member.split: tmux has no pane %0');
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'x', agent: 'shell', cwd: '/', host: 'box', beside: '%0' }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      assert.match(error.message, /tmux has no pane %0/);
      return true;
    });
    assert.deepEqual(s.host.closed, []);
    await assert.rejects(s.broker.getMember(s.far.memberId + 1), RegistryNotFoundError);
  });
});

describe("this machine's multiplexer and a member on another host", () => {
  it('never finds its pane gone or stale here, though a pane of the same id lives here on another server run', async (t) => {
    const s = await tmuxFleet(t);
    const far = await s.broker.registerMember({ fleetId: s.fleetId, name: 'far', codingAgent: 'shell', placement: { host: 'box', backend: 'tmux', session: '$4', window: '@4', server: 'remote-run' } });
    await s.broker.recordPane(far.memberId, '%999');
    const near = await s.broker.registerMember({ fleetId: s.fleetId, name: 'near', codingAgent: 'shell', placement: { backend: 'tmux', session: '$0', window: '@0' } });
    await s.broker.recordPane(near.memberId, '%998');
    const reread = async () => [await s.broker.getMember(far.memberId), await s.broker.getMember(near.memberId)];
    const [checkedFar, checkedNear] = await checkMemberPanes(s.runtime, await reread(), reread);
    assert.deepEqual([checkedFar!.placement?.goneAt, checkedFar!.placement?.staleAt], [null, null]);
    assert.ok(checkedNear!.placement?.goneAt, 'a missing pane of this machine is still found gone');
  });
});
