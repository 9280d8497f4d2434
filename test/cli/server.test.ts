import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isProcessAlive, run } from '../../src/process/index.js';
import { resolveExecutable } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

describe('drover up / snapshot / down', () => {
  const sandbox = cliSandbox();

  it('starts a private server, shows it, reuses it and retires it completely', async () => {
    const up = await sandbox.drover(['up', '--json']);
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as { socket_path: string; pid: number; server: string; attach: string[]; snapshot: { sessions: { session_name: string }[] } };
    assert.equal(started.server, 'started');
    assert.ok(started.socket_path.startsWith('/'));
    assert.deepEqual(started.attach, ['tmux', '-S', started.socket_path, 'attach', '-t', 'drover']);
    assert.ok(isProcessAlive(started.pid));

    const snapshot = await sandbox.drover(['snapshot', '--json']);
    assert.equal(snapshot.exitCode, 0, snapshot.stderrText());
    assert.deepEqual((JSON.parse(snapshot.text()) as { sessions: { session_name: string }[] }).sessions.map((s) => s.session_name), ['drover']);

    const text = await sandbox.drover(['up']);
    assert.match(text.text(), /using the private tmux server started earlier/);
    assert.match(text.text(), /attach: tmux -S \S+ attach -t drover/);

    const where = await sandbox.drover(['snapshot', '--json', '--where', '{"field":"pane_current_command","op":"ne","value":"no-such-program"}']);
    assert.equal((JSON.parse(where.text()) as { matches: unknown[] }).matches.length, 1);

    const down = await sandbox.drover(['down', '--json']);
    assert.equal(down.exitCode, 0, down.stderrText());
    assert.equal(isProcessAlive(started.pid), false);
    assert.equal(existsSync(started.socket_path.replace(/\/tmux\.sock$/, '')), false);
    const again = await sandbox.drover(['down']);
    assert.equal(again.exitCode, 0);
    assert.match(again.text(), /nothing to stop/);
  });

  it('gives every pane row in JSON its key, the same key drover mux snapshot gives', async (t) => {
    const server = await startTestServer();
    t.after(() => server.close());
    await server.newSession({ command: ['sleep', '600'], receipt: true });
    const socket = server.endpoint.socketPath;
    const listed = await sandbox.drover(['snapshot', '--json', '-S', socket]);
    assert.equal(listed.exitCode, 0, listed.stderrText());
    const rows = (JSON.parse(listed.text()) as { panes: { pane_id: string; pane_key: string }[] }).panes;
    const mux = await sandbox.drover(['mux', 'snapshot', '--json', '-S', socket]);
    const keys = (JSON.parse(mux.text()) as { panes: { pane_id: string; pane_key: string }[] }).panes.map((pane) => [pane.pane_id, pane.pane_key]).sort();
    assert.ok(keys.length > 0);
    assert.deepEqual(rows.map((row) => [row.pane_id, row.pane_key]).sort(), keys);
    const where = await sandbox.drover(['snapshot', '--json', '-S', socket, '--where', '{"field":"pane_current_command","op":"eq","value":"sleep"}']);
    const matches = (JSON.parse(where.text()) as { matches: { pane_id: string; pane_key: string }[] }).matches;
    assert.deepEqual(matches.map((row) => [row.pane_id, row.pane_key]), keys.filter(([id]) => matches.some((row) => row.pane_id === id)));
    assert.equal(matches.length, 1);
  });

  it('fails clearly when no server runs, and maps usage errors to exit 2', async () => {
    const none = await sandbox.drover(['snapshot']);
    assert.equal(none.exitCode, 1);
    assert.match(none.stderrText(), /no tmux server is running on the default socket/);
    // A shell left from a tmux session that has ended still has $TMUX: say that, not just that a socket is missing.
    const ended = join(sandbox.dir, 'ended', 'tmux.sock');
    for (const args of [['snapshot'], ['pane', 'map']]) {
      const stale = await sandbox.drover(args, { env: { TMUX: `${ended},4242,0`, TMUX_PANE: '%1' } });
      assert.equal(stale.exitCode, 1, stale.stderrText());
      assert.equal(
        stale.stderrText(),
        `drover: error: no tmux server is running at ${ended}, the socket $TMUX names; unset TMUX (this shell may be left from a tmux session that has ended), or name a server with -L/-S\n`,
      );
    }
    const unknown = await sandbox.drover(['up', '--bogus']);
    assert.equal(unknown.exitCode, 2);
    const both = await sandbox.drover(['snapshot', '-L', 'a', '-S', '/tmp/b']);
    assert.equal(both.exitCode, 2);
    const badWhere = await sandbox.drover(['snapshot', '-L', 'drover-none', '--where', '{"field":"nope","op":"eq","value":1}']);
    assert.equal(badWhere.exitCode, 2);
    assert.match(badWhere.stderrText(), /where\.field/);
    // The bundled bin and tsc's unbundled tree find the same manifest from different depths.
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    const version = await sandbox.drover(['--version']);
    assert.equal(version.exitCode, 0);
    assert.equal(version.text(), `${manifest.version}\n`);
    const unbundled = await run([process.execPath, fileURLToPath(new URL('../../src/cli/drover.js', import.meta.url)), '--version'], { env: sandbox.env });
    assert.equal(unbundled.text(), `${manifest.version}\n`);
  });

  it('uses a named server with -L and kills it with down -L', async () => {
    const up = await sandbox.drover(['-L', 'drover-test-named', 'up', '--session', 'work', '--json']);
    assert.equal(up.exitCode, 0, up.stderrText());
    const info = JSON.parse(up.text()) as { owned: boolean; socket_path: string };
    assert.equal(info.owned, false);
    assert.ok(info.socket_path.startsWith(sandbox.dir));
    const snapshot = await sandbox.drover(['snapshot', '--json', '-L', 'drover-test-named']);
    assert.deepEqual((JSON.parse(snapshot.text()) as { sessions: { session_name: string }[] }).sessions.map((s) => s.session_name), ['work']);
    const refused = await sandbox.drover(['down', '-L', 'drover-test-named']);
    assert.equal(refused.exitCode, 1, 'a server drover does not own is killed only when asked to');
    assert.match(refused.stderrText(), /--kill-server/);
    const down = await sandbox.drover(['down', '-L', 'drover-test-named', '--kill-server']);
    assert.equal(down.exitCode, 0, down.stderrText());
    const after = await sandbox.drover(['snapshot', '-L', 'drover-test-named']);
    assert.equal(after.exitCode, 1);

    const text = await sandbox.drover(['-L', 'drover-test-named', 'up']);
    assert.equal(text.exitCode, 0, text.stderrText());
    assert.match(text.text(), /^drover: started tmux on the server you named; it is yours, not drover's private one \(`.*drover\S* down` stops it only with --kill-server\)\n/);
    assert.equal((await sandbox.drover(['down', '-L', 'drover-test-named', '--kill-server'])).exitCode, 0);
  });
});

describe('drover up and the user\'s tmux configuration', () => {
  const sandbox = cliSandbox();
  interface Up {
    socket_path: string;
    tmux_config: { files: string[]; errors: string[] } | null;
    snapshot: { window_links: { window_index: number }[] };
  }
  /** A HOME of its own for one test, with these files in it. */
  const homeWith = (files: Record<string, string>): string => {
    const home = mkdtempSync(join(sandbox.dir, 'home-'));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(home, name)), { recursive: true });
      writeFileSync(join(home, name), text);
    }
    return home;
  };
  const option = async (socket: string, name: string): Promise<string> => (await run(['tmux', '-S', socket, 'show-options', '-gqv', name], { env: sandbox.env })).text().trim();
  // Each test records its own server, whose directory goes under the sandbox: a failing test leaves nothing running.
  const envFor = (home: string): NodeJS.ProcessEnv => ({ HOME: home, TMPDIR: home, DROVER_STATE_DIR: join(home, 'state') });
  const down = async (env: NodeJS.ProcessEnv): Promise<void> => {
    const stopped = await sandbox.drover(['down'], { env });
    assert.equal(stopped.exitCode, 0, stopped.stderrText());
  };

  it('runs ~/.tmux.conf in the private server before its first session, as tmux itself would', async () => {
    const home = homeWith({ '.tmux.conf': 'set -g base-index 1\nset -g @drover-probe loaded\n' });
    const env = envFor(home);
    const up = await sandbox.drover(['up', '--json'], { env });
    assert.equal(up.exitCode, 0, up.stderrText());
    assert.equal(up.stderrText(), '');
    const started = JSON.parse(up.text()) as Up;
    // A system-wide file runs first wherever there is one, as tmux runs it.
    const system = existsSync('/etc/tmux.conf') ? ['/etc/tmux.conf'] : [];
    assert.deepEqual(started.tmux_config, { files: [...system, join(home, '.tmux.conf')], errors: [] });
    assert.deepEqual(started.snapshot.window_links.map((link) => link.window_index), [1], 'base-index held for the first session');
    assert.equal(await option(started.socket_path, '@drover-probe'), 'loaded');
    const text = await sandbox.drover(['up'], { env });
    assert.doesNotMatch(text.text(), /^config:/m, 'a server that was already running reports no configuration');
    await down(env);
    const again = await sandbox.drover(['up'], { env });
    assert.match(again.text(), new RegExp(`^config: ${[...system, join(home, '.tmux.conf')].join(', ')}$`, 'm'));
    await down(env);
  });

  it('runs the files of --tmux-config instead, in order, and /dev/null for none', async () => {
    const home = homeWith({ '.tmux.conf': 'set -g @from-home yes\n', 'first.conf': 'set -g @order first\n', 'second.conf': 'set -g @order second\nset -g base-index 3\n' });
    const env = envFor(home);
    const up = await sandbox.drover(['up', '--json', '--tmux-config', 'first.conf', '--tmux-config', join(home, 'second.conf')], { env, cwd: home });
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as Up;
    assert.deepEqual(started.tmux_config?.files, [join(home, 'first.conf'), join(home, 'second.conf')]);
    assert.equal(await option(started.socket_path, '@order'), 'second');
    assert.equal(await option(started.socket_path, '@from-home'), '');
    assert.deepEqual(started.snapshot.window_links.map((link) => link.window_index), [3]);
    const reused = await sandbox.drover(['up', '--tmux-config', '/dev/null'], { env });
    assert.equal(reused.exitCode, 0, reused.stderrText());
    assert.match(reused.stderrText(), /^drover: warning: --tmux-config changed nothing: the server was already running$/m);
    await down(env);
    const none = await sandbox.drover(['up', '--json', '--tmux-config', '/dev/null'], { env });
    const bare = JSON.parse(none.text()) as Up;
    assert.equal(await option(bare.socket_path, '@from-home'), '');
    assert.deepEqual(bare.snapshot.window_links.map((link) => link.window_index), [0]);
    await down(env);
  });

  it('keeps a server whose configuration has errors and says what tmux reported, file and line', async () => {
    const home = homeWith({
      // An unknown option fails while the file runs: the lines around it still apply.
      '.tmux.conf': 'set -g @before yes\nset -g no-such-option 1\nset -g @after yes\n',
      // A syntax error stops the whole file before any of it runs.
      'broken.conf': 'set -g @broken-ran yes\nbind-key -T\n',
    });
    const env = envFor(home);
    const up = await sandbox.drover(['up', '--json', '--tmux-config', join(home, '.tmux.conf'), '--tmux-config', join(home, 'broken.conf')], { env });
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as Up;
    assert.equal(started.tmux_config?.errors.length, 2, up.stderrText());
    assert.match(started.tmux_config!.errors[0]!, new RegExp(`^${join(home, '.tmux.conf')}: invalid option: no-such-option$`));
    assert.match(started.tmux_config!.errors[1]!, new RegExp(`^${join(home, 'broken.conf')}:2: `));
    assert.equal(
      up.stderrText(),
      ['drover: warning: tmux reported errors in its configuration; the server runs without what failed:', ...started.tmux_config!.errors.map((line) => `  ${line}`), ''].join('\n'),
    );
    assert.deepEqual([await option(started.socket_path, '@before'), await option(started.socket_path, '@after'), await option(started.socket_path, '@broken-ran')], ['yes', 'yes', '']);
    await down(env);
  });

  it('starts one private server when several drover up run at once, and each reports that one', async () => {
    const home = homeWith({});
    const env = envFor(home);
    // Each private server has a directory of its own under TMPDIR, with its socket in it.
    const servers = (): string[] => readdirSync(home).filter((name) => existsSync(join(home, name, 'tmux.sock')));
    const ups = await Promise.all([1, 2, 3, 4].map(() => sandbox.drover(['up', '--json'], { env })));
    for (const up of ups) assert.equal(up.exitCode, 0, up.stderrText());
    const reports = ups.map((up) => JSON.parse(up.text()) as Up & { pid: number; server: string });
    assert.deepEqual(reports.map((r) => r.server).sort(), ['reused', 'reused', 'reused', 'started']);
    assert.equal(new Set(reports.map((r) => r.pid)).size, 1, 'every up names the same server');
    assert.equal(new Set(reports.map((r) => r.socket_path)).size, 1);
    assert.equal(servers().length, 1, 'no second server was started and left unrecorded');
    const stops = await Promise.all([1, 2].map(() => sandbox.drover(['down', '--json'], { env })));
    assert.deepEqual(stops.map((stop) => (JSON.parse(stop.text()) as { stopped: boolean }).stopped).sort(), [false, true]);
    assert.deepEqual(servers(), []);
  });

  it('refuses a --tmux-config file it cannot read before starting anything', async () => {
    const home = homeWith({});
    const env = envFor(home);
    for (const [given, reason] of [
      [join(home, 'missing.conf'), 'no such file, ENOENT'],
      [home, 'it is a directory'],
    ] as const) {
      const refused = await sandbox.drover(['up', '--tmux-config', given], { env });
      assert.equal(refused.exitCode, 2, refused.stderrText());
      assert.equal(refused.stderrText(), `drover: error: --tmux-config ${given}: cannot read the tmux configuration file (${reason})\n`);
    }
    assert.equal(existsSync(join(home, 'state', 'up.json')), false, 'no server was started or recorded');
  });

  it('starts a named server with --tmux-config through tmux itself', async () => {
    const home = homeWith({ 'named.conf': 'set -g base-index 7\n' });
    const env = envFor(home);
    const up = await sandbox.drover(['-L', 'drover-test-config', 'up', '--json', '--tmux-config', join(home, 'named.conf')], { env });
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as Up;
    assert.equal(started.tmux_config, null, 'tmux ran the file itself and reports its errors in the first pane');
    assert.deepEqual(started.snapshot.window_links.map((link) => link.window_index), [7]);
    const killed = await sandbox.drover(['down', '-L', 'drover-test-config', '--kill-server'], { env });
    assert.equal(killed.exitCode, 0, killed.stderrText());
  });
});

