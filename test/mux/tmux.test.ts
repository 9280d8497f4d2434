/**
 * The tmux adapter against real, owned tmux servers on private sockets (test/support/tmux.ts),
 * and the read-only conformance set against one of them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { processDiagnostics } from '../../src/process/index.js';
import { versionAtLeast, type Server } from '../../src/tmux/index.js';
import { conformance, createMuxPort, MuxError, TmuxAdapter, type MuxPort, type MuxSnapshot } from '../../src/mux/index.js';
import { startTestServer, useTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { seed, withAttachedTerminal } from './tmux-world.js';

function portOver(server: Server): MuxPort {
  return createMuxPort(new TmuxAdapter({ server, resyncMs: 500 }));
}

function paneIn(snapshot: MuxSnapshot, tabLabel: string): string {
  return snapshot.panes.find((pane) => pane.tabLabel === tabLabel)!.paneId;
}

describe('the tmux adapter', { concurrency: false }, () => {
  const owned = useTestServer();

  it("publishes sessions, windows and panes under tmux's own ids, counted", async () => {
    await seed(owned.server);
    const snapshot = await portOver(owned.server).snapshot();
    assert.deepEqual(
      snapshot.spaces.map((space) => [space.label, space.tabCount, space.paneCount]),
      [
        ['scratch', 1, 1],
        ['work', 2, 3],
      ],
    );
    const listing = await owned.server.snapshot();
    assert.deepEqual(snapshot.spaces.map((space) => space.spaceId).sort(), listing.sessions.toArray().map((session) => session.sessionId).sort());
    assert.deepEqual(snapshot.tabs.map((tab) => tab.tabId).sort(), listing.windows.toArray().map((window) => window.windowId).sort());
    assert.deepEqual(snapshot.panes.map((pane) => pane.paneId).sort(), listing.panes.toArray().map((pane) => pane.paneId).sort());
    assert.ok(snapshot.panes.every((pane) => /^%\d+$/.test(pane.paneId) && pane.agent === 'shell' && pane.status === 'unknown'));
    assert.equal(snapshot.spaces.filter((space) => space.focused).length, 1);
    // Nobody is attached to this server: no pane is on anyone's screen.
    assert.deepEqual(snapshot.panes.filter((pane) => pane.focused), []);
    assert.deepEqual(conformance.snapshotProblems(snapshot, portOver(owned.server)), []);
  });

  it('passes the read-only conformance checks', async () => {
    const results = await conformance.runReadOnlyChecks(portOver(owned.server));
    assert.deepEqual(results.filter((result) => result.problems.length > 0 || result.skipped !== undefined), []);
  });

  it('types literally, sends translated keys and reads the grid with and without colour', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    assert.deepEqual(await port.typeText(paneId, "printf '\\033[31mred\\033[0m;done\\n'"), { ok: true, value: undefined });
    assert.deepEqual(await port.sendKeys(paneId, ['Enter']), { ok: true, value: undefined });
    // Fails naming the wait unless the coloured output arrives with its SGR.
    await eventually('the coloured output with its SGR', async () => {
      const styled = await port.readGrid(paneId, { scope: 'viewport', styling: 'preserve' });
      return styled.ok && styled.value.text.includes('\u001b[31mred');
    });
    const plain = await port.readGrid(paneId, { scope: 'viewport', styling: 'strip' });
    assert.ok(plain.ok && plain.value.text.includes('red;done') && !plain.value.text.includes('\u001b'));
    const recent = await port.readGrid(paneId, { scope: 'recent', lines: 2, styling: 'strip' });
    assert.ok(recent.ok && recent.value.text.split('\n').length <= 2);
  });

  it('types long text through a paste buffer, literally, and leaves no buffer behind', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    const long = `: ${'x'.repeat(20_000)}`;
    assert.deepEqual(await port.typeText(paneId, long), { ok: true, value: undefined });
    assert.deepEqual(await owned.server.buffers().list(), []);
    await port.sendKeys(paneId, ['ctrl+c']);
  });

  it('pastes through a buffer of its own, which neither a paste nor a failed paste leaves behind', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    assert.deepEqual(await port.pasteText(paneId, ': pasted\n'), { ok: true, value: undefined });
    await eventually('the pasted line on the pane', async () => (await owned.server.pane(paneId).capture()).toString('utf8').includes(': pasted'));
    const gone = await port.pasteText('%9999', 'x');
    assert.equal(!gone.ok && gone.reason, 'gone', JSON.stringify(gone));
    assert.deepEqual(await owned.server.buffers().list(), []);
    const empty = await port.pasteText(paneId, '');
    assert.equal(!empty.ok && empty.reason, 'refused');
  });

  it('refuses bad keys before anything reaches tmux', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    const spawned = processDiagnostics().spawned;
    for (const keys of [['a', 'meta+x'], ['a', 'ctrl+Enter'], ['a', 'C-c']]) {
      const outcome = await port.sendKeys(paneId, keys);
      assert.equal(!outcome.ok && outcome.reason, 'refused');
    }
    assert.equal(processDiagnostics().spawned, spawned);
  });

  it('tells a label drover set from a title the program wrote', async () => {
    const port = portOver(owned.server);
    const snapshot = await port.snapshot();
    const [labelled, titled] = snapshot.panes.filter((pane) => pane.tabLabel === 'editor');
    assert.equal((await port.renamePane(labelled!.paneId, 'reviewer')).ok, true);
    await owned.server.run(['select-pane', '-t', titled!.paneId, '-T', 'vim notes']);
    const after = await port.snapshot();
    const find = (id: string) => after.panes.find((pane) => pane.paneId === id)!;
    assert.equal(find(labelled!.paneId).paneLabel, 'reviewer');
    assert.equal(find(titled!.paneId).paneLabel, undefined);
    assert.equal(find(titled!.paneId).terminalTitle, 'vim notes');
    assert.equal((await port.renamePane(labelled!.paneId, null)).ok, true);
    assert.equal((await port.snapshot()).panes.find((pane) => pane.paneId === labelled!.paneId)!.paneLabel, undefined);
  });

  it('moves window and pane together on setFocus, and reports focus only while someone is attached', async () => {
    const port = portOver(owned.server);
    const before = await port.snapshot();
    const editorPanes = before.panes.filter((pane) => pane.tabLabel === 'editor');
    const target = editorPanes[1]!;
    await port.setFocus(paneIn(before, 'logs'));
    assert.deepEqual(await port.setFocus(target.paneId), { ok: true, value: undefined });
    const detached = await port.snapshot();
    assert.equal(detached.tabs.find((tab) => tab.tabId === target.tabId)?.focused, true);
    assert.deepEqual(detached.panes.filter((pane) => pane.focused), [], 'no client is attached, so no pane is focused');
    const active = (await owned.server.pane(target.paneId).display('#{pane_active}#{window_active}')).toString('utf8').trim();
    assert.equal(active, '11', 'tmux made the pane and its window active');
    await withAttachedTerminal(owned.server, 'work', async () => {
      const attached = await port.snapshot();
      // Focus is per space: the attached client shows work, whose focused pane is the target.
      assert.deepEqual(attached.spaces.filter((space) => space.focused).map((space) => space.spaceId), [target.spaceId]);
      assert.deepEqual(attached.panes.filter((pane) => pane.focused && pane.spaceId === target.spaceId).map((pane) => pane.paneId), [target.paneId]);
      assert.deepEqual(conformance.focusProblems(attached), []);
    });
    const gone = await port.setFocus('%9999');
    assert.equal(!gone.ok && gone.reason, 'gone');
    const wrongKind = await port.setFocus(target.tabId);
    assert.equal(!wrongKind.ok && wrongKind.reason, 'gone');
  });

  it('creates, renames and closes tabs and spaces, detached', async () => {
    const port = portOver(owned.server);
    const work = (await port.snapshot()).spaces.find((space) => space.label === 'work')!;
    const created = await port.createTab({ spaceId: work.spaceId, label: 'build', cwd: '/tmp' });
    assert.ok(created.ok);
    assert.equal(created.value.spaceLabel, 'work');
    assert.equal(created.value.cwd, '/tmp');
    const snapshot = await port.snapshot();
    assert.equal(snapshot.tabs.find((tab) => tab.tabId === created.value.tabId)?.focused, false, 'a new tab does not take the screen');
    assert.equal((await port.renameTab(created.value.tabId, 'build-2')).ok, true);
    assert.equal((await port.snapshot()).tabs.find((tab) => tab.tabId === created.value.tabId)?.label, 'build-2');
    assert.equal((await port.closeTab(created.value.tabId)).ok, true);
    const closed = await port.closeTab(created.value.tabId);
    assert.equal(!closed.ok && closed.reason, 'gone');
    const space = await port.createSpace({ label: 'extra', cwd: ' ' });
    assert.ok(space.ok);
    const duplicate = await port.createSpace({ label: 'extra' });
    assert.equal(!duplicate.ok && duplicate.reason, 'refused');
    assert.match(!duplicate.ok ? duplicate.detail : '', /duplicate session/);
  });

  it('refuses to spawn a window on a tmux that would crash with window-size manual', async () => {
    const port = portOver(owned.server);
    const work = (await port.snapshot()).spaces.find((space) => space.label === 'work')!;
    const version = await owned.server.version();
    await owned.server.options('global-window').set('window-size', 'manual');
    try {
      const outcome = await port.createTab({ spaceId: work.spaceId });
      if (versionAtLeast(version, '3.7')) assert.equal(outcome.ok, true);
      else {
        assert.equal(!outcome.ok && outcome.reason, 'refused');
        assert.match(!outcome.ok ? outcome.detail : '', /tmux set -g window-size latest/);
      }
    } finally {
      await owned.server.options('global-window').set('window-size', 'latest');
    }
  });

  it('declines what tmux cannot answer without touching it', async () => {
    const port = portOver(owned.server);
    const spawned = processDiagnostics().spawned;
    const outcome = await port.listWorktrees({ repoRoot: '/srv' });
    assert.equal(!outcome.ok && outcome.reason, 'unsupported');
    assert.equal(processDiagnostics().spawned, spawned);
  });
});

describe('the tmux watch', () => {
  it('comes up, reports out-of-band changes and pane output, and goes down once when tmux dies', async () => {
    const server = await startTestServer();
    try {
      await seed(server);
      const port = portOver(server);
      const paneId = paneIn(await port.snapshot(), 'logs');
      const seen = { up: 0, down: [] as string[], topology: 0, panes: [] as string[] };
      let wake: () => void = () => undefined;
      const watch = port.watch({
        panes: [paneId],
        onUp: () => (seen.up += 1, wake()),
        onDown: (reason) => (seen.down.push(reason), wake()),
        onTopologyChange: () => (seen.topology += 1, wake()),
        onPaneChange: (id) => (seen.panes.push(id), wake()),
      });
      const until = (condition: () => boolean): Promise<boolean> =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve(condition()), 10_000);
          wake = () => condition() && (clearTimeout(timer), resolve(true));
          wake();
        });
      assert.ok(await until(() => seen.up === 1), 'the watch came up');
      const before = seen.topology;
      await server.run(['rename-window', '-t', 'scratch:0', 'renamed']);
      assert.ok(await until(() => seen.topology > before), 'an out-of-band rename was reported');
      await port.typeText(paneId, 'echo watched');
      await port.sendKeys(paneId, ['Enter']);
      assert.ok(await until(() => seen.panes.includes(paneId)), 'output in the watched pane was reported');
      await server.run(['kill-server']);
      assert.ok(await until(() => seen.down.length > 0), 'the watch went down');
      await port.refresh();
      assert.equal(seen.down.length, 1);
      watch.close();
    } finally {
      await server.close();
    }
  });
});

describe('a dead tmux server', () => {
  it('answers unreachable, never refused, during and after its death', async () => {
    await withServer(async (server) => {
      await seed(server);
      const port = portOver(server);
      const paneId = paneIn(await port.snapshot(), 'logs');
      const [racing] = await Promise.all([port.typeText(paneId, 'echo racing'), server.run(['kill-server']).catch(() => undefined)]);
      assert.ok(racing.ok || racing.reason === 'unreachable', `a call racing the kill answered ${JSON.stringify(racing)}`);
      const after = await port.typeText(paneId, 'x');
      assert.equal(!after.ok && after.reason, 'unreachable');
      assert.equal(await port.reachable(), false);
      await assert.rejects(port.snapshot(), (error: unknown) => error instanceof MuxError && error.reason === 'unreachable');
    });
  });
});
