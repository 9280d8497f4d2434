import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hostsFigures, type HostsTimings } from '../../bench/hosts.js';

const ten = (from: number): number[] => Array.from({ length: 10 }, (_, index) => from + index);

const TIMINGS: HostsTimings = {
  mergedMap: [30, 10, 20],
  naiveMap: [400, 300, 200],
  singleLinkMap: [12, 12, 12],
  // The second host is the slowest: its median (16) is what the merged map is judged by.
  localMaps: [
    [8, 8, 8],
    [16, 15, 40],
    [9, 9, 9],
  ],
  localControlMaps: [
    [5, 5, 5],
    [8, 8, 8],
    [10, 10, 10],
  ],
  localCliMaps: [
    [100, 100, 100],
    [120, 80, 200],
    [90, 90, 90],
  ],
  linkRtt: [2, 3, 1],
  freshSshDrover: [500, 400, 600],
  freshSshTrue: [300, 300, 300],
  remoteDeliver: ten(100),
  localDeliver: ten(50),
};

describe('the hosts bench figures', () => {
  it('divides the merged map by the slowest host’s own map, and names each ratio numerator over denominator', () => {
    const figures = hostsFigures(TIMINGS);
    assert.equal(figures.merged_map_ms, 20);
    assert.equal(figures.slowest_local_map_ms, 16);
    assert.equal(figures.merged_map_over_local_map, 1.25);
    assert.equal(figures.merged_map_goal_met, true);
    assert.equal(figures.naive_map_over_merged_map, 15);
    assert.equal(figures.slowest_local_control_map_ms, 10);
    assert.equal(figures.merged_map_over_local_control_map, 2);
    assert.equal(figures.slowest_local_cli_map_ms, 120);
    assert.equal(figures.merged_map_over_local_cli_map, 0.17);
    assert.equal(figures.one_host_link_map_over_its_local_map, 1.5);
  });

  it('divides a fresh ssh’s drover by the link’s round trip, and takes p50 and p95 of the deliveries', () => {
    const figures = hostsFigures(TIMINGS);
    assert.equal(figures.link_rtt_ms, 2);
    assert.equal(figures.fresh_ssh_over_link_rtt, 250);
    assert.equal(figures.link_rtt_goal_met, true);
    assert.equal(figures.fresh_ssh_true_ms, 300);
    assert.deepEqual([figures.remote_deliver_p50_ms, figures.remote_deliver_p95_ms, figures.local_deliver_p50_ms, figures.local_deliver_p95_ms], [104, 109, 54, 59]);
    assert.equal(figures.remote_deliver_p50_over_local_deliver_p50, 1.93);
  });

  it('says a goal is missed when it is', () => {
    const figures = hostsFigures({ ...TIMINGS, mergedMap: [40], linkRtt: [100] });
    assert.equal(figures.merged_map_over_local_map, 2.5);
    assert.equal(figures.merged_map_goal_met, false);
    assert.equal(figures.fresh_ssh_over_link_rtt, 5);
    assert.equal(figures.link_rtt_goal_met, false);
  });
});
