import { ArgumentError } from '../process/index.js';

/** How many trailing lines a non-ready report, a delivery failure and a question match carry. */
export const SNIPPET_LINES = 20;

/**
 * A row tmux pads the screen with: nothing but ASCII blanks and, in `-e` captures, escape
 * sequences that draw nothing visible. Unicode spaces are not padding, and the class is ASCII
 * so that a Buffer viewed as latin1 (one char per byte) is judged by the same rule.
 */
const BLANK_ROW = /^(?:[ \t\r\f\v]|\x1b\[[0-9;:?<=>]*[ -/]*[@-~])*$/;

/** A line count must be a whole number of at least 1. */
export function checkLineCount(count: number): void {
  if (!Number.isInteger(count) || count < 1) {
    throw new ArgumentError(`the line count must be a whole number of at least 1, got ${count}`);
  }
}

function tailText(text: string, count: number): string {
  const rows = text.split('\n');
  let last = rows.length - 1;
  while (last >= 0 && BLANK_ROW.test(rows[last]!)) last -= 1;
  if (last < 0) return '';
  return `${rows.slice(Math.max(0, last - count + 1), last + 1).join('\n')}\n`;
}

/**
 * The last `count` lines of a pane capture. `capture-pane -S -N` returns N scrollback lines
 * plus the whole screen, padded with blank rows to the pane height; the padding is dropped
 * first, then the last `count` lines are kept. Bytes inside the kept lines are untouched
 * (trailing spaces and escape sequences survive); every kept line ends with "\n"; a capture
 * with nothing but padding yields an empty result. A Buffer is tailed byte for byte.
 */
export function tailLines(capture: string, count: number): string;
export function tailLines(capture: Buffer, count: number): Buffer;
export function tailLines(capture: string | Buffer, count: number): string | Buffer {
  checkLineCount(count);
  if (typeof capture === 'string') return tailText(capture, count);
  return Buffer.from(tailText(capture.toString('latin1'), count), 'latin1');
}

/** The trailing lines shown as evidence of what a pane is doing ("" for a blank screen). */
export function snippet(capture: string): string {
  return tailLines(capture, SNIPPET_LINES);
}
