import type { AgentScreen } from '../agents/index.js';
import { squeeze } from './echo.js';

/**
 * What the input-line judgements read of a screen: its rows as text, its width and its
 * cursor (null when the multiplexer does not report one).
 */
export type ScreenText = Pick<AgentScreen, 'lines' | 'width' | 'cursor' | 'wrapped'>;

function cells(row: string): number {
  return Array.from(row).length;
}

/**
 * The row's whole text when the terminal wrapped it into the next row, null when a line break
 * ended it. The screen says which rows wrapped where its multiplexer keeps the spaces written
 * at a row's end (a line that wrapped just after a space then keeps it); elsewhere a row is
 * taken as wrapped when its text fills the width. Characters count as one cell each, so a row
 * of wide characters is not seen as full.
 */
function wrappedRow(screen: ScreenText, y: number): string | null {
  const line = screen.lines[y] ?? '';
  const width = cells(line);
  if (screen.wrapped === undefined) return width >= screen.width ? line : null;
  return screen.wrapped[y] === true ? line + ' '.repeat(Math.max(0, screen.width - width)) : null;
}

/**
 * The logical line that ends on row `y`: the row (up to column `end`, all of it by default)
 * after the rows the terminal wrapped onto it (tmux hard-wraps at the pane width).
 */
export function lineEndingAt(screen: ScreenText, y: number, end?: number): string {
  const row = screen.lines[y] ?? '';
  let text = end === undefined ? row : Array.from(row).slice(0, end).join('');
  for (let above = y - 1; above >= 0; above -= 1) {
    const wrapped = wrappedRow(screen, above);
    if (wrapped === null) break;
    text = wrapped + text;
  }
  return text;
}

/**
 * What the line that holds the cursor shows before the cursor, with the rows it wrapped from;
 * "" when the cursor stands at the start of a row (the program moved to a fresh line: tmux
 * keeps a cursor that filled a row at the end of that row until more text comes); null
 * without a cursor.
 */
export function textBeforeCursor(screen: ScreenText): string | null {
  if (screen.cursor === null) return null;
  if (screen.cursor.x === 0) return '';
  return lineEndingAt(screen, screen.cursor.y, screen.cursor.x);
}

/** The last characters of the text, squeezed: what the input line ends with after typing it. */
function tailNeedle(text: string): string {
  return Array.from(squeeze(text)).slice(-8).join('');
}

/** Whether the cursor stands right after `text` (its tail; whitespace, wraps and frame runes ignored); undefined without a cursor. */
export function cursorFollows(screen: ScreenText, text: string): boolean | undefined {
  const before = textBeforeCursor(screen);
  return before === null ? undefined : squeeze(before).endsWith(tailNeedle(text));
}

function sameScreen(a: ScreenText, b: ScreenText): boolean {
  const cursor = (screen: ScreenText): string => (screen.cursor === null ? '' : `${screen.cursor.x},${screen.cursor.y}`);
  return cursor(a) === cursor(b) && a.lines.length === b.lines.length && a.lines.every((line, index) => line === b.lines[index]);
}

/**
 * What Enter did to a line typed into a program drover has no screen rules for, from the
 * screen just before Enter (`typed`, the cursor right after the text) and one after it:
 * - submitted: the cursor no longer follows the text: the program took the line and moved on
 *   (an echo, a result, a new prompt, or a scroll may have followed; none of them count);
 * - unchanged: rows and cursor as before Enter;
 * - still_typed: the screen changed, but the cursor still stands right after the text;
 * - unwatched: the screen changed, but there is no cursor, or the cursor did not follow the
 *   typed text before Enter, so where the text went cannot be read.
 */
export type KeyedSubmitVerdict = 'submitted' | 'unchanged' | 'still_typed' | 'unwatched';

export function keyedSubmitVerdict(typed: ScreenText, after: ScreenText, text: string): KeyedSubmitVerdict {
  if (sameScreen(typed, after)) return 'unchanged';
  if (cursorFollows(typed, text) !== true) return 'unwatched';
  switch (cursorFollows(after, text)) {
    case undefined:
      return 'unwatched';
    case true:
      return 'still_typed';
    case false:
      return 'submitted';
  }
}
