import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildMapRow, mapRowJson, renderMapTable, type FabState, type PaneListing } from '../../src/panes/index.js';

const now = 1_800_000_000;
const context = { nowSeconds: now, pidAlive: (pid: number) => pid !== 999 };

function listing(overrides: Partial<PaneListing>): PaneListing {
  return {
    session: 'work',
    windowIndex: 1,
    windowId: '@1',
    windowName: 'alpha',
    paneId: '%1',
    paneKey: `local::tmux::1-1::${overrides.paneId ?? '%1'}`,
    cwd: '/src/alpha',
    pane: { status: 'unknown', alive: true, pid: 4242, agent: 'shell' },
    ...overrides,
  };
}

/** A listing whose hooks recorded `hookState`. */
function hooked(hookState: string, overrides: Partial<PaneListing> = {}): PaneListing {
  const base = listing(overrides);
  return { ...base, pane: { ...base.pane, hookState } };
}

const fab: FabState = { change: '260417-ab12-tail-fix', stage: 'apply', displayState: 'active', prUrl: 'https://github.com/a/b/pull/12', prNumber: 12 };
const noChange: FabState = { change: null, stage: null, displayState: null, prUrl: null, prNumber: null };

const rows = [
  buildMapRow(hooked(`idle:${now - 120}`), { worktree: '/src/alpha', repo: '/src/alpha' }, fab, context),
  buildMapRow(
    hooked('waiting:5', { paneId: '%2', windowIndex: 2, windowId: '@2', windowName: '» feature', cwd: '/src/trees/feat/docs' }),
    { worktree: '/src/trees/feat', repo: '/src/alpha' },
    noChange,
    context,
  ),
  buildMapRow(
    hooked(`active:${now}:999`, { session: 'scratch', paneId: '%10', windowIndex: 0, windowId: '', windowName: 'notes', cwd: '/home/me/notes' }),
    { worktree: null, repo: null },
    undefined,
    context,
  ),
];

describe('map rows', () => {
  it('emit the JSON fields in the contract order, with nulls for what is unknown', () => {
    assert.deepEqual(Object.keys(mapRowJson(rows[0]!)), [
      'session', 'window_index', 'window_id', 'pane_id', 'pane_key', 'tab', 'worktree', 'repo', 'change', 'stage', 'display_state',
      'agent_state', 'agent_idle_duration', 'pr_url', 'pr_number', 'agent', 'agent_state_source',
    ]);
    assert.deepEqual(rows.map(mapRowJson), [
      {
        session: 'work', window_index: 1, window_id: '@1', pane_id: '%1', pane_key: 'local::tmux::1-1::%1', tab: 'alpha', worktree: '(main)', repo: '/src/alpha',
        change: '260417-ab12-tail-fix', stage: 'apply', display_state: 'active', agent_state: 'idle', agent_idle_duration: '2m',
        pr_url: 'https://github.com/a/b/pull/12', pr_number: 12, agent: null, agent_state_source: 'hook',
      },
      {
        session: 'work', window_index: 2, window_id: '@2', pane_id: '%2', pane_key: 'local::tmux::1-1::%2', tab: '» feature', worktree: 'trees/feat/', repo: '/src/alpha',
        change: null, stage: null, display_state: null, agent_state: 'waiting', agent_idle_duration: null, pr_url: null, pr_number: null,
        agent: null, agent_state_source: 'hook',
      },
      {
        session: 'scratch', window_index: 0, window_id: null, pane_id: '%10', pane_key: 'local::tmux::1-1::%10', tab: 'notes', worktree: 'notes/', repo: null,
        change: null, stage: null, display_state: null, agent_state: null, agent_idle_duration: null, pr_url: null, pr_number: null,
        agent: null, agent_state_source: null,
      },
    ]);
  });

  it('render the table with a Session column only for all sessions', () => {
    assert.equal(
      renderMapTable(rows, { allSessions: false, mux: 'tmux' }),
      [
        'Pane  WinIdx  Tab        Worktree     Change                Stage  Agent',
        '%1    1       alpha      (main)       260417-ab12-tail-fix  apply  idle (2m)',
        '%2    2       » feature  trees/feat/  (no change)           —      waiting',
        '%10   0       notes      notes/       —                     —      —',
        '',
      ].join('\n'),
    );
    const named = [{ ...rows[0]!, agentName: 'claude' }, { ...rows[1]!, agentName: 'codex', agentStateSource: 'screen' as const }, { ...rows[2]!, agentName: 'gemini' }];
    assert.deepEqual(
      renderMapTable(named, { allSessions: false, mux: 'tmux' }).split('\n').map((line) => line.split(/ {2,}/).at(-1)),
      ['Agent', 'claude idle (2m)', 'codex waiting (screen)', 'gemini', ''],
      'the agent is named from its process, and a state read off the screen says so',
    );
    const all = renderMapTable(rows, { allSessions: true, mux: 'tmux' }).split('\n');
    assert.equal(all[0], 'Session  Pane  WinIdx  Tab        Worktree     Change                Stage  Agent');
    assert.equal(all[3], 'scratch  %10   0       notes      notes/       —                     —      —');
  });

  it('take the state the multiplexer reports when no hook recorded one, and say where it came from', () => {
    const reported = (status: 'working' | 'blocked' | 'idle' | 'done' | 'unknown', hookState?: string) => {
      const base = listing({});
      return mapRowJson(buildMapRow({ ...base, pane: { ...base.pane, status, ...(hookState === undefined ? {} : { hookState }) } }, { worktree: null, repo: null }, undefined, context));
    };
    assert.deepEqual([reported('working').agent_state, reported('working').agent_state_source], ['active', 'mux']);
    assert.deepEqual([reported('blocked').agent_state, reported('done').agent_state, reported('idle').agent_state], ['waiting', 'idle', 'idle']);
    assert.deepEqual([reported('unknown').agent_state, reported('unknown').agent_state_source], [null, null]);
    assert.deepEqual([reported('working', `waiting:${now}`).agent_state, reported('working', `waiting:${now}`).agent_state_source], ['waiting', 'hook'], 'hooks win');
  });

  it('say so when there are no panes', () => {
    assert.equal(renderMapTable([], { allSessions: true, mux: 'tmux' }), 'No tmux panes found.\n');
    assert.equal(renderMapTable([], { allSessions: true, mux: 'herdr' }), 'No herdr panes found.\n');
  });
});