describe('drover snapshot --where under hostile input', () => {
  const sandbox = cliSandbox();

  it('matches a runaway pattern against a pane title in linear time, and refuses deep nesting by its limit', async () => {
    const server = await startTestServer();
    try {
      const pane = (await (await server.newSession({ command: ['cat'] })).listPanes())[0]!;
      await pane.setTitle(`${'a'.repeat(40)}!`);
      const socket = ['-S', server.endpoint.socketPath];
      const runaway = await sandbox.drover([...socket, 'snapshot', '--json', '--where', '{"field":"pane_title","op":"regex","value":"^(a+)+$"}']);
      assert.equal(runaway.exitCode, 0, runaway.stderrText());
      assert.deepEqual((JSON.parse(runaway.text()) as { matches: unknown[] }).matches, []);
      let deep = '{"field":"pane_id","op":"eq","value":"%0"}';
      for (let i = 0; i < 3000; i += 1) deep = `{"not":${deep}}`;
      const nested = await sandbox.drover([...socket, 'snapshot', '--where', deep]);
      assert.equal(nested.exitCode, 2, nested.stderrText());
      assert.match(nested.stderrText(), /nested deeper than 32/);
    } finally {
      await server.close();
    }
  });
});

describe('drover snapshot keeps criteria values out of its messages, and says when it cannot cover a server', () => {
  const sandbox = cliSandbox();

  it('refuses malformed --where criteria naming the place, never the value', async () => {
    const secret = 'tok_SECRET_4242';
    for (const where of [`{"field":"pane_title","op":"eq","value":${secret}}`, `{"field":"pane_title","op":"regex","value":"(${secret}"}`]) {
      for (const json of [[], ['--json']]) {
        const refused = await sandbox.drover(['snapshot', '-L', 'drover-none', ...json, '--where', where]);
        assert.equal(refused.exitCode, 2, refused.stderrText());
        assert.match(refused.stderrText(), /invalid criteria at /);
        assert.ok(!refused.stderrText().includes(secret) && !refused.text().includes(secret), refused.stderrText() + refused.text());
      }
    }
  });

  it('reports a server whose listing is over the snapshot bound as incomplete_snapshot', async () => {
    const server = await startTestServer();
    try {
      await server.newSession({ command: ['cat'] });
      // 20 windows named with 60 000 bytes each: a listing of 1.2 MB, over the 1 MiB a snapshot reads.
      const config = join(sandbox.dir, 'long-window-names.conf');
      writeFileSync(config, Array.from({ length: 20 }, (_, i) => `new-window -d -n ${String(i).padStart(2, '0')}${'w'.repeat(60_000)} cat\n`).join(''));
      await server.sourceFile(config, { timeoutMs: 20_000 });
      const snapshot = await sandbox.drover(['snapshot', '--json', '-S', server.endpoint.socketPath]);
      assert.equal(snapshot.exitCode, 1, snapshot.stderrText());
      assert.equal((JSON.parse(snapshot.text()) as { error: { code: string } }).error.code, 'incomplete_snapshot');
      assert.match(snapshot.stderrText(), /snapshot/);
    } finally {
      await server.close();
    }
  });
});

