import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_STATE_OPTION } from '../../src/agents/index.js';
import { PANE_TARGET_FORMS, paneProcess } from '../../src/panes/index.js';
import type { RunResult } from '../../src/process/index.js';
import type { Pane, Server } from '../../src/tmux/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { git } from '../support/git.js';
import { RestartableServer, startTestServer, useTestServer } from '../support/tmux.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { FAKE_AGENT, eventually, keyOf, portOn, screenOf, screenShows, startFakeAgent } from '../panes/live.js';

/** What a [y/n] question offers. */
const YES_NO = [
  { label: 'y', keys: ['y'] },
  { label: 'n', keys: ['n'] },
];

const MAP_FIELDS = [
  'session', 'window_index', 'window_id', 'pane_id', 'pane_key', 'tab', 'worktree', 'repo', 'change', 'stage',
  'display_state', 'agent_state', 'agent_idle_duration', 'pr_url', 'pr_number', 'agent', 'agent_state_source',
];

/** The environment of a process running inside `pane` of `server`. */
function inside(server: Server, pane: Pane): NodeJS.ProcessEnv {
  return { TMUX: `${server.endpoint.socketPath},1,0`, TMUX_PANE: pane.id };
}

/** A table's rows as cells (columns are separated by at least two spaces). */
function cells(table: string): string[][] {
  return table.trimEnd().split('\n').map((line) => line.split(/ {2,}/));
}

/** Asserts a failure: its exit code, its exact stderr, and nothing on stdout. */
function assertFailure(result: RunResult, code: number, stderr: string | RegExp): void {
  assert.equal(result.exitCode, code, `exit code; stderr: ${result.stderrText()}`);
  if (typeof stderr === 'string') assert.equal(result.stderrText(), stderr);
  else assert.match(result.stderrText(), stderr);
  assert.equal(result.text(), '');
}

function ok(result: RunResult): string {
  assert.equal(result.exitCode, 0, result.stderrText());
  return result.text();
}

