/**
 * tmux library operations against real tmux on private sockets: pane join and
 * break-out, window swap and link, guarded window links, pipes, copy mode, version-gated
 * flags, clients and links listed, records resolved, searches explained, the bounded map,
 * the closing forms, inherited and array options, and diagnostics.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DroverError, processDiagnostics } from '../../src/process/index.js';
import {
  AbortedError,
  ArgumentError,
  closeAfter,
  CommandError,
  Criteria,
  Endpoint,
  LimitError,
  NoMatchError,
  pasteFromBuffer,
  Server,
  TargetNotFoundError,
  UnsupportedFeatureError,
  versionAtLeast,
  type Closable,
  type Pane,
  type Session,
} from '../../src/tmux/index.js';
import { startTestServer, testEnvironment, useTestServer, withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/** Asserts that `call` fails with `type` without starting any process (so before tmux was asked). */
async function refusedLocally(call: () => Promise<unknown>, type: new (...args: never[]) => Error): Promise<void> {
  const spawned = processDiagnostics().spawned;
  await assert.rejects(call(), type);
  assert.equal(processDiagnostics().spawned, spawned, 'nothing was sent to tmux');
}

async function firstPane(session: Session): Promise<Pane> {
  return (await session.listPanes())[0]!;
}

describe('moving panes and windows', () => {
  const t = useTestServer();

  it('joins a pane beside another, after it unless before, without taking focus', async () => {
    const session = await t.server.newSession({ name: 'join', width: 120, height: 40 });
    const [first] = await session.listWindows();
    const anchor = await firstPane(session);
    const other = await session.newWindow({ name: 'other' });
    const moving = (await other.listPanes())[0]!;
    await moving.join(anchor, { direction: 'horizontal' });
    let window = await first!.snapshot();
    const placed = window.panes().toArray();
    assert.deepEqual(placed.map((pane) => pane.paneId), [anchor.id, moving.id], 'the moved pane is now in the first window, after the anchor');
    assert.ok(placed[1]!.paneLeft > placed[0]!.paneLeft, 'horizontal: beside it, to the right');
    assert.equal(placed.find((pane) => pane.paneActive)!.paneId, anchor.id, 'focus stayed');
    assert.equal(await other.exists(), false, 'its old window, now empty, is gone');
    const below = (await (await session.newWindow()).listPanes())[0]!;
    await below.join(anchor, { direction: 'vertical', before: true });
    window = await first!.snapshot();
    const above = window.panes().toArray().find((pane) => pane.paneId === below.id)!;
    assert.ok(above.paneTop < window.panes().toArray().find((pane) => pane.paneId === anchor.id)!.paneTop, 'before: above the anchor');
    await refusedLocally(() => moving.join(anchor, { direction: 'diagonal' as 'horizontal' }), ArgumentError);
    await withServer(async (stranger) => {
      await refusedLocally(() => moving.join(stranger.pane('%0'), { direction: 'vertical' }), ArgumentError);
    });
  });

  it('breaks a pane out into a new window of a session, at the index asked, detached', async () => {
    const session = await t.server.newSession({ name: 'break' });
    const pane = await (await firstPane(session)).split({ direction: 'vertical' });
    const window = await pane.breakOut(session, { index: 7, name: 'broken-out' });
    const record = (await t.server.snapshot()).window(window.id)!;
    assert.equal(record.windowName, 'broken-out');
    assert.deepEqual(record.panes().toArray().map((p) => p.paneId), [pane.id]);
    assert.equal(record.links()[0]!.windowIndex, 7);
    assert.equal(record.links()[0]!.windowActive, false, 'the new window did not take the session');
    const another = await (await firstPane(session)).split({ direction: 'vertical' });
    await assert.rejects(another.breakOut(session, { index: 7 }), CommandError, 'an index in use is not replaced');
    assert.deepEqual((await window.listPanes()).map((p) => p.id), [pane.id]);
  });

  it('swaps two windows', async () => {
    const session = await t.server.newSession({ name: 'swap' });
    const [a] = await session.listWindows();
    const b = await session.newWindow({ name: 'b', index: 4 });
    const before = (await t.server.snapshot()).session(session.id)!.links().map((link) => [link.windowIndex, link.windowId]);
    await a!.swap(b);
    const after = (await t.server.snapshot()).session(session.id)!.links().map((link) => [link.windowIndex, link.windowId]);
    assert.deepEqual(after, [
      [before[0]![0], b.id],
      [before[1]![0], a!.id],
    ]);
  });

  it('links a window at an explicit index, never over another, and guards every link operation', async () => {
    const home = await t.server.newSession({ name: 'link-home' });
    const away = await t.server.newSession({ name: 'link-away' });
    const [window] = await home.listWindows();
    const [occupant] = await away.listWindows();
    const link = await window!.link(away, 3);
    assert.deepEqual((await window!.listWindowLinks()).map((l) => l.target).sort(), [`${home.id}:0`, `${away.id}:3`].sort());
    assert.equal((await t.server.snapshot()).window(window!.id)!.windowLinked, true);
    await assert.rejects(window!.link(away, 0), CommandError, 'index 0 of away is taken');
    assert.equal((await t.server.snapshot()).session(away.id)!.links().find((l) => l.windowIndex === 0)!.windowId, occupant!.id);
    assert.deepEqual(
      (await t.server.listWindowLinks()).filter((l) => l.sessionId === away.id).map((l) => [l.index, l.windowId]),
      [
        [0, occupant!.id],
        [3, window!.id],
      ],
    );

    // Display, options and hooks through the link, each checked against the link first.
    assert.equal((await link.display('#{window_index}')).toString(), '3');
    await link.options().set('@drover_link', 'through-link');
    assert.equal((await window!.options().get('@drover_link', { inherited: false })).as('string'), 'through-link');
    await link.hooks().set('window-renamed', 'set -g @drover_link_hook yes');
    assert.ok((await window!.hooks().list()).some((line) => line.includes('@drover_link_hook')));

    const moved = await link.move(away, 5);
    assert.equal(moved.target, `${away.id}:5`);
    assert.equal((await moved.display('#{window_id}')).toString(), window!.id);
    // The old place is empty now: every guarded use of the stale link refuses, changing nothing.
    await assert.rejects(link.display('#{window_id}'), TargetNotFoundError);
    await assert.rejects(link.options().set('@drover_link', 'stale'), TargetNotFoundError);
    assert.equal((await window!.options().get('@drover_link', { inherited: false })).as('string'), 'through-link');
    await assert.rejects(link.select(), TargetNotFoundError);

    const occupantLink = t.server.windowLink(away.id, 0, occupant!.id);
    const [here, there] = await moved.swap(occupantLink);
    assert.deepEqual([here.windowId, there.windowId], [occupant!.id, window!.id]);
    assert.equal((await here.display('#{window_id}')).toString(), occupant!.id);
    assert.equal((await there.display('#{window_id}')).toString(), window!.id);
    await assert.rejects(moved.swap(occupantLink), TargetNotFoundError, 'both links moved; the old pair is stale');
    await there.unlink();
    assert.deepEqual((await window!.listWindowLinks()).map((l) => l.target), [`${home.id}:0`]);
  });
});

