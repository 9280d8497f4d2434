/**
 * Every adapter against every conformance check its declaration makes applicable: the read-only
 * set and the world set, each world check in a fresh world. Each world lists the checks it is
 * expected to skip (for a capability its multiplexer lacks, or a fact its world cannot observe);
 * a check skipped without being listed, or listed and not skipped, fails.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conformance, MUX_NAMES } from '../../src/mux/index.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { openTmuxWorld } from './tmux-world.js';

interface AdapterWorld {
  readonly open: conformance.WorldFactory;
  /** The checks, read-only and world, this world skips, each for the reason given. */
  readonly skips: Readonly<Record<string, string>>;
}

const PASTE = 'a paste arrives as one bracketed paste with its line breaks';
const PROCESS = "a pane's process reads back as the snapshot reports the pane";
const SPLIT = 'a split pane appears beside its pane, and closing it is for good';
const GEOMETRY = 'every pane sits inside its tab, in whole cells';
const RESIZE = 'a resized pane takes the size asked for, its neighbour the difference';

const WORLDS: [string, AdapterWorld][] = [
  // The tmux world attaches a terminal and records raw pane input: every check applies.
  ['tmux', { open: openTmuxWorld, skips: {} }],
  [
    'herdr',
    {
      open: openHerdrWorld,
      skips: {
        [PASTE]: 'herdr offers no paste',
        [PROCESS]: 'herdr reports no process for a pane',
      },
    },
  ],
  [
    'zellij',
    {
      open: openZellijWorld,
      skips: {
        [PASTE]: 'drover does not drive zellij paste',
        [SPLIT]: "zellij splits beside its focused pane only",
        [GEOMETRY]: 'drover does not read where zellij places its panes',
        [RESIZE]: 'zellij resizes only its focused pane, by a step',
      },
    },
  ],
];

it('runs against every adapter drover has', () => {
  assert.deepEqual(WORLDS.map(([mux]) => mux).sort(), [...MUX_NAMES].sort());
});

it('lists only skips of checks that exist', () => {
  const names = [...conformance.READ_ONLY_CHECK_NAMES, ...conformance.WORLD_CHECK_NAMES];
  for (const [mux, { skips }] of WORLDS) assert.deepEqual(Object.keys(skips).filter((check) => !names.includes(check)), [], mux);
});

for (const [mux, { open: openWorld, skips }] of WORLDS) {
  const expectSkip = (result: conformance.ConformanceResult): void => {
    assert.equal(result.skipped !== undefined, result.check in skips, `${result.check}: ${result.skipped === undefined ? 'ran, though the world lists it as skipped' : `skipped (${result.skipped}) without being listed`}`);
  };

  describe(`${mux} conformance`, { concurrency: false }, () => {
    it('passes the read-only checks', async () => {
      const world = await openWorld();
      try {
        const results = await conformance.runReadOnlyChecks(world.port);
        assert.deepEqual(results.map((result) => result.check), conformance.READ_ONLY_CHECK_NAMES);
        assert.deepEqual(results.filter((result) => result.problems.length > 0), []);
        results.forEach(expectSkip);
      } finally {
        await world.close();
      }
    });

    for (const check of conformance.WORLD_CHECK_NAMES) {
      it(`world: ${check}`, async () => {
        const [result] = await conformance.runWorldChecks(openWorld, { only: [check] });
        assert.equal(result?.check, check);
        assert.deepEqual(result.problems, []);
        expectSkip(result);
      });
    }
  });
}
