import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { agentScreen, type ScreenGeometry } from '../../../src/panes/screens/screen.js';
import type { AgentKind, AgentScreen } from '../../../src/panes/screens/types.js';

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
