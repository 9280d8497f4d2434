/**
 * What a pane's screen says in one line, for a row that must tell at a glance what the pane is
 * doing. Pure, so the page's rows and the tests agree on it.
 */

/** Frames, rules, blocks and shading: what TUIs draw around text, and nothing a person reads. */
const DRAWING = /[\u2500-\u259f\u25a0-\u25ff\u2800-\u28ff]/gu;
/** A row that is only a prompt glyph, a cursor or punctuation says nothing either. */
const WORDS = /[\p{L}\p{N}]/u;
/** Drawing alone (a line, a band's edge, a box's corner): agents draw such a rule over their input area. */
const RULE = /^[\s\u2500-\u259f]+$/u;
/** An agent's input area and footer fit in this many bottom rows; a rule higher up is transcript. */
const INPUT_AREA_ROWS = 14;
/** The longest line a row carries; the pane itself has the rest. */
export const LAST_LINE_MAX = 160;

/**
 * Where an agent's transcript ends: the highest of the full-width rules in the bottom rows it
 * drew (an input box has one above and one below it), or its last row when there is none.
 */
export function transcriptEnd(rows: readonly string[], width: number): number {
  // An agent that draws inline leaves blank rows under its footer.
  let end = rows.length;
  while (end > 0 && rows[end - 1]!.trim() === '') end -= 1;
  const bottom = end;
  for (let index = bottom - 1; index >= Math.max(0, bottom - INPUT_AREA_ROWS); index -= 1) {
    const row = rows[index]!;
    if (RULE.test(row) && row.trim().length >= width * 0.6) end = index;
  }
  return end;
}

/**
 * The lowest row with words on it, with what TUIs draw around text taken out and runs of
 * blanks closed up; null for a screen with no words. For an agent's screen only the transcript
 * counts: its input area and footer say the same thing every time.
 */
export function lastMeaningfulLine(screenText: string, options: { agent: boolean; width: number }): string | null {
  const rows = screenText.replace(/\n$/, '').split('\n');
  const end = options.agent ? transcriptEnd(rows, options.width) : rows.length;
  for (let index = end - 1; index >= 0; index -= 1) {
    const line = rows[index]!.replace(DRAWING, ' ').replace(/\s+/gu, ' ').trim();
    if (!WORDS.test(line)) continue;
    return line.length <= LAST_LINE_MAX ? line : `${line.slice(0, LAST_LINE_MAX - 1)}…`;
  }
  return null;
}
