import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answersNow, mergeHostViews, type HostAnswer, type HostHealth } from '../../src/hosts/index.js';

const NOW_US = 1_800_000_000_000_000;

function health(name: string, up: boolean): HostHealth {
  return {
    name,
    ssh: name,
    reachable: up,
    linkState: up ? 'up' : 'reconnecting',
    lastSeenAt: '2027-01-15T08:00:00.000000Z',
    latencyMs: up ? 4 : undefined,
    version: '0.1.0',
    problem: up ? undefined : 'no answer to a ping within 10000 ms: the link stalled',
    nextAttemptAt: undefined,
  };
}

const rows = { rows: [{ pane_id: '%3', pane_key: 'local::tmux::inc::%3' }] };
const answered: HostAnswer = { host: 'gpu', fetched: { kind: 'answered', lists: rows, atMicros: NOW_US - 3_000_000 } };

describe('a polled view as it stands now', () => {
  it('keeps the last round’s rows live while the host’s link is up', () => {
    const [now] = answersNow([answered], (name) => health(name, true));
    assert.equal(now!.fetched.kind, 'answered');
    assert.equal(now!.link?.linkState, 'up');
    const view = mergeHostViews([now!], ['rows'], NOW_US);
    assert.equal(view.lists.rows![0]!.stale, false);
  });

  it('shows the last round’s rows as stale, with their age, the moment the link is not up', () => {
    const [now] = answersNow([answered], (name) => health(name, false));
    assert.equal(now!.fetched.kind, 'unreachable');
    assert.match((now!.fetched as { error: string }).error, /^host gpu is reconnecting: no answer to a ping/);
    assert.deepEqual(now!.remembered, { lists: rows, atMicros: NOW_US - 3_000_000 });
    const view = mergeHostViews([now!], ['rows'], NOW_US);
    assert.deepEqual(
      view.lists.rows!.map((row) => [row.host, row.row.pane_key, row.stale, row.staleAgeMs]),
      [['gpu', 'gpu::tmux::inc::%3', true, 3000]],
    );
    assert.deepEqual(
      view.hosts.map((host) => [host.name, host.reachable, host.linkState, host.stale]),
      [['gpu', false, 'reconnecting', true]],
    );
  });
});
