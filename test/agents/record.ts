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
 * Records a pane's screen as a fixture (see test/agents/screens/fixtures.ts for the layout).
 * Used while building the bed, not by the suite: fixtures are reviewed and committed.
 */
export async function recordScreenFixture(pane: Pane, agent: AgentKind, version: string, name: string, meta: { phase: string; note: string }): Promise<void> {
  const { capture, screen } = await captureAgentScreen(pane);
  const dir = `${SCREEN_FIXTURES}${agent}/${version}`;
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/${name}.ansi`, capture);
  writeFileSync(`${dir}/${name}.json`, `${JSON.stringify({ width: screen.width, height: screen.height, cursor: screen.cursor, ...meta }, null, 2)}\n`);
}