describe('drover down never stops the wrong server', () => {
  const sandbox = cliSandbox();
  const stateFile = (): string => join(sandbox.env.DROVER_STATE_DIR!, 'up.json');

  it('down -S kills only the server drover up started, unless --kill-server is given', async () => {
    const other = await startTestServer();
    try {
      const pid = other.ownedRecord!.pid;
      const refused = await sandbox.drover(['down', '-S', other.endpoint.socketPath]);
      assert.equal(refused.exitCode, 1);
      assert.match(refused.stderrText(), /not the private server `drover up` started.*--kill-server/);
      assert.equal(isProcessAlive(pid), true, 'the server is still running');
      const killed = await sandbox.drover(['down', '-S', other.endpoint.socketPath, '--kill-server', '--json']);
      assert.equal(killed.exitCode, 0, killed.stderrText());
      assert.deepEqual(JSON.parse(killed.text()), { stopped: true, socket_path: other.endpoint.socketPath, owned: false });
      await eventually('the killed server to exit', () => !isProcessAlive(pid));
    } finally {
      await other.close().catch(() => undefined);
    }
    const up = await sandbox.drover(['up', '--json']);
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as { socket_path: string; pid: number };
    const down = await sandbox.drover(['down', '-S', started.socket_path]);
    assert.equal(down.exitCode, 0, down.stderrText());
    assert.equal(isProcessAlive(started.pid), false);
    assert.equal(existsSync(dirname(started.socket_path)), false);
  });

  it('forgets a recorded server that is gone, even when its pid now belongs to another process', async () => {
    const directory = mkdtempSync(join(sandbox.dir, 'drover-'));
    // The recorded pid is alive (it is this test's own process) but is no tmux server.
    const wedged = JSON.stringify({ record: { directory, socketPath: join(directory, 'tmux.sock'), pid: process.pid, executable: resolveExecutable('tmux'), startTime: 1 }, session: 'drover', startedAt: 'then' });
    mkdirSync(dirname(stateFile()), { recursive: true });
    writeFileSync(stateFile(), wedged);
    const down = await sandbox.drover(['down']);
    assert.equal(down.exitCode, 0, down.stderrText());
    assert.match(down.stderrText(), new RegExp(`no longer runs.*forgot it \\(${stateFile().replace(/[.]/g, '\\.')}\\)`));
    assert.equal(existsSync(stateFile()), false);
    assert.equal(existsSync(directory), false);

    mkdirSync(directory);
    writeFileSync(stateFile(), wedged);
    const up = await sandbox.drover(['up', '--json']);
    assert.equal(up.exitCode, 0, up.stderrText());
    assert.equal((JSON.parse(up.text()) as { server: string }).server, 'started');
    assert.match(up.stderrText(), /no longer runs/);
    assert.equal((await sandbox.drover(['down'])).exitCode, 0);
  });
});

