/**
 * Screens from what multiplexers print: a capture with SGR styling kept, plus the pane's size
 * and cursor where the multiplexer reports them.
 */
import { parseStyledText, rowText } from './sgr.js';
import type { MuxScreen } from './types.js';

export interface ScreenGeometry {
  readonly width: number;
  readonly height: number;
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean } | null;
  /** The capture keeps the spaces written at a row's end (tmux's capture -N): which rows wrapped can be read from it. */
  readonly writtenSpacesKept?: boolean;
}

/** A pane's screen without saying which pane: all that screen rules (the agents') read of it. */
export type VisibleScreen = Omit<MuxScreen, 'paneId'>;

/**
 * The screen of a capture of the visible rows (SGR kept) and the pane's geometry. Rows beyond
 * the capture are blank; a capture longer than the pane (scrollback included) keeps its last
 * `height` rows.
 */
export function visibleScreen(capture: string, geometry: ScreenGeometry): VisibleScreen {
  const parsed = parseStyledText(capture.endsWith('\n') ? capture.slice(0, -1) : capture);
  const rows = parsed.slice(Math.max(0, parsed.length - geometry.height));
  while (rows.length < geometry.height) rows.push([]);
  const texts = rows.map(rowText);
  return Object.freeze({
    rows,
    lines: texts.map((text) => text.replace(/\s+$/u, '')),
    ...(geometry.writtenSpacesKept === true ? { wrapped: texts.map((text) => Array.from(text).length >= geometry.width) } : {}),
    width: geometry.width,
    height: geometry.height,
    cursor: geometry.cursor,
  });
}

/**
 * The screen of its visible rows alone, for a multiplexer that reports neither the pane's size
 * nor its cursor: the rows are the screen, its width the widest row (agents' full-width rules
 * and frames make it so), the cursor unknown, which the screen rules accept.
 */
export function visibleRows(text: string): VisibleScreen {
  const trimmed = text.replace(/\n$/, '');
  const rows = parseStyledText(trimmed).map(rowText);
  return visibleScreen(trimmed, { width: Math.max(0, ...rows.map((row) => Array.from(row).length)), height: rows.length, cursor: null });
}

/** A pane's screen from a capture and its geometry (visibleScreen). */
export function screenOfCapture(paneId: string, capture: string, geometry: ScreenGeometry): MuxScreen {
  return Object.freeze({ paneId, ...visibleScreen(capture, geometry) });
}

/** A pane's screen from its visible rows alone (visibleRows). */
export function screenOfRows(paneId: string, text: string): MuxScreen {
  return Object.freeze({ paneId, ...visibleRows(text) });
}
