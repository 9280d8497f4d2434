import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Endpoint } from '../../src/tmux/index.js';
import {
  FleetRuntime,
  PlacementElsewhereError,
  PlacementStaleError,
  captureMember,
  checkMemberPanes,
  createFleetHere,
  createMember,
  deleteFleet,
  deleteMember,
  promptMember,
  sendAndNotify,
} from '../../src/fleet/index.js';
import { RestartableServer } from '../support/tmux.js';
import { echoProgram, openFixture } from './support.js';

describe('a fleet whose tmux server was restarted at the same socket', () => {
  it('types, reads and kills nothing in the new server’s panes; the member is stale and its message waits', async (t) => {
    const fixture = openFixture(t);
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat', '-v']);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: fixture.dir, SHELL: echoProgram(fixture.dir), TMUX_PANE: '%0' };
    const endpoint = Endpoint.fromSocketPath(tmux.socketPath);

    const before = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: endpoint });
    const { fleet, director } = await createFleetHere(before, { name: 'team', agent: 'shell' });
    const alice = await createMember(before, { fleetId: fleet.fleetId, name: 'alice', cwd: fixture.dir });
    const bob = await createMember(before, { fleetId: fleet.fleetId, name: 'bob', cwd: fixture.dir });
    assert.deepEqual([alice.pane, bob.pane], ['%1', '%2']);
    assert.match(alice.member.placement?.server ?? '', /^\d+-\d+$/, 'the placement names the server its pane lives on');
    await before.close();

    // The user restarts tmux: the new server has its own %0, %1 and %2, running programs that echo what they are sent.
    await tmux.restart(['cat', '-v']);
    await tmux.tmuxCommand('split-window', '-t', '%0', 'cat', '-v');
    await tmux.tmuxCommand('split-window', '-t', '%0', 'cat', '-v');
    const runtime = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: endpoint });
    t.after(() => runtime.close());
    const aliceId = alice.member.memberId;

    const sent = await sendAndNotify({ ...runtime.notify, from: director.memberId, to: aliceId, text: 'echo typed-into-a-stranger' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic?.diagnostic ?? '', /tmux server that is gone/);
    assert.equal((await runtime.broker.showMessage(sent.message.messageId)).notifiedAt, null, 'the message stays pending');
    const placement = (await runtime.broker.getMember(aliceId)).placement!;
    assert.notEqual(placement.staleAt, null, 'the member is marked stale');

    await assert.rejects(promptMember({ ...runtime.notify, memberId: aliceId, text: 'echo prompted-a-stranger' }), PlacementStaleError);
    await assert.rejects(captureMember(runtime, aliceId), PlacementStaleError);
    const [listed] = await checkMemberPanes(runtime, [await runtime.broker.getMember(aliceId)], async () => [await runtime.broker.getMember(aliceId)]);
    assert.notEqual(listed?.placement?.staleAt, null);
    assert.equal(listed?.placement?.goneAt, null, 'stale, not gone: the pane id was not looked up on a stranger');
    // The Director's pane was on the old server too: a roster shows it stale before anything is sent to it.
    const [directorListed] = await checkMemberPanes(runtime, [await runtime.broker.getMember(director.memberId)], async () => [await runtime.broker.getMember(director.memberId)]);
    assert.notEqual(directorListed?.placement?.staleAt, null, 'the Director is stale as well');

    const deleted = await deleteMember(runtime, aliceId);
    assert.match(deleted.diagnostics.join('\n'), /was not closed/);
    const fleetDeleted = await deleteFleet(runtime, fleet.fleetId);
    assert.match(fleetDeleted.diagnostics.join('\n'), new RegExp(`member ${bob.member.memberId}'s pane %2 .*was not closed`));

    assert.deepEqual((await tmux.tmuxCommand('list-panes', '-a', '-F', '#{pane_id}')).trim().split('\n').sort(), ['%0', '%1', '%2'], 'every pane of the new server is alive');
    for (const pane of ['%0', '%1', '%2']) {
      const history = await tmux.history(pane);
      assert.doesNotMatch(history, /stranger|drover msg|\^\[/, `${pane} was sent nothing`);
    }
  });

  it('in a runtime that lived through the restart, types nothing either: the port refuses the new run, the member is stale, nothing is split off a stranger', async (t) => {
    const fixture = openFixture(t);
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat', '-v']);
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: fixture.dir, SHELL: echoProgram(fixture.dir), TMUX_PANE: '%0' };
    const runtime = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: Endpoint.fromSocketPath(tmux.socketPath) });
    t.after(() => runtime.close());
    const { fleet, director } = await createFleetHere(runtime, { name: 'team', agent: 'shell' });
    const alice = await createMember(runtime, { fleetId: fleet.fleetId, name: 'alice', cwd: fixture.dir });

    await tmux.restart(['cat', '-v']);
    await tmux.tmuxCommand('split-window', '-t', '%0', 'cat', '-v');
    const sent = await sendAndNotify({ ...runtime.notify, from: director.memberId, to: alice.member.memberId, text: 'echo typed-into-a-stranger' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic?.diagnostic ?? '', /tmux server that is gone/);
    assert.notEqual((await runtime.broker.getMember(alice.member.memberId)).placement?.staleAt, null, 'the member is marked stale');
    assert.equal((await runtime.broker.showMessage(sent.message.messageId)).notifiedAt, null);
    await assert.rejects(createMember(runtime, { fleetId: fleet.fleetId, name: 'bob', cwd: fixture.dir }), PlacementStaleError, "nothing is split off the new server's %0");

    assert.deepEqual((await tmux.tmuxCommand('list-panes', '-a', '-F', '#{pane_id}')).trim().split('\n').sort(), ['%0', '%1']);
    for (const pane of ['%0', '%1']) assert.doesNotMatch(await tmux.history(pane), /stranger|drover msg|\^\[/, `${pane} was sent nothing`);
  });
});

