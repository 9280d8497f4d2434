import assert from 'node:assert/strict';
import fs, { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isProcessAlive as isAlive, processDiagnostics } from '../../src/process/index.js';
import {
  AbortedError,
  ArgumentError,
  ClosedError,
  CommandError,
  Criteria,
  Endpoint,
  IncompleteSnapshotError,
  NoMatchError,
  MultipleMatchesError,
  Server,
  ServerUnreachableError,
  TargetNotFoundError,
  TimeoutError,
  resolveExecutable,
  type Pane,
} from '../../src/tmux/index.js';
import { childPids, commandLine, groupMembers } from '../support/proc.js';
import { startTestServer, testEnvironment, useTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/**
 * Whether a pane's own process has exec'd `name`. Until it does it is a forked copy of the
 * tmux server, which tmux reports as `tmux`, possibly still in the server's directory.
 */
function hasExeced(panePid: number | null | undefined, name: string): boolean {
  try {
    return readFileSync(`/proc/${panePid}/comm`, 'utf8').trim() === name;
  } catch {
    return false;
  }
}

describe('owned server lifecycle', () => {
  it('starts a private daemon and retires it and its directory on close', async () => {
    const server = await startTestServer();
    const record = server.ownedRecord!;
    assert.equal(server.ownsDaemon, true);
    assert.ok(existsSync(record.socketPath));
    assert.equal((readFileSync(join(record.directory, 'tmux.conf'), 'utf8')), '');
    assert.ok(isAlive(record.pid));
    await server.close();
    assert.equal(existsSync(record.directory), false);
    assert.equal(isAlive(record.pid), false);
    await server.close();
    await assert.rejects(server.run(['list-sessions']), ClosedError);
  });

  it('applies an explicit configuration', async () => {
    await withServer(async (server) => {
      assert.equal((await server.options('global-session').get('history-limit')).as('integer'), 1234);
    }, { config: 'set -g history-limit 1234\n' });
  });

  it('borrows a running server without owning it', async () => {
    await withServer(async (owner) => {
      const borrowed = await Server.open(owner.endpoint);
      assert.equal(borrowed.ownsDaemon, false);
      await borrowed.newSession({ name: 'borrowed' });
      await borrowed.close();
      assert.equal((await owner.listSessions()).length, 1);
    });
  });

  /** What a start that is meant to fail ended with; a server it started anyway is retired first. */
  async function startOutcome(start: Promise<Server>): Promise<unknown> {
    return start.then(
      async (server) => {
        await server.close();
        return server;
      },
      (error: unknown) => error,
    );
  }

  it('start with an already aborted signal fails with AbortedError and creates nothing', async () => {
    const base = mkdtempSync(join(tmpdir(), 'drover-test-'));
    try {
      const children = childPids();
      const outcome = await startOutcome(startTestServer({ tmpDir: base, signal: AbortSignal.abort() }));
      assert.ok(outcome instanceof AbortedError, String(outcome));
      assert.deepEqual(readdirSync(base), []);
      assert.deepEqual(childPids().filter((pid) => !children.includes(pid)), []);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('start aborted while it waits for the socket ends at once and leaves nothing behind', async () => {
    const base = mkdtempSync(join(tmpdir(), 'drover-test-'));
    try {
      // A daemon that never creates its socket.
      const silentTmux = join(base, 'silent-tmux');
      writeFileSync(silentTmux, `#!/bin/sh\ncase " $* " in *" -D "*) exec sleep 30 ;; esac\nexec ${resolveExecutable('tmux')} "$@"\n`, { mode: 0o755 });
      const controller = new AbortController();
      const starting = startOutcome(startTestServer({ tmpDir: base, executable: silentTmux, signal: controller.signal }));
      const daemon = await eventually('the daemon process', () => childPids().find((pid) => commandLine(pid).join(' ') === 'sleep 30'));
      controller.abort();
      const outcome = await starting;
      assert.ok(outcome instanceof AbortedError, String(outcome));
      assert.deepEqual(readdirSync(base), ['silent-tmux']);
      assert.equal(isAlive(daemon), false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('start aborted while tmux is starting leaves no server process, socket or private directory', async () => {
    const base = mkdtempSync(join(tmpdir(), 'drover-test-'));
    try {
      const controller = new AbortController();
      // tmux answers its first client only once the configuration has run: the start is under way for 30 s.
      const starting = startOutcome(startTestServer({ tmpDir: base, signal: controller.signal, config: 'run-shell "sleep 30"\n' }));
      const socket = await eventually('the daemon to create its socket', () => readdirSync(base).map((dir) => join(base, dir, 'tmux.sock')).find((path) => existsSync(path)));
      const daemon = await eventually('the daemon process', () => childPids().find((pid) => commandLine(pid).includes(socket)));
      controller.abort();
      const outcome = await starting;
      assert.ok(outcome instanceof AbortedError, String(outcome));
      assert.equal((outcome as AbortedError).phase, 'start');
      assert.deepEqual(readdirSync(base), []);
      assert.equal(isAlive(daemon), false);
      // The configuration's job ran in the daemon's process group; nothing of it is left either.
      assert.deepEqual(groupMembers(daemon), []);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('waits for the socket by a filesystem event, not by polling for it', async () => {
    const base = mkdtempSync(join(tmpdir(), 'drover-test-'));
    const slowTmux = join(base, 'slow-tmux');
    // The daemon (tmux -D) takes 300 ms to create its socket; every other tmux command runs at once.
    writeFileSync(slowTmux, `#!/bin/sh\ncase " $* " in *" -D "*) sleep 0.3 ;; esac\nexec ${resolveExecutable('tmux')} "$@"\n`, { mode: 0o755 });
    // Every stat drover makes of the socket is counted (ES module imports of node:fs follow this once synced).
    const writableFs = fs as { statSync: typeof fs.statSync };
    const statSync = fs.statSync;
    let socketStats = 0;
    writableFs.statSync = ((path: fs.PathLike, ...rest: unknown[]) => {
      if (String(path).startsWith(base) && String(path).endsWith('tmux.sock')) socketStats += 1;
      return (statSync as (...args: unknown[]) => unknown)(path, ...rest);
    }) as typeof fs.statSync;
    syncBuiltinESMExports();
    try {
      const server = await startTestServer({ tmpDir: base, executable: slowTmux });
      await server.close();
    } finally {
      writableFs.statSync = statSync;
      syncBuiltinESMExports();
      rmSync(base, { recursive: true, force: true });
    }
    // A look when the wait begins, one per event on the directory, one to bind it: a handful. Polling looks a hundred times.
    assert.ok(socketStats <= 10, `the socket was looked at ${socketStats} times while tmux took 300 ms to create it`);
  });

  it('refuses to open a socket where no server runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    try {
      await assert.rejects(Server.open(Endpoint.fromSocketPath(join(dir, 'none'))), ServerUnreachableError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('snapshot coverage', () => {
  it('a snapshot cut at one of its bounds fails with IncompleteSnapshotError naming the bound, rather than returning less', async () => {
    await withServer(async (server) => {
      await server.newSession({ command: ['cat'] });
      const bounds: [Parameters<Server['snapshot']>[0], string][] = [
        [{ limits: { maxRows: 2 } }, 'snapshot_rows'],
        [{ limits: { maxBytes: 64 } }, 'snapshot_bytes'],
        [{ limits: { maxFieldBytes: 1 } }, 'field_bytes'],
      ];
      for (const [options, limit] of bounds) {
        await assert.rejects(server.snapshot(options), (error: unknown) => error instanceof IncompleteSnapshotError && error.limit === limit && error.delivery === 'observed');
      }
      const whole = await server.snapshot();
      assert.equal(whole.panes.size, 1);
      assert.throws(() => whole.clients, IncompleteSnapshotError);
    });
  });
});

/** The same operations and assertions over a spawned client per command and over a control connection. */
for (const transport of ['spawn', 'control'] as const) describe(`server operations (${transport} transport)`, () => {
  const t = useTestServer();
  before(async () => {
    if (transport === 'control') await t.server.connect();
    assert.equal(t.server.transportKind, transport);
  });

  it('creates sessions, windows and panes and returns the exact ids', async () => {
    const receipt = await t.server.newSession({ name: 'create', windowName: 'first', receipt: true });
    assert.match(receipt.session.id, /^\$\d+$/);
    assert.match(receipt.window.id, /^@\d+$/);
    assert.match(receipt.pane.id, /^%\d+$/);
    const window = await receipt.session.newWindow({ name: 'second', index: 5 });
    const pane = await window.split({ direction: 'horizontal', size: '30%' });
    const snapshot = await t.server.snapshot();
    const record = snapshot.pane(pane.id)!;
    assert.equal(record.windowId, window.id);
    assert.equal(snapshot.window(window.id)!.windowName, 'second');
    assert.equal(snapshot.window(window.id)!.links()[0]!.windowIndex, 5);
    assert.equal(snapshot.window(window.id)!.windowPanes, 2);
    // New windows and splits do not take focus.
    assert.equal(snapshot.session(receipt.session.id)!.windows().where({ field: 'window_name', op: 'eq', value: 'first' }).one().links()[0]!.windowActive, true);
    await assert.rejects(receipt.session.newWindow({ index: 5 }), CommandError);
  });

  it('round-trips hostile names through the snapshot', async () => {
    const name = 'x #{session_id} #(echo no); ;é😀';
    const session = await t.server.newSession({ name: `${name};`, windowName: `${name}#` });
    const record = (await t.server.snapshot()).session(session.id)!;
    assert.equal(record.sessionName, `${name};`);
    assert.equal(record.windows().one().windowName, `${name}#`);
    // tmux itself stores control characters in names in its escaped form; the snapshot reports exactly what tmux stores.
    await session.rename('tab\there\nnewline');
    const stored = (await session.display('#{session_name}')).toString('utf8');
    assert.equal((await t.server.snapshot()).session(session.id)!.sessionName, stored);
  });

  it('frames raw tabs, newlines and invalid UTF-8 in captured values', async () => {
    const base = mkdtempSync(join(tmpdir(), 'drover-test-'));
    // Node cannot put invalid UTF-8 in argv, so the shell makes the directory name.
    const expected = Buffer.concat([Buffer.from(`${base}/a\tb\nc:9:`), Buffer.from([0xff, 0x41])]);
    try {
      const session = await t.server.newSession({ command: ['sh', '-c', 'd=$(printf "%s/a\\tb\\nc:9:\\377A" "$0"); mkdir "$d" && cd "$d" && exec sleep 30', base] });
      const paneId = (await session.listPanes())[0]!.id;
      const record = await eventually('the pane to run sleep in the new directory', async () => {
        const found = (await t.server.snapshot()).pane(paneId);
        // The shell changes directory before it execs sleep, so wait for both.
        return found && found.raw('pane_current_path').equals(expected) && found.paneCurrentCommand === 'sleep' ? found : undefined;
      });
      assert.throws(() => record.paneCurrentPath, /UTF-8/);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('lists a pane whose program keeps renaming itself without tearing its row', async () => {
    // tmux reads a pane's command from the system at each mention; with a length prefix read
    // apart from the bytes, about one listing in fifteen of this pane came out torn.
    const names = ['a', 'a-much-longer-name'];
    const session = await t.server.newSession({ command: ['perl', '-e', `$0 = ($i++ % 2) ? "${names[0]}" : "${names[1]}", select(undef, undef, undef, 0.0002) while 1`] });
    try {
      const paneId = (await session.listPanes())[0]!.id;
      const seen = new Set<string | null>();
      for (let i = 0; i < 150; i += 1) seen.add((await t.server.snapshot()).pane(paneId)!.paneCurrentCommand);
      seen.delete('perl'); // before its first rename
      assert.deepEqual([...seen].sort(), names);
    } finally {
      await session.kill();
    }
  });

  it('reads the whole graph in one tmux invocation', async () => {
    const session = await t.server.newSession({ name: 'many' });
    for (let i = 0; i < 6; i += 1) await session.newWindow();
    const before = processDiagnostics().spawned;
    const snapshot = await t.server.snapshot();
    // One spawned client, or one exchange over the control connection already open.
    assert.equal(processDiagnostics().spawned - before, transport === 'spawn' ? 1 : 0);
    assert.ok(snapshot.panes.size >= 7);
    assert.equal(snapshot.session(session.id)!.windows().size, 7);
  });

  it('searches panes with criteria and distinguishes no match from ambiguity', async () => {
    const session = await t.server.newSession({ name: 'search', command: ['sleep', '60'] });
    const first = (await session.listPanes())[0]!;
    const second = await first.split({ direction: 'vertical', command: ['sleep', '61'] });
    // tmux answers before the new panes exec their command; search only once both run sleep.
    await eventually('both search panes to exec sleep', async () => {
      const snapshot = await t.server.snapshot();
      return [first, second].every((pane) => hasExeced(snapshot.pane(pane.id)?.panePid, 'sleep'));
    });
    const sleeping = await t.server.searchPanes({
      and: [
        { field: 'pane_current_command', op: 'eq', value: 'sleep' },
        { some: { relation: 'sessions', where: { field: 'session_name', op: 'eq', value: 'search' } } },
      ],
    });
    assert.equal(sleeping.size, 2);
    assert.throws(() => sleeping.one(), MultipleMatchesError);
    const none = await t.server.searchPanes(JSON.stringify({ version: 1, entity: 'pane', where: { field: 'pane_title', op: 'eq', value: 'no such title' } }));
    assert.throws(() => none.one(), NoMatchError);
    assert.equal(none.oneOrUndefined(), undefined);
    assert.throws(() => Criteria.fromJSON({ version: 1, entity: 'pane', where: { field: 'pane_nope', op: 'eq', value: 1 } }), /pane_nope/);
  });

  it('sends literal text and keys, and captures the screen', async () => {
    const session = await t.server.newSession({ name: 'io', command: ['cat'] });
    const pane = (await session.listPanes())[0]!;
    await pane.sendText('-n literal $HOME #{pane_id} Enter;');
    await pane.sendKeys(['Enter']);
    const screen = await eventually('the typed line and its echo by cat', async () => {
      const text = (await pane.capture()).toString('utf8');
      return text.split('\n').filter((l) => l.includes('literal')).length >= 2 ? text : undefined;
    });
    assert.match(screen, /-n literal \$HOME #\{pane_id\} Enter;/);
    const withEscapes = await pane.capture({ escapes: true, start: '-', end: '-' });
    assert.ok(withEscapes.includes(Buffer.from('literal')));
  });

  it('runs a single-element command directly, not through sh -c', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    const script = join(dir, 'has space.sh');
    const marker = join(dir, 'ran');
    writeFileSync(script, `#!/bin/sh\necho ok > '${marker}'\nexec sleep 30\n`);
    chmodSync(script, 0o755);
    try {
      await t.server.newSession({ command: [script] });
      await eventually('the script to write its marker', async () => existsSync(marker));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('passes environment values literally and checks cwd before dispatch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    const out = join(dir, 'env');
    try {
      const value = '$HOME;#{pane_id} `id` ;';
      await t.server.newSession({ cwd: dir, env: { DROVER_X: value }, command: ['sh', '-c', `printf %s "$DROVER_X" > '${out}'; pwd >> '${out}'; exec sleep 30`] });
      const written = await eventually('the pane command to write its environment and directory', async () => (existsSync(out) && readFileSync(out, 'utf8').includes('\n') ? readFileSync(out, 'utf8') : undefined));
      assert.equal(written, `${value}${dir}\n`);
      const before = processDiagnostics().spawned;
      await assert.rejects(t.server.newSession({ cwd: join(dir, 'missing') }), ArgumentError);
      await assert.rejects(t.server.newSession({ env: { 'BAD NAME': 'x' } }), ArgumentError);
      assert.equal(processDiagnostics().spawned, before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('starts a window without a cwd in the caller\'s directory, not the session\'s', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    try {
      const session = await t.server.newSession({ cwd: dir, command: ['sleep', '30'] });
      const window = await session.newWindow({ command: ['sleep', '30'] });
      const pane = (await window.listPanes())[0]!;
      // Until sleep is exec'd the pane may still sit in the server's own directory.
      const path = await eventually('the new window to exec sleep', async () => {
        const record = await pane.snapshot();
        return hasExeced(record.panePid, 'sleep') ? record.paneCurrentPath : undefined;
      });
      assert.equal(path, realpathSync(process.cwd()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("hands a new pane the PATH of the binding that made it, not the server's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
    const own = `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    const env = testEnvironment({ ...process.env, PATH: own });
    const binding = await Server.open(t.server.endpoint, { env });
    try {
      if (transport === 'control') await binding.connect();
      // Renamed into place once written: `>` creates the file before printf fills it.
      const report = (name: string): string[] => ['sh', '-c', `printf %s "$PATH" > ${name}.part && mv ${name}.part ${name}; exec sleep 30`];
      const session = await binding.newSession({ cwd: dir, command: report('session') });
      await session.newWindow({ cwd: dir, command: report('window') });
      for (const name of ['session', 'window']) {
        const path = await eventually(`the ${name} pane to write its PATH`, async () => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : undefined));
        assert.equal(path, own, name);
      }
      await session.kill();
    } finally {
      await binding.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a killed pane as not found instead of succeeding', async () => {
    const session = await t.server.newSession();
    const pane = await (await session.listPanes())[0]!.split({ direction: 'vertical' });
    await pane.kill();
    await assert.rejects(pane.kill(), TargetNotFoundError);
    await assert.rejects(pane.display('#{pane_id}'), TargetNotFoundError);
    await assert.rejects(pane.sendText('x'), TargetNotFoundError);
    assert.equal(await pane.exists(), false);
  });

  it('checks the target identity in display replies', async () => {
    const session = await t.server.newSession({ name: 'disp' });
    const pane = (await session.listPanes())[0]!;
    assert.equal((await pane.display('#{session_name}:#{pane_id}')).toString(), `disp:${pane.id}`);
    // tmux answers a display for a missing pane from some other pane; drover does not.
    const ghost = t.server.pane('%99999');
    const raw = await t.server.run(['display-message', '-p', '-t', '%99999', 'x']);
    assert.equal(raw.ok, true);
    await assert.rejects(ghost.display('x'), TargetNotFoundError);
  });

  it('sets, lists, runs and unsets hooks at an explicit scope', async () => {
    const session = await t.server.newSession();
    const hooks = session.hooks();
    await hooks.set('session-renamed', 'set-option -g @drover_hook_ran yes');
    assert.ok((await hooks.list()).some((line) => line.includes('@drover_hook_ran')));
    await hooks.run('session-renamed');
    assert.equal((await t.server.options('global-session').get('@drover_hook_ran')).as('string'), 'yes');
    await hooks.unset('session-renamed');
    assert.ok(!(await hooks.list()).some((line) => line.includes('@drover_hook_ran')));
  });

  it('keeps absent and empty options apart', async () => {
    const session = await t.server.newSession();
    const pane = (await session.listPanes())[0]!;
    assert.equal(await pane.options().getOrUndefined('@drover_absent'), undefined);
    await assert.rejects(pane.options().get('@drover_absent'), NoMatchError);
    await pane.options().set('@drover_empty', '');
    assert.equal((await pane.options().get('@drover_empty')).as('string'), '');
    await pane.options().set('@drover_flag', true);
    assert.equal((await pane.options().get('@drover_flag')).as('boolean'), true);
    await pane.options().unset('@drover_flag');
    assert.equal(await pane.options().getOrUndefined('@drover_flag'), undefined);
    await session.options().set('status', false);
    assert.equal((await session.options().get('status', { inherited: false })).as('boolean'), false);
  });

  it('reads and writes environments and binary buffers', async () => {
    const session = await t.server.newSession();
    const env = session.environment();
    await env.set('DROVER_V', 'a b;#');
    assert.equal(await env.get('DROVER_V'), 'a b;#');
    await env.set('DROVER_EMPTY', '');
    assert.equal(await env.get('DROVER_EMPTY'), '');
    await env.unset('DROVER_V');
    assert.equal(await env.get('DROVER_V'), null, 'recorded as unset, not removed');
    assert.equal((await env.list()).get('DROVER_V'), null);
    await env.remove('DROVER_V');
    await assert.rejects(env.get('DROVER_V'), NoMatchError);
    await env.unset('DROVER_NEVER_SET');
    assert.equal(await env.get('DROVER_NEVER_SET'), null);
    const bytes = Buffer.from([0, 1, 2, 0xff, 0x0a, 0x3b]);
    await t.server.buffers().write('drover-bin', bytes);
    assert.deepEqual(await t.server.buffers().read('drover-bin'), bytes);
    assert.ok((await t.server.buffers().list()).some((b) => b.name === 'drover-bin' && b.size === 6));
    await t.server.buffers().delete('drover-bin');
    await assert.rejects(t.server.buffers().read('drover-bin'), CommandError);
  });

  it('sources exactly the file named, never what a pattern in its name matches', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-source-'));
    try {
      writeFileSync(join(dir, 'evil.conf'), 'set -g @drover_sourced evil\n');
      await assert.rejects(t.server.sourceFile(join(dir, '*.conf')), CommandError);
      await assert.rejects(t.server.sourceFile(join(dir, 'e?il.conf')), CommandError);
      assert.equal(await t.server.options('global-session').getOrUndefined('@drover_sourced'), undefined);
      writeFileSync(join(dir, 'odd[1]*.conf'), 'set -g @drover_sourced literal\n');
      await t.server.sourceFile(join(dir, 'odd[1]*.conf'));
      assert.equal((await t.server.options('global-session').get('@drover_sourced')).as('string'), 'literal');
    } finally {
      await t.server.options('global-session').unset('@drover_sourced');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('waits for a channel within the deadline, and a signal releases it whether it comes first or after', async () => {
    // Nobody signals this channel: the wait holds until its deadline.
    await assert.rejects(t.server.waitFor('drover-never', 'wait', { timeoutMs: 300 }), TimeoutError);
    // tmux remembers a signal nobody waited for, so the wait after it returns at once.
    await t.server.waitFor('drover-early', 'signal');
    await t.server.waitFor('drover-early', 'wait', { timeoutMs: 2000 });
    // A wait already in progress is released by the signal.
    const waiting = t.server.waitFor('drover-chan', 'wait', { timeoutMs: 3000 });
    await t.server.waitFor('drover-chan', 'signal');
    await waiting;
  });

  it('locks a channel: a second lock is granted once the first is unlocked, and unlocking a free channel fails', async () => {
    await t.server.waitFor('drover-lock', 'lock', { timeoutMs: 2000 });
    let secondHeld = false;
    const second = t.server.waitFor('drover-lock', 'lock', { timeoutMs: 3000 }).then(() => {
      secondHeld = true;
    });
    assert.equal(secondHeld, false);
    await t.server.waitFor('drover-lock', 'unlock');
    await second;
    assert.equal(secondHeld, true, 'the unlock handed the lock to the waiting lock');
    await t.server.waitFor('drover-lock', 'unlock');
    await assert.rejects(t.server.waitFor('drover-lock', 'unlock'), CommandError, 'tmux refuses to unlock a channel nobody holds');
  });

  it('guards removals with expected membership', async () => {
    const session = await t.server.newSession({ name: 'guard' });
    const window = (await session.listWindows())[0]!;
    const panes = await window.listPanes();
    await assert.rejects(session.kill({ expectedWindows: [window], expectedPanes: [] }), /membership differs/);
    const extra = await window.split({ direction: 'vertical' });
    await assert.rejects(session.kill({ expectedWindows: [window], expectedPanes: panes }), /membership differs/);
    assert.equal(await session.exists(), true);
    await session.kill({ expectedWindows: [window], expectedPanes: [...panes, extra] });
    assert.equal(await session.exists(), false);
  });

  it('lays out, resizes, swaps and respawns', async () => {
    const session = await t.server.newSession({ width: 100, height: 30 });
    const window = (await session.listWindows())[0]!;
    const first = (await window.listPanes())[0]!;
    const second = await first.split({ direction: 'horizontal' });
    await window.selectLayout('even-v');
    const record = await window.snapshot();
    assert.equal(record.panes().toArray().every((p) => p.paneWidth === 100), true);
    await assert.rejects(window.selectLayout('nonsense'), ArgumentError);
    await window.selectLayout('even-horizontal');
    const sizeOf = async (pane: typeof first): Promise<[number, number]> => {
      const record = await pane.snapshot();
      return [record.paneWidth, record.paneHeight];
    };
    const height = (await sizeOf(first))[1];
    await first.resize({ width: 30 });
    assert.deepEqual(await sizeOf(first), [30, height], 'the width changed, the height did not');
    await first.resize({ direction: 'right' });
    assert.deepEqual(await sizeOf(first), [31, height], 'a direction without cells moves one cell');
    await first.resize({ direction: 'left', cells: 5 });
    assert.deepEqual(await sizeOf(first), [26, height]);
    await first.resize({ zoom: true });
    assert.equal((await window.snapshot()).windowZoomedFlag, true);
    assert.deepEqual(await sizeOf(first), [100, height], 'zoomed: the pane has the whole window');
    await first.resize({ zoom: true });
    assert.equal((await window.snapshot()).windowZoomedFlag, false);
    await assert.rejects(first.resize({}), ArgumentError);
    await first.swap(second);
    const ordered = (await window.snapshot()).panes().toArray().map((p) => p.paneId);
    assert.deepEqual(ordered, [second.id, first.id]);
    await assert.rejects(second.respawn({ command: ['sleep', '5'] }), CommandError);
    await second.respawn({ command: ['sleep', '5'], kill: true });
    // The respawned process execs sleep after tmux has answered.
    await eventually('the respawned pane to run sleep', async () => (await second.snapshot()).paneCurrentCommand === 'sleep');
  });

  it('rejects raw commands that start with flags, and reports raw failures as results', async () => {
    await assert.rejects(t.server.run(['-L', 'other', 'list-sessions']), ArgumentError);
    const result = await t.server.run(['kill-pane', '-t', '%424242']);
    assert.equal(result.ok, false);
    assert.match(result.stderrText(), /can't find pane/);
    const group = await t.server.runGroup([['set', '-g', '@drover_g', '1'], ['show', '-gv', '@drover_g']]);
    assert.equal(group.ok, true);
    assert.equal(group.transactional, false);
    assert.equal(group.result.stdout.toString(), '1\n');
  });

  it('runs a group of commands the way the binding sends its others', async () => {
    const pane = (await (await t.server.newSession({ name: 'grouped' })).listPanes())[0]!;
    const group = await t.server.runGroup([['display-message', '-p', '-t', pane.id, '#{pane_id}'], ['display-message', '-p', '-t', pane.id, 'second']]);
    assert.deepEqual([group.ok, group.result.stdout.toString()], [true, `${pane.id}\nsecond\n`]);
    assert.equal(group.result.transport, transport);
  });
});

for (const transport of ['spawn', 'control'] as const) describe(`failures that must not hang (${transport} transport)`, () => {
  let server: Server;
  let pane: Pane;

  before(async () => {
    server = await startTestServer();
    pane = (await (await server.newSession()).listPanes())[0]!;
    if (transport === 'control') {
      await server.connect();
      assert.equal(server.diagnostics().controlConnections, 1);
    }
  });

  after(async () => {
    try {
      process.kill(server.ownedRecord!.pid, 'SIGCONT');
    } catch {
      // already gone
    }
    await server.close();
  });

  it('times out against a stopped server within deadline + 1 s, leaving no client behind', async () => {
    process.kill(server.ownedRecord!.pid, 'SIGSTOP');
    try {
      const started = Date.now();
      await assert.rejects(pane.sendText('x', { timeoutMs: 500 }), TimeoutError);
      assert.ok(Date.now() - started < 1500);
      assert.deepEqual(childPids().filter((pid) => pid !== server.ownedRecord!.pid), []);
    } finally {
      process.kill(server.ownedRecord!.pid, 'SIGCONT');
    }
  });

  it('reports a dead server as unreachable within the deadline', async () => {
    process.kill(server.ownedRecord!.pid, 'SIGKILL');
    await eventually('the killed server to exit', async () => !isAlive(server.ownedRecord!.pid));
    const started = Date.now();
    await assert.rejects(pane.sendText('x', { timeoutMs: 2000 }), ServerUnreachableError);
    assert.ok(Date.now() - started < 2000);
  });
});
