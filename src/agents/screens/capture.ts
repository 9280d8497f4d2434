import type { Pane } from '../../tmux/index.js';
import { agentScreen } from './screen.js';
import type { AgentScreen } from './types.js';

/** What one screen read returns: the screen, and the capture text it came from (SGR kept). */
export interface CapturedScreen {
  screen: AgentScreen;
  capture: string;
}

const GEOMETRY = '#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{cursor_flag}';

/** The visible screen of a tmux pane with its styling and cursor, in one tmux round trip each. */
export async function captureAgentScreen(pane: Pane, options: { timeoutMs?: number } = {}): Promise<CapturedScreen> {
  const [captured, shown] = await Promise.all([
    pane.capture({ escapes: true, ...options }),
    pane.display(GEOMETRY, options),
  ]);
  const [width, height, x, y, flag] = shown.toString('latin1').trim().split(' ').map(Number);
  const capture = captured.toString('utf8');
  return {
    capture,
    screen: agentScreen(capture, { width: width!, height: height!, cursor: Number.isInteger(x) && Number.isInteger(y) ? { x: x!, y: y!, visible: flag === 1 } : null }),
  };
}
