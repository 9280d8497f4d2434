import { parseStyledText, rowText } from '../../mux/index.js';
import type { AgentScreen } from './types.js';

export interface ScreenGeometry {
  width: number;
  height: number;
  cursor: { x: number; y: number; visible: boolean } | null;
}

/**
 * An AgentScreen from a `capture-pane -p -e` of the visible screen (SGR kept) and the
 * pane's geometry. Rows beyond the capture are blank; a capture longer than the pane
 * (scrollback included) keeps its last `height` rows.
 */
export function agentScreen(capture: string, geometry: ScreenGeometry): AgentScreen {
  const parsed = parseStyledText(capture.endsWith('\n') ? capture.slice(0, -1) : capture);
  const rows = parsed.slice(Math.max(0, parsed.length - geometry.height));
  while (rows.length < geometry.height) rows.push([]);
  return Object.freeze({
    rows,
    lines: rows.map((row) => rowText(row).replace(/\s+$/u, '')),
    width: geometry.width,
    height: geometry.height,
    cursor: geometry.cursor,
  });
}
