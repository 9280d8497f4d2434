import { mkdirSync, writeFileSync } from 'node:fs';
import type { Pane } from '../../src/tmux/index.js';
import type { AgentKind, AgentScreen } from '../../src/agents/screens/types.js';
import { createMuxPort, TmuxAdapter, unwrapOutcome } from '../../src/mux/index.js';
import { SCREEN_FIXTURES } from './screens/fixtures.js';

/** A pane's visible screen through the mux port, and the styled text it was drawn from (what a fixture keeps). */
export async function captureAgentScreen(pane: Pane): Promise<{ capture: string; screen: AgentScreen }> {
  const port = createMuxPort(new TmuxAdapter({ server: pane.server }));
  const [grid, screen] = await Promise.all([port.readGrid(pane.id, { scope: 'viewport', styling: 'preserve' }), port.readScreen(pane.id)]);
  return { capture: `${unwrapOutcome(port, grid).text}\n`, screen: unwrapOutcome(port, screen) };
}

/**
 * Writes a pane's visible screen as `<dir>/<name>.ansi` (capture-pane -p -e) and
 * `<dir>/<name>.json` (its width, height and cursor, then `meta`), and returns the capture.
 */
export async function writeScreenFixture(pane: Pane, dir: string, name: string, meta: Readonly<Record<string, unknown>>): Promise<string> {
  const { capture, screen } = await captureAgentScreen(pane);
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/${name}.ansi`, capture);
  writeFileSync(`${dir}/${name}.json`, `${JSON.stringify({ width: screen.width, height: screen.height, cursor: screen.cursor, ...meta }, null, 2)}\n`);
  return capture;
}

/**
 * Records a pane's screen as an agent fixture (see test/agents/screens/fixtures.ts for the
 * layout). Used while building the bed, not by the suite: fixtures are reviewed and committed.
 */
export async function recordScreenFixture(pane: Pane, agent: AgentKind, version: string, name: string, meta: { phase: string; note: string }): Promise<void> {
  await writeScreenFixture(pane, `${SCREEN_FIXTURES}${agent}/${version}`, name, meta);
}
