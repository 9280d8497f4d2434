/**
 * drover web across a restart of its multiplexer. On tmux the server is killed and another
 * started at the same socket path, whose %0 is another pane; on the zellij fake the session is
 * started again under its name, numbering its panes from terminal_0 again. drover web opens its
 * ports as `drover web` does (on tmux one control-mode binding per run, the port over it), so it
 * must open a new one by itself. A herdr restart keeps its run, so the page keeps its panes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MuxOpener, ReplyReceipt, SnapshotView } from '../../src/bridge/index.js';
import { createMuxPort, ZellijAdapter, type MuxPort } from '../../src/mux/index.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { RestartableServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, tmuxOpener, type WebWorld } from './support.js';

async function snapshot(world: WebWorld): Promise<SnapshotView> {
  const answer = await world.call('/api/snapshot');
  assert.equal(answer.status, 200, answer.text);
  return answer.json as unknown as SnapshotView;
}

const path = (key: string, verb: string): string => `/api/panes/${encodeURIComponent(key)}/${verb}`;

/** A reply and keys to a pane key of an earlier run, each refused with 409 `server_replaced`: the refusals. */
async function refusedOldRunWrites(world: WebWorld, key: string): Promise<Awaited<ReturnType<WebWorld['post']>>[]> {
  const refusals = [];
  for (const [verb, body] of [
    ['reply', { text: 'meant-for-the-old-run' }],
    ['keys', { keys: ['m', 'Enter'] }],
  ] as const) {
    const refused = await world.post(path(key, verb), body);
    assert.equal(refused.status, 409, `${verb}: ${refused.text}`);
    assert.equal(refused.json.error?.code, 'server_replaced');
    refusals.push(refused);
  }
  return refusals;
}

describe('drover web across a real tmux restart', () => {
  it('announces the restart, shows the new server’s panes as restarted, and refuses the old %0’s key with nothing typed into the new %0', async (t) => {
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat']);
    const world = await startWebWorld(t, { openMux: tmuxOpener(tmux.socketPath, 300) });

    const before = await snapshot(world);
    assert.equal(before.server.restarted, null);
    const [old] = before.panes;
    assert.equal(old?.pane_id, '%0');
    assert.equal(old.pane_key, `local::tmux::${before.server.incarnation}::%0`);
    assert.equal((await world.post(path(old.pane_key, 'reply'), { text: 'before-the-restart' })).status, 200);
    await eventually('the reply in the first server’s %0', async () => (await tmux.history('%0')).includes('before-the-restart'));

    const stream = await world.stream();
    t.after(() => stream.close());
    await tmux.restart(['cat']);
    const announced = await stream.next('the restart on the stream', (event) => event.kind === 'restart');
    assert.equal(announced.data.previous_incarnation, before.server.incarnation);
    assert.notEqual(announced.data.incarnation, before.server.incarnation);

    const after = await snapshot(world);
    assert.deepEqual(after.server.restarted, announced.data, 'the snapshot keeps the restart for the banner');
    assert.equal(after.server.incarnation, announced.data.incarnation);
    const fresh = after.panes.find((pane) => pane.pane_id === '%0')!;
    assert.equal(fresh.pane_key, `local::tmux::${after.server.incarnation}::%0`);
    assert.equal(fresh.foreground, 'cat');

    for (const [verb, body] of [
      ['reply', { text: 'meant-for-the-old-server' }],
      ['keys', { keys: ['m', 'e', 'a', 'n', 't', 'Enter'] }],
      ['answer', { question: 'q1-00000000', option: 0 }],
    ] as const) {
      const refused = await world.post(path(old.pane_key, verb), body);
      assert.equal(refused.status, 409, `${verb}: ${refused.text}`);
      assert.equal(refused.json.error?.code, 'server_replaced');
      assert.match(String(refused.json.error?.message), /belonged to an earlier run of the tmux server, which was replaced \(restarted at .+\); nothing was sent/);
    }
    assert.equal((await world.call(path(old.pane_key, 'grid'))).json.error?.code, 'server_replaced', 'nor is the old pane read');
    // Read through a client of its own, not drover web's binding: the new %0 never saw the text.
    const untouched = await tmux.history('%0');
    assert.doesNotMatch(untouched, /meant|before-the-restart/);

    const receipt = await world.post(path(fresh.pane_key, 'reply'), { text: 'after-the-restart' });
    assert.equal(receipt.status, 200, receipt.text);
    assert.equal((receipt.json as unknown as ReplyReceipt).pane_key, fresh.pane_key);
    await eventually('the reply in the new server’s %0', async () => (await tmux.history('%0')).includes('after-the-restart'));
  });
});

describe('drover web over a tmux server that is not running', () => {
  it('answers a reply and keys to a killed server as unreachable with nothing sent, as the snapshot does', async (t) => {
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat']);
    const world = await startWebWorld(t, { openMux: tmuxOpener(tmux.socketPath, 300) });
    const [pane] = (await snapshot(world)).panes;
    await tmux.stop();
    const down = await eventually('the snapshot to answer unreachable', async () => {
      const answer = await world.call('/api/snapshot');
      return answer.status === 503 ? answer : undefined;
    });
    assert.equal(down.json.error?.code, 'unreachable');
    for (const [verb, body] of [
      ['reply', { text: 'into-no-server' }],
      ['keys', { keys: ['x', 'Enter'] }],
    ] as const) {
      const refused = await world.post(path(pane!.pane_key, verb), body);
      assert.equal(refused.status, 503, `${verb}: ${refused.text}`);
      assert.equal(refused.json.error?.code, 'unreachable');
      assert.equal(refused.json.error?.delivery, 'not_sent', `${verb}: no server was there to type into`);
    }
  });
});

