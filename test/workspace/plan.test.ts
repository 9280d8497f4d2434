import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inspect } from 'node:util';
import { ArgumentError } from '../../src/process/index.js';
import { planWorkspace, tmuxSessionName, type PlanStep, type SymbolicId, type WorkspacePlan } from '../../src/workspace/index.js';
import { BASE, parseJson, parseYaml } from './helpers.js';

const SECRET = 'sk-live private token';

const fleet = parseYaml(`
session_name: agents.dev
start_directory: ./repo
environment: {MODE: dev, SHARED: session}
options: {default-shell: /bin/sh, base-index: 1}
global_options: {escape-time: 0}
windows:
  - window_name: director
    layout: main-vertical
    environment: {SHARED: window, ROLE: director}
    options: {main-pane-width: 100}
    options_after: {synchronize-panes: on}
    panes:
      - shell_command: [{cmd: claude, sleep_before: 1, sleep_after: 0.5}]
        environment: {API_KEY: "${SECRET}"}
      - {shell_command: codex, enter: false}
      - {shell_command: "", suppress_history: false}
  - window_name: review
    window_index: 7
    focus: true
    panes:
      - gemini
      - {shell_command: opencode, focus: true, start_directory: /tmp}
`);

function opsOf(plan: WorkspacePlan): string[] {
  return plan.steps.map((step) => step.op);
}

function stepsWith<Op extends PlanStep['op']>(plan: WorkspacePlan, op: Op): Extract<PlanStep, { op: Op }>[] {
  return plan.steps.filter((step): step is Extract<PlanStep, { op: Op }> => step.op === op);
}

