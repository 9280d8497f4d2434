import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { performance } from 'node:perf_hooks';
import { DroverError } from '../../src/process/index.js';
import { createMuxPort, HerdrAdapter, HerdrClient, HerdrError } from '../../src/mux/index.js';
import { FleetBackend, FleetRuntime, MemberCreationError, createFleetHere, createMember, deleteFleet, deleteMember, shellPromptLine, sendAndNotify } from '../../src/fleet/index.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';
import { openFixture } from './support.js';

/**
 * A fake herdr with one workspace whose root pane is the Director of a fresh fleet. The runtime
 * opens its herdr port from the environment, unless `tweak` is given: then it gets a backend
 * over a port whose herdr client `tweak` changed.
 */
async function herdrFleet(t: { after(fn: () => unknown): void }, tweak?: (client: HerdrClient) => void) {
  const fixture = openFixture(t);
  const socketPath = join(fixture.dir, 'herdr.sock');
  const server = new FakeHerdrServer({ seed: 'empty' });
  await server.start(socketPath);
  t.after(() => server.stop());
  const client = new HerdrClient({ socketPath });
  const { rootPane } = await client.workspaceCreate({ label: 'fleet', cwd: fixture.dir });
  const env = { HERDR_ENV: '1', HERDR_SOCKET_PATH: socketPath, HERDR_PANE_ID: rootPane.pane_id, SHELL: '/bin/sh', PATH: process.env.PATH };
  let backends: { herdr: FleetBackend } | undefined;
  if (tweak !== undefined) {
    const adapter = new HerdrAdapter({ socketPath, configRoot: fixture.dir });
    tweak(adapter.client);
    backends = { herdr: new FleetBackend(createMuxPort(adapter)) };
    t.after(() => backends!.herdr.close());
  }
  const runtime = await FleetRuntime.open({ broker: fixture.broker, env, backends });
  t.after(() => runtime.close());
  const { fleet, director } = await createFleetHere(runtime, { name: 'team', agent: 'shell' });
  const layout = async () => {
    const read = await client.paneLayout(rootPane.pane_id);
    return new Map(read.panes.map((pane) => [pane.pane_id, pane.rect]));
  };
  return { ...fixture, server, client, runtime, director: rootPane.pane_id, directorId: director.memberId, fleetId: fleet.fleetId, layout, socketPath };
}

type HerdrFleet = Awaited<ReturnType<typeof herdrFleet>>;

async function assertColumn(s: HerdrFleet, order: readonly string[]): Promise<void> {
  const rects = await s.layout();
  const director = rects.get(s.director)!;
  assert.deepEqual([director.x, director.y, director.height], [0, 0, 50], 'the Director keeps the left edge at full height');
  assert.equal(rects.size, order.length + 1);
  if (order.length === 0) {
    assert.equal(director.width, 200, 'alone, the Director has the whole width back');
    return;
  }
  const column = order.map((id) => rects.get(id)!);
  assert.ok(column.every((rect) => rect.x >= director.x + director.width));
  assert.deepEqual(
    column.map((rect) => rect.y),
    [...column.map((rect) => rect.y)].sort((a, b) => a - b),
    'members stack top to bottom in creation order',
  );
  const heights = column.map((rect) => rect.height);
  assert.ok(Math.max(...heights) - Math.min(...heights) <= 1, `equal heights ±1: ${heights.join(' ')}`);
}