describe('a fleet reached from another tmux server', () => {
  it('judges nothing from a placement recorded without its socket: refuses, naming both servers, records nothing, and its own server still delivers', async (t) => {
    const fixture = openFixture(t);
    const home = new RestartableServer();
    const other = new RestartableServer();
    t.after(() => Promise.all([home.dispose(), other.dispose()]));
    await home.start(['cat', '-v']);
    await other.start(['cat', '-v']);
    await other.tmuxCommand('split-window', '-t', '%0', 'cat', '-v');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: fixture.dir, SHELL: echoProgram(fixture.dir), TMUX_PANE: '%0' };

    const atHome = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: Endpoint.fromSocketPath(home.socketPath) });
    t.after(() => atHome.close());
    const { fleet, director } = await createFleetHere(atHome, { name: 'team', agent: 'shell' });
    const alice = await createMember(atHome, { fleetId: fleet.fleetId, name: 'alice', cwd: fixture.dir });
    const aliceId = alice.member.memberId;
    const recorded = alice.member.placement!;
    assert.equal(recorded.endpoint, home.socketPath, 'a new placement names the socket of its server');
    // A placement as drover recorded it before it kept the socket.
    await fixture.broker.setPlacement(aliceId, { backend: 'tmux', session: recorded.session, window: recorded.window, pane: recorded.pane, server: recorded.server });

    const elsewhere = await FleetRuntime.open({ broker: fixture.broker, env, tmuxEndpoint: Endpoint.fromSocketPath(other.socketPath) });
    t.after(() => elsewhere.close());
    const sent = await sendAndNotify({ ...elsewhere.notify, from: director.memberId, to: aliceId, text: 'echo typed-into-a-stranger' });
    assert.equal(sent.notificationSent, false);
    assert.match(sent.diagnostic?.diagnostic ?? '', new RegExp(`lives on tmux server ${recorded.server}, not on the tmux server this command reached \\(\\d+-\\d+ at ${other.socketPath}\\)`));
    assert.match(sent.diagnostic?.diagnostic ?? '', /nothing was recorded/);
    await assert.rejects(captureMember(elsewhere, aliceId), PlacementElsewhereError);
    await assert.rejects(deleteMember(elsewhere, aliceId), PlacementElsewhereError);
    const [listed] = await checkMemberPanes(elsewhere, [await elsewhere.broker.getMember(aliceId)], async () => [await elsewhere.broker.getMember(aliceId)]);
    assert.deepEqual([listed?.status, listed?.placement?.staleAt, listed?.placement?.goneAt], ['active', null, null], 'neither stale nor gone: the other server was not judged');
    for (const pane of ['%0', '%1']) assert.doesNotMatch(await other.history(pane), /stranger|drover msg|\^\[/, `the other server's ${pane} was sent nothing`);

    const later = await sendAndNotify({ ...atHome.notify, from: director.memberId, to: aliceId, text: 'echo at-home' });
    assert.equal(later.notificationSent, true, 'its own server still reaches the member');
    assert.notEqual((await atHome.broker.showMessage(sent.message.messageId)).notifiedAt, null, 'the message that waited went in too');
  });
});
