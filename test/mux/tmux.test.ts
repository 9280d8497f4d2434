/**
 * The tmux adapter against real, owned tmux servers on private sockets (test/support/tmux.ts),
 * and the read-only conformance set against one of them.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { processDiagnostics } from '../../src/process/index.js';
import { Endpoint, Server, versionAtLeast } from '../../src/tmux/index.js';
import { conformance, createMuxPort, MuxError, TmuxAdapter, tmuxIds, type MuxOutcome, type MuxPort, type MuxSnapshot } from '../../src/mux/index.js';
import { RestartableServer, startTestServer, useTestServer, withServer } from '../support/tmux.js';
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

  it('locates a pane in a window linked into two sessions under the first session listing it, as the snapshot does', async () => {
    await withServer(async (server) => {
      await seed(server);
      const port = portOver(server);
      const before = await port.snapshot();
      const shared = before.tabs.find((tab) => before.spaces.find((space) => space.spaceId === tab.spaceId)?.label === 'work')!;
      // tmux lists sessions by name, so scratch lists the linked window before work does.
      await server.command(['link-window', '-d', '-s', shared.tabId, '-t', 'scratch:']);
      const snapshot = await port.snapshot();
      const scratch = snapshot.spaces.find((space) => space.label === 'scratch')!.spaceId;
      assert.equal(snapshot.panes.find((pane) => pane.tabId === shared.tabId)!.spaceId, scratch);
      for (const pane of snapshot.panes) {
        assert.deepEqual(await port.locatePane(pane.paneId), { incarnation: snapshot.incarnation, location: { spaceId: pane.spaceId, tabId: pane.tabId } });
      }
      assert.deepEqual(await port.locatePane('%999'), { incarnation: snapshot.incarnation, location: undefined });
    });
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

  it('reads a screen with its size and cursor, and a process with its pid, from one tmux invocation each', async () => {
    const port = portOver(owned.server);
    const snapshot = await port.snapshot();
    const paneId = paneIn(snapshot, 'logs');
    await port.typeText(paneId, 'clear; printf "screen-check"');
    await port.sendKeys(paneId, ['Enter']);
    await eventually('the printed text on the screen', async () => {
      const read = await port.readScreen(paneId);
      return read.ok && read.value.lines.some((line) => line.startsWith('screen-check'));
    });
    const spawned = processDiagnostics().spawned;
    const screen = await port.readScreen(paneId);
    assert.equal(processDiagnostics().spawned, spawned + 1);
    assert.ok(screen.ok);
    const [width, height] = (await owned.server.pane(paneId).display('#{pane_width} #{pane_height}')).toString('utf8').split(' ').map(Number);
    assert.deepEqual([screen.value.width, screen.value.height, screen.value.rows.length, screen.value.lines.length], [width, height, height, height]);
    const cursor = screen.value.cursor;
    assert.ok(cursor !== null && cursor.x >= 0 && cursor.x < width! && cursor.y >= 0 && cursor.y < height!, JSON.stringify(cursor));
    const process = await port.readProcess(paneId);
    assert.ok(process.ok);
    assert.deepEqual(process.value, { paneId, pid: snapshot.panes.find((pane) => pane.paneId === paneId)!.pid, foreground: 'sh', dead: false, exitStatus: null });
    assert.ok(Number.isInteger(process.value.pid) && process.value.pid! > 0);
    const gone = await port.readScreen('%9999');
    assert.equal(!gone.ok && gone.reason, 'gone');
  });

  it('says which rows wrapped, a row that wrapped just after a space included', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    await port.typeText(paneId, 'clear');
    await port.sendKeys(paneId, ['Enter']);
    const cleared = await eventually('a cleared screen', async () => {
      const read = await port.readScreen(paneId);
      return read.ok && read.value.cursor?.y === 0 ? read.value : undefined;
    });
    // Typed up to the last column, the space landing in it, then more on the next row.
    const typed = `${'w'.repeat(cleared.width - 1 - cleared.cursor!.x)} tail`;
    await port.typeText(paneId, typed);
    try {
      const screen = await eventually('the typed text on two rows', async () => {
        const read = await port.readScreen(paneId);
        return read.ok && read.value.lines[1] === 'tail' ? read.value : undefined;
      });
      assert.deepEqual(screen.wrapped?.slice(0, 3), [true, false, false]);
      assert.equal(screen.lines[0]!.endsWith('w'), true, 'lines stay trimmed');
    } finally {
      await port.sendKeys(paneId, ['ctrl+u']);
    }
  });

  it('publishes the window index, the pane pid and the agent hooks\' pane option, the current name before the older one', async () => {
    const port = portOver(owned.server);
    const [current, legacy, both] = (await port.snapshot()).panes.filter((pane) => pane.spaceLabel === 'work');
    await owned.server.pane(current!.paneId).options().set('@rk_pane_agent_state', 'active:1700000000');
    await owned.server.pane(legacy!.paneId).options().set('@rk_agent_state', 'idle:1700000001:42');
    await owned.server.pane(both!.paneId).options().set('@rk_agent_state', 'idle:1700000002');
    await owned.server.pane(both!.paneId).options().set('@rk_pane_agent_state', 'waiting:1700000003');
    try {
      const snapshot = await port.snapshot();
      const pane = (id: string) => snapshot.panes.find((candidate) => candidate.paneId === id)!;
      assert.deepEqual([current, legacy, both].map((before) => pane(before!.paneId).hookState), ['active:1700000000', 'idle:1700000001:42', 'waiting:1700000003']);
      assert.equal(snapshot.panes.filter((candidate) => candidate.hookState !== undefined).length, 3);
      const listing = await owned.server.snapshot();
      for (const published of snapshot.panes) assert.equal(published.pid, listing.pane(published.paneId as `%${number}`)!.panePid);
      assert.deepEqual(
        snapshot.tabs.map((tab) => tab.nativeIndex).sort(),
        listing.links.map((link) => link.windowIndex).sort(),
      );
    } finally {
      for (const pane of [current, legacy, both]) {
        for (const option of ['@rk_pane_agent_state', '@rk_agent_state']) await owned.server.pane(pane!.paneId).options().unset(option).catch(() => undefined);
      }
    }
  });

  it('brings a pane out of copy mode before typing, in the same tmux invocation, so the keys reach its program', async () => {
    const port = portOver(owned.server);
    const paneId = paneIn(await port.snapshot(), 'logs');
    const pane = owned.server.pane(paneId);
    await pane.copyMode();
    assert.equal(await pane.inMode(), true);
    const spawned = processDiagnostics().spawned;
    assert.deepEqual(await port.typeText(paneId, 'echo guarded-$((40+2))'), { ok: true, value: undefined });
    assert.equal(processDiagnostics().spawned, spawned + 1, 'leaving the mode and typing are one invocation');
    await pane.copyMode();
    assert.deepEqual(await port.sendKeys(paneId, ['Enter']), { ok: true, value: undefined });
    assert.equal(await pane.inMode(), false);
    await eventually('the shell to run the typed line', async () => (await pane.capture()).toString('utf8').includes('\nguarded-42'));
    await pane.copyMode();
    assert.deepEqual(await port.pasteText(paneId, 'echo pasted-$((40+3))\n'), { ok: true, value: undefined });
    assert.equal(await pane.inMode(), false);
    await eventually('the shell to run the pasted line', async () => (await pane.capture()).toString('utf8').includes('\npasted-43'));
  });

  it('splits a pane beside another with its cwd, environment and program, and closes it for good', async () => {
    const port = portOver(owned.server);
    const snapshot = await port.snapshot();
    const beside = snapshot.panes.find((pane) => pane.tabLabel === 'logs')!;
    const split = await port.splitPane({ besidePaneId: beside.paneId, direction: 'below', cwd: '/tmp', env: { DROVER_SPLIT: 'from-env' }, command: ['sh', '-c', 'echo "$DROVER_SPLIT in $PWD"; exec sleep 600'] });
    assert.ok(split.ok, JSON.stringify(split));
    assert.deepEqual([split.value.tabId, split.value.spaceId, split.value.cwd], [beside.tabId, beside.spaceId, '/tmp']);
    const after = await port.snapshot();
    assert.equal(after.panes.find((pane) => pane.paneId === split.value.paneId)?.tabId, beside.tabId);
    assert.equal(after.tabs.find((tab) => tab.tabId === beside.tabId)?.focused, snapshot.tabs.find((tab) => tab.tabId === beside.tabId)?.focused, 'a split does not take the screen');
    await eventually('the split pane to print its environment and cwd', async () => {
      const read = await port.readScreen(split.value.paneId);
      return read.ok && read.value.lines.includes('from-env in /tmp');
    });
    const [top, below] = (await owned.server.pane(split.value.paneId).display('#{pane_top}')).toString('utf8') === '0' ? [1, 0] : [0, 1];
    assert.ok(below > top, 'the new pane sits below the one it was split off');
    assert.deepEqual(await port.closePane(split.value.paneId), { ok: true, value: undefined });
    const again = await port.closePane(split.value.paneId);
    assert.equal(!again.ok && again.reason, 'gone');
    assert.equal((await port.snapshot()).panes.some((pane) => pane.paneId === split.value.paneId), false);
    const nowhere = await port.splitPane({ besidePaneId: '%9999', direction: 'right' });
    assert.equal(!nowhere.ok && nowhere.reason, 'gone');
    const badCwd = await port.splitPane({ besidePaneId: beside.paneId, direction: 'right', cwd: '/nonexistent/dir' });
    assert.equal(!badCwd.ok && badCwd.reason, 'refused');
  });

  it("publishes each pane's place in its window as tmux reports it, and resizes a pane to a size in cells", async () => {
    const port = portOver(owned.server);
    const beside = (await port.snapshot()).panes.find((pane) => pane.tabLabel === 'logs')!;
    const split = await port.splitPane({ besidePaneId: beside.paneId, direction: 'below' });
    assert.ok(split.ok, JSON.stringify(split));
    try {
      const snapshot = await port.snapshot();
      const listing = await owned.server.snapshot();
      for (const pane of snapshot.panes) {
        const record = listing.pane(pane.paneId as `%${number}`)!;
        assert.deepEqual(pane.geometry, { x: record.paneLeft, y: record.paneTop, width: record.paneWidth, height: record.paneHeight }, pane.paneId);
        const window = record.window();
        assert.deepEqual(snapshot.tabs.find((tab) => tab.tabId === pane.tabId)?.size, { width: window.windowWidth, height: window.windowHeight });
      }
      const rows = (id: string) => async () => (await port.snapshot()).panes.find((pane) => pane.paneId === id)!.geometry!.height;
      const [upper, lower] = [await rows(beside.paneId)(), await rows(split.value.paneId)()];
      assert.deepEqual(await port.resizePane(beside.paneId, { height: 4 }, { timeoutMs: 5000 }), { ok: true, value: undefined });
      assert.equal(await rows(beside.paneId)(), 4);
      assert.equal(await rows(split.value.paneId)(), upper + lower - 4, 'the pane below took the rows');
      const gone = await port.resizePane('%9999', { height: 4 });
      assert.equal(!gone.ok && gone.reason, 'gone');
    } finally {
      await port.closePane(split.value.paneId);
    }
  });

  it('keeps a pane whose program exits, with its last lines and exit status', async () => {
    const port = portOver(owned.server);
    const beside = (await port.snapshot()).panes.find((pane) => pane.tabLabel === 'logs')!;
    // The program lingers a moment after its last write: tmux 3.3a drops the write of a program
    // that exits in the same instant about twice in 300 runs, even on an idle machine.
    const split = await port.splitPane({ besidePaneId: beside.paneId, direction: 'right', command: ['sh', '-c', 'echo last-words; sleep 0.1; exit 3'], keepOnExit: true });
    assert.ok(split.ok, JSON.stringify(split));
    const dead = await eventually('the kept pane to report its program dead', async () => {
      const read = await port.readProcess(split.value.paneId);
      return read.ok && read.value.dead ? read.value : undefined;
    });
    assert.equal(dead.exitStatus, 3);
    // tmux scrolls the screen to write its dead-pane line, so the last words may sit just above it.
    const grid = await port.readGrid(split.value.paneId, { scope: 'recent', lines: 100, styling: 'strip' });
    assert.ok(grid.ok && grid.value.text.includes('last-words'), JSON.stringify(grid));
    assert.equal((await port.snapshot()).panes.find((pane) => pane.paneId === split.value.paneId)?.alive, false);
    assert.equal((await port.closePane(split.value.paneId)).ok, true);
  });

  it('reads the exit status of a pane found dead before tmux has reaped its program', async () => {
    const port = portOver(owned.server);
    const beside = (await port.snapshot()).panes.find((pane) => pane.tabLabel === 'logs')!;
    // Closing its terminal makes tmux mark the pane dead at once; the program exits 3 a moment
    // later, as any program does on a busy machine between its terminal closing and its reaping.
    const program = 'trap "" HUP; exec 0<&- 1>&- 2>&-; sleep 0.1; exit 3';
    const split = await port.splitPane({ besidePaneId: beside.paneId, direction: 'right', command: ['sh', '-c', program], keepOnExit: true });
    assert.ok(split.ok, JSON.stringify(split));
    try {
      const dead = await eventually('the kept pane to report its program dead', async () => {
        const read = await port.readProcess(split.value.paneId);
        return read.ok && read.value.dead ? read.value : undefined;
      });
      assert.equal(dead.exitStatus, 3, 'the first read that finds the pane dead has its status');
    } finally {
      await port.closePane(split.value.paneId);
    }
  });

  it('refuses to split a pane on a tmux that would crash with window-size manual', async () => {
    const port = portOver(owned.server);
    const beside = (await port.snapshot()).panes.find((pane) => pane.tabLabel === 'logs')!;
    await owned.server.options('global-window').set('window-size', 'manual');
    try {
      const outcome = await port.splitPane({ besidePaneId: beside.paneId, direction: 'right' });
      if (versionAtLeast(await owned.server.version(), '3.7')) assert.equal(outcome.ok, true);
      else assert.match(!outcome.ok && outcome.reason === 'refused' ? outcome.detail : JSON.stringify(outcome), /tmux set -g window-size latest/);
      if (outcome.ok) await port.closePane(outcome.value.paneId);
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

describe('the tmux watch over more sessions than it attaches clients to', () => {
  it('announces output in a session no control client follows, from the window activity each resync reads', async () => {
    const server = await startTestServer();
    try {
      const panes: string[] = [];
      for (const name of ['one', 'two', 'three', 'four']) {
        const session = await server.newSession({ name, command: ['cat'] });
        panes.push(tmuxIds.pane((await session.listPanes())[0]!.id));
      }
      const port = portOver(server);
      const unfollowed = panes[3]!;
      const announced: string[] = [];
      let up = false;
      const watch = port.watch({ panes, onUp: () => (up = true), onPaneChange: (id) => announced.push(id) });
      try {
        await eventually('the watch to come up', () => up, 10_000);
        const clients = (await server.run(['list-clients', '-F', '#{client_control_mode}'])).text().trim().split('\n');
        assert.deepEqual(clients, ['1', '1', '1'], 'three control clients: the fourth session has none');
        // A window active in the second a census began may have printed after it: the second the
        // sessions were made may be announced once. Past it, a quiet pane is not announced again.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        const quiet = announced.filter((id) => id === unfollowed).length;
        await new Promise((resolve) => setTimeout(resolve, 2000));
        assert.equal(announced.filter((id) => id === unfollowed).length, quiet, 'nothing printed there, nothing announced');
        await port.typeText(unfollowed, 'printed-in-session-four');
        await port.sendKeys(unfollowed, ['Enter']);
        await eventually('the output in the fourth session to be announced', () => announced.includes(unfollowed), 5000);
      } finally {
        watch.close();
        await port.close();
      }
    } finally {
      await server.close();
    }
  });
});

describe('a stopped tmux server', () => {
  /** The runner's bound for killing and reaping a client that ran out of time, plus scheduling slack. */
  const CLEANUP_MS = 500 + 250;

  it('holds each verb to its one budget, however many tmux commands it needs', async () => {
    await withServer(async (server) => {
      await seed(server);
      const port = portOver(server);
      const paneId = paneIn(await port.snapshot(), 'logs');
      const { pid } = await server.incarnation();
      process.kill(pid, 'SIGSTOP');
      try {
        for (const [verb, call] of [
          ['pasteText', () => port.pasteText(paneId, 'x'.repeat(20_000), { timeoutMs: 1000 })],
          ['typeText through a buffer', () => port.typeText(paneId, 'x'.repeat(20_000), { timeoutMs: 1000 })],
          ['readScreen', () => port.readScreen(paneId, { timeoutMs: 1000 })],
          ['splitPane', () => port.splitPane({ besidePaneId: paneId, direction: 'right' }, { timeoutMs: 1000 })],
          ['resizePane', () => port.resizePane(paneId, { height: 3 }, { timeoutMs: 1000 })],
        ] as const) {
          const started = performance.now();
          const outcome = await call();
          const elapsed = performance.now() - started;
          assert.equal(!outcome.ok && outcome.reason, 'unreachable', `${verb}: ${JSON.stringify(outcome)}`);
          assert.ok(elapsed < 1000 + CLEANUP_MS, `${verb} took ${Math.round(elapsed)} ms on a budget of 1000 ms`);
        }
        const started = performance.now();
        await assert.rejects(port.snapshot({ timeoutMs: 1000 }), (error: unknown) => error instanceof MuxError && error.reason === 'unreachable');
        assert.ok(performance.now() - started < 1000 + CLEANUP_MS, `a snapshot took ${Math.round(performance.now() - started)} ms on a budget of 1000 ms`);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    });
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

/** The shape every call on a port over a replaced server must answer. */
function refusedAsReplaced(outcome: MuxOutcome<unknown>): void {
  assert.deepEqual(outcome.ok ? outcome : { ok: outcome.ok, reason: outcome.reason, replaced: outcome.replaced }, { ok: false, reason: 'unreachable', replaced: true });
}

describe('a tmux server restarted at the same socket path', () => {
  it('voids the port for good: every call is refused as replaced, and the new server is never touched', async () => {
    const tmux = new RestartableServer();
    try {
      await tmux.start(['sleep', '600']);
      const port = createMuxPort(new TmuxAdapter({ endpoint: Endpoint.fromSocketPath(tmux.socketPath) }));
      try {
        const before = await port.snapshot();
        assert.deepEqual(before.panes.map((pane) => [pane.paneId, pane.foregroundCommand]), [['%0', 'sleep']]);
        await tmux.restart(['cat']);
        refusedAsReplaced(await port.typeText('%0', 'typed-into-a-stranger'));
        refusedAsReplaced(await port.typeText('%0', 'typed-into-a-stranger'));
        refusedAsReplaced(await port.readScreen('%0'));
        refusedAsReplaced(await port.sendKeys('%0', ['Enter']));
        refusedAsReplaced(await port.closePane('%0'));
        await assert.rejects(port.snapshot(), (error: unknown) => error instanceof MuxError && error.replaced && error.reason === 'unreachable');
        assert.equal(await port.reachable(), false);
        // The new server, read through a binding of its own: its %0 still runs cat and never saw the text.
        await Server.open(Endpoint.fromSocketPath(tmux.socketPath), {}, async (other) => {
          assert.equal((await other.snapshot()).pane('%0')?.paneCurrentCommand, 'cat');
        });
        assert.doesNotMatch(await tmux.history('%0'), /typed-into-a-stranger/);
      } finally {
        await port.close();
      }
    } finally {
      await tmux.dispose();
    }
  });

  it('answers unreachable while nothing listens, and a replacement once another server does', async () => {
    const tmux = new RestartableServer();
    try {
      await tmux.start(['sleep', '600']);
      const port = createMuxPort(new TmuxAdapter({ endpoint: Endpoint.fromSocketPath(tmux.socketPath) }));
      try {
        await port.snapshot();
        await tmux.stop();
        const down = await port.typeText('%0', 'x');
        assert.deepEqual(down.ok ? down : { reason: down.reason, replaced: down.replaced }, { reason: 'unreachable', replaced: undefined });
        await tmux.start(['cat']);
        refusedAsReplaced(await port.typeText('%0', 'typed-into-a-stranger'));
        refusedAsReplaced(await port.readProcess('%0'));
        assert.doesNotMatch(await tmux.history('%0'), /typed-into-a-stranger/);
      } finally {
        await port.close();
      }
    } finally {
      await tmux.dispose();
    }
  });
});