describe('drover pane map, capture, process, window-name, open, kill', () => {
  const sandbox = cliSandbox();
  const live = useTestServer();
  const change = '260417-ab12-tail-fix';
  let socket: string;
  let root: string;
  let repo: string;
  let notes: string;
  let alpha: Pane;
  let printer: Pane;
  let beta: Pane;
  let dead: Server;

  before(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-cli-pane-')));
    repo = join(root, 'alpha');
    notes = join(root, 'notes');
    mkdirSync(join(repo, 'fab', 'changes', change), { recursive: true });
    mkdirSync(notes);
    await git('init', '-q', repo);
    writeFileSync(join(repo, 'fab', 'changes', change, '.status.yaml'), 'progress:\n  intake: done\n  apply: active\nprs:\n  - https://github.com/acme/alpha/pull/7\n');
    symlinkSync(`fab/changes/${change}/.status.yaml`, join(repo, '.fab-status.yaml'));

    const { server } = live;
    socket = server.endpoint.socketPath;
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\\n');
    const work = await server.newSession({ name: 'work', windowName: 'alpha', cwd: repo, command: ['sleep', '600'], receipt: true });
    alpha = work.pane;
    printer = (await work.session.newWindow({ name: 'printer', cwd: notes, command: ['sh', '-c', `printf '${lines}\\n  last\\n'; exec sleep 600`], receipt: true })).pane;
    beta = (await server.newSession({ name: 'other', windowName: 'beta', cwd: notes, command: ['sleep', '600'], receipt: true })).pane;
    await alpha.options().set(AGENT_STATE_OPTION, `idle:${Math.floor(Date.now() / 1000) - 7200}`);
    await screenShows(printer, 'last');

    dead = await startTestServer();
    await dead.newSession({ command: ['sleep', '600'] });
    await dead.kill();
  });
  after(async () => {
    await dead.close();
    rmSync(root, { recursive: true, force: true });
  });

  describe('map', () => {
    it('prints the table of every session, with worktree, change, stage and agent', async () => {
      const table = ok(await sandbox.drover(['pane', 'map', '--all-sessions', '-S', socket]));
      assert.deepEqual(cells(table), [
        ['Session', 'Pane', 'WinIdx', 'Tab', 'Worktree', 'Change', 'Stage', 'Agent'],
        ['other', beta.id, '0', 'beta', 'notes/', '—', '—', '—'],
        ['work', alpha.id, '0', 'alpha', '(main)', change, 'apply', 'idle (2h)'],
        ['work', printer.id, '1', 'printer', 'notes/', '—', '—', '—'],
      ]);
    });

    it('prints the JSON rows of one session with every field, in the documented order', async () => {
      const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--json', '--session', 'work', '-S', socket]))) as Record<string, unknown>[];
      assert.deepEqual(rows.map((row) => row.pane_id), [alpha.id, printer.id]);
      for (const row of rows) assert.deepEqual(Object.keys(row), MAP_FIELDS);
      assert.deepEqual(rows[0], {
        session: 'work', window_index: 0, window_id: (await alpha.display('#{window_id}')).toString(), pane_id: alpha.id, pane_key: await keyOf(portOn(live.server), alpha.id), tab: 'alpha',
        worktree: '(main)', repo, change, stage: 'apply', display_state: 'active', agent_state: 'idle', agent_idle_duration: '2h',
        pr_url: 'https://github.com/acme/alpha/pull/7', pr_number: 7, agent: null, agent_state_source: 'hook',
      });
      assert.equal(rows[1]!.repo, null);
      assert.equal(rows[1]!.change, null);
    });

    it('shows only the caller’s session, without a Session column, on the server of $TMUX', async () => {
      const table = ok(await sandbox.drover(['pane', 'map'], { env: inside(live.server, beta) }));
      assert.deepEqual(cells(table), [
        ['Pane', 'WinIdx', 'Tab', 'Worktree', 'Change', 'Stage', 'Agent'],
        [beta.id, '0', 'beta', 'notes/', '—', '—', '—'],
      ]);
    });

    it('says when nothing matches, refuses to guess the session outside tmux, and rejects both scopes', async () => {
      const [none, noneJson, outside, both, deadServer] = await Promise.all([
        sandbox.drover(['pane', 'map', '--session', 'missing', '-S', socket]),
        sandbox.drover(['pane', 'map', '--session', 'missing', '--json', '-S', socket]),
        sandbox.drover(['pane', 'map', '-S', socket]),
        sandbox.drover(['pane', 'map', '--session', 'work', '--all-sessions', '-S', socket]),
        sandbox.drover(['pane', 'map', '--all-sessions', '--json', '-S', dead.endpoint.socketPath]),
      ]);
      assert.equal(ok(none), 'No tmux panes found.\n');
      assert.deepEqual(JSON.parse(ok(noneJson)), []);
      assertFailure(outside, 1, `drover: error: not inside a tmux session, so there is no current session: pass --all-sessions for every session on the tmux server at ${socket}, or --session NAME\n`);
      assertFailure(both, 2, /^drover: error: option .+ cannot be used with/);
      assert.equal(deadServer.exitCode, 1);
      assert.equal(JSON.parse(deadServer.text()).error.code, 'unreachable');
      assert.match(deadServer.stderrText(), /^drover: error: .+\n$/);
    });
  });

  describe('capture', () => {
    it('prints a header and exactly the last N lines; --raw the bytes alone; --json the fields', async () => {
      const [text, raw, json] = await Promise.all([
        sandbox.drover(['pane', 'capture', printer.id, '-l', '3', '-S', socket]),
        sandbox.drover(['pane', 'capture', printer.id, '--lines', '2', '--raw', '-S', socket]),
        sandbox.drover(['pane', 'capture', printer.id, '-l', '2', '--json', '-S', socket]),
      ]);
      assert.equal(ok(text), `--- pane ${printer.id} ---\nworktree: notes/\n---\nline 29\nline 30\n  last\n`);
      assert.equal(ok(raw), 'line 30\n  last\n', 'the bytes of the kept lines are untouched');
      assert.deepEqual(JSON.parse(ok(json)), {
        pane_id: printer.id, pane_key: await keyOf(portOn(live.server), printer.id), lines: 2, content: 'line 30\n  last\n', worktree: 'notes/', change: null, stage: null, agent_state: null, agent_idle_duration: null,
      });
    });

    it('maps a bad line count to 2, a missing pane to 2 and a dead server to 3', async () => {
      const [zero, word, both, missing, byName, deadServer] = await Promise.all([
        sandbox.drover(['pane', 'capture', printer.id, '-l', '0', '-S', socket]),
        sandbox.drover(['pane', 'capture', printer.id, '-l', 'ten', '-S', socket]),
        sandbox.drover(['pane', 'capture', printer.id, '--json', '--raw', '-S', socket]),
        sandbox.drover(['pane', 'capture', '%999', '-S', socket]),
        sandbox.drover(['pane', 'capture', 'printer', '-S', socket]),
        sandbox.drover(['pane', 'capture', printer.id, '--json', '-S', dead.endpoint.socketPath]),
      ]);
      assertFailure(zero, 2, 'drover: error: -l/--lines takes a whole number of lines from 1 to 1000000 (got "0")\n');
      assertFailure(word, 2, /-l\/--lines takes a whole number/);
      assert.equal(both.exitCode, 2);
      assert.deepEqual(JSON.parse(both.text()), { error: { code: 'usage', message: "option '--raw' cannot be used with option '--json'" } }, 'a usage error the parser catches is one JSON document too');
      assert.match(both.stderrText(), /^drover: error: option '--raw' cannot be used with option '--json'\n/);
      assertFailure(missing, 2, 'drover: error: pane %999 not found\n');
      assertFailure(byName, 2, `drover: error: "printer" does not name a pane: give ${PANE_TARGET_FORMS}\n`);
      assert.equal(deadServer.exitCode, 3);
      assert.deepEqual(Object.keys(JSON.parse(deadServer.text()).error), ['code', 'message', 'phase', 'delivery']);
      assert.match(deadServer.stderrText(), /^drover: error: .+\n$/);
    });
  });

  describe('tmux targets', () => {
    it('accepts SESSION:WINDOW[.PANE], the window by index or name, wherever a pane id goes, resolved to its %id', async () => {
      const [byIndex, byName, byPane, named] = await Promise.all([
        sandbox.drover(['pane', 'capture', 'work:1', '-l', '1', '--json', '-S', socket]),
        sandbox.drover(['pane', 'process', 'work:printer', '--json', '-S', socket]),
        sandbox.drover(['pane', 'capture', 'work:0.0', '-l', '1', '--json', '-S', socket]),
        sandbox.drover(['pane', 'questions', '--panes', 'other:beta', '-S', socket]),
      ]);
      assert.equal((JSON.parse(ok(byIndex)) as { pane_id: string }).pane_id, printer.id);
      assert.equal((JSON.parse(ok(byName)) as { pane_id: string }).pane_id, printer.id);
      assert.equal((JSON.parse(ok(byPane)) as { pane_id: string }).pane_id, alpha.id);
      assert.equal(ok(named), `${beta.id}: no_agent_state\n0 matched, 1 skipped\n`);
    });

    it('says which forms are accepted when a target names no pane, or is no target at all', async () => {
      const [prefix, sessionPrefix, pattern] = await Promise.all([
        sandbox.drover(['pane', 'keys', 'work:print', 'x', '-S', socket]),
        sandbox.drover(['pane', 'keys', 'wor:printer', 'x', '-S', socket]),
        sandbox.drover(['pane', 'keys', 'work:pr*', 'x', '-S', socket]),
      ]);
      // tmux alone would take a prefix or a pattern of a name: the pane named is reached, or none.
      assertFailure(prefix, 2, `drover: error: pane work:print not found (give ${PANE_TARGET_FORMS})\n`);
      assertFailure(sessionPrefix, 2, `drover: error: pane wor:printer not found (give ${PANE_TARGET_FORMS})\n`);
      assertFailure(pattern, 2, `drover: error: pane work:pr* not found (give ${PANE_TARGET_FORMS})\n`);
      const [noWindow, noPane, option, json] = await Promise.all([
        sandbox.drover(['pane', 'capture', 'work:nope', '-S', socket]),
        sandbox.drover(['pane', 'kill', 'work:0.7', '-S', socket]),
        sandbox.drover(['pane', 'ready', '', '-S', socket]),
        sandbox.drover(['pane', 'explain', 'work:nope', '--json', '-S', socket]),
      ]);
      assertFailure(noWindow, 2, `drover: error: pane work:nope not found (give ${PANE_TARGET_FORMS})\n`);
      assertFailure(noPane, 2, `drover: error: pane work:0.7 not found (give ${PANE_TARGET_FORMS})\n`);
      assertFailure(option, 2, `drover: error: "" does not name a pane: give ${PANE_TARGET_FORMS}\n`);
      assert.equal(json.exitCode, 2);
      assert.deepEqual((JSON.parse(json.text()) as { error: { code: string; message: string } }).error.code, 'pane_not_found');
      assert.equal(await live.server.pane(alpha.id).exists(), true);
    });
  });

  describe('process', () => {
    it('prints the pane’s process tree, and its JSON', async () => {
      const pane = (await live.server.newSession({ name: 'proc', command: ['sh', '-c', 'sleep 600 & wait'], receipt: true })).pane;
      const shellPid = Number((await pane.display('#{pane_pid}')).toString());
      // sh forks the child before the child execs sleep: until then it is a second sh.
      await eventually('the sleep child', async () => (await paneProcess(portOn(live.server), pane.id)).processes[0]?.children[0]?.comm === 'sleep');
      const report = JSON.parse(ok(await sandbox.drover(['pane', 'process', pane.id, '--json', '-S', socket]))) as {
        pane_id: string; pane_key: string; pane_pid: number; has_agent: boolean; processes: { pid: number; comm: string; classification: string; children: { pid: number; comm: string; cmdline: string }[] }[];
      };
      assert.equal(report.pane_id, pane.id);
      assert.equal(report.pane_key, await keyOf(portOn(live.server), pane.id));
      assert.equal(report.pane_pid, shellPid);
      assert.equal(report.has_agent, false);
      assert.deepEqual([report.processes[0]!.comm, report.processes[0]!.classification], ['sh', 'other']);
      const child = report.processes[0]!.children[0]!;
      assert.deepEqual([child.comm, child.cmdline], ['sleep', 'sleep 600']);
      const text = ok(await sandbox.drover(['pane', 'process', pane.id, '-S', socket]));
      assert.equal(text, `${shellPid} sh [other]\n  ${child.pid} sleep [other]\n`);
      assertFailure(await sandbox.drover(['pane', 'process', '%999', '-S', socket]), 2, 'drover: error: pane %999 not found\n');
    });
  });

  describe('window-name', () => {
    it('adds, keeps, swaps and strips a prefix, printing only real renames', async () => {
      const step = (...args: string[]) => sandbox.drover(['pane', 'window-name', ...args, '-S', socket]);
      assert.equal(ok(await step('ensure-prefix', printer.id, '»')), 'renamed: printer -> »printer\n');
      const key = await keyOf(portOn(live.server), printer.id);
      assert.deepEqual(JSON.parse(ok(await step('ensure-prefix', printer.id, '»', '--json'))), { pane_id: printer.id, pane_key: key, old: '»printer', new: '»printer', action: 'noop' });
      assert.equal(ok(await step('ensure-prefix', printer.id, '»')), '', 'a no-op prints nothing');
      assert.equal(ok(await step('replace-prefix', printer.id, '»', '›')), 'renamed: »printer -> ›printer\n');
      assert.equal(ok(await step('replace-prefix', printer.id, '»', '›')), '', 'a retitled window is left alone');
      assert.deepEqual(JSON.parse(ok(await step('replace-prefix', printer.id, '›', '', '--json'))), { pane_id: printer.id, pane_key: key, old: '›printer', new: 'printer', action: 'renamed' });
      assert.equal((await printer.display('#W')).toString(), 'printer');
    });

    it('exits 2 for a missing pane or an empty prefix and 3 for a dead server', async () => {
      const [missing, emptyChar, emptyFrom, deadServer] = await Promise.all([
        sandbox.drover(['pane', 'window-name', 'ensure-prefix', '%999', '»', '-S', socket]),
        sandbox.drover(['pane', 'window-name', 'ensure-prefix', printer.id, '', '-S', socket]),
        sandbox.drover(['pane', 'window-name', 'replace-prefix', printer.id, '', '›', '--json', '-S', socket]),
        sandbox.drover(['pane', 'window-name', 'ensure-prefix', printer.id, '»', '-S', dead.endpoint.socketPath]),
      ]);
      assertFailure(missing, 2, 'drover: error: pane %999 not found\n');
      assertFailure(emptyChar, 2, 'drover: error: the prefix is empty\n');
      assert.equal(emptyFrom.exitCode, 2);
      assert.deepEqual(JSON.parse(emptyFrom.text()), { error: { code: 'usage', message: 'the prefix to replace is empty', phase: 'validate', delivery: 'not_sent' } });
      assertFailure(deadServer, 3, /^drover: error: .+\n$/);
      assert.equal((await printer.display('#W')).toString(), 'printer');
    });
  });

  describe('open and kill', () => {
    before(() => {
      const command = `node ${FAKE_AGENT} --busy-ms {model}`;
      writeFileSync(join(notes, 'drover.yaml'), `providers:\n  fake:\n    interactive_command: ${JSON.stringify(command)}\n    profiles:\n      default: { model: '100' }\n`);
    });

    it('opens a new window from outside tmux, splits the caller’s window from inside, and kills both', async () => {
      const windowOf = async (id: string) => (await live.server.pane(id).display('#{window_id}')).toString();
      const opened = JSON.parse(ok(await sandbox.drover(['pane', 'open', '--provider', 'fake', '-c', notes, '--json', '-S', socket]))) as { pane_id: string };
      assert.deepEqual(opened, { pane_id: opened.pane_id, pane_key: await keyOf(portOn(live.server), opened.pane_id), provider: 'fake', server: socket, command: `node ${FAKE_AGENT} --busy-ms 100`, bypasses_permissions: false });
      assert.match(opened.pane_id, /^%\d+$/);
      assert.notEqual(await windowOf(opened.pane_id), await windowOf(printer.id));
      await screenShows(live.server.pane(opened.pane_id), '╭');
      assert.equal((await live.server.pane(opened.pane_id).display('#{pane_current_path}')).toString(), notes);

      const split = await sandbox.drover(['pane', 'open', '--provider', 'fake', '--role', 'doing'], { env: inside(live.server, printer), cwd: notes });
      const text = ok(split);
      const splitPane = /^opened pane (%\d+) \(provider fake\)\n$/.exec(text)?.[1];
      assert.ok(splitPane, text);
      assert.equal(await windowOf(splitPane), await windowOf(printer.id));

      assert.equal(ok(await sandbox.drover(['pane', 'kill', opened.pane_id, '-S', socket])), `killed ${opened.pane_id}\nserver: ${socket}\n`);
      assert.deepEqual(JSON.parse(ok(await sandbox.drover(['pane', 'kill', splitPane, '--json'], { env: inside(live.server, printer) }))), { pane_id: splitPane, pane_key: await keyOf(portOn(live.server), splitPane), killed: true, server: null });
      assert.equal(await live.server.pane(splitPane).exists(), false);
      assertFailure(await sandbox.drover(['pane', 'kill', opened.pane_id, '-S', socket]), 2, `drover: error: pane ${opened.pane_id} not found\n`);
    });

    it('opens a plain shell as --provider shell, as member create --agent shell does', async () => {
      const opened = JSON.parse(ok(await sandbox.drover(['pane', 'open', '--provider', 'shell', '-c', notes, '--json', '-S', socket], { env: { SHELL: '/bin/sh' } }))) as { pane_id: string; command: string };
      assert.equal(opened.command, '/bin/sh');
      assert.equal((await live.server.pane(opened.pane_id).display('#{pane_current_command}')).toString(), 'sh');
      ok(await sandbox.drover(['pane', 'kill', opened.pane_id, '-S', socket]));
    });

    it('names the providers for an unknown one, and exits 3 when the server is gone, spawning nothing', async () => {
      const before = (await live.server.snapshot()).panes.toArray().length;
      const [unknown, missingDir, deadServer, deadKill] = await Promise.all([
        sandbox.drover(['pane', 'open', '--provider', 'nope', '-c', notes, '-S', socket]),
        sandbox.drover(['pane', 'open', '--provider', 'fake', '-c', join(notes, 'absent'), '-S', socket]),
        sandbox.drover(['pane', 'open', '--provider', 'fake', '-c', notes, '-S', dead.endpoint.socketPath]),
        sandbox.drover(['pane', 'kill', alpha.id, '-S', dead.endpoint.socketPath]),
      ]);
      assertFailure(unknown, 2, 'drover: error: unknown provider "nope"; available: claude, codex, fake, gemini, opencode, shell\n');
      assertFailure(missingDir, 2, `drover: error: -c ${join(notes, 'absent')}: no such directory\n`);
      assertFailure(deadServer, 3, /^drover: error: .+\n$/);
      assertFailure(deadKill, 3, /^drover: error: .+\n$/);
      assert.equal((await live.server.snapshot()).panes.toArray().length, before);
    });
  });

  it('sweeps the caller’s session (none waiting) and named panes for questions', async () => {
    const [none, named] = await Promise.all([
      sandbox.drover(['pane', 'questions'], { env: inside(live.server, beta) }),
      sandbox.drover(['pane', 'questions', '--panes', `${alpha.id},%999`, '--panes', beta.id, '-S', socket]),
    ]);
    assert.equal(ok(none), 'No candidate panes.\n');
    assert.equal(ok(named), `${alpha.id}: blank_capture\n%999: capture_failed\n${beta.id}: no_agent_state\n0 matched, 3 skipped\n`);
  });
});

