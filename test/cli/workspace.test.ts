import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LongLivedChild, shellQuote, type RunResult } from '../../src/process/index.js';
import type { Server, Snapshot } from '../../src/tmux/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { useTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/** Panes run cat: dispatched commands are echoed, never executed. */
const CONFIG = 'set -g default-command "exec /bin/cat"\nset -g exit-empty off\n';
const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));
const TMUXINATOR = fileURLToPath(new URL('../../../test/fixtures/tmuxinator/', import.meta.url));

interface LoadJson {
  socket_path: string;
  session_name: string;
  session_id: string | null;
  success: boolean;
  partial: boolean;
  uncertain: boolean;
  completed_steps: number[];
  created: { symbol: string; kind: string; id: string }[];
  effects: { op: string; outcome: string }[];
  failed_action: string | null;
  failure_class: string | null;
  conflicts: { kind: string; path: string }[];
  compensation: string;
  error?: { code: string; type: string; exit_code: number };
  switched?: { client: string; ok: boolean; error: string | null };
  attach?: string[];
}

function json<T>(result: RunResult): T {
  return JSON.parse(result.text()) as T;
}

/** Session name → window names (in index order) and pane counts, read from the server. */
async function layout(server: Server): Promise<Map<string, string[]>> {
  const snapshot = await server.snapshot();
  const sessions = new Map<string, string[]>();
  for (const session of snapshot.sessions) {
    const links = [...session.links()].sort((a, b) => a.windowIndex - b.windowIndex);
    sessions.set(
      session.sessionName,
      links.map((link) => `${link.window().windowName}:${link.window().panes().size}`),
    );
  }
  return sessions;
}

