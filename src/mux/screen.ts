/**
 * Screens from what multiplexers print: a capture with SGR styling kept, plus the pane's size
 * and cursor where the multiplexer reports them. An adapter adds the pane id; a screen built
 * from a recorded capture (a test fixture, an agent's screen rules) has none.
 */
import { parseStyledText, rowText } from './sgr.js';
import type { TerminalScreen } from './types.js';

export interface ScreenGeometry {
  readonly width: number;
  readonly height: number;
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean } | null;
}

/**
 * A screen from a capture of the visible rows (SGR kept) and the pane's geometry. Rows beyond
 * the capture are blank; a capture longer than the pane (scrollback included) keeps its last
 * `height` rows.
 */
export function screenOfCapture(capture: string, geometry: ScreenGeometry): TerminalScreen {
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
export function screenOfRows(text: string): TerminalScreen {
  const trimmed = text.replace(/\n$/, '');
  const rows = parseStyledText(trimmed).map(rowText);
  return screenOfCapture(trimmed, { width: Math.max(0, ...rows.map((row) => Array.from(row).length)), height: rows.length, cursor: null });
}