describe('drover pane outside tmux, after drover up', () => {
  const sandbox = cliSandbox();

  it('maps, sweeps and captures the server drover up started, and hints --all-sessions for the map', async () => {
    const up = await sandbox.drover(['up', '--json']);
    try {
      assert.equal(up.exitCode, 0, up.stderrText());
      const socket = (JSON.parse(up.text()) as { socket_path: string }).socket_path;
      const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json']))) as { session: string; pane_id: string }[];
      assert.deepEqual(rows.map((row) => row.session), ['drover']);
      const capture = JSON.parse(ok(await sandbox.drover(['pane', 'capture', 'drover:0.0', '-l', '1', '--json']))) as { pane_id: string };
      assert.equal(capture.pane_id, rows[0]!.pane_id);
      assert.deepEqual(JSON.parse(ok(await sandbox.drover(['pane', 'questions', '--all-sessions', '--json']))), { matches: [], skipped: [] });
      assertFailure(
        await sandbox.drover(['pane', 'map']),
        1,
        `drover: error: not inside a tmux session, so there is no current session: pass --all-sessions for every session on the server drover up started (${socket}), or --session NAME\n`,
      );
      assertFailure(await sandbox.drover(['pane', 'questions']), 1, /pass --all-sessions for every session on the server drover up started .*, or --session NAME/);
      // The hint's other way in is taken too.
      assert.deepEqual(JSON.parse(ok(await sandbox.drover(['pane', 'questions', '--session', 'drover', '--json']))), { matches: [], skipped: [] });
      assertFailure(await sandbox.drover(['pane', 'questions', '--session', 'drover', '--all-sessions']), 2, /cannot be used with/);
    } finally {
      await sandbox.drover(['down']);
    }
  });
});