describe('drover workspace', () => {
  const sandbox = cliSandbox();
  const tmux = useTestServer({ config: CONFIG });
  const files = join(sandbox.dir, 'files');
  mkdirSync(files, { recursive: true });
  const write = (name: string, text: string): string => {
    const path = join(files, name);
    writeFileSync(path, text);
    return path;
  };
  const onServer = (args: readonly string[], options?: Parameters<typeof sandbox.drover>[1]) => sandbox.drover(['-S', tmux.server.endpoint.socketPath, ...args], options);

  const twoWindows = (session: string, extra = ''): string =>
    write(
      `${session}.yaml`,
      `session_name: ${session}\nwindows:\n  - window_name: main\n    layout: even-horizontal\n    panes: [echo left, echo right]\n  - window_name: side\n    panes: [echo side]\n${extra}`,
    );

  it('validates a file inertly, in text and JSON', async () => {
    const text = await sandbox.drover(['workspace', 'validate', join(EXAMPLES, 'agent-fleet.yaml')]);
    assert.equal(text.exitCode, 0, text.stderrText());
    assert.match(text.text(), /valid workspace for session "agent-fleet": 1 window\(s\), 4 pane\(s\)/);

    const doc = await sandbox.drover(['workspace', 'validate', '--json', join(EXAMPLES, 'tiled-fleet.json')]);
    assert.equal(doc.exitCode, 0, doc.stderrText());
    const valid = json<{ valid: boolean; window_count: number; pane_count: number; document: { session_name: string; start_directory: string } }>(doc);
    assert.deepEqual([valid.valid, valid.window_count, valid.pane_count], [true, 2, 5]);
    assert.equal(valid.document.session_name, 'tiled-fleet');
    assert.equal(valid.document.start_directory, EXAMPLES.replace(/\/$/, ''));
  });

  it('rejects an invalid file with exit 2, naming the file and the structural path', async () => {
    const typed = write('typed.yaml', 'session_name: s\nwindows:\n  - panes:\n      - shell_command: echo\n      - shell_command: {cmd: [1]}\n');
    const bad = await sandbox.drover(['workspace', 'validate', typed]);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderrText(), /typed\.yaml: windows\[0\]\.panes\[1\]\.shell_command/);
    assert.equal(bad.text(), '');

    const plugins = write('plugins.yaml', 'session_name: s\nplugins: [my.plugin]\nwindows: [{}]\n');
    const refused = await sandbox.drover(['workspace', 'validate', '--json', plugins]);
    assert.equal(refused.exitCode, 2);
    const error = json<{ error: { code: string; path: string; reason: string; unsupported_feature: string } }>(refused).error;
    assert.deepEqual([error.code, error.path, error.reason, error.unsupported_feature], ['invalid_workspace', 'plugins', 'unsupported', 'plugins']);

    const missing = await sandbox.drover(['workspace', 'validate', join(files, 'missing.yaml')]);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderrText(), /ENOENT/);
    assert.equal((await sandbox.drover(['workspace', 'validate'])).exitCode, 2);
  });

  it('reports every problem of a file in one run, one line each, and all of them in JSON', async () => {
    const path = write('many.yaml', 'session_name: s\nwindows:\n  - focus: maybe\n    panes: [{shell_command: x, colour: red}]\n  - window_index: -1\n');
    const text = await sandbox.drover(['workspace', 'validate', path]);
    assert.equal(text.exitCode, 2);
    const lines = text.stderrText().trimEnd().split('\n');
    assert.equal(lines[0], `drover: error: ${path}: 3 problems`);
    assert.deepEqual(
      lines.slice(1).map((line) => line.trim().split(': ')[1]),
      ['windows[0].panes[0].colour', 'windows[0].focus', 'windows[1].window_index'],
    );
    const doc = await sandbox.drover(['workspace', 'validate', '--json', path]);
    assert.equal(doc.exitCode, 2);
    const { error } = json<{ error: { code: string; file: string; path: string; problems: { path: string; reason: string }[] } }>(doc);
    assert.deepEqual([error.code, error.file, error.path], ['invalid_workspace', path, 'windows[0].panes[0].colour']);
    assert.deepEqual(
      error.problems.map((problem) => `${problem.path} ${problem.reason}`),
      ['windows[0].panes[0].colour unknown_key', 'windows[0].focus type', 'windows[1].window_index value'],
    );
  });

  it('expands only the variables named with --expand-env', async () => {
    const path = write('expand.yaml', 'session_name: s\nstart_directory: ${PROJECT_DIR}\nwindows: [{}]\n');
    const off = await sandbox.drover(['workspace', 'validate', '--json', path], { env: { PROJECT_DIR: '/srv/app' } });
    assert.equal(off.exitCode, 2);
    assert.equal(json<{ error: { unsupported_feature: string } }>(off).error.unsupported_feature, 'environment_expansion');
    const offText = await sandbox.drover(['workspace', 'validate', path], { env: { PROJECT_DIR: '/srv/app' } });
    assert.match(offText.stderrText(), /start_directory: refers to the variable PROJECT_DIR, .*pass --expand-env PROJECT_DIR/);
    const on = await sandbox.drover(['workspace', 'validate', '--json', '--expand-env', 'PROJECT_DIR', path], { env: { PROJECT_DIR: '/srv/app' } });
    assert.equal(on.exitCode, 0, on.stderrText());
    assert.equal(json<{ document: { start_directory: string } }>(on).document.start_directory, '/srv/app');
    const badName = await sandbox.drover(['workspace', 'validate', '--expand-env', 'NOT A NAME', path]);
    assert.equal(badName.exitCode, 2);
    assert.match(badName.stderrText(), /--expand-env/);
  });

  it('plans without tmux, and --live reports a conflict with exit 1', async () => {
    const path = twoWindows('planned');
    const inert = await sandbox.drover(['-L', 'drover-no-such-server', 'workspace', 'plan', path]);
    assert.equal(inert.exitCode, 0, inert.stderrText());
    assert.match(inert.text(), /^Plan for session "planned": 2 window\(s\), 3 pane\(s\)/);
    assert.match(inert.text(), /new-session "planned" window "main"/);

    const steps = await sandbox.drover(['workspace', 'plan', '--json', path]);
    const plan = json<{ live: boolean; steps: { op: string; effect: string }[]; preconditions: { kind: string }[] }>(steps);
    assert.equal(plan.live, false);
    assert.equal(plan.steps[0]?.op, 'new-session');
    assert.ok(plan.steps.some((step) => step.op === 'send-keys' && step.effect === 'dispatch'));
    assert.deepEqual(plan.preconditions, [{ kind: 'session_absent', session_name: 'planned' }]);

    const unreachable = await sandbox.drover(['-L', 'drover-no-such-server', 'workspace', 'plan', '--live', path]);
    assert.equal(unreachable.exitCode, 1);

    const clear = await onServer(['workspace', 'plan', '--live', path]);
    assert.equal(clear.exitCode, 0, clear.stderrText());
    assert.match(clear.text(), /no conflicts/);

    await tmux.server.newSession({ name: 'planned' });
    const conflict = await onServer(['workspace', 'plan', '--live', '--json', path]);
    assert.equal(conflict.exitCode, 1);
    const live = json<{ live: boolean; conflicts: { kind: string; path: string }[] }>(conflict);
    assert.equal(live.live, true);
    assert.deepEqual(live.conflicts.map((c) => [c.kind, c.path]), [['session_exists', 'session_name']]);
    assert.match(conflict.stderrText(), /already exists/);
  });

  it('loads a file onto the named server and reports the ledger as JSON', async () => {
    const result = await onServer(['workspace', 'load', '--json', twoWindows('loaded')]);
    assert.equal(result.exitCode, 0, result.stderrText());
    const load = json<LoadJson>(result);
    assert.equal(load.success, true);
    assert.equal(load.socket_path, tmux.server.endpoint.socketPath);
    assert.deepEqual(load.created.map((ref) => ref.kind), ['session', 'window', 'pane', 'pane', 'window', 'pane']);
    assert.equal(load.session_id, load.created[0]!.id);
    assert.deepEqual(load.effects.filter((effect) => effect.op === 'send-keys').map((effect) => effect.outcome), ['dispatch_only', 'dispatch_only', 'dispatch_only']);
    assert.equal(load.compensation, 'not_requested');
    assert.deepEqual(load.attach, ['tmux', '-S', tmux.server.endpoint.socketPath, 'attach', '-t', 'loaded']);
    assert.deepEqual((await layout(tmux.server)).get('loaded'), ['main:2', 'side:1']);

    const text = await onServer(['workspace', 'load', write('text.json', JSON.stringify({ session_name: 'as.text', windows: [{ window_name: 'only', panes: [null] }] }))]);
    assert.equal(text.exitCode, 0, text.stderrText());
    assert.match(text.text(), /loaded workspace "as_text" as session \$\d+: 1 window\(s\), 1 pane\(s\)/);
    assert.match(text.text(), /attach: tmux -S \S+ attach -t as_text/);
    assert.deepEqual((await layout(tmux.server)).get('as_text'), ['only:1']);
  });

  it('builds what tmuxp builds for freeze-style booleans and an empty window_name', async () => {
    const path = write('freeze.yaml', "session_name: frozen\nwindows:\n  - window_name: ''\n    panes: [a]\n  - window_name: second\n    focus: 'true'\n    panes: [{shell_command: b, focus: yes}, c]\n");
    const loaded = await onServer(['workspace', 'load', path]);
    assert.equal(loaded.exitCode, 0, loaded.stderrText());
    const windows = await tmux.server.command(['list-windows', '-t', '=frozen', '-F', '[#{window_name}] #{automatic-rename} #{window_active} #{pane_index}']);
    // The empty name stays empty (automatic-rename off); the focused window and its first pane are active.
    assert.deepEqual(windows.text().trim().split('\n'), ['[] 0 0 0', '[second] 0 1 0']);
  });

  it('refuses missing start directories before any change, offering --create-dirs, which creates only those', async () => {
    const existing = join(files, 'exists');
    mkdirSync(existing, { recursive: true });
    const missing = join(files, 'made', 'deeper');
    const path = write(
      'dirs.yaml',
      `session_name: dirs\nstart_directory: ${existing}\nwindows:\n  - window_name: a\n  - window_name: b\n    start_directory: ${missing}\n    panes: [{start_directory: also-missing}, null]\n`,
    );
    const refused = await onServer(['workspace', 'load', path]);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderrText(), /dirs\.yaml: 2 problems/);
    assert.match(refused.stderrText(), /windows\[1\]\.start_directory: the start directory does not exist; pass --create-dirs/);
    assert.match(refused.stderrText(), /windows\[1\]\.panes\[0\]\.start_directory: the start directory does not exist/);
    assert.equal((await layout(tmux.server)).has('dirs'), false);
    assert.equal(existsSync(join(files, 'made')), false);

    const planned = await sandbox.drover(['workspace', 'plan', '--create-dirs', path]);
    assert.equal(planned.exitCode, 0, planned.stderrText());
    assert.match(planned.text(), new RegExp(`^Creates the missing directory ${missing} \\(windows\\[1\\]\\.start_directory\\)$`, 'm'));
    assert.match(planned.text(), new RegExp(`^Creates the missing directory ${join(missing, 'also-missing')} `, 'm'));
    assert.ok(!planned.text().includes(`directory ${existing} `));
    assert.equal(existsSync(join(files, 'made')), false, 'plan creates nothing');

    const loaded = await onServer(['workspace', 'load', '--create-dirs', path]);
    assert.equal(loaded.exitCode, 0, loaded.stderrText());
    assert.ok(statSync(join(missing, 'also-missing')).isDirectory());
    assert.deepEqual((await layout(tmux.server)).get('dirs'), ['a:1', 'b:2']);
  });

  it('builds at a default size without a terminal and says so in the plan; side panes get room', async () => {
    const path = write('sized.yaml', 'session_name: sized\nwindows:\n  - window_name: mv\n    layout: main-vertical\n    panes: [a, b, c]\n  - window_name: mh\n    layout: main-horizontal\n    panes: [a, b, c]\n');
    const planned = await sandbox.drover(['workspace', 'plan', path]);
    assert.match(planned.text(), /^Size: 200x50 \(drover's size for a build without a terminal on standard output\)$/m);
    const loaded = await onServer(['workspace', 'load', path]);
    assert.equal(loaded.exitCode, 0, loaded.stderrText());
    const panes = await tmux.server.command(['list-panes', '-s', '-t', '=sized', '-F', '#{window_name} #{window_width}x#{window_height} #{pane_width}x#{pane_height}']);
    const rows = panes.text().trim().split('\n').map((line) => line.split(' '));
    assert.deepEqual([...new Set(rows.map((row) => row[1]))], ['200x50']);
    for (const [window, , pane] of rows) {
      const [width, height] = (pane ?? '').split('x').map(Number);
      assert.ok((width ?? 0) > 20 && (height ?? 0) > 10, `${window} pane ${pane} has room`);
    }
  });

  it('builds at the size of the terminal it runs in, and says so in the plan', async () => {
    const path = write('term.yaml', 'session_name: term\nwindows: [{panes: [a]}]\n');
    const plan = [process.execPath, CLI_PATH, 'workspace', 'plan', path].map(shellQuote).join(' ');
    // The plan runs in a pane of a detached 150x40 session, printing to that terminal.
    await tmux.server.command(['new-session', '-d', '-x', '150', '-y', '40', '-s', 'terminal', `${plan}; exec sleep 60`]);
    const [width, height] = (await tmux.server.command(['display-message', '-p', '-t', '=terminal:', '#{pane_width} #{pane_height}'])).text().trim().split(' ');
    let screen = '';
    for (let tries = 0; !/^Size: /m.test(screen) && tries < 200; tries += 1) {
      await sleep(50);
      screen = (await tmux.server.command(['capture-pane', '-p', '-J', '-t', '=terminal:'])).text();
    }
    assert.match(screen, new RegExp(`^Size: ${width}x${height} \\(the size of drover's terminal\\)$`, 'm'));
    await tmux.server.command(['kill-session', '-t', '=terminal']);
  });

  it("imports tmuxinator's sample project as a workspace that loads, and refuses ERB", async () => {
    const imported = await sandbox.drover(['workspace', 'import', 'tmuxinator', join(TMUXINATOR, 'sample.yml')]);
    assert.equal(imported.exitCode, 0, imported.stderrText());
    assert.match(imported.text(), /^# not converted: socket_name: /m);
    assert.match(imported.stderrText(), /^drover: warning: not converted: pre: /m);
    const path = write('sample.yaml', imported.text());
    const loaded = await onServer(['workspace', 'load', '--create-dirs', path]);
    assert.equal(loaded.exitCode, 0, loaded.stderrText());
    assert.deepEqual((await layout(tmux.server)).get('sample'), [
      'editor:4',
      'shell:1',
      'guard:3',
      'database:1',
      'server:1',
      'logs:1',
      'console:1',
      'capistrano:1',
      'server:1',
    ]);

    const doc = await sandbox.drover(['workspace', 'import', 'tmuxinator', '--json', join(TMUXINATOR, 'sample.yml')]);
    assert.equal(doc.exitCode, 0, doc.stderrText());
    const result = json<{ workspace: { session_name: string; shell_command_before: string[] }; notes: string[] }>(doc);
    assert.deepEqual([result.workspace.session_name, result.workspace.shell_command_before, result.notes.length], ['sample', ['rbenv shell 2.0.0-p247'], 3]);

    const erb = await sandbox.drover(['workspace', 'import', 'tmuxinator', write('erb.yml', 'name: e\nwindows:\n  - a: <%= cmd %>\n')]);
    assert.equal(erb.exitCode, 2);
    assert.match(erb.stderrText(), /erb\.yml: this tmuxinator project uses ERB \(<% … %>, line 3\)/);
    assert.equal(erb.text(), '');
  });

  it('fails before any effect on a conflict (exit 1) and on an unreachable server', async () => {
    const path = twoWindows('taken');
    assert.equal((await onServer(['workspace', 'load', path])).exitCode, 0);
    const before = await layout(tmux.server);
    const again = await onServer(['workspace', 'load', '--json', path]);
    assert.equal(again.exitCode, 1);
    const load = json<LoadJson>(again);
    assert.deepEqual([load.success, load.partial, load.created.length, load.failed_action], [false, false, 0, 'precondition']);
    assert.deepEqual(load.conflicts.map((c) => c.kind), ['session_exists']);
    assert.match(again.stderrText(), /conflicts with the server/);
    assert.deepEqual(await layout(tmux.server), before);

    const none = await sandbox.drover(['-L', 'drover-no-such-server', 'workspace', 'load', path]);
    assert.equal(none.exitCode, 1);
    assert.match(none.stderrText(), /no tmux server/);
  });

  it('plan --live reports exactly what load refuses, and load refuses it before creating anything', async () => {
    const cases = [
      ['session-server', 'options: {escape-time: 5}\nwindows: [{}]', 'options.escape-time: escape-time is a server-wide tmux option'],
      ['window-server', 'windows:\n  - options: {escape-time: 1234}\n  - options_after: {default-terminal: vt100}', 'windows[0].options.escape-time: escape-time is a server-wide tmux option'],
      ['unknown', 'options: {no-such-option: 1}\nwindows: [{}]', 'options.no-such-option: tmux has no option by that name'],
      ['clash', 'windows: [{}, {window_index: 0}]', 'windows[1].window_index: index 0 is already taken by windows[0]'],
    ] as const;
    const server = async (): Promise<unknown> => [await layout(tmux.server), await tmux.server.options('server').list()];
    const before = await server();
    for (const [name, body, message] of cases) {
      const path = write(`${name}.yaml`, `session_name: ${name}\n${body}\n`);
      const planned = await onServer(['workspace', 'plan', '--live', '--json', path]);
      assert.equal(planned.exitCode, 1, `${name}: ${planned.stderrText()}`);
      const loaded = await onServer(['workspace', 'load', '--json', path]);
      assert.equal(loaded.exitCode, 1, `${name}: ${loaded.stderrText()}`);
      const load = json<LoadJson>(loaded);
      assert.deepEqual([load.failed_action, load.created.length, load.error?.code], ['precondition', 0, 'refused'], name);
      assert.deepEqual(json<{ conflicts: unknown[] }>(planned).conflicts, load.conflicts, `${name}: the same conflicts`);
      assert.ok(planned.stderrText().includes(message), `${name}: ${planned.stderrText()}`);
    }
    const text = await onServer(['workspace', 'load', join(files, 'window-server.yaml')]);
    assert.match(text.stderrText(), /^conflict: windows\[1\]\.options_after\.default-terminal: default-terminal is a server-wide tmux option/m);
    assert.deepEqual(await server(), before, 'no session made, no server option changed');
  });

  it('refuses a window_index its own base-index gives an earlier window, in validate, plan and load (exit 2)', async () => {
    const path = write('own-base.yaml', 'session_name: own-base\noptions: {base-index: 1}\nwindows: [{}, {window_index: 1}]\n');
    for (const command of ['validate', 'plan', 'load']) {
      const result = await onServer(['workspace', command, path]);
      assert.equal(result.exitCode, 2, `${command}: ${result.stderrText()}`);
      assert.match(result.stderrText(), /own-base\.yaml: windows\[1\]\.window_index: index 1 is already taken by windows\[0\]/, command);
    }
    assert.equal((await layout(tmux.server)).has('own-base'), false);
  });

  it('exits 3 when a later step fails, and --compensate removes only what the load created', async () => {
    // tmux refuses the window option's value after the session and both windows exist.
    const failing = (name: string): string => twoWindows(name, '    options: {mode-keys: nonsense}\n');
    const left = await onServer(['workspace', 'load', '--json', failing('half-built')]);
    assert.equal(left.exitCode, 3, left.stderrText());
    const partial = json<LoadJson>(left);
    assert.deepEqual([partial.success, partial.partial, partial.uncertain, partial.failed_action], [false, true, false, 'set-option']);
    assert.equal(partial.compensation, 'not_requested');
    assert.deepEqual([partial.error?.exit_code, partial.error?.code], [3, 'tmux_failed'], 'the stable code of the cause');
    assert.ok(partial.created.some((ref) => ref.kind === 'session'));
    assert.deepEqual((await layout(tmux.server)).get('half-built'), ['main:2', 'side:1']);

    await tmux.server.newSession({ name: 'bystander' });
    const before = await layout(tmux.server);
    const undone = await onServer(['workspace', 'load', '--json', '--compensate', failing('compensated')]);
    assert.equal(undone.exitCode, 3, undone.stderrText());
    assert.equal(json<LoadJson>(undone).compensation, 'completed');
    assert.deepEqual(await layout(tmux.server), before);

    const text = await onServer(['workspace', 'load', '--compensate', failing('compensated-text')]);
    assert.equal(text.exitCode, 3);
    assert.match(text.stderrText(), /failed at step \d+ \(set-option, windows\[1\]\.options\.mode-keys\)/);
    assert.match(text.stderrText(), /cause: tmux set-option failed: .*nonsense/);
    assert.match(text.stderrText(), /compensation: completed/);
  });

  it('checks its flags before touching tmux (exit 2)', async () => {
    const path = twoWindows('flags');
    for (const args of [
      ['--attach', '--switch', '/dev/pts/0'],
      ['--attach'],
      ['--switch', ''],
      ['--timeout-ms', 'soon'],
      ['--timeout-ms', '0'],
      ['--bogus'],
    ]) {
      const result = await onServer(['workspace', 'load', ...args, path]);
      assert.equal(result.exitCode, 2, `${args.join(' ')}: ${result.stderrText()}`);
    }
    assert.equal((await layout(tmux.server)).has('flags'), false);
  });

  it('switches a client after the load; a failed switch exits 3 and keeps the session', async () => {
    const failed = await onServer(['workspace', 'load', '--json', '--switch', 'no-such-client', twoWindows('unswitched')]);
    assert.equal(failed.exitCode, 3);
    const load = json<LoadJson>(failed);
    assert.equal(load.success, true);
    assert.deepEqual([load.switched?.client, load.switched?.ok], ['no-such-client', false]);
    assert.match(failed.stderrText(), /the session is kept/);
    assert.ok((await layout(tmux.server)).has('unswitched'));

    // A control-mode client stands in for a person's terminal.
    await tmux.server.newSession({ name: 'desk' });
    const endpoint = tmux.server.endpoint;
    const client = await LongLivedChild.start([endpoint.executable, ...endpoint.args, '-C', 'attach-session', '-t', 'desk'], { env: sandbox.env });
    try {
      const mine = (s: Snapshot) => s.clients.toArray().find((c) => c.clientPid === client.pid);
      const name = mine(await tmux.server.waitForTopology((s) => mine(s) !== undefined, { clients: true, timeoutMs: 15_000 }))!.clientName as string;
      const switched = await onServer(['workspace', 'load', '--switch', name, twoWindows('switched')]);
      assert.equal(switched.exitCode, 0, switched.stderrText());
      assert.match(switched.text(), new RegExp(`switched: ${name}`));
      assert.equal(mine(await tmux.server.snapshot({ clients: true }))?.clientSession, 'switched');
    } finally {
      client.stdin.end();
      await client.stop(1000);
    }
  });

  it('--attach attaches the terminal drover runs in, with its TERM, once the load is done', async () => {
    const load = [process.execPath, CLI_PATH, '-S', tmux.server.endpoint.socketPath, 'workspace', 'load', '--attach', twoWindows('attached')].map(shellQuote).join(' ');
    // A pane of a second server is the person's terminal.
    await withServer(async (desk) => {
      const terminal = await desk.newSession({
        command: ['sh', '-c', `TERM=xterm-256color ${load}; echo "drover exited $?"; exec cat`],
        env: { DROVER_STATE_DIR: sandbox.env.DROVER_STATE_DIR!, DROVER_DB: sandbox.env.DROVER_DB!, HOME: sandbox.env.HOME! },
      });
      const client = await eventually('the terminal to attach to the loaded session', async () =>
        (await tmux.server.listClients()).find((c) => c.clientSession === 'attached' && !c.clientControlMode),
      );
      assert.equal(client.clientTermname, 'xterm-256color');
      await tmux.server.run(['detach-client', '-t', client.clientName]);
      const [pane] = await terminal.listPanes();
      await desk.waitForOutput(pane!, 'drover exited 0', { timeoutMs: 15_000 });
    });
  });

  it('stops at an interrupt with exit 130, compensating when asked', async () => {
    const path = write('slow.yaml', 'session_name: slow\nwindows:\n  - panes:\n      - shell_command: [{cmd: started, sleep_after: 20}]\n');
    const child = await LongLivedChild.start([process.execPath, CLI_PATH, '-S', tmux.server.endpoint.socketPath, 'workspace', 'load', '--json', '--compensate', path], {
      env: sandbox.env,
      cwd: sandbox.dir,
      stdin: 'ignore',
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    try {
      const snapshot = await tmux.server.waitForTopology((s) => s.sessions.toArray().some((session) => session.sessionName === 'slow'), { timeoutMs: 15_000 });
      const pane = snapshot.sessions.toArray().find((session) => session.sessionName === 'slow')!.panes().toArray()[0]!;
      // cat echoes the line once Enter is in: the apply is now in its pause.
      await tmux.server.waitForOutput(tmux.server.pane(pane.paneId as string), /started[\s\S]*started/, { timeoutMs: 15_000 });
    } finally {
      const exit = await child.stop(10_000, 'SIGINT');
      assert.equal(exit.exitCode, 130);
    }
    const load = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LoadJson;
    assert.deepEqual([load.success, load.failure_class, load.compensation], [false, 'AbortedError', 'completed']);
    assert.equal((await layout(tmux.server)).has('slow'), false);
  });
});
