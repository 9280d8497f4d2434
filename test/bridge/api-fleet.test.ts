import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FleetListView, InboxView } from '../../src/bridge/index.js';
import { createFleetHere, createMember, FleetRuntime, placementLockKey } from '../../src/fleet/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds } from '../../src/mux/index.js';
import { Endpoint } from '../../src/tmux/index.js';
import { echoProgram, openFixture, paneHistory, tmuxFleet } from '../fleet/support.js';
import { RestartableServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, tmuxOpener } from './support.js';

describe('drover web: the fleet', () => {
  it("lists members, shows the Director's inbox live, acknowledges, and sends as the Director", async (t) => {
    const fleet = await tmuxFleet(t);
    const alice = await createMember(fleet.runtime, { fleetId: fleet.fleetId, name: 'alice', cwd: fleet.dir });
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    t.after(() => port.close());
    const world = await startWebWorld(t, { mux: port, fleet: fleet.runtime });

    const config = (await world.call('/api/config')).json;
    assert.deepEqual(config.fleet, { available: true, reason: null });
    const listed = (await world.call('/api/fleet')).json as unknown as FleetListView;
    assert.deepEqual(
      listed.fleets.map((entry) => [entry.name, entry.members.map((member) => [member.name, member.kind])]),
      [
        [
          'team',
          [
            ['Director', 'director'],
            ['alice', 'member'],
          ],
        ],
      ],
    );

    const incarnation = ((await world.call('/api/snapshot')).json.server as { incarnation: string }).incarnation;
    assert.equal(listed.fleets[0]!.members.find((member) => member.name === 'alice')!.pane_key, `local::tmux::${incarnation}::${alice.pane}`, 'a member carries the key of the pane it was placed in');

    const stream = await world.stream();
    t.after(() => stream.close());
    // alice writes to the Director from her own process, as `drover message send` does.
    const incoming = await fleet.broker.sendMessage({ from: alice.member.memberId, to: fleet.directorId, text: 'tests pass <b>now</b>' });
    await stream.next('a fleet event', (event) => event.kind === 'fleet' && event.data.message_id === incoming.messageId);
    const inbox = (await world.call(`/api/fleet/${fleet.fleetId}/inbox`)).json as unknown as InboxView;
    assert.deepEqual(
      inbox.messages.map((message) => [message.from_name, message.text, message.status_state]),
      [['alice', 'tests pass <b>now</b>', 'input_required']],
    );

    const acked = await world.post(`/api/fleet/${fleet.fleetId}/ack`, { message_id: incoming.messageId });
    assert.equal(acked.status, 200, acked.text);
    assert.equal(acked.json.status_state, 'completed');
    assert.equal((await world.post(`/api/fleet/${fleet.fleetId}/ack`, { message_id: incoming.messageId })).json.error?.code, 'fleet_refused', 'acknowledged once');
    assert.equal((await world.post(`/api/fleet/${fleet.fleetId}/ack`, { message_id: 999 })).json.error?.code, 'not_found');

    const sent = await world.post(`/api/fleet/${fleet.fleetId}/messages`, { to: alice.member.memberId, text: 'please rerun the flaky test' });
    assert.equal(sent.status, 200, sent.text);
    assert.equal(sent.json.notification_sent, true, String(sent.json.diagnostic));
    const messageId = (sent.json.message as { message_id: number }).message_id;
    assert.equal((await fleet.broker.showMessage(messageId)).fromMemberId, fleet.directorId, 'sent as the Director');
    await eventually('the line in alice’s pane', async () => (await paneHistory(fleet.server, alice.pane)).includes('please rerun the flaky test'));
    assert.equal((await world.post(`/api/fleet/${fleet.fleetId}/messages`, { to: 999, text: 'x' })).json.error?.code, 'not_found');
    assert.equal((await world.post('/api/fleet/abc/messages', { to: 1, text: 'x' })).json.error?.code, 'bad_request');
  });

  it('shows a member whose pane was closed as gone, and every pane of a restarted server as stale, without anything sent first', async (t) => {
    const fixture = openFixture(t);
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat']);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: fixture.dir, SHELL: echoProgram(fixture.dir), TMUX_PANE: '%0' };
    const endpoint = Endpoint.fromSocketPath(tmux.socketPath);
    const runtime = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: endpoint });
    t.after(() => runtime.close());
    const { fleet } = await createFleetHere(runtime, { name: 'team', agent: 'shell' });
    const alice = await createMember(runtime, { fleetId: fleet.fleetId, name: 'alice', cwd: fixture.dir });
    await createMember(runtime, { fleetId: fleet.fleetId, name: 'bob', cwd: fixture.dir });
    const world = await startWebWorld(t, { openMux: tmuxOpener(tmux.socketPath, 200), fleet: runtime });
    const states = async (): Promise<[string, boolean, boolean][]> =>
      ((await world.call('/api/fleet')).json as unknown as FleetListView).fleets[0]!.members.map((member) => [member.name, member.gone, member.stale]);

    assert.deepEqual(await states(), [
      ['Director', false, false],
      ['alice', false, false],
      ['bob', false, false],
    ]);
    await tmux.tmuxCommand('kill-pane', '-t', alice.pane);
    assert.deepEqual((await states()).find(([name]) => name === 'alice'), ['alice', true, false], 'the closed pane is found, not only one already recorded');

    await tmux.restart(['cat']);
    await tmux.tmuxCommand('split-window', '-t', '%0', 'cat');
    await tmux.tmuxCommand('split-window', '-t', '%0', 'cat');
    assert.deepEqual(await states(), [
      ['Director', false, true],
      ['alice', true, false],
      ['bob', false, true],
    ], "the new server's %0 and %2 are not the Director's and bob's");
  });

  it("types into a member's pane only under the fleet's pane input lock, refusing while another holds it", async (t) => {
    const fleet = await tmuxFleet(t);
    const bob = await createMember(fleet.runtime, { fleetId: fleet.fleetId, name: 'bob', cwd: fleet.dir });
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    t.after(() => port.close());
    const world = await startWebWorld(t, { mux: port, fleet: fleet.runtime });
    const placement = (await fleet.broker.getMember(bob.member.memberId)).placement!;
    const reply = (text: string) => world.post(`/api/panes/${encodeURIComponent(bob.pane)}/reply`, { text });

    // Another drover process typing a message into bob's pane holds its lock: the reply waits, then gives up untyped.
    const held = await fleet.runtime.locks.tryAcquire(placementLockKey({ ...placement, pane: placement.pane! }));
    assert.ok(held, 'the test holds the lock');
    const refused = await reply('typed-while-locked');
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.error?.code, 'pane_busy');
    assert.equal((await paneHistory(fleet.server, bob.pane)).includes('typed-while-locked'), false, 'nothing typed');

    // Released during the wait, the reply goes in.
    const waiting = reply('typed-after-release');
    setTimeout(() => held.release(), 300);
    const answered = await waiting;
    assert.equal(answered.status, 200, answered.text);
    await eventually('the reply in bob’s pane', async () => (await paneHistory(fleet.server, bob.pane)).includes('typed-after-release'));
  });

  it('types into any pane under the input lock `drover pane deliver` takes there, member or not', async (t) => {
    const fleet = await tmuxFleet(t);
    const outside = await fleet.server.newSession({ name: 'outside', command: ['cat'] });
    const pane = (await outside.listPanes())[0]!.id;
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    t.after(() => port.close());
    const world = await startWebWorld(t, { mux: port, fleet: fleet.runtime });
    const reply = (text: string) => world.post(`/api/panes/${encodeURIComponent(pane)}/reply`, { text });

    // A `drover pane deliver` into this pane, which no member is placed in, holds its lock.
    const held = await fleet.runtime.locks.tryAcquire(placementLockKey({ backend: 'tmux', session: tmuxIds.space(outside.id), pane: tmuxIds.pane(pane) }));
    assert.ok(held, 'the test holds the lock');
    const refused = await reply('typed-while-delivering');
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.error?.code, 'pane_busy');
    held.release();
    assert.equal((await paneHistory(fleet.server, pane)).includes('typed-while-delivering'), false, 'nothing typed');
    const answered = await reply('typed-after-delivery');
    assert.equal(answered.status, 200, answered.text);
    await eventually('the reply in the pane', async () => (await paneHistory(fleet.server, pane)).includes('typed-after-delivery'));
  });

  it('explains a missing fleet database rather than failing', async (t) => {
    const fleet = await tmuxFleet(t);
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    t.after(() => port.close());
    const world = await startWebWorld(t, { mux: port, fleetUnavailable: 'no fleet database at /nowhere' });
    assert.deepEqual((await world.call('/api/fleet')).json, { available: false, reason: 'no fleet database at /nowhere', fleets: [] });
    const inbox = await world.call('/api/fleet/1/inbox');
    assert.equal(inbox.status, 503);
    assert.equal(inbox.json.error?.code, 'fleet_unavailable');
  });

  it('serves a fleet whose database appears after it started, without a restart', async (t) => {
    const fleet = await tmuxFleet(t);
    const port = createMuxPort(new TmuxAdapter({ server: fleet.server }));
    t.after(() => port.close());
    let created = false;
    const world = await startWebWorld(t, { mux: port, fleetUnavailable: 'no fleet database at /later', openFleet: async () => (created ? fleet.runtime : undefined) });
    assert.deepEqual((await world.call('/api/fleet')).json, { available: false, reason: 'no fleet database at /later', fleets: [] });
    const stream = await world.stream();
    t.after(() => stream.close());
    created = true;
    await stream.next('a resync once the fleet is served', (event) => event.kind === 'resync');
    const list = (await world.call('/api/fleet')).json as unknown as FleetListView;
    assert.equal(list.available, true);
    assert.deepEqual(list.fleets.map((entry) => entry.name), ['team']);
    assert.deepEqual((await world.call('/api/config')).json.fleet, { available: true, reason: null });
    assert.equal((await world.call(`/api/fleet/${fleet.fleetId}/inbox`)).status, 200);
  });
});
