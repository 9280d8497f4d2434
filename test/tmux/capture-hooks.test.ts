import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { captureHookScopes, captureHooks, parseCaptureHooks, type PaneId, type Server } from '../../src/tmux/index.js';
import { startTestServer } from '../support/tmux.js';

describe('capture hooks', () => {
  it('reads set entries, sparse ones included, under the scope listed before them', () => {
    const output = [
      'drover-hook-scope global',
      'after-capture-pane',
      'drover-hook-scope %3',
      'after-capture-pane[3] set-option -g @seen yes',
      'drover-hook-scope $1',
      'after-capture-pane[0] run-shell "cat > /tmp/x"',
      'after-capture-pane[7] display-message hi',
      '',
    ].join('\n');
    assert.deepEqual(parseCaptureHooks(output), [
      { scope: '%3', command: 'set-option -g @seen yes' },
      { scope: '$1', command: 'run-shell "cat > /tmp/x"' },
      { scope: '$1', command: 'display-message hi' },
    ]);
    assert.deepEqual(parseCaptureHooks('drover-hook-scope global\nafter-capture-pane\n'), [], 'an array with no entries is not set');
  });

  describe('on a live server', () => {
    let server: Server;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.close());

    it('looks at the global scope, the pane, and every session its window is linked into', async () => {
      const home = await server.newSession({ name: 'home', command: ['cat'] });
      const away = await server.newSession({ name: 'away', command: ['cat'] });
      const [window] = await home.listWindows();
      const [pane] = await window!.listPanes();
      await server.run(['link-window', '-s', window!.id, '-t', 'away:5']);
      const scopes = captureHookScopes(await server.snapshot(), [pane!.id as PaneId]);
      assert.deepEqual(
        scopes.map((scope) => (scope.kind === 'global' ? 'global' : `${scope.kind} ${scope.id}`)).sort(),
        ['global', `pane ${pane!.id}`, `session ${away.id}`, `session ${home.id}`].sort(),
      );
      assert.deepEqual(captureHookScopes(await server.snapshot(), ['%999' as PaneId]), [{ kind: 'global' }], 'a pane that is gone adds nothing');

      assert.deepEqual(await captureHooks(server, [pane!.id as PaneId]), []);
      await server.run(['set-hook', '-t', 'away', 'after-capture-pane[2]', 'display-message linked']);
      const hooks = await captureHooks(server, [pane!.id as PaneId]);
      assert.ok(hooks.some((hook) => hook.scope === away.id), JSON.stringify(hooks));
      assert.deepEqual(new Set(hooks.map((hook) => hook.command)), new Set(['display-message linked']));
    });
  });
});
