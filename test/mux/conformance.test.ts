/**
 * Every adapter against every conformance check its declaration makes applicable: the read-only
 * set and the world set, each world check in a fresh world.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformance, MUX_NAMES } from '../../src/mux/index.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { openTmuxWorld } from './tmux-world.js';

interface AdapterWorld {
  readonly open: conformance.WorldFactory;
  /** Whether no world check may be skipped: the tmux world attaches a terminal and records raw pane input. */
  readonly everyCheckApplies: boolean;
}

const WORLDS: [string, AdapterWorld][] = [
  ['tmux', { open: openTmuxWorld, everyCheckApplies: true }],
  ['herdr', { open: openHerdrWorld, everyCheckApplies: false }],
  ['zellij', { open: openZellijWorld, everyCheckApplies: false }],
];

it('runs against every adapter drover has', () => {
  assert.deepEqual(WORLDS.map(([mux]) => mux).sort(), [...MUX_NAMES].sort());
});

for (const [mux, { open: openWorld, everyCheckApplies }] of WORLDS) {
  describe(`${mux} conformance`, { concurrency: false }, () => {
    it('passes the read-only checks', async () => {
      const world = await openWorld();
      try {
        const results = await conformance.runReadOnlyChecks(world.port);
        assert.deepEqual(results.map((result) => result.check), conformance.READ_ONLY_CHECK_NAMES);
        assert.deepEqual(results.filter((result) => result.problems.length > 0), []);
        assert.deepEqual(results.filter((result) => result.skipped !== undefined), []);
      } finally {
        await world.close();
      }
    });

    for (const check of conformance.WORLD_CHECK_NAMES) {
      it(`world: ${check}`, async () => {
        const [result] = await conformance.runWorldChecks(openWorld, { only: [check] });
        assert.equal(result?.check, check);
        assert.deepEqual(result.problems, []);
        if (everyCheckApplies) assert.equal(result.skipped, undefined);
      });
    }
  });
}
