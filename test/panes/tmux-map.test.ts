import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { processDiagnostics } from '../../src/process/index.js';
import { AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION } from '../../src/agents/index.js';
import { NotInTmuxError, mapRowJson, paneMap, panesInScope, renderMapTable, type MapRowJson } from '../../src/panes/index.js';
import type { MuxPort, MuxSnapshot } from '../../src/mux/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { git } from '../support/git.js';
import { useTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { keyOf, portOn } from './live.js';

describe('pane map against real tmux and git', () => {
  const live = useTestServer();
  let root: string;
  let alpha: string;
  let feature: string;
  let beta: string;
  let plain: string;
  const panes: Record<string, Pane> = {};
  const change = '260417-ab12-tail-fix';

  before(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-map-')));
    alpha = join(root, 'alpha');
    feature = join(root, 'alpha-feature');
    beta = join(root, 'beta');
    plain = join(root, 'notes');
    mkdirSync(join(alpha, 'fab', 'changes', change), { recursive: true });
    mkdirSync(beta);
    mkdirSync(plain);
    await git('init', '-q', '-b', 'main', alpha);
    await git('-C', alpha, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'start');
    await git('-C', alpha, 'worktree', 'add', '-q', '-b', 'feature', feature);
    await git('init', '-q', '-b', 'main', beta);
    writeFileSync(
      join(alpha, 'fab', 'changes', change, '.status.yaml'),
      'progress:\n  intake: done\n  apply: active\n  review: pending\nprs:\n  - https://github.com/acme/alpha/pull/31\n',
    );
    symlinkSync(`fab/changes/${change}/.status.yaml`, join(alpha, '.fab-status.yaml'));

    const { server } = live;
    const work = await server.newSession({ name: 'work', windowName: 'alpha', cwd: alpha, command: ['sleep', '600'], receipt: true });
    panes.alpha = work.pane;
    panes.feature = await work.window.split({ direction: 'vertical', cwd: feature, command: ['sleep', '600'] });
    const notes = await work.session.newWindow({ name: 'notes', cwd: plain, command: ['sleep', '600'], receipt: true });
    panes.notes = notes.pane;
    panes.beta = (await server.newSession({ name: 'other', windowName: 'beta', cwd: beta, command: ['sleep', '600'], receipt: true })).pane;

    // Read the clock last: "2m" holds only while less than a minute passes before the map.
    const now = Math.floor(Date.now() / 1000);
    await panes.alpha.options().set(AGENT_STATE_OPTION, `idle:${now - 120}:${process.pid}`);
    await panes.feature.options().set(LEGACY_AGENT_STATE_OPTION, `waiting:${now}`);
    await panes.notes.options().set(AGENT_STATE_OPTION, `active:${now}:999999999`);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it("maps fab, plain-git and non-git panes across two repos with one tmux call and no git call, git's own files answering", async () => {
    const port = portOn(live.server);
    const before = processDiagnostics().spawned;
    const rows = await paneMap(port, { kind: 'all' });
    assert.equal(processDiagnostics().spawned - before, 1, 'list-panes only: the worktrees are read from git’s files, and the notes directory is outside git');
    const byPane = new Map(rows.map((row) => [row.pane, mapRowJson(row)]));
    const windowOf = async (pane: Pane) => (await pane.display('#{window_id}')).toString();

    assert.deepEqual(byPane.get(panes.alpha!.id), {
      session: 'work', window_index: 0, window_id: await windowOf(panes.alpha!), pane_id: panes.alpha!.id, pane_key: await keyOf(port, panes.alpha!.id), tab: 'alpha', worktree: '(main)', repo: alpha,
      change, stage: 'apply', display_state: 'active', agent_state: 'idle', agent_idle_duration: '2m',
      pr_url: 'https://github.com/acme/alpha/pull/31', pr_number: 31, agent: null, agent_state_source: 'hook',
    } satisfies MapRowJson);
    assert.deepEqual(byPane.get(panes.feature!.id), {
      session: 'work', window_index: 0, window_id: await windowOf(panes.feature!), pane_id: panes.feature!.id, pane_key: await keyOf(port, panes.feature!.id), tab: 'alpha', worktree: 'alpha-feature/', repo: alpha,
      change: null, stage: null, display_state: null, agent_state: 'waiting', agent_idle_duration: null, pr_url: null, pr_number: null, agent: null, agent_state_source: 'hook',
    } satisfies MapRowJson);
    assert.deepEqual(byPane.get(panes.notes!.id), {
      session: 'work', window_index: 1, window_id: await windowOf(panes.notes!), pane_id: panes.notes!.id, pane_key: await keyOf(port, panes.notes!.id), tab: 'notes', worktree: 'notes/', repo: null,
      change: null, stage: null, display_state: null, agent_state: null, agent_idle_duration: null, pr_url: null, pr_number: null, agent: null, agent_state_source: null,
    } satisfies MapRowJson, 'a state whose agent pid is gone is unknown');
    assert.deepEqual(byPane.get(panes.beta!.id), {
      session: 'other', window_index: 0, window_id: await windowOf(panes.beta!), pane_id: panes.beta!.id, pane_key: await keyOf(port, panes.beta!.id), tab: 'beta', worktree: '(main)', repo: beta,
      change: null, stage: null, display_state: null, agent_state: null, agent_idle_duration: null, pr_url: null, pr_number: null, agent: null, agent_state_source: null,
    } satisfies MapRowJson);

    const table = renderMapTable(rows, { allSessions: true, mux: 'tmux' });
    assert.match(table, /^Session +Pane +WinIdx +Tab +Worktree +Change +Stage +Agent\n/);
    assert.match(table, new RegExp(`work +${panes.alpha!.id} +0 +alpha +\\(main\\) +${change} +apply +idle \\(2m\\)\\n`));
  });

  it("adds each pane's branch, last line and screen digest with a glance, and nothing without", async () => {
    const port = portOn(live.server);
    const talking = await live.server.newSession({ name: 'talking', cwd: feature, command: ['sh', '-c', "printf 'building\\n\\n  all 12 tests pass  \\n'; exec sleep 600"], receipt: true });
    try {
      const glanced = new Map((await paneMap(port, { kind: 'all' }, { glance: true })).map((row) => [row.pane, mapRowJson(row)]));
      const spoken = await eventually('the printed lines', async () => {
        const row = new Map((await paneMap(port, { kind: 'all' }, { glance: true })).map((each) => [each.pane, mapRowJson(each)])).get(talking.pane.id);
        return row?.last_line === 'all 12 tests pass' && row;
      });
      assert.equal(spoken.branch, 'feature');
      assert.deepEqual(
        [panes.alpha!, panes.notes!, panes.beta!].map((pane) => glanced.get(pane.id)?.branch),
        ['main', null, 'main'],
        'the worktree’s branch, none outside git, and a branch with no commit yet',
      );
      assert.equal(glanced.get(panes.alpha!.id)?.last_line, null, 'a blank screen has no last line');
      assert.match(spoken.screen_digest ?? '', /^[0-9a-f]{16}$/);
      assert.notEqual(spoken.screen_digest, glanced.get(panes.alpha!.id)?.screen_digest, 'another screen, another digest');
      const table = renderMapTable(await paneMap(port, { kind: 'all' }, { glance: true }), { allSessions: true, mux: 'tmux' });
      assert.match(table, /^Session +Pane +WinIdx +Tab +Worktree +Change +Stage +Agent +Branch +Last line\n/);
      assert.match(table, new RegExp(`talking +${talking.pane.id} .* feature +all 12 tests pass\\n`));
      const plainRow = (await paneMap(port, { kind: 'all' })).map(mapRowJson).find((row) => row.pane_id === talking.pane.id)!;
      assert.deepEqual(['branch', 'last_line', 'screen_digest'].filter((field) => field in plainRow), [], 'the map without a glance keeps its fields');
    } finally {
      await talking.session.kill();
    }
  });

  it('filters to one session, and to the caller’s session', async () => {
    const port: MuxPort = portOn(live.server);
    assert.deepEqual((await paneMap(port, { kind: 'session', name: 'other' })).map((row) => row.pane), [panes.beta!.id]);
    assert.deepEqual(await paneMap(port, { kind: 'session', name: 'missing' }), []);
    assert.deepEqual((await paneMap(port, { kind: 'current', callerPane: panes.beta!.id })).map((row) => row.session), ['other']);
    const front = (await port.snapshot()).spaces.find((space) => space.focused)!.label;
    const fallback = await paneMap(port, { kind: 'current', callerPane: '%9999' });
    assert.ok(fallback.length > 0 && fallback.every((row) => row.session === front), 'a caller that is no pane of this server: the session tmux puts in front');
  });

  it('has no current session when none is in front and the caller is no pane of the multiplexer', () => {
    const snapshot: MuxSnapshot = { incarnation: '1', spaces: [{ spaceId: '$0', number: 1, label: 'work', focused: false, activeTabId: null, tabCount: 0, paneCount: 0 }], tabs: [], panes: [] };
    assert.throws(() => panesInScope(snapshot, { kind: 'current' }), NotInTmuxError);
    assert.deepEqual(panesInScope(snapshot, { kind: 'all' }), []);
  });
});

describe('pane map where git must be asked', () => {
  const live = useTestServer();
  let root: string;
  after(() => rmSync(root, { recursive: true, force: true }));

  it('asks git once per worktree (and once per repo for its main worktree), however many cwds share it', async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-map-git-')));
    // A repository whose git directory lives elsewhere: its .git file names no commondir, so
    // drover cannot read the answer from git's files and runs rev-parse, then worktree list.
    const repo = join(root, 'split');
    await git('init', '-q', '-b', 'main', `--separate-git-dir=${join(root, 'split-git')}`, repo);
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    const session = await live.server.newSession({ name: 'split', cwd: repo, command: ['sleep', '600'], receipt: true });
    const inSrc = await session.window.split({ direction: 'vertical', cwd: join(repo, 'src'), command: ['sleep', '600'] });
    const inDeep = await session.window.split({ direction: 'vertical', cwd: join(repo, 'src', 'deep'), command: ['sleep', '600'] });
    const atRoot = await session.window.split({ direction: 'vertical', cwd: repo, command: ['sleep', '600'] });

    const before = processDiagnostics().spawned;
    const rows = await paneMap(portOn(live.server), { kind: 'all' });
    assert.equal(processDiagnostics().spawned - before, 3, 'list-panes, one rev-parse for the four panes of the one worktree, one worktree list for its repo');
    assert.deepEqual(rows.map((row) => row.pane).sort(), [session.pane.id, inSrc.id, inDeep.id, atRoot.id].sort());
    // The repo is whatever git names as the main worktree; what matters is that all four found it.
    const repos = new Set(rows.map((row) => mapRowJson(row).repo));
    assert.equal(repos.size, 1);
    assert.notEqual([...repos][0], null);
  });
});
