import assert from 'node:assert/strict';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMuxPort, nextCensusDelay, parseSessionList, sameZellijRun, ZellijAdapter, type MuxPort } from '../../src/mux/index.js';
import { createFakeZellij, FAKE_ZELLIJ_SESSION, type FakeZellij } from '../fixtures/zellij/harness.js';
import { restartSession, seededSession } from '../fixtures/zellij/state.js';
import { eventually } from '../support/wait.js';

function portOver(fake: FakeZellij, options: { session?: string; timeoutMs?: number } = {}): MuxPort {
  return createMuxPort(new ZellijAdapter({ env: fake.env, timeoutMs: options.timeoutMs ?? 20_000, session: options.session }));
}

describe('the zellij adapter', () => {
  let fake: FakeZellij;
  let port: MuxPort;
  before(() => {
    fake = createFakeZellij();
    port = portOver(fake);
  });
  after(async () => {
    await port.close();
    fake.cleanup();
  });

  it('publishes one space, drops plugin panes and counts what it publishes', async () => {
    const snapshot = await port.snapshot();
    assert.deepEqual(
      snapshot.spaces.map((space) => [space.spaceId, space.label, space.focused, space.activeTabId, space.tabCount, space.paneCount]),
      [['session', FAKE_ZELLIJ_SESSION, true, 'tab_0', 2, 3]],
    );
    assert.deepEqual(
      snapshot.tabs.map((tab) => [tab.tabId, tab.label, tab.number, tab.paneCount, tab.focused]),
      [
        ['tab_0', 'agents', 1, 2, true],
        ['tab_1', 'scratch', 2, 1, false],
      ],
    );
    assert.deepEqual(
      snapshot.panes.map((pane) => [pane.paneId, pane.tabId, pane.focused, pane.cwd, pane.paneLabel, pane.terminalTitle]),
      [
        ['terminal_0', 'tab_0', true, '/home/op/agents', undefined, 'build watcher'],
        ['terminal_1', 'tab_0', false, '', undefined, undefined],
        // Focused within its tab, but that tab is not the one on screen.
        ['terminal_2', 'tab_1', false, '/tmp', undefined, undefined],
      ],
    );
    assert.ok(snapshot.panes.every((pane) => pane.agent === 'shell' && pane.status === 'unknown' && pane.readableLines === 20 + 10_000));
  });

  it('reports no focused pane in a detached session', async () => {
    fake.session((session) => session.tabs.forEach((tab) => (tab.active = false)));
    try {
      const snapshot = await port.snapshot();
      assert.equal(snapshot.spaces[0]!.focused, false);
      assert.equal(snapshot.spaces[0]!.activeTabId, null);
      assert.ok(snapshot.panes.every((pane) => !pane.focused));
    } finally {
      fake.session((session) => (session.tabs[0]!.active = true));
    }
  });

  it('refuses text that will not fit in one argument without starting zellij', async () => {
    const before = fake.read().invocations;
    const outcome = await port.typeText('terminal_1', 'x'.repeat(128 * 1024));
    assert.equal(outcome.ok, false);
    assert.equal(!outcome.ok && outcome.reason, 'refused');
    assert.match(!outcome.ok ? outcome.detail : '', /131072 bytes is over the 131071-byte limit of one argument/);
    assert.equal(fake.read().invocations, before);
    assert.equal((await port.typeText('terminal_1', 'é'.repeat(65_535))).ok, true);
  });

  it('passes text that starts with a dash as text', async () => {
    assert.equal((await port.typeText('terminal_1', '-n hello')).ok, true);
    assert.deepEqual(fake.read().inputs.at(-1), { session: FAKE_ZELLIJ_SESSION, paneId: 'terminal_1', kind: 'text', payload: ['-n hello'] });
  });

  it('answers gone for a pane zellij would silently ignore', async () => {
    for (const outcome of [await port.typeText('terminal_99', 'x'), await port.closePane('terminal_99'), await port.renameTab('tab_99', 'x')]) {
      assert.equal(!outcome.ok && outcome.reason, 'gone');
    }
  });

  it('reads a screen sized by the listing, and a process from what the listing says', async () => {
    const screen = await port.readScreen('terminal_2');
    assert.ok(screen.ok);
    assert.deepEqual([screen.value.width, screen.value.height, screen.value.rows.length, screen.value.cursor], [80, 20, 20, null]);
    assert.deepEqual(screen.value.lines.slice(0, 4), ['$ echo terminal_2', 'terminal_2', '$', '']);
    fake.session((session) => {
      const [agent, finished] = session.panes.filter((pane) => !pane.isPlugin && pane.tabId === 0);
      agent!.command = '/usr/local/bin/claude --model opus';
      finished!.exited = true;
      finished!.exitStatus = 2;
    });
    try {
      assert.deepEqual(await port.readProcess('terminal_0'), { ok: true, value: { paneId: 'terminal_0', pid: null, foreground: 'claude', dead: false, exitStatus: null } });
      assert.deepEqual(await port.readProcess('terminal_1'), { ok: true, value: { paneId: 'terminal_1', pid: null, foreground: '', dead: true, exitStatus: 2 } });
      assert.deepEqual(await port.readProcess('terminal_2'), { ok: true, value: { paneId: 'terminal_2', pid: null, foreground: '', dead: false, exitStatus: null } });
    } finally {
      fake.session((session) => {
        const [agent, finished] = session.panes.filter((pane) => !pane.isPlugin && pane.tabId === 0);
        agent!.command = null;
        finished!.exited = false;
        finished!.exitStatus = null;
      });
    }
    const gone = await port.readScreen('terminal_99');
    assert.equal(!gone.ok && gone.reason, 'gone');
    const split = await port.splitPane({ besidePaneId: 'terminal_0', direction: 'right' });
    assert.equal(!split.ok && split.reason, 'unsupported');
  });

  it('creates a tab without a --cwd for a blank one, and finds its pane', async () => {
    const created = await port.createTab({ spaceId: 'session', label: 'new', cwd: ' ' });
    assert.equal(created.ok, true);
    const value = created.ok ? created.value : undefined;
    assert.equal(value?.tabId, 'tab_2');
    assert.equal(value?.spaceLabel, FAKE_ZELLIJ_SESSION);
    const made = (await port.snapshot()).panes.find((pane) => pane.paneId === value?.paneId);
    assert.equal(made?.tabId, 'tab_2');
    const other = await port.createTab({ spaceId: 'w1', label: 'x' });
    assert.equal(!other.ok && other.reason, 'gone');
  });
});

