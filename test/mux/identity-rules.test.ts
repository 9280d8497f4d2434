import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  AbortedError,
  TimeoutError,
} from '../../src/process/index.js';
import {
  checkIdentitySet,
  focusedPane,
  formatPaneKey,
  HerdrError,
  isValidMuxId,
  LabelMemory,
  MuxError,
  looksLikePaneKey,
  PaneIdLedger,
  parsePaneKey,
  refusal,
  refusalDelivery,
  refusalFromError,
  requestedCwd,
  tmuxIds,
  withPublishedCounts,
  zellijIds,
  type MuxPane,
  type MuxSnapshot,
} from '../../src/mux/index.js';

function paneRecord(paneId: string, tabId: string, spaceId: string, extra: Partial<MuxPane> = {}): MuxPane {
  return { paneId, spaceId, spaceLabel: spaceId, spaceNumber: 1, tabId, cwd: '', focused: false, alive: true, agent: 'shell', status: 'unknown', ...extra };
}

function world(panes: MuxPane[], spaces = [{ spaceId: 's1', focused: true, activeTabId: 't1' }], tabs = [{ tabId: 't1', spaceId: 's1' }]): MuxSnapshot {
  return withPublishedCounts(
    'run-1',
    spaces.map((space, i) => ({ ...space, number: i + 1, label: space.spaceId })),
    tabs.map((tab, i) => ({ ...tab, number: i + 1, label: tab.tabId, focused: i === 0 })),
    panes,
  );
}

describe('identity', () => {
  it('accepts ids that are one URL segment once encoded and rejects the rest', () => {
    for (const id of ['w1:p2', 'terminal_3', 'tab_0', 'session', '%12', '$0', '@3']) {
      assert.equal(isValidMuxId(id), true, id);
      assert.equal(decodeURIComponent(encodeURIComponent(id)), id);
      assert.ok(!encodeURIComponent(id).includes('/'), id);
    }
    for (const id of ['', 'a/b', 'a b', 'a?b', 'a#b', 'x'.repeat(129), 'é', 'a\u0000']) assert.equal(isValidMuxId(id), false, id);
  });

  it("carries tmux's ids unchanged and refuses an id of the wrong kind", () => {
    assert.equal(tmuxIds.pane('%12'), '%12');
    assert.equal(tmuxIds.tab('@7'), '@7');
    assert.equal(tmuxIds.space('$0'), '$0');
    assert.equal(tmuxIds.nativePane('%12'), '%12');
    assert.equal(tmuxIds.nativeTab('@7'), '@7');
    assert.equal(tmuxIds.nativeSpace('$0'), '$0');
    assert.equal(tmuxIds.nativePane('@7'), undefined);
    assert.equal(tmuxIds.nativePane('p12'), undefined);
    assert.equal(tmuxIds.nativePane('%01'), undefined);
    assert.throws(() => tmuxIds.pane('12'), /not a tmux id of the form %N/);
    assert.throws(() => tmuxIds.space('@1'), /not a tmux id of the form \$N/);
  });

  it('maps zellij tabs and panes into separate namespaces', () => {
    assert.equal(zellijIds.tab(3), 'tab_3');
    assert.equal(zellijIds.pane(3), 'terminal_3');
    assert.equal(zellijIds.tabNumber('tab_3'), 3);
    assert.equal(zellijIds.tabNumber('terminal_3'), undefined);
    assert.equal(zellijIds.paneNumber('terminal_12'), 12);
    assert.equal(zellijIds.paneNumber('plugin_1'), undefined);
  });

  it('finds malformed, duplicated and dangling ids', () => {
    const snapshot = world([paneRecord('p1', 't1', 's1'), paneRecord('p1', 't1', 's1'), paneRecord('p2', 't9', 's1'), paneRecord('bad id', 't1', 's2')]);
    const problems = checkIdentitySet(snapshot).join('\n');
    assert.match(problems, /pane id "p1" appears more than once/);
    assert.match(problems, /pane p2 names tab t9/);
    assert.match(problems, /"bad id" is not URL-segment safe/);
    assert.match(problems, /pane bad id names space s2/);
    assert.deepEqual(checkIdentitySet(world([paneRecord('p1', 't1', 's1')])), []);
  });

  it('notices a pane id that comes back after it left', () => {
    const ledger = new PaneIdLedger();
    assert.deepEqual(ledger.observe(world([paneRecord('p1', 't1', 's1'), paneRecord('p2', 't1', 's1')])), []);
    assert.deepEqual(ledger.observe(world([paneRecord('p2', 't1', 's1')])), []);
    assert.deepEqual(ledger.observe(world([paneRecord('p2', 't1', 's1'), paneRecord('p3', 't1', 's1')])), []);
    assert.deepEqual(ledger.observe(world([paneRecord('p1', 't1', 's1')])), ['p1']);
  });
});