describe('planWorkspace', () => {
  const plan = planWorkspace(fleet);

  it('orders operations as tmuxp builds: structure, then dispatch, options_after and focus', () => {
    assert.deepEqual(opsOf(plan), [
      'new-session',
      'set-environment',
      'set-environment',
      'set-environment',
      'set-option',
      'set-option',
      'set-option',
      'replace-pane',
      'move-window',
      'set-option',
      'split-window',
      'select-layout',
      'split-window',
      'select-layout',
      'new-window',
      'split-window',
      'sleep',
      'send-keys',
      'sleep',
      'send-keys',
      'send-keys',
      'send-keys',
      'send-keys',
      'set-option',
      'select-pane',
      'select-window',
    ]);
    assert.deepEqual(
      plan.steps.map((step) => step.index),
      plan.steps.map((_, i) => i + 1),
    );
  });

  it('creates the session with the first window and pane, then restores the declared session environment', () => {
    const [session] = stepsWith(plan, 'new-session');
    assert.deepEqual(session?.args, {
      name: 'agents_dev',
      windowName: 'director',
      cwd: `${BASE}/repo`,
      env: { MODE: 'dev', SHARED: 'window', ROLE: 'director', API_KEY: SECRET },
      width: null,
      height: null,
    });
    assert.deepEqual(session?.produces, ['session', 'window:0', 'pane:0.0']);
    assert.deepEqual(
      stepsWith(plan, 'set-environment').map((step) => [step.args.name, step.args.value]),
      [
        ['SHARED', 'session'],
        ['ROLE', null],
        ['API_KEY', null],
      ],
    );
  });

  it('replaces the first pane under declared shell options and moves the first window to its index', () => {
    const [replace] = stepsWith(plan, 'replace-pane');
    assert.deepEqual(replace?.args, {
      pane: 'pane:0.0',
      cwd: `${BASE}/repo`,
      env: { SHARED: 'window', ROLE: 'director', API_KEY: SECRET },
    });
    assert.deepEqual([replace?.produces, replace?.consumes], [[], ['pane:0.0']]);
    assert.deepEqual(stepsWith(plan, 'move-window')[0]?.args, { window: 'window:0', index: 1 });
    const plain = planWorkspace(parseJson({ session_name: 's', windows: [{}] }));
    assert.deepEqual(opsOf(plain), ['new-session']);
  });

  it('replaces the first pane for a default-command or default-shell, session or global', () => {
    const replaced = (options: Record<string, unknown>) => stepsWith(planWorkspace(parseJson({ session_name: 's', ...options, windows: [{}] })), 'replace-pane').length;
    assert.equal(replaced({ global_options: { 'default-command': 'exec fish' } }), 1);
    assert.equal(replaced({ options: { 'default-command': 'a' }, global_options: { 'default-command': 'b' } }), 1);
    assert.equal(replaced({ options: { 'default-shell': '/bin/sh' } }), 1);
    assert.equal(replaced({ options: { 'status-position': 'top' } }), 0);
  });

  it('sets session and global options before creating more windows or panes', () => {
    const options = stepsWith(plan, 'set-option').map((step) => [step.args.scope, step.args.target, step.args.name, step.args.value]);
    assert.deepEqual(options, [
      ['session', 'session', 'default-shell', '/bin/sh'],
      ['session', 'session', 'base-index', '1'],
      ['global', null, 'escape-time', '0'],
      ['window', 'window:0', 'main-pane-width', '100'],
      ['window', 'window:0', 'synchronize-panes', 'on'],
    ]);
    const firstCreation = plan.steps.findIndex((step) => step.op === 'split-window' || step.op === 'new-window');
    const lastSessionOption = plan.steps.findLastIndex((step) => step.op === 'set-option' && step.args.scope !== 'window');
    assert.ok(lastSessionOption < firstCreation);
  });

  it('splits each pane from the previous one, making room with tiled and applying the layout last', () => {
    assert.deepEqual(
      stepsWith(plan, 'split-window').map((step) => [step.args.target, step.produces, step.args.cwd, step.args.env]),
      [
        ['pane:0.0', ['pane:0.1'], `${BASE}/repo`, { SHARED: 'window', ROLE: 'director' }],
        ['pane:0.1', ['pane:0.2'], `${BASE}/repo`, { SHARED: 'window', ROLE: 'director' }],
        ['pane:1.0', ['pane:1.1'], '/tmp', {}],
      ],
    );
    assert.deepEqual(
      stepsWith(plan, 'select-layout').map((step) => step.args),
      [
        { window: 'window:0', layout: 'tiled' },
        { window: 'window:0', layout: 'main-vertical' },
      ],
    );
    const [review] = stepsWith(plan, 'new-window');
    assert.deepEqual(review?.args, { session: 'session', name: 'review', index: 7, cwd: `${BASE}/repo`, env: {} });
    assert.deepEqual(review?.produces, ['window:1', 'pane:1.0']);
  });

  it('applies a layout once to a single-pane window', () => {
    const single = planWorkspace(parseJson({ session_name: 's', windows: [{ layout: 'tiled' }] }));
    assert.deepEqual(opsOf(single), ['new-session', 'select-layout']);
  });

  it('dispatches commands as literal text with Enter, history suppression and sleeps', () => {
    const dispatch = plan.steps.filter((step) => step.effect === 'dispatch').map((step) => [step.op, step.args]);
    assert.deepEqual(dispatch, [
      ['sleep', { pane: 'pane:0.0', ms: 1000 }],
      ['send-keys', { pane: 'pane:0.0', text: ' claude', enter: true }],
      ['sleep', { pane: 'pane:0.0', ms: 500 }],
      ['send-keys', { pane: 'pane:0.1', text: ' codex', enter: false }],
      ['send-keys', { pane: 'pane:0.2', text: '', enter: true }],
      ['send-keys', { pane: 'pane:1.0', text: ' gemini', enter: true }],
      ['send-keys', { pane: 'pane:1.1', text: ' opencode', enter: true }],
    ]);
    const nothing = planWorkspace(parseJson({ session_name: 's', windows: [{ panes: [{ shell_command: '', enter: false }] }] }));
    assert.deepEqual(opsOf(nothing), ['new-session']);
  });

  it('creates everything before the first dispatch and focuses last, window after panes', () => {
    const lastCreate = plan.steps.findLastIndex((step) => step.effect === 'create');
    const firstDispatch = plan.steps.findIndex((step) => step.effect === 'dispatch');
    assert.ok(lastCreate < firstDispatch);
    assert.deepEqual(
      plan.steps.slice(-2).map((step) => [step.op, step.args]),
      [
        ['select-pane', { pane: 'pane:1.1' }],
        ['select-window', { window: 'window:1' }],
      ],
    );
  });

  it('consumes only ids produced by earlier steps, and produces each id once', () => {
    const bound = new Set<SymbolicId>();
    for (const step of plan.steps) {
      for (const id of step.consumes) assert.ok(bound.has(id), `step ${step.index} consumes ${id} before it exists`);
      for (const id of step.produces) {
        assert.ok(!bound.has(id), `${id} produced twice`);
        bound.add(id);
      }
    }
    assert.equal(bound.size, 1 + fleet.windows.length + plan.paneCount);
  });

  it('names the source of every step', () => {
    assert.deepEqual(
      plan.steps.map((step) => step.source),
      [
        'session_name',
        'windows[0].panes[0].environment',
        'windows[0].panes[0].environment',
        'windows[0].panes[0].environment',
        'options.default-shell',
        'options.base-index',
        'global_options.escape-time',
        'options.default-shell',
        'options.base-index',
        'windows[0].options.main-pane-width',
        'windows[0].panes[1]',
        'windows[0].layout',
        'windows[0].panes[2]',
        'windows[0].layout',
        'windows[1]',
        'windows[1].panes[1]',
        'windows[0].panes[0].shell_command[0]',
        'windows[0].panes[0].shell_command[0]',
        'windows[0].panes[0].shell_command[0]',
        'windows[0].panes[1].shell_command[0]',
        'windows[0].panes[2].shell_command[0]',
        'windows[1].panes[0].shell_command[0]',
        'windows[1].panes[1].shell_command[0]',
        'windows[0].options_after.synchronize-panes',
        'windows[1].panes[1].focus',
        'windows[1].focus',
      ],
    );
  });

  it('is immutable', () => {
    assert.ok(Object.isFrozen(plan));
    assert.ok(Object.isFrozen(plan.steps));
    assert.ok(Object.isFrozen(plan.steps[0]?.args));
    assert.throws(() => {
      (plan.steps as PlanStep[]).pop();
    }, TypeError);
  });

  it('exports JSON with snake_case keys and every argument', () => {
    const json = JSON.parse(JSON.stringify(plan)) as { steps: { op: string; args: Record<string, unknown> }[] };
    assert.deepEqual(Object.keys(plan.toJSON()), ['session_name', 'window_count', 'pane_count', 'preconditions', 'conflicts', 'size', 'creates_directories', 'steps']);
    const first = json.steps[0];
    assert.equal(first?.op, 'new-session');
    assert.deepEqual(Object.keys(first?.args ?? {}), ['name', 'window_name', 'cwd', 'env', 'width', 'height']);
    assert.equal((first?.args.env as Record<string, string>).API_KEY, SECRET);
  });

  it('renders a numbered list that names environment variables but not their values', () => {
    const text = plan.toText();
    const lines = text.split('\n');
    assert.match(lines[0] ?? '', /^Plan for session "agents_dev": 2 window\(s\), 5 pane\(s\), 26 steps$/);
    assert.match(text, /^ 1\. \[create\] +new-session "agents_dev" window "director" in \/srv\/project\/repo env MODE,SHARED,ROLE,API_KEY -> session, window:0, pane:0\.0$/m);
    assert.match(text, /^18\. \[dispatch\] +send-keys pane:0\.0 " claude" \+ Enter$/m);
    assert.ok(!text.includes('sk-live'));
  });

  it('summarizes itself without names, commands or paths when inspected', () => {
    assert.equal(String(plan), 'WorkspacePlan(2 windows, 5 panes, 26 steps, 0 conflicts)');
    assert.equal(inspect(plan), String(plan));
  });

  it('passes a requested session size and says which size and why', () => {
    const sized = planWorkspace(fleet, { size: { width: 200, height: 50, reason: 'no terminal' } });
    assert.deepEqual([sized.steps[0]?.args], [{ ...stepsWith(plan, 'new-session')[0]?.args, width: 200, height: 50 }]);
    assert.match(sized.toText(), /^Size: 200x50 \(no terminal\)$/m);
    assert.deepEqual(sized.toJSON().size, { width: 200, height: 50, reason: 'no terminal' });
    assert.match(plan.toText(), /^Size: tmux's default-size$/m);
    assert.throws(() => planWorkspace(fleet, { size: { width: 0, height: 10, reason: 'x' } }), ArgumentError);
  });

  it('lists the missing directories it creates first', () => {
    const creating = planWorkspace(fleet, { createDirectories: [{ path: '/srv/new', source: 'windows[1].start_directory' }] });
    assert.match(creating.toText(), /^Creates the missing directory \/srv\/new \(windows\[1\]\.start_directory\)$/m);
    assert.deepEqual(creating.toJSON().creates_directories, [{ path: '/srv/new', source: 'windows[1].start_directory' }]);
    assert.deepEqual(plan.directoriesToCreate, []);
  });
});

describe('planWorkspace with a snapshot', () => {
  it('always requires the session to be absent', () => {
    assert.deepEqual(planWorkspace(fleet).preconditions, [{ kind: 'session_absent', sessionName: 'agents_dev' }]);
  });

  it('reports a taken session name (as tmux spells it) as a conflict', () => {
    const plan = planWorkspace(fleet, { snapshot: { sessionNames: ['other', 'agents_dev'] } });
    assert.deepEqual(plan.conflicts.map((c) => [c.kind, c.path]), [['session_exists', 'session_name']]);
    assert.match(plan.toText(), /Conflicts/);
    assert.deepEqual(planWorkspace(fleet, { snapshot: { sessionNames: ['agents.dev'] } }).conflicts, []);
  });

  it('finds window indexes that would collide once the base index is known', () => {
    const doc = parseJson({ session_name: 's', windows: [{}, {}, { window_index: 1 }, { window_index: 5 }, {}] });
    assert.deepEqual(planWorkspace(doc).conflicts, []);
    assert.deepEqual(planWorkspace(doc, { snapshot: { sessionNames: [] } }).conflicts, []);
    const withBase = planWorkspace(doc, { snapshot: { sessionNames: [], baseIndex: 0 } });
    assert.deepEqual(withBase.conflicts.map((c) => [c.kind, c.path]), [['window_index_taken', 'windows[2].window_index']]);
    assert.deepEqual(planWorkspace(doc, { snapshot: { sessionNames: [], baseIndex: 2 } }).conflicts, []);
  });

  it('takes the base-index the session last gets, at any scope, over the server default', () => {
    const doc = parseJson({ session_name: 's', global_options: { 'base-index': 1 }, windows: [{}, { window_index: 0 }, {}, { window_index: 1 }] });
    // The first window is made before the session has its own base-index, at the server's 0.
    const conflicts = planWorkspace(doc, { snapshot: { sessionNames: [], baseIndex: 0 } }).conflicts;
    assert.deepEqual(conflicts.map((c) => [c.kind, c.path, c.message]), [
      ['window_index_taken', 'windows[1].window_index', 'index 0 is already taken by windows[0] when the windows are created in order'],
      ['window_index_taken', 'windows[3].window_index', 'index 1 is already taken by windows[2] when the windows are created in order'],
    ]);
    const windowScoped = parseJson({ session_name: 's', windows: [{ options: { 'base-index': 3 } }, {}, { window_index: 3 }] });
    assert.deepEqual(planWorkspace(windowScoped, { snapshot: { sessionNames: [], baseIndex: 0 } }).conflicts.map((c) => c.path), ['windows[2].window_index']);
  });

  it('reports server-wide and unknown options wherever the file sets them, from the tables the server gave', () => {
    const doc = parseJson({
      session_name: 's',
      options: { 'escape-time': 5, 'status': 'off' },
      global_options: { 'no-such-option': 1, '@mine': 'x' },
      windows: [{ options: { 'default-terminal': 'vt100', 'mode-keys': 'vi' } }, { options_after: { 'escape-time': 1234 } }],
    });
    const optionTables = new Map([
      ['escape-time', 'server'],
      ['status', 'session'],
      ['no-such-option', null],
      ['default-terminal', 'server'],
      ['mode-keys', 'window'],
    ] as const);
    const plan = planWorkspace(doc, { snapshot: { sessionNames: [], optionTables } });
    assert.deepEqual(plan.conflicts.map((c) => [c.kind, c.path]), [
      ['server_option', 'options.escape-time'],
      ['unknown_option', 'global_options.no-such-option'],
      ['server_option', 'windows[0].options.default-terminal'],
      ['server_option', 'windows[1].options_after.escape-time'],
    ]);
    assert.match(plan.toText(), /^ {2}- global_options\.no-such-option: tmux has no option by that name$/m);
    // Without the server's tables nothing is known about the names.
    assert.deepEqual(planWorkspace(doc, { snapshot: { sessionNames: [] } }).conflicts, []);
  });
});

describe('tmuxSessionName', () => {
  it('replaces the characters tmux replaces', () => {
    assert.equal(tmuxSessionName('a.b:c d'), 'a_b_c d');
  });
});
