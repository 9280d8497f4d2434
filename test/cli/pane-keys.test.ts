import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tmuxIds } from '../../src/mux/index.js';
import { cliSandbox } from '../support/cli.js';
import { useTestServer } from '../support/tmux.js';
import { keyOf, portOn, screenOf, screenShows } from '../panes/live.js';

describe('drover pane keys', () => {
  const sandbox = cliSandbox();
  const live = useTestServer();

  it('sends key names in order and says which pane got them', async () => {
    const { pane } = await live.server.newSession({ name: 'keys', command: ['cat', '-v'], receipt: true });
    const socket = live.server.endpoint.socketPath;
    const paneId = tmuxIds.pane(pane.id);
    const sent = await sandbox.drover(['pane', 'keys', paneId, 'x', 'y', 'Escape', 'Enter', '--json', '-S', socket]);
    assert.equal(sent.exitCode, 0, sent.stderrText());
    assert.deepEqual(JSON.parse(sent.text()), { pane_id: paneId, pane_key: await keyOf(portOn(live.server), paneId), keys: ['x', 'y', 'Escape', 'Enter'], server: socket });
    await screenShows(pane, 'xy^[');
  });

  it('refuses every key when one cannot be sent, before any is sent', async () => {
    const { pane } = await live.server.newSession({ name: 'refused', command: ['cat', '-v'], receipt: true });
    const socket = live.server.endpoint.socketPath;
    const refused = await sandbox.drover(['pane', 'keys', tmuxIds.pane(pane.id), 'q', 'NoSuchKey', '-S', socket]);
    assert.equal(refused.exitCode, 2, refused.stderrText());
    assert.match(refused.stderrText(), /cannot send "NoSuchKey" .*nothing was sent/);
    assert.doesNotMatch(await screenOf(pane), /q/);
  });
});