describe('contract-owned rules', () => {
  it('treats a blank cwd as none asked for', () => {
    assert.equal(requestedCwd(''), undefined);
    assert.equal(requestedCwd('  \t'), undefined);
    assert.equal(requestedCwd(undefined), undefined);
    assert.equal(requestedCwd(null), undefined);
    assert.equal(requestedCwd('/srv'), '/srv');
  });

  it('reports only labels drover set as paneLabel', () => {
    const labels = new LabelMemory();
    const isDefault = (slot: string): boolean => /^Pane #\d+$/.test(slot);
    assert.deepEqual(labels.split('p1', 'vim notes', isDefault), { terminalTitle: 'vim notes' });
    assert.deepEqual(labels.split('p1', 'Pane #2', isDefault), {});
    labels.remember('p1', 'reviewer');
    assert.deepEqual(labels.split('p1', 'reviewer', isDefault), { paneLabel: 'reviewer' });
    // The program overwrote the label: it is a title now, and the label is forgotten.
    assert.deepEqual(labels.split('p1', 'make test', isDefault), { terminalTitle: 'make test' });
    assert.deepEqual(labels.split('p1', 'reviewer', isDefault), { terminalTitle: 'reviewer' });
    labels.remember('p2', 'x');
    labels.retain(['p1']);
    assert.deepEqual(labels.split('p2', 'x'), { terminalTitle: 'x' });
  });

  it('counts what the snapshot carries', () => {
    const snapshot = world(
      [paneRecord('p1', 't1', 's1'), paneRecord('p2', 't1', 's1'), paneRecord('p3', 't2', 's1')],
      [
        { spaceId: 's1', focused: true, activeTabId: 't1' },
        { spaceId: 's2', focused: false, activeTabId: null as unknown as string },
      ],
      [
        { tabId: 't1', spaceId: 's1' },
        { tabId: 't2', spaceId: 's1' },
      ],
    );
    assert.deepEqual(
      snapshot.spaces.map((space) => [space.spaceId, space.tabCount, space.paneCount]),
      [
        ['s1', 2, 3],
        ['s2', 0, 0],
      ],
    );
    assert.deepEqual(
      snapshot.tabs.map((tab) => [tab.tabId, tab.paneCount]),
      [
        ['t1', 2],
        ['t2', 1],
      ],
    );
  });

  it('resolves focus through the focused space', () => {
    const spaces = [
      { spaceId: 's1', focused: false, activeTabId: 't1' },
      { spaceId: 's2', focused: true, activeTabId: 't2' },
    ];
    const tabs = [
      { tabId: 't1', spaceId: 's1' },
      { tabId: 't2', spaceId: 's2' },
    ];
    const snapshot = world([paneRecord('p1', 't1', 's1', { focused: true }), paneRecord('p2', 't2', 's2', { focused: true })], spaces, tabs);
    assert.equal(focusedPane(snapshot)?.paneId, 'p2');
    assert.equal(focusedPane(world([paneRecord('p1', 't1', 's1', { focused: true })], [{ spaceId: 's1', focused: false, activeTabId: 't1' }])), undefined);
  });

  it('classifies transport death as unreachable, never refused', () => {
    assert.equal(refusalFromError(new TimeoutError('no answer', 100)).reason, 'unreachable');
    assert.equal(refusalFromError(new AbortedError()).reason, 'unreachable');
    assert.equal(refusalFromError(new HerdrError('gone', { reason: 'gone' })).reason, 'gone');
    assert.equal(refusalFromError(new HerdrError('socket closed')).reason, 'unreachable');
    assert.throws(() => refusalFromError(new TypeError('a bug')), TypeError);
  });

  it('keeps what the failure knows reached the multiplexer: a server that was not running was sent nothing', () => {
    const notRunning = refusalFromError(new MuxError('tmux', 'no server running on /tmp/x', { reason: 'unreachable', delivery: 'not_sent' }));
    assert.deepEqual([notRunning.reason, refusalDelivery(notRunning)], ['unreachable', 'not_sent']);
    assert.equal(refusalDelivery(refusalFromError(new TimeoutError('no answer', 100))), 'possibly_sent');
    assert.equal(refusalDelivery(refusal('unreachable', 'a refusal that says nothing of it')), 'possibly_sent');
    assert.equal(refusalDelivery(refusal('gone', 'no such pane')), 'not_sent');
  });
});

describe('pane keys', () => {
  it('spell a pane with its host, multiplexer and run, and read back, colons in herdr ids included', () => {
    for (const key of [
      { host: 'local', mux: 'tmux', incarnation: '28114-1764844800', paneId: '%3' },
      { host: 'build-box.lan', mux: 'herdr', incarnation: '5f1c0e9a2b3d4c6e', paneId: 'w1:p3' },
      { host: 'local', mux: 'zellij', incarnation: '1764844799-1764844801', paneId: 'terminal_7' },
    ] as const) {
      const text = formatPaneKey(key);
      assert.equal(looksLikePaneKey(text), true);
      assert.deepEqual(parsePaneKey(text), { ok: true, key });
    }
    assert.equal(formatPaneKey({ host: 'local', mux: 'herdr', incarnation: 'abc', paneId: 'w1:p3' }), 'local::herdr::abc::w1:p3');
  });

  it('never reads a tmux target as a key, and names what is wrong with a bad key', () => {
    for (const target of ['%3', 'work:1.2', '$0', 'work']) assert.equal(looksLikePaneKey(target), false, target);
    for (const [text, problem] of [
      ['local::tmux::%3', /is not a pane key: a key is HOST::MUX::INCARNATION::PANE/],
      ['local::screen::1-2::%3', /"screen" is not a multiplexer drover drives \(tmux, herdr, zellij\)/],
      ['-bad::tmux::1-2::%3', /"-bad" is not a host name/],
      ['local::tmux::1 2::%3', /"1 2" is not an incarnation/],
      ['local::tmux::1-2::a/b', /"a\/b" is not a pane id/],
    ] as const) {
      const parsed = parsePaneKey(text);
      assert.equal(parsed.ok, false, text);
      assert.match(!parsed.ok ? parsed.problem : '', problem);
    }
    assert.throws(() => formatPaneKey({ host: 'local', mux: 'tmux', incarnation: 'a b', paneId: '%1' }), /not an incarnation/);
  });
});
