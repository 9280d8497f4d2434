import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  FleetRuntime,
  MemberCreationError,
  RegistryNotFoundError,
  checkMemberPanes,
  createMember,
  deliverPending,
  shellPromptLine,
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
  RemotePaneError,
  PaneInputError,
  PlacementStaleError,
  captureMember,
  deleteMember,
  execInMember,
  promptMember,
} from '../../src/fleet/index.js';
import { deliveryIdProblem } from '../../src/hosts/index.js';
import { FakeClock, openFixture, seedFleet, tmuxFleet } from './support.js';

/** The pane key a host of this run gives its pane `%N`, as the fleet names a remote member's pane to it. */
const hostKey = (pane: string, run = 'remote-run'): string => `local::tmux::${run}::${pane}`;

/**
 * A host as the fleet sees it through RemotePanes: it remembers each delivery id's receipt (a
 * resend is answered from that record, never typed again), checks a pane key against the run
 * of its multiplexer (a key of an earlier run is refused with server_replaced, as a host's
 * drover refuses it), and can be down, or lose its answer after typing (a link cut mid-delivery).
 */
class FakeHost implements RemotePanes {
  readonly typed: { pane: string; line: string }[] = [];
  readonly deliveries: RemoteDelivery[] = [];
  readonly records = new Map<string, RemoteReceipt>();
  down = false;
  cutAfterTyping = false;
  answer: RemoteReceipt['status'] = 'submitted';
  /** The run of the host's multiplexer; another one stands for a restart there. */
  run = 'remote-run';
  readonly panes = new Set(['%40', '%41']);
  readonly spawns: RemoteSpawn[] = [];
  readonly closed: string[] = [];
  spawnFailure: Error | undefined;
  /** The socket this machine's broker is forwarded to there, as a host entry's forward_broker names it. */
  forwarded: string | undefined;
  /** Where drover there takes a hub's broker, as its handshake names it (undefined: an older drover). */
  offered: string | undefined;

  /** The host's own pane for a target, or the refusal its drover would answer. */
  private paneOf(host: string, target: string): string {
    if (this.down) throw new RemotePaneError(host, 'the link is down', 'not_sent');
    const [, , run, pane] = target.split('::');
    if (run !== this.run) throw new RemotePaneError(host, `${target} is a pane of another run of tmux`, 'not_sent', 'server_replaced');
    if (!this.panes.has(pane!)) throw new RemotePaneError(host, `no pane ${pane}`, 'not_sent', 'pane_not_found');
    return pane!;
  }

  async deliver(request: RemoteDelivery): Promise<RemoteReceipt> {
    this.deliveries.push(request);
    const pane = this.paneOf(request.host, request.pane);
    const known = this.records.get(request.deliveryId);
    if (known !== undefined) return { ...known, replayed: true };
    this.typed.push({ pane, line: request.line });
    const receipt: RemoteReceipt = { status: this.answer, reason: this.answer === 'submitted' ? 'the line left the input line' : 'the pane did not react to Enter', typed: true, replayed: false };
    this.records.set(request.deliveryId, receipt);
    if (this.cutAfterTyping) throw new RemotePaneError(request.host, 'pane.deliver: the link was lost', 'possibly_sent');
    return receipt;
  }

  async spawn(request: RemoteSpawn): Promise<RemoteSpawned> {
    this.spawns.push(request);
    if (this.spawnFailure !== undefined) throw this.spawnFailure;
    return { backend: 'tmux', pane: '%41', session: '$4', window: '@4', server: this.run, warnings: [] };
  }

  async close(host: string, target: string): Promise<void> {
    const pane = this.paneOf(host, target);
    this.panes.delete(pane);
    this.closed.push(pane);
  }

  async brokerPathOn(): Promise<{ path: string; configured: boolean } | undefined> {
    if (this.forwarded !== undefined) return { path: this.forwarded, configured: true };
    return this.offered === undefined ? undefined : { path: this.offered, configured: false };
  }