describe('members on herdr', () => {
  it('splits right, then down from the column bottom, equalizes, starts the program in the cwd, and rebalances on delete', async (t) => {
    const s = await herdrFleet(t);
    assert.deepEqual((await s.runtime.broker.getMember(s.directorId)).placement?.pane, s.director);
    const panes: string[] = [];
    for (const name of ['alice', 'bob', 'carol']) {
      const created = await createMember(s.runtime, { fleetId: s.fleetId, name, cwd: s.dir });
      assert.deepEqual(created.warnings, []);
      panes.push(created.pane);
      await assertColumn(s, panes);
      assert.equal((await s.client.paneGet(created.pane)).cwd, s.dir, 'explicit --cwd');
      // The program replaces the shell herdr started, so the pane ends with it, as on tmux.
      assert.deepEqual(s.server.inputs().filter((input) => input.paneId === created.pane), [
        { paneId: created.pane, kind: 'text', payload: ['exec /bin/sh'] },
        { paneId: created.pane, kind: 'keys', payload: ['enter'] },
      ]);
    }
    const ids = (await s.runtime.broker.listMembers(s.fleetId)).filter((m) => m.kind === 'member').map((m) => m.memberId);

    const deleted = await deleteMember(s.runtime, ids[1]!);
    assert.deepEqual(deleted.diagnostics, []);
    await assertColumn(s, [panes[0]!, panes[2]!]);
    await deleteMember(s.runtime, ids[0]!);
    await assertColumn(s, [panes[2]!]);
    const fleetGone = await deleteFleet(s.runtime, s.fleetId);
    assert.equal(fleetGone.deregisteredCount, 2);
    await assertColumn(s, []);
  });

  it('pushes a message as escape, the literal line, enter', async (t) => {
    const s = await herdrFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    const sent = await sendAndNotify({ ...s.runtime.notify, from: s.directorId, to: bob.member.memberId, text: '-leading hyphen\nand a newline' });
    assert.equal(sent.notificationSent, true);
    const typed = s.server.inputs().filter((input) => input.paneId === bob.pane).slice(2);
    assert.deepEqual(typed, [
      { paneId: bob.pane, kind: 'keys', payload: ['escape'] },
      { paneId: bob.pane, kind: 'text', payload: [shellPromptLine(sent.message, { escapeLead: true })] },
      { paneId: bob.pane, kind: 'keys', payload: ['enter'] },
    ]);
    const backend = await s.runtime.openBackend('herdr');
    await assert.rejects(backend.input('w1:p404').channel(performance.now() + 1000).keys(['Escape']), (error: unknown) => error instanceof DroverError && error.delivery === 'not_sent');
  });

  it('closes the pane whose program could not be started, then deregisters the member', async (t) => {
    const s = await herdrFleet(t, (client) => {
      client.paneRun = () => Promise.reject(new HerdrError('herdr refused pane.send_input: invalid_key', { phase: 'request', delivery: 'observed', reason: 'refused' }));
    });
    const before = s.server.paneIds();
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      assert.match(error.message, /herdr could not finish the new pane w\d+:p\d+ \(closed again\): herdr refused pane.send_input/);
      assert.deepEqual(error.diagnostics, [], 'the port closed its pane; nothing is left to report');
      return true;
    });
    assert.deepEqual(s.server.paneIds(), before, 'the split pane was closed');
    assert.equal((await s.runtime.broker.listMembers(s.fleetId)).length, 1);
  });

  it('reports the close failure of that pane, without a second kill', async (t) => {
    let closes = 0;
    const s = await herdrFleet(t, (client) => {
      client.paneRun = () => Promise.reject(new HerdrError('herdr refused pane.send_input: invalid_key', { phase: 'request', delivery: 'observed', reason: 'refused' }));
      client.paneClose = () => {
        closes += 1;
        return Promise.reject(new HerdrError('herdr at the socket did not answer pane.close', { phase: 'transport', delivery: 'possibly_sent' }));
      };
    });
    await assert.rejects(createMember(s.runtime, { fleetId: s.fleetId, name: 'alice', cwd: s.dir }), (error: unknown) => {
      assert.ok(error instanceof MemberCreationError);
      assert.match(error.message, /herdr could not finish the new pane w\d+:p\d+ \(left open: closing it failed: herdr at the socket did not answer pane.close\): herdr refused pane.send_input/);
      assert.deepEqual(error.diagnostics, [], 'the port already tried the close; the fleet does not try again');
      return true;
    });
    assert.equal(closes, 1, 'compensation does not retry the kill');
    assert.equal((await s.runtime.broker.listMembers(s.fleetId)).length, 1, 'the member was still deregistered');
  });
});
