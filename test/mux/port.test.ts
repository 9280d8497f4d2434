import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimeoutError } from '../../src/process/index.js';
import {
  createMuxPort,
  declareCapabilities,
  MuxError,
  ok,
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
  const adapter: MuxAdapter = {
    mux: 'tmux',
    declaration: declareCapabilities(claimed, { topologyLatency: { kind: 'push' }, spaces: 'many', unsupportedKeys: ['ctrl+Enter', 'F12'] }),
    reachable: async () => true,
    snapshot: async () => ({ spaces: [], tabs: [], panes: [] }),
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
  return { adapter, calls, watches, closed: () => closedWatches };
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
    assert.deepEqual(await port.typeText('p1', 'x'), { ok: false, reason: 'unreachable', detail: 'tmux did not finish' });
    assert.deepEqual(await port.sendKeys('p1', ['a']), { ok: false, reason: 'gone', detail: "can't find pane: %1" });
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