  async capture(host: string, target: string, lines: number): Promise<string> {
    return `${this.paneOf(host, target)} shows ${lines} lines\n`;
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
    // A plain-shell member's line is inert on its host too: whatever runs in that pane, no shell there runs the message.
    assert.deepEqual(s.host.typed, [{ pane: '%40', line: shellPromptLine(sent.message) }]);
    assert.equal(s.host.deliveries[0]!.toShell, true, "a plain-shell member's shell at its prompt there takes the line");
    assert.equal(s.host.deliveries[0]!.deliveryId, remoteDeliveryId(s.store.path, sent.message.messageId));
    assert.equal(s.host.deliveries[0]!.host, 'box');
    assert.ok((await s.broker.showMessage(sent.message.messageId)).notifiedAt);
  });

  it("sends a coding agent's line as a prompt, never as a shell's command line", async (t) => {
    const s = await setup(t);
    const agent = await s.broker.registerMember({ fleetId: s.fleet.fleetId, name: 'coder', codingAgent: 'codex', placement: { host: 'box', backend: 'tmux', session: '$4', window: '@4', server: 'remote-run' } });
    await s.broker.recordPane(agent.memberId, '%41');
    const sent = await sendAndNotify({ ...s.options(agent), from: s.alice.memberId, to: agent.memberId, text: 'review this' });
    assert.equal(sent.notificationSent, true, JSON.stringify(sent.diagnostic));
    assert.deepEqual(s.host.deliveries.map((delivery) => [delivery.pane, delivery.toShell]), [[hostKey('%41'), false]]);
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

async function runtimeFor(t: { after(fn: () => unknown): void }) {
  const s = await setup(t);
  const runtime = await FleetRuntime.open({ broker: s.broker, remote: s.host, env: { ...process.env, SHELL: '/bin/sh' } });
  t.after(() => runtime.close());
  return { ...s, runtime };
}

describe('creating a member on another host', () => {

  it('records the pane the host split, on that host, its multiplexer run and location', async (t) => {
    const s = await runtimeFor(t);
    const created = await createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'gpu-worker', agent: 'shell', cwd: '/', host: 'box', beside: '%0', hostCwd: '/srv' });
    assert.equal(created.pane, '%41');
    const { memberId: _memberId, createdAt: _createdAt, ...placement } = created.member.placement!;
    assert.deepEqual(placement, { host: 'box', backend: 'tmux', session: '$4', window: '@4', pane: '%41', server: 'remote-run', endpoint: null, goneAt: null, staleAt: null });
    assert.deepEqual([s.host.spawns[0]!.beside, s.host.spawns[0]!.cwd, s.host.spawns[0]!.command], ['%0', '/srv', ['/bin/sh']]);
    assert.equal(s.host.spawns[0]!.env.DROVER_DB, undefined, "this machine's SQLite path means nothing there");
    assert.equal(s.host.spawns[0]!.env.DROVER_BROKER, undefined);
    assert.deepEqual(created.warnings, [
      "member gpu-worker on host box receives messages but cannot send or acknowledge them: this fleet's store is a SQLite file on this machine, and the drover on host box names no place for it; " +
        "to let it, install this drover's release there (`drover host add box --install`) or set forward_broker (an absolute socket path there) under hosts.box in drover's config file, run `drover broker serve` here, and create the member again",
    ]);
  });

  it('keeps a server store’s own connection even where drover there names a socket for a forwarded one', async (t) => {
    const s = await setup(t);
    // The same store, as a PostgreSQL one would describe itself.
    const server = Object.create(s.broker) as typeof s.broker;
    Object.defineProperty(server, 'store', { get: () => ({ ...s.broker.store, kind: 'postgresql', location: 'postgresql://hub/drover' }) });
    server.connectionEnvironment = () => ({ DROVER_BROKER: 'postgresql://hub/drover' });
    const runtime = await FleetRuntime.open({ broker: server, remote: s.host, env: { ...process.env, SHELL: '/bin/sh' } });
    t.after(() => runtime.close());
    s.host.offered = '/home/me/.local/state/drover/broker/hub.sock';
    const created = await createMember(runtime, { fleetId: s.fleet.fleetId, name: 'gpu-worker', agent: 'shell', cwd: '/', host: 'box', beside: '%0' });
    assert.deepEqual(s.host.spawns[0]!.env, { DROVER_BROKER: 'postgresql://hub/drover' });
    assert.deepEqual(created.warnings, []);
  });

  it("gives the member this machine's broker through the socket forwarded there: the entry's, else the one drover there names", async (t) => {
    const cases: [Partial<Pick<FakeHost, 'forwarded' | 'offered'>>, string][] = [
      [{ forwarded: '/home/me/.drover-hub.sock', offered: '/home/me/.local/state/drover/broker/hub.sock' }, 'drover+unix:///home/me/.drover-hub.sock'],
      [{ offered: '/home/me/.local/state/drover/broker/hub.sock' }, 'drover+unix:///home/me/.local/state/drover/broker/hub.sock'],
    ];
    for (const [host, broker] of cases) {
      const s = await runtimeFor(t);
      Object.assign(s.host, host);
      const created = await createMember(s.runtime, { fleetId: s.fleet.fleetId, name: 'gpu-worker', agent: 'shell', cwd: '/', host: 'box', beside: '%0' });
      assert.deepEqual(s.host.spawns[0]!.env, { DROVER_BROKER: broker }, JSON.stringify(host));
      assert.deepEqual(created.warnings, []);
    }
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

/** What a prompt or exec to the member on the host is given. */
const input = (s: Awaited<ReturnType<typeof setup>>) => ({ broker: s.broker, locks: s.locks, memberId: s.far.memberId, openPort: s.options(s.far).openPort, remote: s.host, clock: s.clock });

describe('prompting, reading and deleting a member on another host', () => {
  it("types a prompt through the host's delivery, naming the pane by the host's key, and fails on any receipt but submitted", async (t) => {
    const s = await setup(t);
    const dispatched = await promptMember({ ...input(s), text: 'run the tests' });
    assert.equal(dispatched.line, 'run the tests');
    assert.deepEqual(s.host.typed, [{ pane: '%40', line: 'run the tests' }]);
    assert.equal(s.host.deliveries[0]!.toShell, true, "a plain-shell member's prompt is a command line for its shell");
    assert.equal(s.host.deliveries[0]!.pane, hostKey('%40'));
    assert.match(s.host.deliveries[0]!.deliveryId, /^prompt-/);

    s.host.answer = 'staged_unconfirmed';
    await assert.rejects(promptMember({ ...input(s), text: 'again' }), (error: unknown) => {
      assert.ok(error instanceof PaneInputError);
      assert.equal(error.delivery, 'possibly_sent');
      assert.match(error.message, /was not submitted: host box answered staged unconfirmed/);
      return true;
    });
  });

  it('refuses exec there before anything is typed', async (t) => {
    const s = await setup(t);
    await assert.rejects(execInMember({ ...input(s), command: 'ls' }), /on host box: exec types `! COMMAND` as keys/);
    assert.deepEqual(s.host.deliveries, []);
  });

  it("reads the pane through the host, and refuses --ansi, which the host's text does not carry", async (t) => {
    const s = await runtimeFor(t);
    const captured = await captureMember(s.runtime, s.far.memberId, { lines: 5 });
    assert.deepEqual([captured.content, captured.paneKey], ['%40 shows 5 lines\n', 'box::tmux::remote-run::%40']);
    await assert.rejects(captureMember(s.runtime, s.far.memberId, { ansi: true }), /--ansi reads a pane on this machine; member \d+'s pane is on host box/);
  });

  it('closes the pane there on delete', async (t) => {
    const s = await runtimeFor(t);
    const deleted = await deleteMember(s.runtime, s.far.memberId);
    assert.equal(deleted.paneLeft, null);
    assert.deepEqual(s.host.closed, ['%40']);
  });
});

describe("a member on another host whose multiplexer there was restarted", () => {
  it('keeps its message pending, marks the member stale, and asks the host nothing more', async (t) => {
    const s = await setup(t);
    s.host.run = 'later-run';
    const sent = await sendAndNotify({ ...s.options(s.far), from: s.alice.memberId, to: s.far.memberId, text: 'not for the new pane' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic!.reason, /lived on a tmux server that is gone/);
    assert.deepEqual(s.host.typed, [], 'the new run\'s %40 got nothing');
    assert.ok((await s.broker.getMember(s.far.memberId)).placement!.staleAt, 'marked stale');

    assert.deepEqual((await deliverPending(s.options(s.far))).notified, []);
    assert.equal(s.host.deliveries.length, 1, 'a stale member is not asked for again');
    assert.equal((await s.broker.showMessage(sent.message.messageId)).notifiedAt, null);
  });

  it('refuses a prompt and a capture, and leaves the pane alone on delete', async (t) => {
    const s = await runtimeFor(t);
    s.host.run = 'later-run';
    await assert.rejects(promptMember({ ...input(s), text: 'hello' }), PlacementStaleError);
    await assert.rejects(captureMember(s.runtime, s.far.memberId), PlacementStaleError);
    const deleted = await deleteMember(s.runtime, s.far.memberId);
    assert.match(deleted.paneLeft ?? '', /lived on a tmux server that is gone.*the pane was not closed/);
    assert.deepEqual([s.host.typed, s.host.closed], [[], []]);
    await assert.rejects(s.broker.getMember(s.far.memberId), RegistryNotFoundError);
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