describe('the zellij session binding', () => {
  it('drives the single running session and refuses to guess between two', async () => {
    const fake = createFakeZellij({ one: seededSession(), two: seededSession() });
    try {
      await assert.rejects(portOver(fake).snapshot(), /2 zellij sessions are running \(one, two\), so there is no single one to drive; name one in DROVER_MUX_ENDPOINT_ZELLIJ/);
      assert.equal((await portOver(fake, { session: 'two' }).snapshot()).spaces[0]!.label, 'two');
    } finally {
      fake.cleanup();
    }
  });

  it('reads all three "no session" spellings as unreachable', async () => {
    const exited = seededSession();
    exited.exited = true;
    const fake = createFakeZellij({ live: seededSession(), old: exited });
    try {
      await assert.rejects(portOver(fake, { session: 'old' }).snapshot(), /the zellij session "old" has exited; attach to it once to bring it back/);
      await assert.rejects(portOver(fake, { session: 'missing' }).snapshot(), /no running zellij session is called "missing"/);
      const port = portOver(fake);
      assert.equal((await port.snapshot()).spaces[0]!.label, 'live');
      fake.update((state) => delete state.sessions.live);
      assert.equal(await port.reachable(), false);
      const outcome = await port.typeText('terminal_0', 'x');
      assert.equal(!outcome.ok && outcome.reason, 'unreachable');
      await assert.rejects(port.snapshot(), /no zellij session is running on this machine/);
    } finally {
      fake.cleanup();
    }
  });

  it('names the verb when a call runs out of budget, and answers unreachable', async () => {
    const fake = createFakeZellij();
    try {
      const port = portOver(fake, { session: FAKE_ZELLIJ_SESSION, timeoutMs: 3_000 });
      fake.update((state) => (state.hang = ['list-panes']));
      const outcome = await port.typeText('terminal_0', 'x');
      assert.equal(!outcome.ok && outcome.reason, 'unreachable');
      assert.match(!outcome.ok ? outcome.detail : '', /zellij did not answer `action list-panes` within 3000 ms and was killed/);
      assert.deepEqual(fake.read().inputs, []);
    } finally {
      fake.cleanup();
    }
  });

  it('refuses every call for good once the session was started again under its name', async () => {
    const fake = createFakeZellij();
    try {
      const port = portOver(fake);
      const first = await port.snapshot();
      assert.equal((await port.typeText('terminal_1', 'before')).ok, true);
      assert.equal(port.sameIncarnation(await port.serverIncarnation(), first.incarnation), true);
      fake.session((session) => {
        session.panes.find((pane) => pane.id === 0 && !pane.isPlugin)!.viewport.push('zero of the old run');
        restartSession(session);
        // The old terminal_1 is gone; terminal_0 and terminal_1 now name other panes.
        session.panes = session.panes.filter((pane) => pane.isPlugin || pane.id !== 0);
        session.panes.filter((pane) => !pane.isPlugin).forEach((pane, index) => (pane.id = index));
      });
      const inputs = fake.read().inputs.length;
      for (const outcome of [await port.typeText('terminal_1', 'after'), await port.sendKeys('terminal_0', ['Enter']), await port.readScreen('terminal_0'), await port.closePane('terminal_1')]) {
        assert.deepEqual(outcome.ok ? outcome : { reason: outcome.reason, replaced: outcome.replaced }, { reason: 'unreachable', replaced: true });
      }
      await assert.rejects(port.snapshot(), /was started again/);
      assert.equal(fake.read().inputs.length, inputs, 'nothing was typed into the new run');
      const fresh = portOver(fake);
      const second = await fresh.snapshot();
      assert.equal(fresh.sameIncarnation(first.incarnation, second.incarnation), false);
      assert.equal(second.panes.length, 2);
    } finally {
      fake.cleanup();
    }
  });

  it('takes a listing read while the session was started again for a replacement, not for the new run’s panes', async () => {
    const fake = createFakeZellij();
    try {
      // A zellij that starts the session again just before it lists the tabs, once: between the two listings of a snapshot.
      const mark = join(fake.dir, 'restart-before-list-tabs');
      const restarter = join(fake.dir, 'restart.mjs');
      const stateModule = new URL('../fixtures/zellij/state.js', import.meta.url).href;
      writeFileSync(restarter, `import { restartSession, updateState } from ${JSON.stringify(stateModule)};\nupdateState(process.env.DROVER_FAKE_ZELLIJ_STATE, (state) => restartSession(state.sessions[${JSON.stringify(FAKE_ZELLIJ_SESSION)}]));\n`);
      const executable = join(fake.dir, 'zellij-restarting');
      writeFileSync(executable, `#!/bin/sh\ncase " $* " in *" list-tabs "*) if [ -e '${mark}' ]; then rm -f '${mark}'; '${process.execPath}' '${restarter}'; fi;; esac\nexec '${fake.executable}' "$@"\n`);
      chmodSync(executable, 0o755);
      const port = createMuxPort(new ZellijAdapter({ env: fake.env, executable, timeoutMs: 20_000 }));
      const first = await port.snapshot();
      writeFileSync(mark, '');
      await assert.rejects(port.snapshot(), /was started again/);
      assert.equal(existsSync(mark), false, 'the session was started again between the listings');
      const fresh = createMuxPort(new ZellijAdapter({ env: fake.env, timeoutMs: 20_000 }));
      assert.equal(fresh.sameIncarnation(first.incarnation, (await fresh.snapshot()).incarnation), false);
    } finally {
      fake.cleanup();
    }
  });

  it('ends a watch when the session is started again with the same panes, whose listing alone looks unchanged', async () => {
    const fake = createFakeZellij();
    try {
      const port = createMuxPort(new ZellijAdapter({ env: fake.env, timeoutMs: 20_000, census: { idleFloorMs: 50, idleCeilingMs: 100, watchedFloorMs: 50, watchedCeilingMs: 100 } }));
      const before = await port.snapshot();
      const down: string[] = [];
      const topology: number[] = [];
      let up!: () => void;
      const listening = new Promise<void>((resolve) => (up = resolve));
      const watch = port.watch({ onUp: () => up(), onDown: (reason) => down.push(reason), onTopologyChange: () => topology.push(Date.now()) });
      try {
        await listening;
        fake.session((session) => restartSession(session));
        const after = fake.read().sessions[FAKE_ZELLIJ_SESSION]!.panes.filter((pane) => !pane.isPlugin).map((pane) => `terminal_${pane.id}`);
        assert.deepEqual(after.sort(), before.panes.map((pane) => pane.paneId).sort(), 'the new run has the same pane ids');
        await eventually('the watch to go down', () => down.length > 0);
        assert.match(down[0]!, /was started again/);
        assert.deepEqual(topology, [], 'the listing did not change');
      } finally {
        watch.close();
      }
      await port.close();
    } finally {
      fake.cleanup();
    }
  });

  it('answers unreachable when there is no zellij to run', async () => {
    const port = createMuxPort(new ZellijAdapter({ executable: '/nonexistent/zellij', session: 'x' }));
    assert.equal(await port.reachable(), false);
    const outcome = await port.typeText('terminal_0', 'x');
    assert.equal(!outcome.ok && outcome.reason, 'unreachable');
    assert.match(!outcome.ok ? outcome.detail : '', /cannot run zellij/);
  });
});

