import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import type { Server, SessionRecord } from '../../src/tmux/index.js';
import {
  ApplyError,
  WorkspaceError,
  WorkspacePlan,
  applyPlan,
  captureWorkspaceSnapshot,
  loadWorkspaceFile,
  planWorkspace,
  type WorkspaceLoadOptions,
  type WorkspaceDocument,
} from '../../src/workspace/index.js';
import { useTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { CORPUS_DIR, parseJson } from './helpers.js';

/** Panes run cat, so dispatched commands are only echoed, never executed; the server outlives its sessions. */
const CONFIG = 'set -g default-command "exec /bin/cat"\nset -g remain-on-exit on\nset -g exit-empty off\n';
const EXPANSION: WorkspaceLoadOptions = { expandEnv: ['MAIN_PANE_HEIGHT', 'VISUAL_SILENCE'], env: { MAIN_PANE_HEIGHT: '30', VISUAL_SILENCE: 'on' } };
const GENEROUS = { timeoutMs: 30_000 };
const SERVER_OPTIONS = { config: CONFIG };

/**
 * The same plan without its dispatch steps (commands and pauses): they cannot change the
 * structure, and dispatch is tested on its own rather than paid for in every file.
 */
function structureOnly(plan: WorkspacePlan): WorkspacePlan {
  const steps = plan.steps.filter((step) => step.effect !== 'dispatch').map((step, i) => ({ ...step, index: i + 1 }));
  return new WorkspacePlan({ ...plan, steps });
}

/**
 * Reads until `good` accepts what it read, for at most five seconds, and returns the last read
 * either way, so the caller's assertion reports what was there.
 */
async function settle<T>(read: () => T | Promise<T>, good: (value: T) => boolean): Promise<T> {
  let last: { value: T } | undefined;
  try {
    return (
      await eventually('a settled value', async () => {
        last = { value: await read() };
        return good(last.value) ? last : undefined;
      }, 5000)
    ).value;
  } catch (error) {
    if (last === undefined) throw error;
    return last.value;
  }
}

function processEnvironment(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').filter((entry) => entry.includes('='));
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

async function optionValue(scopes: readonly { getOrUndefined(name: string): Promise<{ toString(): string } | undefined> }[], name: string): Promise<string | undefined> {
  for (const scope of scopes) {
    const value = await scope.getOrUndefined(name);
    if (value !== undefined) return value.toString();
  }
  return undefined;
}

/** Checks that tmux now holds what the document declares. */
async function assertBuilt(server: Server, doc: WorkspaceDocument, created: ReadonlyMap<string, string>, label: string): Promise<void> {
  const snapshot = await server.snapshot();
  const sessionId = created.get('session');
  const session = snapshot.sessions.toArray().find((record: SessionRecord) => record.sessionId === sessionId);
  assert.ok(session, `${label}: session missing`);
  assert.equal(session.sessionName, doc.sessionName.replace(/[.:]/g, '_'), label);
  const links = session.links();
  assert.equal(links.length, doc.windows.length, `${label}: window count`);
  const sessionHandle = server.session(session.sessionId);
  const sessionEnv = await sessionHandle.environment().list();
  for (const [name, value] of Object.entries(doc.environment)) assert.equal(sessionEnv.get(name), value, `${label}: session env ${name}`);
  for (const [name, value] of Object.entries(doc.options)) {
    const firstWindow = server.window(created.get('window:0') ?? '');
    assert.equal(await optionValue([sessionHandle.options(), firstWindow.options()], name), value, `${label}: session option ${name}`);
  }
  for (const [name, value] of Object.entries(doc.globalOptions)) {
    // Scoped to what the load made: the session, or each of its windows.
    const scopes = [sessionHandle.options(), ...doc.windows.map((_, w) => server.window(created.get(`window:${w}`) ?? '').options())];
    assert.equal(await optionValue(scopes, name), value, `${label}: global option ${name}`);
  }
  for (const [w, window] of doc.windows.entries()) {
    const where = `${label}: windows[${w}]`;
    const windowId = created.get(`window:${w}`);
    const record = snapshot.window(windowId as never);
    const link = links.find((l) => l.windowId === windowId);
    assert.ok(record && link, `${where} missing`);
    if (window.name !== null && window.options['automatic-rename'] !== 'on') assert.equal(record.windowName, window.name, where);
    if (window.index !== null) assert.equal(link.windowIndex, window.index, `${where} index`);
    assert.equal(link.windowActive, window.focus || (w === 0 && !doc.windows.some((other) => other.focus)), `${where} focus`);
    const handle = server.window(record.windowId);
    for (const [name, value] of Object.entries({ ...window.options, ...window.optionsAfter })) {
      assert.equal(await optionValue([handle.options()], name), value, `${where} option ${name}`);
    }
    if (window.layout !== null) {
      // A layout applied last is a fixed point: applying it again changes nothing.
      await handle.selectLayout(window.layout);
      assert.equal((await handle.display('#{window_layout}')).toString().trim(), record.windowLayout, `${where} layout`);
    }
    const panes = record.panes().toArray();
    assert.equal(panes.length, window.panes.length, `${where} pane count`);
    const focused = window.panes.findIndex((pane) => pane.focus);
    for (const [p, pane] of window.panes.entries()) {
      const paneRecord = panes.find((candidate) => candidate.paneId === created.get(`pane:${w}.${p}`));
      assert.ok(paneRecord, `${where}.panes[${p}] missing`);
      if (focused !== -1) assert.equal(paneRecord.paneActive, p === focused, `${where}.panes[${p}] focus`);
      // tmux forks the pane's process, which changes directory and execs its program a moment
      // later: until then /proc shows tmux's own directory and environment.
      if (pane.startDirectory !== null) {
        const wanted = realpathSync(pane.startDirectory);
        const resolved = (path: string): string => (path === '' ? '' : realpathSync(path));
        const cwd = await settle(async () => resolved((await server.pane(paneRecord.paneId).display('#{pane_current_path}')).toString().trim()), (path) => path === wanted);
        assert.equal(cwd, wanted, `${where}.panes[${p}] cwd`);
      }
      // tmux gives a new pane the PATH of the client that asked for it, whatever the session says.
      const expected = Object.entries({ ...doc.environment, ...pane.environment }).filter(([name]) => name !== 'PATH');
      const env = await settle(
        () => processEnvironment(paneRecord.panePid ?? 0),
        (read) => expected.every(([name, value]) => read.get(name) === value),
      );
      for (const [name, value] of expected) assert.equal(env.get(name), value, `${where}.panes[${p}] env ${name}`);
    }
  }
}

describe('applyPlan on real tmux: the corpus', () => {
  let home = '';
  before(() => {
    home = mkdtempSync(join(tmpdir(), 'drover-home-'));
  });
  after(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('builds every loadable corpus file as declared', async () => {
    const files = ['builder', 'examples'].flatMap((sub) => readdirSync(`${CORPUS_DIR}/${sub}`).map((name) => `${sub}/${name}`));
    const build = async (server: Server, doc: WorkspaceDocument, file: string): Promise<void> => {
      const result = await applyPlan(structureOnly(planWorkspace(doc)), server, GENEROUS);
      const created = new Map(result.created.map((ref) => [ref.symbol as string, ref.id]));
      await assertBuilt(server, doc, created, file);
      await server.session(result.sessionId ?? '').kill();
    };
    let built = 0;
    const seen: WorkspaceDocument[] = [];
    await withServer(
      async (shared) => {
        for (const file of files.sort()) {
          let doc: WorkspaceDocument;
          try {
            doc = await loadWorkspaceFile(`${CORPUS_DIR}/${file}`, { homeDir: home, ...EXPANSION });
          } catch (error) {
            assert.ok(error instanceof WorkspaceError && error.code === 'unsupported', `${file}: ${String(error)}`);
            continue;
          }
          built += 1;
          // A file that says exactly what an earlier one said (a JSON twin) is already covered.
          if (seen.some((other) => isDeepStrictEqual(other, doc))) continue;
          seen.push(doc);
          await build(shared, doc, file);
        }
      },
      SERVER_OPTIONS,
    );
    assert.equal(built, 55);
    assert.equal(seen.length, 42);
  });
});

describe('applyPlan on real tmux', () => {
  const tmux = useTestServer(SERVER_OPTIONS);

  it('records created ids and dispatch-only effects, and dispatches literal text', async () => {
    const doc = parseJson({
      session_name: 'dispatch',
      windows: [{ panes: [{ shell_command: ['hello drover', { cmd: '$HOME; no enter', enter: false }] }] }],
    });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    assert.deepEqual(
      result.created.map((ref) => [ref.symbol, ref.kind]),
      [
        ['session', 'session'],
        ['window:0', 'window'],
        ['pane:0.0', 'pane'],
      ],
    );
    assert.deepEqual(
      result.effects.map((effect) => [effect.op, effect.outcome]),
      [
        ['new-session', 'observed'],
        ['send-keys', 'dispatch_only'],
        ['send-keys', 'dispatch_only'],
      ],
    );
    const pane = tmux.server.pane(result.created[2]?.id ?? '');
    // The tty echoes each dispatch at once; cat repeats a submitted line only once it runs and
    // reads it, which may be after the second dispatch was echoed. So wait for cat's copy, then
    // check the order of the echoes and that nothing else was submitted.
    const count = (text: string, part: string): number => text.split(part).length - 1;
    const screen = await eventually('cat to repeat the submitted line', async () => {
      const text = (await pane.capture()).toString();
      return count(text, ' hello drover') >= 2 && text.includes('no enter') ? text : undefined;
    });
    assert.equal(count(screen, ' hello drover'), 2, screen);
    assert.equal(count(screen, ' $HOME; no enter'), 1, 'the second command is typed literally, once');
    assert.ok(screen.indexOf(' hello drover\n') < screen.indexOf(' $HOME; no enter'), `dispatched in order:\n${screen}`);
  });

  it('runs a declared default-command in the first pane too', async () => {
    const doc = parseJson({ session_name: 'first-command', options: { 'default-command': 'exec sleep 600' }, windows: [{ panes: [null, null] }] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    // tmux runs the default command through sh, which execs sleep a moment later.
    await eventually('both panes to run sleep', async () => {
      const session = (await tmux.server.snapshot()).session(result.sessionId as never);
      return isDeepStrictEqual(session?.panes().toArray().map((pane) => pane.paneCurrentCommand), ['sleep', 'sleep']);
    });
  });

  it('gives the first pane the declared default-shell, as every later pane gets it', async () => {
    const serverShell = (await tmux.server.options('global-session').get('default-shell')).as('string');
    const declared = serverShell === '/bin/bash' ? '/bin/sh' : '/bin/bash';
    const doc = parseJson({ session_name: 'first-shell', options: { 'default-shell': declared }, windows: [{ panes: [null, null] }, {}] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    // tmux tells each pane's program the shell it runs under in SHELL; the shell execs cat (the
    // default-command) a moment after the pane is made.
    const shells = await settle(
      async () => {
        const panes = (await tmux.server.snapshot()).session(result.sessionId as never)?.panes().toArray() ?? [];
        return panes.map((pane) => (pane.paneCurrentCommand === 'cat' ? processEnvironment(pane.panePid ?? 0).get('SHELL') : 'not started'));
      },
      (values) => values.length === 3 && values.every((value) => value === declared),
    );
    assert.deepEqual(shells, [declared, declared, declared]);
    const panes = result.created.filter((ref) => ref.kind === 'pane');
    assert.equal(new Set(panes.map((ref) => ref.symbol)).size, panes.length, 'the ledger names each pane once: the replaced one is gone');
  });

  it('scopes global options to the session and windows it creates, leaving the server’s own alone', async () => {
    const globals = async (): Promise<string[]> => [...(await tmux.server.options('global-session').list()), ...(await tmux.server.options('global-window').list())];
    const before = await globals();
    const doc = parseJson({ session_name: 'scoped', global_options: { 'status-position': 'top', 'mode-keys': 'vi', '@drover_role': 'lead' }, windows: [{ panes: [null, null] }, {}] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    assert.deepEqual(await globals(), before, 'no global option changed');
    const session = tmux.server.session(result.sessionId ?? '');
    assert.equal((await session.options().get('status-position', { inherited: false })).as('string'), 'top');
    assert.equal((await session.options().get('@drover_role', { inherited: false })).as('string'), 'lead');
    const windows = result.created.filter((ref) => ref.kind === 'window');
    assert.equal(windows.length, 2);
    for (const window of windows) assert.equal((await tmux.server.window(window.id).options().get('mode-keys', { inherited: false })).as('string'), 'vi', `${window.symbol} mode-keys`);
  });

  it('sets a window option of the session options on every window it creates, ahead of the same one in global_options', async () => {
    const doc = parseJson({
      session_name: 'session-window-options',
      options: { 'main-pane-height': 33 },
      global_options: { 'main-pane-height': 20, 'main-pane-width': 90 },
      windows: [{}, { panes: [null, null] }],
    });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    const windows = result.created.filter((ref) => ref.kind === 'window');
    assert.equal(windows.length, 2);
    for (const window of windows) {
      const options = tmux.server.window(window.id).options();
      assert.equal((await options.get('main-pane-height', { inherited: false })).as('string'), '33', `${window.symbol} main-pane-height`);
      assert.equal((await options.get('main-pane-width', { inherited: false })).as('string'), '90', `${window.symbol} main-pane-width`);
    }
  });

  it('refuses a server-wide option in the session options before creating anything', async () => {
    const sessions = (await tmux.server.snapshot()).sessions.size;
    const escapeTime = (await tmux.server.options('server').get('escape-time')).as('string');
    const doc = parseJson({ session_name: 'session-server-wide', options: { 'escape-time': 7 }, windows: [{}] });
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.deepEqual(error.result.conflicts.map((c) => [c.kind, c.path]), [['server_option', 'options.escape-time']]);
    assert.equal((await tmux.server.snapshot()).sessions.size, sessions);
    assert.equal((await tmux.server.options('server').get('escape-time')).as('string'), escapeTime);
  });

  it('refuses a server-wide option in global_options before creating anything', async () => {
    const sessions = (await tmux.server.snapshot()).sessions.size;
    const escapeTime = (await tmux.server.options('server').get('escape-time')).as('string');
    const doc = parseJson({ session_name: 'server-wide', global_options: { 'escape-time': 7 }, windows: [{}] });
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.equal(error.failureClass, 'conflict');
    assert.deepEqual(error.result.conflicts.map((c) => [c.kind, c.path]), [['server_option', 'global_options.escape-time']]);
    assert.equal((await tmux.server.snapshot()).sessions.size, sessions);
    assert.equal((await tmux.server.options('server').get('escape-time')).as('string'), escapeTime);
  });

  it('refuses a server-wide option in a window’s options or options_after before creating anything', async () => {
    const sessions = (await tmux.server.snapshot()).sessions.size;
    const server = async (): Promise<string[]> => [
      (await tmux.server.options('server').get('escape-time')).as('string') as string,
      (await tmux.server.options('server').get('default-terminal')).as('string') as string,
    ];
    const before = await server();
    const doc = parseJson({
      session_name: 'window-server-wide',
      windows: [{ options: { 'escape-time': 1234, 'main-pane-height': 20 } }, { options_after: { 'default-terminal': 'vt100' } }],
    });
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.equal(error.failureClass, 'conflict');
    assert.deepEqual(error.result.conflicts.map((c) => [c.kind, c.path]), [
      ['server_option', 'windows[0].options.escape-time'],
      ['server_option', 'windows[1].options_after.default-terminal'],
    ]);
    assert.equal((await tmux.server.snapshot()).sessions.size, sessions);
    assert.deepEqual(await server(), before);
  });

  it('refuses an option tmux does not have, in any options map, before creating anything', async () => {
    const sessions = (await tmux.server.snapshot()).sessions.size;
    const doc = parseJson({ session_name: 'unknown-option', options: { 'no-such-option': 1, '@mine': 'yes' }, windows: [{ options: { 'no-such-window-option': 1 } }] });
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.equal(error.failureClass, 'conflict');
    assert.deepEqual(error.result.conflicts.map((c) => `${c.path}: ${c.message}`), [
      'options.no-such-option: tmux has no option by that name',
      'windows[0].options.no-such-window-option: tmux has no option by that name',
    ]);
    assert.deepEqual(error.result.conflicts.map((c) => c.kind), ['unknown_option', 'unknown_option']);
    assert.equal((await tmux.server.snapshot()).sessions.size, sessions);
  });

  it('takes an option name shortened as tmux takes it (the start of one name only), and refuses a start several names share', async () => {
    const doc = parseJson({ session_name: 'short-names', options: { 'status-pos': 'top' }, windows: [{ window_name: 'one', options: { 'mode-k': 'vi' } }] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    const session = tmux.server.session(result.sessionId ?? '');
    assert.equal((await session.options().get('status-position', { inherited: false })).as('string'), 'top');
    const [window] = result.created.filter((ref) => ref.kind === 'window');
    assert.equal((await tmux.server.window(window?.id ?? '').options().get('mode-keys', { inherited: false })).as('string'), 'vi');
    await session.kill();

    const sessions = (await tmux.server.snapshot()).sessions.size;
    const refused = parseJson({ session_name: 'short-names-refused', options: { mode: 'x', 'escape-t': 10 }, windows: [{}] });
    const error = await applyPlan(planWorkspace(refused), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.deepEqual(error.result.conflicts.map((c) => [c.kind, c.path]), [
      ['unknown_option', 'options.mode'],
      ['server_option', 'options.escape-t'],
    ], 'mode starts mode-keys and mode-style; escape-t is escape-time, server-wide');
    assert.match(error.result.conflicts[0]!.message, /^tmux has no option by that name, and several begin with it: .*\bmode-keys\b.*\bmode-style\b/);
    assert.equal((await tmux.server.snapshot()).sessions.size, sessions);
  });

  it('refuses a window_index the server’s base-index gives an earlier window, before creating anything', async () => {
    await withServer(
      async (server) => {
        const doc = parseJson({ session_name: 'clash', windows: [{}, { window_index: 1 }] });
        const error = await applyPlan(planWorkspace(doc), server, GENEROUS).catch((e: unknown) => e);
        assert.ok(error instanceof ApplyError, String(error));
        assert.equal(error.failureClass, 'conflict');
        assert.deepEqual(error.result.conflicts.map((c) => [c.kind, c.path]), [['window_index_taken', 'windows[1].window_index']]);
        assert.equal(error.result.partial, false);
        assert.deepEqual((await server.snapshot()).sessions.toArray().map((session) => session.sessionName), []);
      },
      { config: `${CONFIG}set -g base-index 1\n` },
    );
  });

  it('refuses before any effect when the session name is taken', async () => {
    const doc = parseJson({ session_name: 'taken', windows: [{}] });
    await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    const before = (await tmux.server.snapshot()).sessions.size;
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).then(
      () => assert.fail('expected a conflict'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ApplyError);
    assert.equal(error.failureClass, 'conflict');
    assert.equal(error.delivery, 'not_sent');
    assert.deepEqual(error.result.completedSteps, []);
    assert.equal(error.result.partial, false);
    assert.equal((await tmux.server.snapshot()).sessions.size, before);
  });

  it('refuses a plan whose snapshot already shows a conflict', async () => {
    const snapshot = await captureWorkspaceSnapshot(tmux.server);
    assert.ok(snapshot.sessionNames.includes('taken'));
    assert.equal(snapshot.baseIndex, 0);
    const plan = planWorkspace(parseJson({ session_name: 'taken', windows: [{}] }), { snapshot });
    await assert.rejects(applyPlan(plan, tmux.server), (e: unknown) => e instanceof ApplyError && e.result.conflicts.length === 1);
  });

  it('leaves a partial build in place by default and reports the ledger', async () => {
    // tmux refuses the value only when the step runs, after the session and both windows exist.
    const doc = parseJson({ session_name: 'partial', windows: [{}, { options: { 'mode-keys': 'nonsense' } }] });
    const error = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    const { result } = error;
    assert.deepEqual([result.failedStep, result.failedAction, result.failedSource], [3, 'set-option', 'windows[1].options.mode-keys']);
    assert.equal(result.failureClass, 'CommandError');
    assert.equal(result.uncertain, false);
    assert.equal(result.partial, true);
    assert.equal(result.compensation, 'not_requested');
    assert.equal(error.delivery, 'observed');
    assert.deepEqual(result.completedSteps, [1, 2]);
    assert.equal(result.created.length, 5);
    assert.ok(await tmux.server.session(result.sessionId ?? '').exists());
  });

  it('compensates by removing only what it created', async () => {
    const doc = parseJson({ session_name: 'compensated', windows: [{ panes: [null, null] }, { options: { 'mode-keys': 'nonsense' } }] });
    const error = await applyPlan(planWorkspace(doc), tmux.server, { ...GENEROUS, compensate: true }).catch((e: unknown) => e);
    assert.ok(error instanceof ApplyError, String(error));
    assert.equal(error.result.compensation, 'completed');
    assert.equal(error.result.created.length, 6);
    assert.equal(await tmux.server.session(error.result.sessionId ?? '').exists(), false);
    assert.ok((await captureWorkspaceSnapshot(tmux.server)).sessionNames.includes('partial'));
  });

  it('waits for declared pauses longer than the deadline, which they extend', async () => {
    const doc = parseJson({ session_name: 'slow', windows: [{ panes: [{ shell_command: [{ cmd: 'x', sleep_before: 1, sleep_after: 1 }] }] }] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, { timeoutMs: 1500 });
    assert.equal(result.success, true);
    assert.deepEqual(result.effects.map((effect) => effect.op), ['new-session', 'send-keys']);
  });

  it('exports its result as JSON without tmux output', async () => {
    const doc = parseJson({ session_name: 'exported', windows: [{}] });
    const result = await applyPlan(planWorkspace(doc), tmux.server, GENEROUS);
    const json = result.toJSON();
    assert.equal(json.success, true);
    assert.equal(json.session_id, result.sessionId);
    assert.deepEqual(Object.keys(json), [
      'session_name',
      'session_id',
      'success',
      'partial',
      'uncertain',
      'completed_steps',
      'created',
      'effects',
      'failed_step',
      'failed_action',
      'failed_source',
      'failure_class',
      'conflicts',
      'compensation',
      'cleanup_errors',
    ]);
    assert.ok(Object.isFrozen(result.created));
  });
});
