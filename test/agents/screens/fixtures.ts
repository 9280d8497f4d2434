import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { agentScreen, type ScreenGeometry } from '../../../src/agents/screens/screen.js';
import type { AgentKind, AgentScreen, AgentScreenRules, ScreenPhase } from '../../../src/agents/screens/types.js';

/**
 * Recorded screens of the real agents, kept per agent and agent version so that a new
 * release's changed UI shows up as a failing fixture:
 *   test/fixtures/screens/<agent>/<version>/<name>.ansi   capture-pane -p -e of the visible screen
 *   test/fixtures/screens/<agent>/<version>/<name>.json   {"width", "height", "cursor": {x, y, visible} | null, "phase", "note"}
 * The directory stays in the source tree; compiled tests sit four levels below the repo root.
 */
export const SCREEN_FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/screens/', import.meta.url));

export interface ScreenFixtureMeta extends ScreenGeometry {
  /** The phase the screen was recorded in, as drover's rules must read it. */
  phase: string;
  /** How the screen was reached. */
  note: string;
}

export interface ScreenFixture {
  agent: AgentKind;
  version: string;
  name: string;
  meta: ScreenFixtureMeta;
  capture: string;
  screen: AgentScreen;
}

export function fixtureVersions(agent: AgentKind): string[] {
  const dir = `${SCREEN_FIXTURES}${agent}`;
  return existsSync(dir) ? readdirSync(dir).sort() : [];
}

export function loadScreenFixture(agent: AgentKind, version: string, name: string): ScreenFixture {
  const base = `${SCREEN_FIXTURES}${agent}/${version}/${name}`;
  const meta = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as ScreenFixtureMeta;
  const capture = readFileSync(`${base}.ansi`, 'utf8');
  return { agent, version, name, meta, capture, screen: agentScreen(capture, meta) };
}

/** Every recorded screen of an agent, all versions. */
export function screenFixtures(agent: AgentKind): ScreenFixture[] {
  return fixtureVersions(agent).flatMap((version) =>
    readdirSync(`${SCREEN_FIXTURES}${agent}/${version}`)
      .filter((file) => file.endsWith('.json'))
      .sort()
      .map((file) => loadScreenFixture(agent, version, file.slice(0, -'.json'.length))),
  );
}

/**
 * Recorded screens of other programs (shells, REPLs, tracebacks, prompts, pagers), written by
 * test/panes/record-screens.ts:
 *   test/fixtures/screens/programs/<name>.ansi   capture-pane -p -e of the visible screen
 *   test/fixtures/screens/programs/<name>.json   {"width", "height", "cursor", "program", "note", "asks", "indicator"}
 */
export const PROGRAM_SCREENS = `${SCREEN_FIXTURES}programs/`;

export interface ProgramScreenMeta extends ScreenGeometry {
  program: string;
  note: string;
  /** Whether the screen asks a person something. */
  asks: boolean;
  /** The indicator class that describes its question; null when it asks nothing or no class describes it. */
  indicator: string | null;
}

export interface ProgramScreen {
  name: string;
  meta: ProgramScreenMeta;
  capture: string;
  screen: AgentScreen;
}

export function programScreens(): ProgramScreen[] {
  if (!existsSync(PROGRAM_SCREENS)) return [];
  return readdirSync(PROGRAM_SCREENS)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.slice(0, -'.json'.length);
      const meta = JSON.parse(readFileSync(`${PROGRAM_SCREENS}${name}.json`, 'utf8')) as ProgramScreenMeta;
      const capture = readFileSync(`${PROGRAM_SCREENS}${name}.ansi`, 'utf8');
      return { name, meta, capture, screen: agentScreen(capture, meta) };
    });
}

/** What an agent's rules must read on one recorded screen. */
export interface ExpectedReading {
  phase: ScreenPhase;
  rule: string;
  /** The composer's text (or a pattern it matches); null when no composer is read. */
  composer: string | RegExp | null;
  completion?: boolean;
  question?: string;
  /** The text that was typed or pasted: composerShows must accept the composer as showing it. */
  shows?: string;
}

/**
 * One test per recorded screen of `rules.agent`, all versions: the phase it was recorded in,
 * the rule, the composer text, the completion menu and the asking line as `expected` says;
 * every recorded screen must have an expectation.
 */
export function describeRecordedScreens(rules: AgentScreenRules, expected: Readonly<Record<string, ExpectedReading>>, minimum: number): void {
  describe(`${rules.agent} rules on recorded screens`, () => {
    const fixtures = screenFixtures(rules.agent);

    it('has recorded screens, each with an expectation', () => {
      assert.ok(fixtures.length >= minimum, `only ${fixtures.length} fixtures`);
      for (const fixture of fixtures) assert.ok(expected[fixture.name] !== undefined, `no expectation for ${fixture.version}/${fixture.name}`);
    });

    for (const fixture of fixtures) {
      it(`${fixture.version}/${fixture.name} reads as ${fixture.meta.phase}`, () => {
        const wanted = expected[fixture.name];
        assert.ok(wanted !== undefined);
        const reading = rules.read(fixture.screen);
        assert.equal(reading.phase, fixture.meta.phase, 'the phase the fixture was recorded in');
        assert.equal(reading.phase, wanted.phase);
        assert.equal(reading.rule, wanted.rule);
        if (wanted.composer instanceof RegExp) assert.match(reading.composer?.text ?? '', wanted.composer);
        else assert.equal(reading.composer?.text ?? null, wanted.composer);
        assert.equal(reading.completion, wanted.completion ?? false);
        assert.equal(reading.question?.snippet ?? null, wanted.question ?? null);
        assert.ok(reading.detail !== '' && !reading.detail.includes('\n'), 'one line of detail');
        if (wanted.shows !== undefined) assert.ok(rules.composerShows(reading.composer?.text ?? '', wanted.shows), 'the composer shows what was typed');
      });
    }
  });
}
