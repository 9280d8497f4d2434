import assert from 'node:assert/strict';
import fs, { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { mergeHostViews, mergedViewJson, paneKeyOnHost, RememberedRowsStore, type HostAnswer } from '../../src/hosts/index.js';
import { formatTimestamp, writeFileAtomic } from '../../src/process/index.js';

const SECOND_US = 1_000_000;
const NOW_US = 1_800_000_000 * SECOND_US;

function row(paneId: string, incarnation = 'inc-1'): Record<string, unknown> {
  return { pane_id: paneId, pane_key: `local::tmux::${incarnation}::${paneId}`, session: 's' };
}

const up = { reachable: true, linkState: 'up' as const, lastSeenAt: formatTimestamp(NOW_US - SECOND_US), latencyMs: 12 };
const down = { reachable: false, linkState: 'down' as const, lastSeenAt: undefined, latencyMs: undefined };

describe('merging each machine’s rows into one view', () => {
  it('names each row’s host, in its pane key as well, this machine first and the hosts in their order', () => {
    const answers: HostAnswer[] = [
      { host: 'gpu', fetched: { kind: 'answered', lists: { rows: [row('%3'), row('%4')] }, atMicros: NOW_US - 2000 }, link: up },
      { host: 'local', fetched: { kind: 'answered', lists: { rows: [row('%0', 'here')] }, atMicros: NOW_US - 1000 } },
      { host: 'build', fetched: { kind: 'answered', lists: { rows: [row('%3')] }, atMicros: NOW_US }, link: up },
    ];
    const view = mergeHostViews(answers, ['rows'], NOW_US);
    assert.deepEqual(
      view.lists.rows!.map((merged) => [merged.host, merged.row.pane_key, merged.stale, merged.staleAgeMs]),
      [
        ['local', 'local::tmux::here::%0', false, undefined],
        ['gpu', 'gpu::tmux::inc-1::%3', false, undefined],
        ['gpu', 'gpu::tmux::inc-1::%4', false, undefined],
        ['build', 'build::tmux::inc-1::%3', false, undefined],
      ],
    );
    assert.equal(view.complete, true);
    assert.deepEqual(
      view.hosts.map((host) => [host.name, host.reachable, host.answered, host.error]),
      [
        ['local', true, true, undefined],
        ['gpu', true, true, undefined],
        ['build', true, true, undefined],
      ],
    );
  });

  it('keeps an unreachable host’s last rows, stale with their age, and never counts it as a failure', () => {
    const seenAt = NOW_US - 90 * SECOND_US;
    const view = mergeHostViews(
      [
        { host: 'local', fetched: { kind: 'answered', lists: { rows: [row('%0')] }, atMicros: NOW_US } },
        { host: 'gpu', fetched: { kind: 'unreachable', error: 'host gpu is down: connection refused' }, link: down, remembered: { lists: { rows: [row('%3')] }, atMicros: seenAt } },
        { host: 'never', fetched: { kind: 'unreachable', error: 'host never is down' }, link: down },
      ],
      ['rows'],
      NOW_US,
    );
    assert.equal(view.complete, true, 'a host that cannot be reached does not fail the view');
    const gpuRows = view.lists.rows!.filter((merged) => merged.host === 'gpu');
    assert.deepEqual(
      gpuRows.map((merged) => [merged.row.pane_key, merged.stale, merged.staleAgeMs, merged.seenAt]),
      [['gpu::tmux::inc-1::%3', true, 90_000, formatTimestamp(seenAt)]],
    );
    assert.equal(view.lists.rows!.filter((merged) => merged.host === 'never').length, 0, 'a host never reached has no rows');
    const json = mergedViewJson(view) as { rows: Record<string, unknown>[]; hosts: Record<string, unknown>[] };
    assert.deepEqual(json.hosts[1], { name: 'gpu', reachable: false, link_state: 'down', last_seen_at: formatTimestamp(seenAt), latency_ms: null, answered: false, stale: true, stale_age_ms: 90_000, error: 'host gpu is down: connection refused' });
    assert.deepEqual(json.hosts[2], { name: 'never', reachable: false, link_state: 'down', last_seen_at: null, latency_ms: null, answered: false, stale: false, stale_age_ms: null, error: 'host never is down' });
    assert.deepEqual(json.hosts[0], { name: 'local', reachable: true, link_state: null, last_seen_at: formatTimestamp(NOW_US), latency_ms: null, answered: true, stale: false, stale_age_ms: null, error: null });
    assert.deepEqual(json.rows[1], { host: 'gpu', pane_id: '%3', pane_key: 'gpu::tmux::inc-1::%3', session: 's', stale: true, stale_age_ms: 90_000, seen_at: formatTimestamp(seenAt) });
  });

  it('is incomplete when this machine fails, or a reached host fails; a failed host still shows its last rows as stale', () => {
    const failedHost = mergeHostViews(
      [
        { host: 'local', fetched: { kind: 'answered', lists: { matches: [], skipped: [] }, atMicros: NOW_US } },
        { host: 'gpu', fetched: { kind: 'failed', error: 'no tmux server' }, link: up, remembered: { lists: { matches: [row('%3')], skipped: [] }, atMicros: NOW_US - 5 * SECOND_US } },
      ],
      ['matches', 'skipped'],
      NOW_US,
    );
    assert.equal(failedHost.complete, false);
    assert.deepEqual(
      failedHost.lists.matches!.map((merged) => [merged.host, merged.stale, merged.staleAgeMs]),
      [['gpu', true, 5000]],
    );
    assert.deepEqual(failedHost.lists.skipped, []);
    assert.equal(failedHost.hosts[1]!.lastSeenAt, up.lastSeenAt, 'the later of the link’s last answer and the rows’ time');
    const failedHere = mergeHostViews([{ host: 'local', fetched: { kind: 'failed', error: 'no server' } }], ['rows'], NOW_US);
    assert.equal(failedHere.complete, false);
    assert.deepEqual(failedHere.lists.rows, []);
  });

  it('renames only the host of a well-formed pane key', () => {
    assert.equal(paneKeyOnHost('local::herdr::run-2::w1:p3', 'gpu'), 'gpu::herdr::run-2::w1:p3');
    assert.equal(paneKeyOnHost('%3', 'gpu'), '%3');
  });
});

describe('remembered rows', () => {
  it('keeps one file per host and view, by its params, and reads back exactly what was written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-remembered-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const store = new RememberedRowsStore(dir);
    assert.equal(store.read('gpu', 'pane.map', { all_sessions: true }), undefined);
    const rows = { lists: { rows: [row('%3')] }, atMicros: NOW_US };
    store.write('gpu', 'pane.map', { all_sessions: true }, rows);
    assert.deepEqual(store.read('gpu', 'pane.map', { all_sessions: true }), rows);
    assert.equal(store.read('gpu', 'pane.map', { session: 'work' }), undefined, 'another scope is another view');
    assert.equal(store.read('build', 'pane.map', { all_sessions: true }), undefined);
    const newer = { lists: { rows: [] }, atMicros: NOW_US + SECOND_US };
    store.write('gpu', 'pane.map', { all_sessions: true }, newer);
    assert.deepEqual(store.read('gpu', 'pane.map', { all_sessions: true }), newer);
    assert.deepEqual(readdirSync(join(dir, 'gpu')).filter((name) => name.endsWith('.tmp')), [], 'no temporary file left');
  });

  it('writes without syncing to disk, as a cache polled views rewrite after every answer; an emptied file reads as none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-remembered-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const original = fs.fsyncSync;
    let syncs = 0;
    fs.fsyncSync = (fd) => {
      syncs += 1;
      original(fd);
    };
    syncBuiltinESMExports();
    try {
      writeFileAtomic(join(dir, 'durable.json'), '{}');
      assert.equal(syncs, 1, 'a durable write syncs (the check sees fsync)');
      const store = new RememberedRowsStore(dir);
      store.write('gpu', 'pane.map', { all_sessions: true }, { lists: { rows: [row('%3')] }, atMicros: NOW_US });
      assert.equal(syncs, 1);
    } finally {
      fs.fsyncSync = original;
      syncBuiltinESMExports();
    }
    // What a crash after the rename but before the data reached the disk can leave.
    const [file] = readdirSync(join(dir, 'gpu'));
    writeFileSync(join(dir, 'gpu', file!), '');
    assert.equal(new RememberedRowsStore(dir).read('gpu', 'pane.map', { all_sessions: true }), undefined);
  });
});
