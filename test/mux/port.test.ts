import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { TimeoutError } from '../../src/process/index.js';
import {
  createMuxPort,
  declareCapabilities,
  MuxError,
  ok,
  paneChannel,
  toTmuxKey,
  type MuxAdapter,
  type MuxKey,
  type MuxWatchOptions,
} from '../../src/mux/index.js';

/** An adapter that records every call it receives and declares what the test says. */
function stubAdapter(claimed: Parameters<typeof declareCapabilities>[0], overrides: Partial<MuxAdapter> = {}) {
  const calls: string[] = [];
  const watches: MuxWatchOptions[] = [];
  let closedWatches = 0;
  /** The run of the multiplexer answering now; a test replaces it by assigning another. */
  const server = { run: 'run-1' };
  const adapter: MuxAdapter = {
    mux: 'tmux',
    declaration: declareCapabilities(claimed, { topologyLatency: { kind: 'push' }, spaces: 'many', unsupportedKeys: ['ctrl+Enter', 'F12'] }),
    reachable: async () => true,
    serverIncarnation: async () => server.run,
    snapshot: async () => ({ incarnation: server.run, spaces: [], tabs: [], panes: [] }),
    refresh: async () => undefined,
    watch: (options) => {
      watches.push(options);
      return { close: () => (closedWatches += 1) };
    },
    translateKey: (key: MuxKey) => toTmuxKey(key),
    typeText: async (paneId, text) => {
      calls.push(`typeText ${paneId} ${text}`);
      return ok(undefined);
    },
    sendKeys: async (paneId, keys) => {
      calls.push(`sendKeys ${paneId} ${keys.join(',')}`);
      return ok(undefined);
    },
    createTab: async (request) => {
      calls.push(`createTab ${JSON.stringify(request)}`);
      return ok({ paneId: 'p9', spaceId: request.spaceId, spaceLabel: 'x', tabId: 'w9', cwd: request.cwd ?? '' });
    },
    renamePane: async (paneId, label) => {
      calls.push(`renamePane ${paneId} ${label}`);
      return ok(undefined);
    },
    close: async () => undefined,
    ...overrides,
  };
  return { adapter, calls, watches, server, closed: () => closedWatches };
}

