/**
 * Compensation (`--compensate`) beyond the happy path: it removes a session only when the
 * session holds exactly what this apply created, checked inside tmux in the same turn as the
 * removal. A session that also holds a window borrowed from another session is left alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApplyError, applyPlan, planWorkspace } from '../../src/workspace/index.js';
import { withServer } from '../support/tmux.js';
import { parseJson } from './helpers.js';

/** Panes run cat, so nothing typed runs; the server outlives its sessions. */
const CONFIG = 'set -g default-command "exec /bin/cat"\nset -g remain-on-exit on\nset -g exit-empty off\n';

describe('workspace compensation', () => {
  it('refuses to remove a session holding a borrowed window, and removes nothing', async () => {
    await withServer(
      async (server) => {
        const keep = await server.newSession({ name: 'keep', receipt: true });
        // Every new session gets keep's window linked in: a member this apply did not create.
        await server.run(['set-hook', '-g', 'session-created', 'link-window -d -s keep:0']);
        // tmux refuses the second window's option value: the apply fails after creating the session.
        const doc = parseJson({ session_name: 'borrowing', windows: [{ panes: [null, null] }, { options: { 'mode-keys': 'nonsense' } }] });
        const error = await applyPlan(planWorkspace(doc), server, { timeoutMs: 30_000, compensate: true }).catch((e: unknown) => e);
        assert.ok(error instanceof ApplyError, String(error));
        const { result } = error;
        assert.equal(result.failedAction, 'set-option');
        assert.equal(result.uncertain, false);
        assert.equal(result.compensation, 'refused');
        assert.equal(result.cleanupErrors.length, 1);
        assert.deepEqual(result.toJSON().cleanup_errors, [result.cleanupErrors[0]!.name]);

        const snapshot = await server.snapshot();
        const borrowing = snapshot.sessions.toArray().find((session) => session.sessionName === 'borrowing');
        assert.ok(borrowing, 'the session is still there');
        assert.equal(borrowing.sessionId, result.sessionId);
        const windows = borrowing.links().map((link) => link.windowId).sort();
        assert.deepEqual(windows, [...result.created.filter((ref) => ref.kind === 'window').map((ref) => ref.id), keep.window.id].sort(), 'its own window and the borrowed one');
        for (const ref of result.created) {
          const exists = ref.kind === 'session' ? server.session(ref.id).exists() : ref.kind === 'window' ? server.window(ref.id).exists() : server.pane(ref.id).exists();
          assert.equal(await exists, true, `${ref.kind} ${ref.id} was not removed`);
        }
        assert.equal(await keep.window.exists(), true, "keep's window is untouched");
      },
      { config: CONFIG },
    );
  });
});