describe('drover up FILE', () => {
  const sandbox = cliSandbox();
  // The panes run cat, not a shell: the dispatched agent commands are only echoed.
  sandbox.env.SHELL = '/bin/cat';
  const example = fileURLToPath(new URL('../../../examples/agent-fleet.yaml', import.meta.url));

  it('loads the workspace onto a private server it starts, and down removes everything', async () => {
    const up = await sandbox.drover(['up', '--json', example]);
    assert.equal(up.exitCode, 0, up.stderrText());
    const started = JSON.parse(up.text()) as { server: string; session: string; pid: number; socket_path: string; attach: string[]; workspace: { success: boolean; created: unknown[] } };
    assert.deepEqual([started.server, started.session, started.workspace.success], ['started', 'agent-fleet', true]);
    assert.equal(started.workspace.created.length, 6);
    assert.deepEqual(started.attach, ['tmux', '-S', started.socket_path, 'attach', '-t', 'agent-fleet']);

    const snapshot = await sandbox.drover(['snapshot', '--json']);
    assert.equal(snapshot.exitCode, 0, snapshot.stderrText());
    const { sessions, windows, panes } = JSON.parse(snapshot.text()) as { sessions: { session_name: string }[]; windows: { window_name: string }[]; panes: unknown[] };
    assert.deepEqual(sessions.map((s) => s.session_name), ['agent-fleet']);
    assert.deepEqual(windows.map((w) => w.window_name), ['fleet']);
    assert.equal(panes.length, 4);

    const text = await sandbox.drover(['up', example]);
    assert.equal(text.exitCode, 1, 'the session exists now: a conflict before any effect');
    assert.match(text.stderrText(), /already exists/);

    const down = await sandbox.drover(['down']);
    assert.equal(down.exitCode, 0, down.stderrText());
    assert.equal(isProcessAlive(started.pid), false);
    assert.equal(existsSync(dirname(started.socket_path)), false);
  });

  it('refuses a bad file or --session before starting anything', async () => {
    const bad = await sandbox.drover(['up', join(sandbox.dir, 'missing.yaml')]);
    assert.equal(bad.exitCode, 2);
    const session = await sandbox.drover(['up', '--session', 'other', example]);
    assert.equal(session.exitCode, 2);
    const fileFlag = await sandbox.drover(['up', '--compensate']);
    assert.equal(fileFlag.exitCode, 2);
    assert.match(fileFlag.stderrText(), /go with a workspace file/);
    assert.match((await sandbox.drover(['down'])).text(), /nothing to stop/);
  });

  it('retires the server it started when a compensated load leaves it empty (exit 3)', async () => {
    const failing = join(sandbox.dir, 'failing.yaml');
    writeFileSync(failing, 'session_name: broken\nwindows:\n  - panes: [null]\n  - options: {mode-keys: nonsense}\n');
    const up = await sandbox.drover(['up', '--json', '--compensate', failing]);
    assert.equal(up.exitCode, 3, up.stderrText());
    const result = JSON.parse(up.text()) as { success: boolean; compensation: string; socket_path: string };
    assert.deepEqual([result.success, result.compensation], [false, 'completed']);
    assert.equal(existsSync(dirname(result.socket_path)), false);
    assert.match((await sandbox.drover(['down'])).text(), /nothing to stop/);
  });

  it('loads onto a named server, starting it without leaving a stray session', async () => {
    const up = await sandbox.drover(['-L', 'drover-test-up-file', 'up', example]);
    assert.equal(up.exitCode, 0, up.stderrText());
    assert.match(up.text(), /loaded workspace "agent-fleet"/);
    assert.match(up.text(), /attach: tmux -L drover-test-up-file attach -t agent-fleet/);
    const snapshot = await sandbox.drover(['snapshot', '--json', '-L', 'drover-test-up-file']);
    assert.deepEqual((JSON.parse(snapshot.text()) as { sessions: { session_name: string }[] }).sessions.map((s) => s.session_name), ['agent-fleet']);
    assert.equal((await sandbox.drover(['down', '-L', 'drover-test-up-file', '--kill-server'])).exitCode, 0);
  });
});