describe('the gate every adapter sits behind', () => {
  it('answers an undeclared verb as unsupported without calling the adapter', async () => {
    const stub = stubAdapter(['typeText']);
    const port = createMuxPort(stub.adapter);
    const outcome = await port.sendKeys('p1', ['a']);
    assert.deepEqual(outcome, { ok: false, reason: 'unsupported', capability: 'sendKeys', detail: 'tmux does not support sendKeys' });
    const listed = await port.listSessions();
    assert.equal(listed.ok, false);
    assert.equal(!listed.ok && listed.capability, 'listSessions');
    assert.deepEqual(stub.calls, []);
  });

  it('asks for gridScrollback before a recent read', async () => {
    const port = createMuxPort(stubAdapter(['paneGrid'], { readGrid: async () => ok({ paneId: 'p1', text: '', truncated: false, revision: '1' }) }).adapter);
    const recent = await port.readGrid('p1', { scope: 'recent', lines: 10, styling: 'strip' });
    assert.equal(!recent.ok && recent.capability, 'gridScrollback');
    assert.equal((await port.readGrid('p1', { scope: 'viewport', styling: 'strip' })).ok, true);
  });

  it('refuses a declared capability the adapter does not implement, at construction', () => {
    assert.throws(() => createMuxPort(stubAdapter(['setFocus']).adapter), /declares setFocus but does not implement setFocus/);
  });

  it('refuses malformed input before the adapter sees it', async () => {
    const stub = stubAdapter(['typeText', 'sendKeys', 'createTab', 'renamePane']);
    const port = createMuxPort(stub.adapter);
    const refused = async (promise: Promise<{ ok: boolean }>, pattern: RegExp): Promise<void> => {
      const outcome = (await promise) as { ok: false; reason: string; detail: string };
      assert.equal(outcome.ok, false);
      assert.equal(outcome.reason, 'refused');
      assert.match(outcome.detail, pattern);
    };
    await refused(port.typeText('a/b', 'x'), /typeText: pane id "a\/b" is not a drover mux id/);
    await refused(port.typeText('p1', ''), /text is empty/);
    await refused(port.sendKeys('p1', []), /at least one key/);
    await refused(port.createTab({ spaceId: 's1', cwd: 'relative/dir' }), /cwd "relative\/dir" is not an absolute path/);
    await refused(port.renamePane('p1', 'two\nlines'), /control character/);
    await refused(port.renamePane('p1', '   '), /the pane label is empty/);
    assert.deepEqual(stub.calls, []);
  });

  it('checks every key before sending any, and sends them translated', async () => {
    const stub = stubAdapter(['sendKeys']);
    const port = createMuxPort(stub.adapter);
    for (const [keys, pattern] of [
      [['a', 'Ctrl+c'], /Ctrl is spelled ctrl/],
      [['a', 'ctrl+Enter'], /tmux cannot send ctrl\+Enter/],
      [['shift+F12'], /tmux cannot send shift\+F12/],
      [['a', 'meta+x'], /tmux cannot send meta\+x: tmux has no Super/],
    ] as const) {
      const outcome = await port.sendKeys('p1', keys);
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.reason, 'refused');
      assert.match(!outcome.ok ? outcome.detail : '', pattern);
    }
    assert.deepEqual(stub.calls, []);
    assert.deepEqual(await port.sendKeys('p1', ['ctrl+c', 'shift+Tab', 'Enter']), { ok: true, value: undefined });
    assert.deepEqual(stub.calls, ['sendKeys p1 C-c,BTab,Enter']);
  });

  it('hands a blank cwd to the adapter as none asked for', async () => {
    const stub = stubAdapter(['createTab']);
    const port = createMuxPort(stub.adapter);
    await port.createTab({ spaceId: 's1', cwd: '  ' });
    await port.createTab({ spaceId: 's1', cwd: '/srv', label: 'build' });
    assert.deepEqual(stub.calls, ['createTab {"spaceId":"s1"}', 'createTab {"spaceId":"s1","label":"build","cwd":"/srv"}']);
  });

  it('turns a failure that escapes the adapter into a refusal', async () => {
    const port = createMuxPort(
      stubAdapter(['typeText', 'sendKeys'], {
        typeText: async () => {
          throw new TimeoutError('tmux did not finish', 100);
        },
        sendKeys: async () => {
          throw new MuxError('tmux', "can't find pane: %1", { reason: 'gone' });
        },
      }).adapter,
    );
    // A failure that may have sent adds nothing: the reason (unreachable) says it may have.
    assert.deepEqual(await port.typeText('p1', 'x'), { ok: false, reason: 'unreachable', detail: 'tmux did not finish' });
    assert.deepEqual(await port.sendKeys('p1', ['a']), { ok: false, reason: 'gone', detail: "can't find pane: %1", delivery: 'not_sent' });
  });

  it('stops watch callbacks at close and fires onDown once', async () => {
    const stub = stubAdapter([]);
    const port = createMuxPort(stub.adapter);
    const seen: string[] = [];
    port.watch({ onTopologyChange: () => seen.push('topology'), onDown: (reason) => seen.push(`down ${reason}`) });
    const inner = stub.watches[0]!;
    inner.onTopologyChange?.();
    inner.onDown?.('socket closed');
    inner.onDown?.('again');
    inner.onTopologyChange?.();
    assert.deepEqual(seen, ['topology', 'down socket closed']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(stub.closed(), 1);

    const abort = new AbortController();
    const watch = port.watch({ signal: abort.signal, onTopologyChange: () => seen.push('late') });
    abort.abort();
    stub.watches[1]!.onTopologyChange?.();
    watch.close();
    assert.deepEqual(seen, ['topology', 'down socket closed']);
    assert.equal(stub.closed(), 2);
  });

  it('binds to the first run it sees, and refuses every call for good once another run answers', async () => {
    const stub = stubAdapter(['typeText', 'sendKeys']);
    const port = createMuxPort(stub.adapter);
    assert.equal((await port.snapshot()).incarnation, 'run-1');
    assert.equal((await port.typeText('p1', 'x')).ok, true);
    stub.server.run = 'run-2';
    await assert.rejects(port.snapshot(), (error: unknown) => error instanceof MuxError && error.replaced && error.reason === 'unreachable' && /run-1.*run-2/.test(error.message));
    stub.server.run = 'run-1';
    for (const outcome of [await port.typeText('p1', 'x'), await port.sendKeys('p1', ['a'])]) {
      assert.deepEqual(outcome.ok ? outcome : { reason: outcome.reason, replaced: outcome.replaced }, { reason: 'unreachable', replaced: true });
    }
    await assert.rejects(port.serverIncarnation(), (error: unknown) => error instanceof MuxError && error.replaced);
    assert.equal(await port.reachable(), false);
    assert.deepEqual(stub.calls, ['typeText p1 x'], 'nothing reached the adapter after the replacement');
  });

  it('learns the run before its first write, and keeps a replacement any call reports', async () => {
    const stub = stubAdapter(['typeText', 'sendKeys'], {
      typeText: async () => {
        throw new MuxError('tmux', 'the server at the socket is another run now', { replaced: true, reason: 'gone' });
      },
    });
    const port = createMuxPort(stub.adapter);
    const typed = await port.typeText('p1', 'x');
    assert.deepEqual(typed, { ok: false, reason: 'unreachable', detail: 'the server at the socket is another run now', replaced: true });
    assert.equal(await port.serverIncarnation().catch((error: MuxError) => error.replaced), true);
    const keyed = await port.sendKeys('p1', ['a']);
    assert.equal(!keyed.ok && keyed.replaced, true);
    assert.deepEqual(stub.calls, []);
  });

  it("compares runs the adapter's way, where a multiplexer reports its run only approximately", async () => {
    const stub = stubAdapter([], { sameIncarnation: (a, b) => a.split('~')[0] === b.split('~')[0] });
    const port = createMuxPort(stub.adapter);
    stub.server.run = 'run-1~first-reading';
    await port.snapshot();
    stub.server.run = 'run-1~second-reading';
    assert.equal((await port.snapshot()).incarnation, 'run-1~second-reading');
    assert.equal(await port.serverIncarnation(), 'run-1~first-reading', 'the port answers for the run it was bound to');
    assert.equal(port.sameIncarnation('run-1~a', 'run-1~b'), true);
    assert.equal(port.sameIncarnation('run-1~a', 'run-2~a'), false);
  });

  it('gives learning the run and the verb one budget between them', async () => {
    const seen: (number | undefined)[] = [];
    const stub = stubAdapter(['typeText'], {
      serverIncarnation: async (options) => {
        seen.push(options.timeoutMs);
        await setTimeout(150);
        return 'run-1';
      },
      typeText: async (_paneId, _text, options) => {
        seen.push(options.timeoutMs);
        return ok(undefined);
      },
    });
    const spent = createMuxPort(stub.adapter);
    const late = await spent.typeText('p1', 'x', { timeoutMs: 100 });
    assert.equal(!late.ok && late.reason, 'unreachable');
    assert.match(!late.ok ? late.detail : '', /used up its 100 ms/);
    assert.equal(seen.length, 1, 'the verb was never called');
    assert.ok(seen[0]! <= 100);
    seen.length = 0;
    assert.equal((await createMuxPort(stub.adapter).typeText('p1', 'x', { timeoutMs: 1000 })).ok, true);
    assert.ok(seen[0]! <= 1000 && seen[0]! > 1000 - 150);
    assert.ok(seen[1]! <= 1000 - 150 && seen[1]! > 0, `the verb was given ${seen[1]} ms`);
    const bad = await spent.typeText('p1', 'x', { timeoutMs: -1 });
    assert.equal(!bad.ok && bad.reason, 'refused');
  });

  it("gives each call of a pane channel what is left of the operation's one deadline, and throws a refusal as a MuxError", async () => {
    const given: (number | undefined)[] = [];
    const stub = stubAdapter(['typeText', 'sendKeys'], {
      typeText: async (_paneId, _text, options) => {
        given.push(options.timeoutMs);
        await setTimeout(120);
        return ok(undefined);
      },
      sendKeys: async (_paneId, _keys, options) => {
        given.push(options.timeoutMs);
        return ok(undefined);
      },
    });
    const port = createMuxPort(stub.adapter);
    const channel = paneChannel(port, 'p1', { deadline: performance.now() + 300 });
    await channel.type('x');
    await channel.keys(['Enter']);
    assert.ok(given[0]! <= 300 && given[1]! <= 300 - 120, JSON.stringify(given));
    await setTimeout(200);
    await assert.rejects(channel.keys(['Enter']), TimeoutError);
    assert.equal(given.length, 2, 'a spent budget sends nothing');
    await assert.rejects(paneChannel(port, 'p1').paste('x'), (error: unknown) => error instanceof MuxError && error.reason === 'unsupported');
  });

  it('checks a pane size before the adapter resizes, and hands a snapshot its budget', async () => {
    const resized: string[] = [];
    const budgets: (number | undefined)[] = [];
    const stub = stubAdapter(['resizePane'], {
      resizePane: async (paneId, size, options) => {
        resized.push(`${paneId} ${JSON.stringify(size)} ${options.timeoutMs}`);
        return ok(undefined);
      },
      snapshot: async (options) => {
        budgets.push(options.timeoutMs);
        return { incarnation: 'run-1', spaces: [], tabs: [], panes: [] };
      },
    });
    const port = createMuxPort(stub.adapter);
    for (const [size, pattern] of [
      [{}, /needs a width or a height/],
      [{ height: 0 }, /height 0 is not a whole number of cells from 1 to 10000/],
      [{ width: 2.5 }, /width 2.5 is not a whole number/],
      [{ width: 80, height: 20_000 }, /height 20000/],
    ] as const) {
      const outcome = await port.resizePane('p1', size);
      assert.equal(!outcome.ok && outcome.reason, 'refused');
      assert.match(!outcome.ok ? outcome.detail : '', pattern);
    }
    assert.equal(resized.length, 0, 'nothing malformed reached the adapter');
    assert.deepEqual(await port.resizePane('p1', { height: 12 }, { timeoutMs: 700 }), { ok: true, value: undefined });
    assert.equal(resized.length, 1);
    assert.match(resized[0]!, /^p1 \{"height":12\} \d+$/);
    assert.ok(Number(resized[0]!.split(' ')[2]) <= 700);
    const undeclared = await createMuxPort(stubAdapter(['typeText']).adapter).resizePane('p1', { height: 12 });
    assert.equal(!undeclared.ok && undeclared.capability, 'resizePane');

    await port.snapshot({ timeoutMs: 900 });
    await port.snapshot();
    assert.deepEqual(budgets, [900, undefined], 'a budget reaches the adapter; none leaves its own default');
    await assert.rejects(port.snapshot({ timeoutMs: 0 }), (error: unknown) => error instanceof MuxError && error.reason === 'refused' && /snapshot: timeoutMs 0/.test(error.message));
  });

  it('answers nothing once closed', async () => {
    const stub = stubAdapter(['typeText']);
    const port = createMuxPort(stub.adapter);
    port.watch({});
    await port.close();
    assert.equal(stub.closed(), 1);
    assert.equal(await port.reachable(), false);
    await assert.rejects(port.snapshot(), /mux port is closed/);
    assert.equal((await port.typeText('p1', 'x')).ok, false);
    assert.deepEqual(stub.calls, []);
  });
});