/** As drover web opens its ports off tmux: a new one onto whichever run answers now. */
function opener(openPort: () => MuxPort): MuxOpener {
  return async () => {
    const port = openPort();
    return { port, close: () => port.close() };
  };
}

describe('drover web across a restart off tmux', () => {
  it('zellij: follows the session started again, shows its panes, and refuses the old keys with nothing typed into the panes that now carry their ids', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const world = await startWebWorld(t, { openMux: opener(zellij.openPort), reopenMs: 200 });

    const before = await snapshot(world);
    assert.deepEqual(before.panes.map((pane) => pane.pane_id).sort(), ['terminal_0', 'terminal_1', 'terminal_2']);
    const old = before.panes.find((pane) => pane.pane_id === 'terminal_1')!;
    assert.equal(old.pane_key, `local::zellij::${before.server.incarnation}::terminal_1`);

    const stream = await world.stream();
    t.after(() => stream.close());
    // Started again without its first pane: terminal_0 and terminal_1 now name the old terminal_1 and terminal_2.
    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const screens = ['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane));
    const inputs = zellij.fake.read().inputs.length;
    const announced = await stream.next('the restart on the stream', (event) => event.kind === 'restart');
    assert.equal(announced.data.previous_incarnation, before.server.incarnation);
    assert.notEqual(announced.data.incarnation, before.server.incarnation);

    const after = await snapshot(world);
    assert.deepEqual(after.server.restarted, announced.data, 'the snapshot keeps the restart for the banner');
    assert.deepEqual(after.panes.map((pane) => pane.pane_id).sort(), ['terminal_0', 'terminal_1'], 'the new run’s panes');
    const fresh = after.panes.find((pane) => pane.pane_id === 'terminal_1')!;
    assert.equal(fresh.pane_key, `local::zellij::${after.server.incarnation}::terminal_1`);

    for (const refused of await refusedOldRunWrites(world, old.pane_key)) {
      assert.match(String(refused.json.error?.message), /belonged to an earlier run of the zellij server, which was replaced \(restarted at .+\); nothing was sent/);
    }
    assert.equal((await world.call(path(old.pane_key, 'grid'))).json.error?.code, 'server_replaced', 'nor is the old pane read');
    // The fake's own record: nothing typed, and both panes show what they showed.
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed');
    assert.deepEqual(['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane)), screens);

    const receipt = await world.post(path(fresh.pane_key, 'keys'), { keys: ['x'] });
    assert.equal(receipt.status, 200, receipt.text);
    assert.deepEqual(zellij.fake.read().inputs.slice(inputs).map((input) => input.paneId), ['terminal_1'], 'the new run’s key reaches its pane');
  });

  it('zellij: a reply sent before the page noticed the restart is refused by the old run’s port, typing nothing, and the page follows the new run', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    // A census slower than the test, so that the reply, not the watch, is what meets the new run.
    const slow = { idleFloorMs: 60_000, idleCeilingMs: 60_000, watchedFloorMs: 60_000, watchedCeilingMs: 60_000 };
    const openPort = () => createMuxPort(new ZellijAdapter({ env: zellij.fake.env, census: slow, timeoutMs: 20_000 }));
    const world = await startWebWorld(t, { openMux: opener(openPort), reopenMs: 200 });
    const before = await snapshot(world);
    const old = before.panes.find((pane) => pane.pane_id === 'terminal_1')!;

    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const screens = ['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane));
    const inputs = zellij.fake.read().inputs.length;
    await refusedOldRunWrites(world, old.pane_key);
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed');
    assert.deepEqual(['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane)), screens);

    // While the new run is being opened the snapshot may answer 503; it must come back by itself.
    const after = await eventually('the page to show the new run', async () => {
      const answer = await world.call('/api/snapshot');
      const view = answer.json as unknown as SnapshotView;
      return answer.status === 200 && view.server.restarted !== null ? view : undefined;
    });
    assert.equal(after.server.restarted?.previous_incarnation, before.server.incarnation);
    assert.deepEqual(after.panes.map((pane) => pane.pane_key).sort(), ['terminal_0', 'terminal_1'].map((pane) => `local::zellij::${after.server.incarnation}::${pane}`));
  });

  it('herdr: a restart keeps the session’s run, so the page keeps its panes and their keys still reach them', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const world = await startWebWorld(t, { openMux: opener(herdr.openPort), reopenMs: 200 });
    const before = await snapshot(world);
    const shell = before.panes.find((pane) => pane.pane_id === herdr.server.paneIds().at(-1))!;
    const stream = await world.stream();
    t.after(() => stream.close());
    await herdr.server.restart();
    // The restart cut herdr's event stream; the page still hears of the pane's changes.
    await herdr.changePane(shell.pane_id);
    await stream.next('a pane event after the restart', (event) => event.kind === 'pane' && event.data.pane_id === shell.pane_id);
    const receipt = await world.post(path(shell.pane_key, 'keys'), { keys: ['x'] });
    assert.equal(receipt.status, 200, receipt.text);
    assert.deepEqual(herdr.server.inputs().map((input) => input.paneId), [shell.pane_id]);
    const after = await snapshot(world);
    assert.deepEqual([after.server.incarnation, after.server.restarted], [before.server.incarnation, null]);
    assert.deepEqual(after.panes.map((pane) => pane.pane_key), before.panes.map((pane) => pane.pane_key));
  });
});
