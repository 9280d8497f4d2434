import { mkdirSync, writeFileSync } from 'node:fs';
import type { Pane } from '../../src/tmux/index.js';
import { captureAgentScreen } from '../../src/agents/screens/capture.js';
import type { AgentKind } from '../../src/agents/screens/types.js';
import { SCREEN_FIXTURES } from './screens/fixtures.js';

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
