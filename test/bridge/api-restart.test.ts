/**
 * drover web across a real tmux restart: the server is killed and another started at the same
 * socket path, whose %0 is another pane. drover web opens its ports as `drover web` does (one
 * control-mode binding per run, the port over it), so it must open a new one by itself.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReplyReceipt, SnapshotView } from '../../src/bridge/index.js';
import { RestartableServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, tmuxOpener, type WebWorld } from './support.js';

async function snapshot(world: WebWorld): Promise<SnapshotView> {
  const answer = await world.call('/api/snapshot');
  assert.equal(answer.status, 200, answer.text);
  return answer.json as unknown as SnapshotView;
}

const path = (key: string, verb: string): string => `/api/panes/${encodeURIComponent(key)}/${verb}`;

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