describe('drover pane ready, deliver and questions with a fake agent reporting through drover agent hook', () => {
  const sandbox = cliSandbox();
  const live = useTestServer();
  const hook = [process.execPath, CLI_PATH, 'agent', 'hook'];
  let socket: string;
  let dir: string;

  before(() => {
    socket = live.server.endpoint.socketPath;
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'drover-cli-agent-')));
    mkdirSync(join(dir, 'prompts'));
    writeFileSync(join(dir, 'prompts', 'task.md'), 'Say hello.\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** Each state change runs `drover agent hook`, a cold CLI start of seconds under load, one after another. */
  function stateBecomes(pane: Pane, state: string): Promise<string> {
    return eventually(
      `${pane.id} to report ${state}`,
      async () => {
        const value = (await pane.options().getOrUndefined(AGENT_STATE_OPTION, { inherited: false }))?.as('string');
        return value?.startsWith(`${state}:`) ? value : undefined;
      },
      60_000,
    );
  }

  it('maps the state the agent reported, delivers text and a prompt file, and finds its question', async () => {
    const agent = await startFakeAgent(live.server, ['--busy-ms', '300'], { hook, cwd: dir });
    await stateBecomes(agent, 'idle');
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--json', '--all-sessions', '-S', socket]))) as Record<string, unknown>[];
    const row = rows.find((candidate) => candidate.pane_id === agent.id)!;
    assert.equal(row.agent_state, 'idle');
    assert.match(String(row.agent_idle_duration), /^\d+s$/);
    assert.equal(row.worktree, `${basename(dir)}/`);

    assert.deepEqual(JSON.parse(ok(await sandbox.drover(['pane', 'ready', agent.id, '--json', '-S', socket]))), {
      state: 'ready',
      pane_id: agent.id,
      pane_key: await keyOf(portOn(live.server), agent.id),
      server: socket,
      snippet: '',
      reason: 'probe_echoed',
      agent: null,
      rule: null,
      detail: 'the probe text echoed',
      draft: null,
    });

    const delivered = await sandbox.drover(['pane', 'deliver', agent.id, '--text', 'please ask:yes_no', '-S', socket]);
    assert.equal(ok(delivered), `submitted ${agent.id}: the text left the input line after Enter\n`);
    assert.equal(delivered.stderrText(), '');
    await stateBecomes(agent, 'waiting');
    await screenShows(agent, '[y/n]');

    const question = { pane_id: agent.id, pane_key: await keyOf(portOn(live.server), agent.id), agent_state: 'waiting', indicator: 'yes_no', snippet: 'Apply the edit to src/app.ts? [y/n]', agent: null, rule: null, answers: YES_NO };
    const [json, text] = await Promise.all([
      sandbox.drover(['pane', 'questions', '--all-sessions', '--json', '-S', socket]),
      sandbox.drover(['pane', 'questions'], { env: inside(live.server, agent) }),
    ]);
    assert.deepEqual(JSON.parse(ok(json)), { matches: [question], skipped: [] });
    assert.equal(ok(text), `${agent.id} [waiting] yes_no: ${question.snippet}\n1 matched, 0 skipped\n`);

    await agent.sendText('y');
    await stateBecomes(agent, 'idle');
    const prompt = await sandbox.drover(['pane', 'deliver', agent.id, '--prompt-file', 'prompts/task.md', '--json', '-S', socket], { cwd: dir });
    const receipt = JSON.parse(ok(prompt)) as Record<string, unknown>;
    assert.deepEqual(
      { pane_id: receipt.pane_id, status: receipt.status, evidence: receipt.evidence, method: receipt.method, source: receipt.source, path: receipt.path },
      { pane_id: agent.id, status: 'submitted', evidence: 'composer_cleared', method: 'keys', source: 'prompt', path: 'prompts/task.md' },
    );
    await screenShows(agent, '> Read prompts/task.md and execute it.');
  });

  it('parks a pager without typing into it, for ready and for deliver', async () => {
    const text = join(dir, 'paged.txt');
    writeFileSync(text, Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n'));
    const { pane } = await live.server.newSession({ command: ['less', text], receipt: true });
    await screenShows(pane, 'line 0');
    const before = await screenOf(pane);
    const [ready, delivered] = [
      JSON.parse(ok(await sandbox.drover(['pane', 'ready', pane.id, '--json', '-S', socket]))) as { state: string; reason: string },
      await sandbox.drover(['pane', 'deliver', pane.id, '--text', 'q', '--json', '-S', socket]),
    ];
    assert.deepEqual([ready.state, ready.reason], ['parked', 'key_driven_foreground']);
    assert.equal(delivered.exitCode, 1);
    assert.deepEqual((JSON.parse(delivered.text()) as { status: string; typed: boolean }).typed, false);
    // less took nothing as a command: no Examine prompt, no quit, the same page.
    assert.equal(await screenOf(pane), before);
    assert.equal((await live.server.snapshot()).pane(pane.id)?.paneCurrentCommand, 'less');
  });

  it('reports a job that reads nothing as busy and types nothing into it, while cat run the same way takes the probe', async () => {
    // An interactive shell hands its job the terminal; `sh -c` keeps it, and tmux names the shell.
    const [job, script] = await Promise.all([
      live.server.newSession({ command: ['sh'], env: { PS1: 'job$ ' }, receipt: true }).then(async ({ pane }) => (await screenShows(pane, 'job$'), pane)),
      live.server.newSession({ command: ['sh', '-c', 'sleep 600; true'], receipt: true }).then(({ pane }) => pane),
    ]);
    await job.sendText('sleep 600');
    await job.sendKeys(['Enter']);
    await eventually('the job to own the pane', async () => (await job.display('#{pane_current_command}')).toString() === 'sleep');
    // The script's sleep is a child of its shell, which waits for it.
    await eventually('the script to start its sleep', async () => (await paneProcess(portOn(live.server), script.id)).processes[0]?.children.length === 1);
    const before = await screenOf(job);
    for (const pane of [job, script]) {
      const ready = JSON.parse(ok(await sandbox.drover(['pane', 'ready', pane.id, '--json', '-S', socket]))) as { state: string; reason: string; detail: string };
      assert.deepEqual([ready.state, ready.reason], ['busy', 'foreground_waiting'], pane.id);
      assert.match(ready.detail, /^sleep owns the pane and reads nothing: it waits in (clock_)?nanosleep( and wait4)?; typed text would wait until it ends/, pane.id);
      const delivered = await sandbox.drover(['pane', 'deliver', pane.id, '--text', 'touch typed-into-a-job', '--json', '-S', socket]);
      assert.equal(delivered.exitCode, 1, pane.id);
      const receipt = JSON.parse(delivered.text()) as { status: string; typed: boolean; reason: string };
      assert.deepEqual([receipt.status, receipt.typed], ['failed', false], pane.id);
      assert.match(receipt.reason, /^the pane is busy, not ready \(sleep owns the pane and reads nothing/, pane.id);
    }
    assert.equal(await screenOf(job), before, 'the terminal echoed nothing: nothing was typed');
    await job.sendKeys(['C-c']);
    await eventually('a fresh prompt', async () => (await screenOf(job)).split('job$').length > 2);
    await job.sendText('cat');
    await job.sendKeys(['Enter']);
    await eventually('cat to own the pane', async () => (await job.display('#{pane_current_command}')).toString() === 'cat');
    const reading = JSON.parse(ok(await sandbox.drover(['pane', 'ready', job.id, '--json', '-S', socket]))) as { state: string; reason: string };
    assert.deepEqual([reading.state, reading.reason], ['ready', 'probe_echoed'], 'cat reads its terminal');
  });

  it('reports a shell as a shell and a dialog as parked, and fails delivery into the dialog with the screen', async () => {
    const [shell, dialog] = await Promise.all([
      live.server.newSession({ command: ['sh'], env: { PS1: 'shell$ ' }, receipt: true }).then(async ({ pane }) => (await screenShows(pane, 'shell$'), pane)),
      startFakeAgent(live.server, ['--trust-dialog'], { waitFor: 'Do you trust' }),
    ]);
    const [shellReport, parked] = await Promise.all([
      sandbox.drover(['pane', 'ready', shell.id, '-S', socket]),
      sandbox.drover(['pane', 'ready', dialog.id, '--json', '-S', socket]),
    ]);
    assert.equal(ok(shellReport), `shell\npane: ${shell.id}\nwhy: sh owns the pane; no agent runs\nserver: ${socket}\n--- last 20 lines ---\nshell$\n`);
    const report = JSON.parse(ok(parked)) as { state: string; pane_id: string; server: string; snippet: string; reason: string };
    assert.deepEqual([report.state, report.pane_id, report.server, report.reason], ['parked', dialog.id, socket, 'input_held']);
    assert.match(report.snippet, /^Do you trust the files in this folder\?\n/);

    const [failed, failedText] = await Promise.all([
      sandbox.drover(['pane', 'deliver', dialog.id, '--text', 'hello', '--json', '-S', socket]),
      sandbox.drover(['pane', 'deliver', dialog.id, '--text', 'hello', '-S', socket]),
    ]);
    assert.equal(failed.exitCode, 1);
    const receipt = JSON.parse(failed.text()) as Record<string, unknown>;
    assert.deepEqual([receipt.status, receipt.typed, receipt.evidence], ['failed', false, null], 'a failed delivery still prints its receipt');
    assert.match(String(receipt.reason), /^the pane is parked, not ready/);
    assert.match(String(receipt.snippet), /^Do you trust the files in this folder\?\n/);
    assert.equal(failedText.exitCode, 1);
    assert.equal(failedText.text(), '');
    const stderr = failedText.stderrText().split('\n');
    assert.match(stderr[0]!, new RegExp(`^failed ${dialog.id}: the pane is parked, not ready`));
    assert.deepEqual(stderr.slice(1, 3), ['--- last 20 lines ---', 'Do you trust the files in this folder?']);
    assert.ok(!(await screenOf(dialog)).includes('hello'));
  });

  it('explains a pane without typing into it: process, hook state, and that an unknown program has no screen rules', async () => {
    const agent = await startFakeAgent(live.server, ['--busy-ms', '300'], { cwd: dir });
    await agent.options().set(AGENT_STATE_OPTION, `waiting:${Math.floor(Date.now() / 1000)}:${process.pid}`);
    const before = await screenOf(agent);
    const [text, json, missing] = await Promise.all([
      sandbox.drover(['pane', 'explain', agent.id, '-S', socket]),
      sandbox.drover(['pane', 'explain', agent.id, '--json', '-S', socket]),
      sandbox.drover(['pane', 'explain', '%999', '-S', socket]),
    ]);
    assert.match(ok(text), new RegExp(`^pane ${agent.id}: foreground node\nagent: none found in the process tree\nhook state: waiting:\\d+:\\d+ → waiting\n`));
    assert.match(text.text(), /screen: no rules for this program; `drover pane ready` probes it by typing\n--- processes ---\n\d+ node \[node\]/);
    const document = JSON.parse(ok(json)) as { pane_id: string; agent: { name: string | null }; screen: unknown; readiness: unknown; hook: { state: string } };
    assert.deepEqual([document.pane_id, document.agent.name, document.screen, document.readiness, document.hook.state], [agent.id, null, null, null, 'waiting']);
    assertFailure(missing, 2, 'drover: error: pane %999 not found\n');
    assert.equal(await screenOf(agent), before, 'nothing was typed');
  });

  it('explains a bare shell as ready does, shell without a probe, and a dead pane as exited', async () => {
    const shell = (await live.server.newSession({ command: ['sh'], receipt: true })).pane;
    // Kept once its program has exited: remain-on-exit is set while it still sleeps.
    const dead = (await live.server.newSession({ command: ['sleep', '0.5'], receipt: true })).pane;
    await dead.options().set('remain-on-exit', 'on');
    await eventually('the pane to die', async () => ((await dead.display('#{pane_dead}')).toString() === '1' ? true : undefined));
    const [text, json, ready, gone] = await Promise.all([
      sandbox.drover(['pane', 'explain', shell.id, '-S', socket]),
      sandbox.drover(['pane', 'explain', shell.id, '--json', '-S', socket]),
      sandbox.drover(['pane', 'ready', shell.id, '--json', '-S', socket]),
      sandbox.drover(['pane', 'explain', dead.id, '--json', '-S', socket]),
    ]);
    assert.match(ok(text), /\nscreen: no rules for this program\nready: shell \(shell_foreground\)\n--- processes ---\n/);
    const readiness = (JSON.parse(ok(json)) as { readiness: unknown }).readiness;
    const readied = JSON.parse(ok(ready)) as { state: string; reason: string };
    assert.deepEqual(readiness, { state: readied.state, reason: readied.reason });
    assert.deepEqual(readiness, { state: 'shell', reason: 'shell_foreground' });
    assert.deepEqual((JSON.parse(ok(gone)) as { readiness: unknown }).readiness, { state: 'exited', reason: 'pane_dead' });
  });

  it('checks its arguments before typing anything', async () => {
    const target = (await live.server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
    const [missingFile, bothSources, noSource, missingPane, controlText, textAsWords] = await Promise.all([
      sandbox.drover(['pane', 'deliver', target.id, '--prompt-file', 'absent.md', '-S', socket], { cwd: dir }),
      sandbox.drover(['pane', 'deliver', target.id, '--text', 'a', '--prompt-file', 'prompts/task.md', '-S', socket], { cwd: dir }),
      sandbox.drover(['pane', 'deliver', target.id, '-S', socket]),
      sandbox.drover(['pane', 'deliver', '%999', '--text', 'hello', '-S', socket]),
      sandbox.drover(['pane', 'deliver', target.id, '--text', 'two\nlines', '-S', socket]),
      sandbox.drover(['pane', 'deliver', target.id, 'run', "the tests'", '--json', '-S', socket]),
    ]);
    assertFailure(missingFile, 2, 'drover: error: prompt file absent.md does not exist\n');
    assertFailure(bothSources, 2, /cannot be used with/);
    assertFailure(noSource, 2, 'drover: error: give exactly one of --prompt-file PATH, --text STRING or --stdin\n');
    assertFailure(missingPane, 2, 'drover: error: pane %999 not found\n');
    assertFailure(controlText, 2, /^drover: error: multi-line text can only be delivered to an agent drover knows/);
    // The text given as words is refused with the command that would deliver it, quoted for a shell.
    assert.equal(textAsWords.exitCode, 2);
    const refusal = JSON.parse(textAsWords.stdout.toString()) as { error: { code: string; message: string; delivery: string } };
    assert.deepEqual([refusal.error.code, refusal.error.delivery], ['usage', 'not_sent']);
    const advice = `pane deliver ${target.id} --text 'run the tests'\\'''), --stdin or --prompt-file PATH`;
    assert.ok(refusal.error.message.startsWith('the text is not an argument: give it with --text (') && refusal.error.message.endsWith(advice), refusal.error.message);
    assert.equal((await screenOf(target)).trim(), '');
  });
});

describe('drover pane with pane keys, across a restart of the server at the same socket', () => {
  const sandbox = cliSandbox();

  it('refuses the old run’s keys with exit 6 and leaves every pane of the new server untouched; a bare id still names the pane of the server now', async (t) => {
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['sleep', '600']);
    await tmux.tmuxCommand('split-window', '-d', '-t', '%0', 'sleep', '600');
    const socket = tmux.socketPath;
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json', '-S', socket]))) as { pane_id: string; pane_key: string }[];
    const keys = new Map(rows.map((row) => [row.pane_id, row.pane_key]));
    assert.deepEqual([...keys.keys()].sort(), ['%0', '%1']);
    // The keys name the panes while their server runs.
    assert.equal((JSON.parse(ok(await sandbox.drover(['pane', 'capture', keys.get('%0')!, '-l', '1', '--json', '-S', socket]))) as { pane_id: string }).pane_id, '%0');
    // The merged view across hosts prints this machine's keys the same way, and they are taken as they are.
    const merged = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-hosts', '--json', '-S', socket], { env: { XDG_CONFIG_HOME: '', DROVER_CONFIG: '' } }))) as { rows: { host: string; pane_id: string; pane_key: string }[] };
    assert.deepEqual(new Map(merged.rows.map((row) => [row.pane_id, row.pane_key])), keys);
    assert.equal((JSON.parse(ok(await sandbox.drover(['pane', 'ready', merged.rows[1]!.pane_key, '--json', '-S', socket]))) as { pane_id: string }).pane_id, merged.rows[1]!.pane_id);

    await tmux.restart(['cat']);
    await tmux.tmuxCommand('split-window', '-d', '-t', '%0', 'cat');
    const [deliver, kill, deliverText] = [
      await sandbox.drover(['pane', 'deliver', keys.get('%0')!, '--text', 'hello-drover-42', '--json', '-S', socket]),
      await sandbox.drover(['pane', 'kill', keys.get('%1')!, '-S', socket]),
      await sandbox.drover(['pane', 'deliver', keys.get('%0')!, '--text', 'hello-drover-42', '-S', socket]),
    ];
    assert.equal(deliver.exitCode, 6, deliver.stderrText());
    const error = (JSON.parse(deliver.text()) as { error: { code: string; delivery: string } }).error;
    assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent']);
    assertFailure(kill, 6, /^drover: error: pane key local::tmux::\S+::%1 names a pane of another tmux server run \(.+\); the server answering now is .+, whose pane %1 is not that pane, so nothing was done\n$/);
    assertFailure(deliverText, 6, /so nothing was done/);

    // A separate tmux client sees the new server as it was: both panes, nothing typed into either.
    assert.equal(await tmux.tmuxCommand('list-panes', '-a', '-F', '#{pane_id} #{pane_current_command}'), '%0 cat\n%1 cat\n');
    for (const pane of ['%0', '%1']) assert.ok(!(await tmux.history(pane)).includes('hello-drover-42'), `nothing reached ${pane}`);

    // A bare id names the pane of whichever server answers now, as a person at a terminal means it.
    const now = JSON.parse(ok(await sandbox.drover(['pane', 'capture', '%1', '-l', '1', '--json', '-S', socket]))) as { pane_id: string; pane_key: string };
    assert.equal(now.pane_id, '%1');
    assert.notEqual(now.pane_key, keys.get('%1'), 'its key names the new run');
    const [malformed, elsewhere] = await Promise.all([
      sandbox.drover(['pane', 'kill', 'local::tmux::%1', '-S', socket]),
      sandbox.drover(['pane', 'kill', keys.get('%1')!.replace('::tmux::', '::herdr::'), '-S', socket]),
    ]);
    assertFailure(malformed, 2, /"local::tmux::%1" is neither HOST::PANE \(gpu::%3\) nor a pane key HOST::MUX::INCARNATION::PANE/);
    assertFailure(elsewhere, 6, /names a herdr pane, but drover is driving tmux; nothing was done \(choose herdr with --mux herdr\)/);
    assert.equal(await tmux.tmuxCommand('list-panes', '-a', '-F', '#{pane_id}'), '%0\n%1\n');
  });
});

describe('drover pane with pane keys, across a restart off tmux', () => {
  const sandbox = cliSandbox();

  it('zellij: refuses the old session run’s keys with exit 6, typing into and closing none of the new run’s panes that reuse their ids', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const env = { ...zellij.fake.env, DROVER_MUX: 'zellij' };
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json'], { env }))) as { pane_id: string; pane_key: string }[];
    const keys = new Map(rows.map((row) => [row.pane_id, row.pane_key]));
    assert.deepEqual([...keys.keys()].sort(), ['terminal_0', 'terminal_1', 'terminal_2']);
    // The session is started again without its first pane: the new run numbers the rest from 0,
    // so terminal_0 and terminal_1 now name the panes that were terminal_1 and terminal_2.
    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const screens = ['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane));
    const inputs = zellij.fake.read().inputs.length;

    const deliver = await sandbox.drover(['pane', 'deliver', keys.get('terminal_1')!, '--text', 'hello-drover-42', '--json'], { env });
    assert.equal(deliver.exitCode, 6, deliver.stderrText());
    const error = (JSON.parse(deliver.text()) as { error: { code: string; delivery: string } }).error;
    assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent']);
    const replaced = (pane: string) => new RegExp(`^drover: error: pane key local::zellij::\\S+::${pane} names a pane of another zellij server run \\(.+\\); the server answering now is .+, whose pane ${pane} is not that pane, so nothing was done\\n$`);
    assertFailure(await sandbox.drover(['pane', 'deliver', keys.get('terminal_1')!, '--text', 'hello-drover-42'], { env }), 6, replaced('terminal_1'));
    assertFailure(await sandbox.drover(['pane', 'capture', keys.get('terminal_1')!, '-l', '1'], { env }), 6, replaced('terminal_1'));
    assertFailure(await sandbox.drover(['pane', 'kill', keys.get('terminal_0')!], { env }), 6, replaced('terminal_0'));

    // The fake's own record: nothing typed, both panes still there and showing what they showed.
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed');
    assert.deepEqual(['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane)), screens);
    // A bare id names the pane of the run answering now, under the new run's key.
    const now = JSON.parse(ok(await sandbox.drover(['pane', 'capture', 'terminal_1', '-l', '1', '--json'], { env }))) as { pane_id: string; pane_key: string };
    assert.equal(now.pane_id, 'terminal_1');
    assert.notEqual(now.pane_key, keys.get('terminal_1'), 'its key names the new run');
  });

  it('herdr: a restart keeps the session’s run, so its keys still reach their own panes; a key of another herdr session is refused with exit 6', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const env = { DROVER_MUX: 'herdr', DROVER_MUX_ENDPOINT_HERDR: herdr.socketPath };
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json'], { env }))) as { pane_id: string; pane_key: string }[];
    const keys = new Map(rows.map((row) => [row.pane_id, row.pane_key]));
    // The scratch space's pane runs a shell that takes a line; the logs pane is the one to kill.
    const shell = (await herdr.port.snapshot()).panes.find((pane) => pane.spaceLabel === 'scratch')!.paneId;
    const spare = herdr.server.paneIds()[2]!;

    // herdr keeps its id counters across a restart and never hands an id out twice: the same
    // pane comes back under the same id, in the same session, so its key still names it.
    await herdr.server.restart();
    // The shell echoes the line but reports no cursor: typed, unconfirmed (exit 4), not refused.
    const delivery = await sandbox.drover(['pane', 'deliver', keys.get(shell)!, '--text', 'after-the-restart', '--json'], { env });
    assert.equal(delivery.exitCode, 4, delivery.stderrText());
    const delivered = JSON.parse(delivery.text()) as { pane_key: string; status: string; typed: boolean };
    assert.deepEqual([delivered.pane_key, delivered.status, delivered.typed], [keys.get(shell), 'staged_unconfirmed', true]);
    assert.deepEqual(herdr.server.inputs().filter((input) => JSON.stringify(input).includes('after-the-restart')).map((input) => input.paneId), [shell]);

    // Another herdr session (another socket) is another run: the first session's keys are refused there.
    const other = new FakeHerdrServer();
    const otherSocket = join(herdr.dir, 'other.sock');
    await other.start(otherSocket);
    t.after(() => other.stop());
    const otherEnv = { DROVER_MUX: 'herdr', DROVER_MUX_ENDPOINT_HERDR: otherSocket };
    assert.ok(other.paneIds().includes(shell) && other.paneIds().includes(spare), 'the other session hands out the same ids');
    const deliver = await sandbox.drover(['pane', 'deliver', keys.get(shell)!, '--text', 'hello-drover-42', '--json'], { env: otherEnv });
    assert.equal(deliver.exitCode, 6, deliver.stderrText());
    assert.deepEqual((JSON.parse(deliver.text()) as { error: { code: string } }).error.code, 'server_replaced');
    const replaced = (pane: string) => new RegExp(`^drover: error: pane key local::herdr::\\S+::${pane} names a pane of another herdr server run \\(.+\\); the server answering now is .+, whose pane ${pane} is not that pane, so nothing was done\\n$`);
    assertFailure(await sandbox.drover(['pane', 'capture', keys.get(shell)!, '-l', '1'], { env: otherEnv }), 6, replaced(shell));
    assertFailure(await sandbox.drover(['pane', 'kill', keys.get(spare)!], { env: otherEnv }), 6, replaced(spare));
    assert.deepEqual(other.inputs(), [], 'nothing was typed into the other session');
    assert.ok(other.paneIds().includes(spare), 'nor its pane closed');
  });
});

describe('drover pane on herdr and zellij (the fakes)', () => {
  const sandbox = cliSandbox();

  it('maps, captures and reads herdr panes, and refuses what herdr cannot do, naming it, before anything is typed', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const env = { DROVER_MUX: 'herdr', DROVER_MUX_ENDPOINT_HERDR: herdr.socketPath };
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json'], { env }))) as { pane_id: string; pane_key: string; session: string; agent: string | null }[];
    const incarnation = (await herdr.port.snapshot()).incarnation;
    assert.deepEqual(rows.map((row) => row.pane_id).sort(), herdr.server.paneIds().sort());
    for (const row of rows) assert.equal(row.pane_key, `local::herdr::${incarnation}::${row.pane_id}`);
    assert.ok(rows.some((row) => row.agent === 'claude'), 'herdr names the agents it detects');
    const logs = rows.find((row) => row.pane_id === herdr.server.paneIds()[2])!;
    const captured = JSON.parse(ok(await sandbox.drover(['pane', 'capture', logs.pane_key, '-l', '2', '--json'], { env }))) as { content: string };
    assert.equal(captured.content, 'log line 39\nlog line 40\n');
    const before = herdr.server.inputs().length;
    const [processTree, multiline, byFlag] = await Promise.all([
      sandbox.drover(['pane', 'process', logs.pane_id, '--json'], { env }),
      sandbox.drover(['pane', 'deliver', logs.pane_id, '--text', 'one\ntwo'], { env }),
      sandbox.drover(['pane', 'map', '--all-sessions', '--mux', 'herdr'], { env: { DROVER_MUX_ENDPOINT_HERDR: herdr.socketPath } }),
    ]);
    assert.equal(processTree.exitCode, 2, processTree.stderrText());
    assert.equal((JSON.parse(processTree.text()) as { error: { code: string } }).error.code, 'unsupported');
    assert.match(processTree.stderrText(), /^drover: error: reading the process tree of a pane needs paneProcess, and herdr does not support paneProcess: herdr's socket reports no pid/);
    assertFailure(multiline, 2, /delivering text of several lines needs pasteText, and herdr does not support pasteText/);
    assert.equal(herdr.server.inputs().length, before, 'nothing was typed');
    assert.match(ok(byFlag), /^Session +Pane +WinIdx +Tab +Worktree +Change +Stage +Agent\n/);
  });

  it('refuses to open an agent where zellij cannot split beside a pane, naming splitPane, before any pane is made', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const env = { ...zellij.fake.env, DROVER_MUX: 'zellij' };
    const before = (await zellij.port.snapshot()).panes.length;
    const opened = await sandbox.drover(['pane', 'open', '--provider', 'shell', '--json'], { env });
    assert.equal(opened.exitCode, 2, opened.stderrText());
    assert.match(opened.stderrText(), /^drover: error: opening an agent pane needs splitPane, and zellij does not support splitPane: zellij's new-pane opens beside whichever pane has focus/);
    assert.equal((await zellij.port.snapshot()).panes.length, before);
    const rows = JSON.parse(ok(await sandbox.drover(['pane', 'map', '--all-sessions', '--json'], { env }))) as { pane_key: string }[];
    assert.ok(rows.length === before && rows.every((row) => row.pane_key.startsWith('local::zellij::')));
  });
});