describe('pane pipes, copy mode and captures', () => {
  const t = useTestServer();

  it('pipes pane output to a command, toggles with onlyIfClosed and closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-pipe-'));
    const log = join(dir, 'out.log');
    try {
      const session = await t.server.newSession({ name: 'pipe', command: ['cat'] });
      const pane = await firstPane(session);
      await pane.pipe(`cat >> '${log}'`);
      assert.equal((await pane.display('#{pane_pipe}')).toString(), '1');
      await pane.sendText('piped-line');
      await pane.sendKeys(['Enter']);
      await eventually('the piped output in the log', () => existsSync(log) && readFileSync(log, 'utf8').includes('piped-line'));
      await pane.pipe(`cat >> '${log}.second'`, { onlyIfClosed: true });
      assert.equal((await pane.display('#{pane_pipe}')).toString(), '0', 'onlyIfClosed on an open pipe closes it and starts nothing');
      assert.equal(existsSync(`${log}.second`), false);
      await pane.pipe(`cat >> '${log}'`);
      await pane.pipe(null);
      assert.equal((await pane.display('#{pane_pipe}')).toString(), '0');
      await refusedLocally(() => pane.pipe('cat', { output: false }), ArgumentError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('enters copy mode with its flags, runs copy commands and refuses what this tmux lacks', async () => {
    const session = await t.server.newSession({ name: 'copy', command: ['sh', '-c', 'seq 1 300; exec cat'] });
    const pane = await firstPane(session);
    await eventually('history to scroll into', async () => Number((await pane.display('#{history_size}')).toString()) > 0);
    await pane.copyMode({ scrollUp: true });
    assert.equal((await pane.display('#{pane_in_mode}')).toString(), '1');
    assert.ok(Number((await pane.display('#{scroll_position}')).toString()) > 0, 'scrollUp scrolled a page up');
    await pane.copyCommand('history-top');
    assert.equal((await pane.display('#{scroll_position}')).toString(), (await pane.display('#{history_size}')).toString());
    await pane.copyCommand('cancel');
    assert.equal((await pane.display('#{pane_in_mode}')).toString(), '0');
    await assert.rejects(pane.copyCommand('cancel'), CommandError, 'a copy command outside copy mode is refused by tmux');
    await refusedLocally(() => pane.copyCommand('Not A Command'), ArgumentError);
    const other = await pane.split({ direction: 'vertical', command: ['sh', '-c', 'echo from-the-source; exec cat'] });
    await eventually('the source pane to print', async () => (await other.capture()).toString().includes('from-the-source'));
    await pane.copyMode({ source: other });
    assert.equal((await pane.display('#{pane_in_mode}')).toString(), '1');
    await pane.copyMode({ cancel: true });
    assert.equal((await pane.display('#{pane_in_mode}')).toString(), '0');
    if (!versionAtLeast(await t.server.version(), '3.5')) {
      await assert.rejects(pane.copyMode({ pageDown: true }), UnsupportedFeatureError);
      assert.equal((await pane.display('#{pane_in_mode}')).toString(), '0', 'nothing was entered');
    }
  });

  it('checks capture modes and version-dependent capture flags before dispatch', async () => {
    const session = await t.server.newSession({ name: 'capture' });
    const pane = await firstPane(session);
    await refusedLocally(() => pane.capture({ alternate: true, pending: true }), ArgumentError);
    await refusedLocally(() => pane.capture({ alternate: true, modeScreen: true }), ArgumentError);
    if (versionAtLeast(await t.server.version(), '3.6')) assert.ok(Buffer.isBuffer(await pane.capture({ modeScreen: true })));
    else await refusedLocally(() => pane.capture({ modeScreen: true }), UnsupportedFeatureError);
  });

  it('refuses a respawn that names no command, and respawns the original command when told so', async () => {
    const session = await t.server.newSession({ name: 'respawn', command: ['sh', '-c', 'echo original-ran; exec cat'] });
    const pane = await firstPane(session);
    await refusedLocally(() => pane.respawn({ kill: true }), ArgumentError);
    await refusedLocally(() => pane.respawn({ kill: true, command: ['true'], original: true }), ArgumentError);
    await pane.sendText('typed-before');
    await pane.respawn({ kill: true, original: true });
    await eventually('the original command to run again on a fresh screen', async () => {
      const screen = (await pane.capture()).toString();
      return screen.includes('original-ran') && !screen.includes('typed-before');
    });
  });

  it('refuses mirrored layouts on a tmux older than 3.5', async () => {
    const session = await t.server.newSession({ name: 'mirror' });
    const [window] = await session.listWindows();
    await (await firstPane(session)).split({ direction: 'horizontal' });
    const before = (await window!.snapshot()).windowLayout;
    if (versionAtLeast(await t.server.version(), '3.5')) {
      await window!.selectLayout('main-vertical-mirrored');
    } else {
      await assert.rejects(window!.selectLayout('main-vertical-mirrored'), UnsupportedFeatureError);
      assert.equal((await window!.snapshot()).windowLayout, before, 'the layout did not change');
    }
  });
});

describe('listings, records and searches', () => {
  it('answers every listing of a server without sessions with an empty list', async () => {
    await withServer(async (server) => {
      assert.deepEqual(await server.listSessions(), []);
      assert.deepEqual(await server.listWindows(), []);
      assert.deepEqual(await server.listPanes(), []);
      assert.deepEqual(await server.listWindowLinks(), []);
      assert.deepEqual(await server.listClients(), []);
      assert.equal((await server.snapshot()).panes.size, 0);
    });
  });

  it('lists clients as records that never become command targets', async () => {
    await withServer(async (server) => {
      const session = await server.newSession({ name: 'clients' });
      assert.deepEqual(await server.listClients(), []);
      await server.openControl({ session }, async () => {
        const [client] = await server.listClients();
        assert.equal(client?.clientControlMode, true);
        assert.equal(client?.sessionId, session.id);
        assert.throws(() => client!.ref(), UnsupportedFeatureError);
        assert.throws(() => server.resolve(client!), UnsupportedFeatureError);
      });
    });
  });

  it('resolves captured records into handles of the binding that captured them, and no other', async () => {
    await withServer(async (server) => {
      const receipt = await server.newSession({ name: 'resolve', receipt: true });
      const snapshot = await server.snapshot();
      const spawned = processDiagnostics().spawned;
      const session = server.resolve(snapshot.session(receipt.session.id)!);
      const window = server.resolve(snapshot.window(receipt.window.id)!);
      const pane = server.resolve(snapshot.pane(receipt.pane.id)!);
      const link = server.resolve(snapshot.links[0]!);
      assert.equal(processDiagnostics().spawned, spawned, 'resolving does no tmux I/O');
      assert.ok(session.equals(receipt.session) && window.equals(receipt.window) && pane.equals(receipt.pane));
      assert.ok(link.equals(server.windowLink(receipt.session.id, 0, receipt.window.id)));
      const borrowed = await Server.open(server.endpoint);
      try {
        assert.throws(() => borrowed.resolve(snapshot.pane(receipt.pane.id)!), ArgumentError, 'the same server through another binding is not this binding');
      } finally {
        await borrowed.close();
      }
    });
  });

  it('captures the pane user options asked for in the same listing, and refuses a name that is not one', async () => {
    await withServer(async (server) => {
      const receipt = await server.newSession({ name: 'options', receipt: true });
      await receipt.pane.options().set('@rk_pane_agent_state', 'idle:1700000000:42');
      await receipt.pane.options().set('@empty', '');
      const spawned = processDiagnostics().spawned;
      const snapshot = await server.snapshot({ paneOptions: ['@rk_pane_agent_state', '@empty', '@never_set'] });
      assert.equal(processDiagnostics().spawned, spawned + 1, 'one tmux invocation');
      const pane = snapshot.pane(receipt.pane.id)!;
      assert.equal(pane.userOption('@rk_pane_agent_state'), 'idle:1700000000:42');
      assert.equal(pane.userOption('@empty'), undefined);
      assert.equal(pane.userOption('@never_set'), undefined);
      assert.throws(() => pane.userOption('@not_captured'), /was not captured/);
      await refusedLocally(() => server.snapshot({ paneOptions: ['pane_pid'] }), ArgumentError);
    });
  });

  it('explains a pane search without I/O, and refuses required pushdown before any', async () => {
    await withServer(async (server) => {
      const criteria = {
        and: [
          { field: 'pane_current_command', op: 'regex', value: '^(claude|codex)$' },
          { some: { relation: 'sessions', where: { field: 'session_name', op: 'eq', value: 'work' } } },
        ],
      };
      const spawned = processDiagnostics().spawned;
      const plan = server.explainPanes(criteria);
      assert.equal(processDiagnostics().spawned, spawned);
      assert.equal(plan.executable, true);
      assert.deepEqual(plan.capture.reads, ['list-sessions', 'list-windows', 'list-panes']);
      assert.deepEqual(plan.capture.fields, { pane: ['pane_current_command'], session: ['session_name'] });
      assert.deepEqual(plan.capture.relations, ['pane.sessions']);
      assert.equal(plan.pushedDown, null);
      assert.ok(Object.isFrozen(plan) && Object.isFrozen(plan.capture) && Object.isFrozen(plan.capture.fields) && Object.isFrozen(plan.capture.fields.pane) && Object.isFrozen(plan.residual));
      assert.deepEqual(plan.residual.toWire(), Criteria.build('pane', criteria).toWire());
      assert.ok(plan.rejected.some((reason) => /relations/.test(reason)) && plan.rejected.some((reason) => /RE2/.test(reason)));
      const required = server.explainPanes(criteria, { pushdown: 'required' });
      assert.equal(required.executable, false);
      await refusedLocally(() => server.searchPanes(criteria, { pushdown: 'required' }), UnsupportedFeatureError);
      assert.throws(() => server.explainPanes({ field: 'pane_nope', op: 'eq', value: 1 }), /pane_nope/);
      await server.newSession({ name: 'work' });
      assert.equal((await server.searchPanes(criteria, { pushdown: 'never' })).size, 0);
    });
  });
});

describe('pasting from a buffer', () => {
  const owned = useTestServer();

  it('pastes in one tmux invocation, leaves a mode first when asked, and leaves no buffer after a failure', async () => {
    const session = await owned.server.newSession({ name: 'paste', command: ['cat'] });
    const pane = await firstPane(session);
    await pane.copyMode();
    assert.equal(await pane.inMode(), true);
    const spawned = processDiagnostics().spawned;
    await pasteFromBuffer(pane, 'pasted-line\n', { bracketed: false, leaveMode: true });
    assert.equal(processDiagnostics().spawned, spawned + 1, 'one tmux invocation');
    assert.equal(await pane.inMode(), false);
    await eventually('the pasted line', async () => (await pane.capture()).toString('utf8').includes('pasted-line'));
    await assert.rejects(pasteFromBuffer(owned.server.pane('%9999'), 'x', { bracketed: true }), TargetNotFoundError);
    assert.deepEqual(await owned.server.buffers().list(), []);
  });
});

describe('the bounded map', () => {
  const t = useTestServer();

  it('keeps input order, honours its concurrency and returns [] for no items', async () => {
    const session = await t.server.newSession({ name: 'map' });
    const pane = await firstPane(session);
    let running = 0;
    let most = 0;
    const results = await t.server.map(
      [5, 1, 4, 2, 3],
      async (n, { signal }) => {
        running += 1;
        most = Math.max(most, running);
        try {
          return (await pane.display(`#{e|*:${n},10}`, { signal })).toString();
        } finally {
          running -= 1;
        }
      },
      { concurrency: 2 },
    );
    assert.deepEqual(results, ['50', '10', '40', '20', '30']);
    assert.ok(most <= 2, `at most 2 items ran at once, saw ${most}`);
    assert.deepEqual(await t.server.map([], async () => 1), []);
    assert.equal(t.server.diagnostics().maps, 0);
  });

  it('cancels the siblings of a failed item and reports that failure', async () => {
    const seen: string[] = [];
    const failure = new Error('item 0 failed');
    await assert.rejects(
      t.server.map(['fail', 'wait'], async (item, { signal }) => {
        if (item === 'fail') {
          // Fail once the sibling waits on a channel nobody signals.
          await eventually('the sibling to be waiting', () => t.server.diagnostics().admittedRequests > 0);
          throw failure;
        }
        try {
          await t.server.waitFor('drover-never-signalled', 'wait', { timeoutMs: 60_000, signal });
        } catch (error) {
          seen.push(error instanceof AbortedError ? 'aborted' : String(error));
          throw error;
        }
        return 'unreachable';
      }),
      (error: unknown) => error === failure,
    );
    assert.deepEqual(seen, ['aborted'], 'the waiting sibling was cancelled, not left to its 60 s deadline');
  });

  it('refuses too many items before starting any, even from an endless source, and too many result bytes', async () => {
    function* endless(): Generator<number> {
      for (let i = 0; ; i += 1) yield i;
    }
    let started = 0;
    await assert.rejects(t.server.map(endless(), async () => (started += 1), { maxItems: 10 }), LimitError);
    assert.equal(started, 0);
    await assert.rejects(t.server.map([1, 2, 3], async () => 'x'.repeat(600), { maxResultBytes: 1000 }), LimitError);
    await assert.rejects(t.server.map([1], async () => ({ big: true }), { maxResultBytes: 10, resultBytes: () => 11 }), LimitError);
  });

  it('is cancelled by the caller and by closing the binding', async () => {
    const controller = new AbortController();
    const mapping = t.server.map([1, 2], async (_n, { signal }) => t.server.waitFor('drover-never-2', 'wait', { timeoutMs: 60_000, signal }), { signal: controller.signal });
    await eventually('the waits to be admitted', () => t.server.diagnostics().admittedRequests >= 2);
    controller.abort();
    await assert.rejects(mapping, AbortedError);
    const server = await startTestServer();
    const closing = server.map([1], async (_n, { signal }) => server.waitFor('drover-never-3', 'wait', { timeoutMs: 60_000, signal }));
    await eventually('the wait to be admitted', () => server.diagnostics().admittedRequests >= 1);
    assert.equal(server.diagnostics().maps, 1);
    const cancelled = assert.rejects(closing, AbortedError);
    await server.close();
    await cancelled;
  });
});

describe('closing forms', () => {
  it('retires a started server after its callback and keeps the callback\'s failure', async () => {
    let directory = '';
    const value = await Server.start({ env: testEnvironment() }, async (server) => {
      directory = server.ownedRecord!.directory;
      await server.newSession();
      return 'done';
    });
    assert.equal(value, 'done');
    assert.equal(existsSync(directory), false);
    const boom = new Error('boom');
    await assert.rejects(
      Server.start({ env: testEnvironment() }, async (server) => {
        directory = server.ownedRecord!.directory;
        throw boom;
      }),
      (error: unknown) => error === boom,
    );
    assert.equal(existsSync(directory), false, 'the server was retired although the callback failed');
  });

  it('closes a control connection after its callback, and disposes with await using', async () => {
    await withServer(async (server) => {
      const session = await server.newSession();
      const failure = new Error('inside');
      await assert.rejects(
        server.openControl({ session }, async (connection) => {
          assert.equal(connection.isOpen, true);
          throw failure;
        }),
        (error: unknown) => error === failure,
      );
      assert.equal(server.diagnostics().controlConnections, 0, 'the connection was closed and released');
      let directory: string;
      {
        await using owned = await startTestServer();
        directory = owned.ownedRecord!.directory;
        await using connection = await owned.openControl();
        assert.equal(connection.isOpen, true);
      }
      assert.equal(existsSync(directory), false, 'leaving the block retired the server');
    });
  });
});

describe('closeAfter', () => {
  /** A resource whose close fails, as a binding's does when it cannot retire what it owns. */
  const failingClose = (): Closable & { closed: number } => ({
    closed: 0,
    async close() {
      this.closed += 1;
      throw new DroverError('close left resources behind', { phase: 'cleanup' });
    },
  });

  it('keeps the failure of the callback and attaches a failed close to it', async () => {
    const resource = failingClose();
    const failure = new CommandError('the callback failed');
    await assert.rejects(
      closeAfter(resource, async () => {
        throw failure;
      }),
      (error: unknown) => error === failure && failure.cleanupErrors.length === 1 && /left resources/.test(failure.cleanupErrors[0]!.message),
    );
    assert.equal(resource.closed, 1);
  });

  it('throws a failed close after a callback that succeeded', async () => {
    const resource = failingClose();
    await assert.rejects(
      closeAfter(resource, async () => 'value'),
      (error: unknown) => error instanceof DroverError && error.phase === 'cleanup',
    );
    assert.equal(resource.closed, 1);
  });
});

describe('options: inheritance and arrays', () => {
  const t = useTestServer();

  it('says whether a value is set here or inherited, and which array entry it is', async () => {
    const session = await t.server.newSession({ name: 'options' });
    const options = session.options();
    const inherited = await options.get('status');
    assert.equal(inherited.inherited, true, 'status comes from the global session options');
    assert.equal(await options.getOrUndefined('status', { inherited: false }), undefined);
    await options.set('status', false);
    const own = await options.get('status');
    assert.deepEqual([own.inherited, own.as('boolean'), own.index], [false, false, null]);
    await assert.rejects(options.get('status-format'), (error: unknown) => error instanceof ArgumentError && /status-format\[0\]/.test(error.message));
    const entry = await options.get('status-format[1]');
    assert.deepEqual([entry.name, entry.index, entry.inherited], ['status-format[1]', 1, true]);
    const global = await t.server.options('global-session').get('status-format[1]');
    assert.deepEqual(entry.raw, global.raw);
    await options.set('status-format[1]', 'own #{session_name}');
    const set = await options.get('status-format[1]');
    assert.deepEqual([set.inherited, set.as('string')], [false, 'own #{session_name}']);
    await t.server.options('global-session').set('@drover_one', 'x');
    const user = await options.get('@drover_one');
    assert.deepEqual([user.inherited, user.index, user.as('string')], [true, null, 'x']);
    await assert.rejects(options.get('@drover_one', { inherited: false }), NoMatchError);
  });
});

describe('evidence and diagnostics', () => {
  it('keeps the signal that ended a tmux client', async () => {
    await withServer(async (owner) => {
      const dir = mkdtempSync(join(tmpdir(), 'drover-signal-'));
      const wrapper = join(dir, 'tmux');
      // A tmux that dies of SIGTERM when asked to display the word below.
      writeFileSync(wrapper, `#!/bin/sh\ncase "$*" in *drover-die*) kill -TERM $$;; esac\nexec '${owner.endpoint.executable}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      try {
        const server = await Server.open(Endpoint.fromSocketPath(owner.endpoint.socketPath, { executable: wrapper }), { env: testEnvironment() });
        try {
          await server.incarnation();
          const result = await server.run(['display-message', '-p', 'drover-die']);
          assert.deepEqual([result.exitCode, result.signal, result.ok], [null, 'SIGTERM', false]);
        } finally {
          await server.close();
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('counts requests, process slots, maps and control retirement locally', async () => {
    await withServer(async (server) => {
      const session = await server.newSession();
      const waiting = server.waitFor('drover-diag', 'wait', { timeoutMs: 10_000 });
      await eventually('the wait to hold a slot', () => server.diagnostics().admittedRequests === 1);
      const during = server.diagnostics();
      assert.deepEqual([during.admittedRequests, during.reservedProcessSlots, during.waitingRequests, during.maps], [1, 1, 0, 0]);
      await server.waitFor('drover-diag', 'signal');
      await waiting;
      const connection = await server.openControl({ session });
      assert.deepEqual([connection.diagnostics().stopping, connection.diagnostics().finished, server.diagnostics().controlConnections], [false, false, 1]);
      await connection.close();
      const closed = connection.diagnostics();
      assert.deepEqual([closed.stopping, closed.finished, closed.cleanupErrors, closed.open], [false, true, 0, false]);
      assert.equal(server.diagnostics().controlConnections, 0);
    });
  });
});