describe('zellij incarnations', () => {
  it("reads a session's age in humantime's words", () => {
    assert.deepEqual(parseSessionList('work [Created 1day 2h 3m 4s ago] \nold [Created 0s ago] (EXITED - attach to resurrect)\nodd [Created soon]\n'), [
      { name: 'work', running: true, ageSeconds: 86_400 + 7_200 + 180 + 4 },
      { name: 'old', running: false, ageSeconds: 0 },
      { name: 'odd', running: true, ageSeconds: undefined },
    ]);
    assert.deepEqual(
      parseSessionList('long [Created 2years 1month ago]\nodd [Created 3 fortnights ago]').map((session) => session.ageSeconds),
      [2 * 31_557_600 + 2_630_016, undefined],
    );
  });

  it('counts two spans of creation seconds as one run when they meet', () => {
    assert.equal(sameZellijRun('1700000000-1700000002', '1700000002-1700000003'), true);
    assert.equal(sameZellijRun('1700000000-1700000002', '1700000003-1700000004'), false);
    assert.equal(sameZellijRun('1700000000-1700000002', 'not-a-span'), false);
  });
});

describe('the zellij census schedule', () => {
  const intervals = { idleFloorMs: 3_000, idleCeilingMs: 12_000, watchedFloorMs: 1_500, watchedCeilingMs: 3_000 };

  it('starts at the floor, doubles while nothing moves and drops back after a change', () => {
    assert.equal(nextCensusDelay(undefined, false, 'idle', intervals), 3_000);
    assert.equal(nextCensusDelay(3_000, false, 'idle', intervals), 6_000);
    assert.equal(nextCensusDelay(6_000, false, 'idle', intervals), 12_000);
    assert.equal(nextCensusDelay(12_000, false, 'idle', intervals), 12_000);
    assert.equal(nextCensusDelay(12_000, true, 'idle', intervals), 3_000);
  });

  it('tightens while someone is watching, within the watched bounds', () => {
    assert.equal(nextCensusDelay(12_000, false, 'watched', intervals), 3_000);
    assert.equal(nextCensusDelay(1_500, false, 'watched', intervals), 3_000);
    assert.equal(nextCensusDelay(3_000, true, 'watched', intervals), 1_500);
    assert.equal(nextCensusDelay(undefined, false, 'watched', intervals), 1_500);
  });
});
