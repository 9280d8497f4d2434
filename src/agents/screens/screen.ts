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

/**
 * A screen from its visible rows alone, for a multiplexer that reports neither the pane's size
 * nor its cursor: the rows are the screen, its width the widest row (agents' full-width rules
 * and frames make it so), the cursor unknown, which the screen rules accept.
 */
export function screenOfRows(text: string): AgentScreen {
  const trimmed = text.replace(/\n$/, '');
  const rows = parseStyledText(trimmed).map(rowText);
  return agentScreen(trimmed, { width: Math.max(0, ...rows.map((row) => Array.from(row).length)), height: rows.length, cursor: null });
}
