import type { AgentScreen, AgentScreenRules, ScreenPhase, ScreenReading } from './types.js';

/**
 * Gemini CLI's screen, bottom up. Idle or busy, its input area sits under the transcript:
 *
 *    ⠏ Thinking... (esc to cancel, 2s)        ? for shortcuts   status row (spinner while busy)
 *   ────────────────────────────────────────────────────────    full-width separator
 *    Shift+Tab to accept edits                                  approval-mode hint
 *   ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄    the band's top edge, where drawn
 *    > typed text, wrapped rows indented by three spaces         the composer (on a grey band,
 *      (at most 10 visual rows; longer text scrolls)              or between ─ rules with NO_COLOR)
 *   ▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀    the band's bottom edge, where drawn
 *    notes.txt                                                   @ or / completion menu, if open
 *    workspace (/directory)     sandbox     /model               footer
 *
 * A permission prompt or a dialog (folder trust, API key, auth choice, model picker…) replaces
 * all of that with a rounded box at the bottom. The rules anchor on that structure, never on
 * transcript text: a reply that quotes a dialog's question sits above the separator.
 */

/** The placeholder the composer shows when empty (default, shell mode, vim modes). */
const PLACEHOLDERS: ReadonlySet<string> = new Set([
  '  Type your message or @path/to/file',
  '  Type your shell command',
  "  Press 'Esc' for NORMAL mode.",
  "  Press 'i' for INSERT mode.",
]);
/** The composer's first row: the prompt glyph (`>`, `!` in shell mode, `*` in YOLO mode, `(r:)` in reverse search). */
const PROMPT_ROW = /^ (?:[>!*]|\(r:\)) /;
const PROMPT_WIDTH = 3;
/** Further composer rows: wrapped or further lines of the draft, indented under the text. */
const CONTINUATION_ROW = /^ {3}\S?/;
/** The separator above the input area spans the pane; the separator is at most this many rows above the prompt row. */
const SEPARATOR_REACH = 4;
/**
 * Gemini CLI's own busy markers on the status row, whatever the spinner's phrase says: the
 * turn's elapsed time, or a hook running (the one before a turn starts, or after it ends).
 */
const BUSY_STATUS = /\(esc to cancel(?:, [^)]*)?\)|^\s*\S?\s*Executing Hooks?: /;
const BOX_TOP = /^(\s*)╭─+╮$/;
const BOX_BOTTOM = /^(\s*)╰─+╯$/;
/** An option of a tool-approval box (`● 1. Allow once`, `2. Allow for this session`, `3. No, suggest changes (esc)`). */
const APPROVAL_OPTION = /^(?:● )?\s*\d+\. (?:Allow\b|Yes\b|No, suggest changes)/;
/** A shell prompt: what the pane shows once the agent has exited. */
const SHELL_PROMPT = /[$#%>❯]$/;
/** The composer's input box holds at most this many visual rows (Gemini CLI's viewport height). */
const COMPOSER_VIEWPORT_ROWS = 10;
/** The narrowest composer row counted on when a composer scrolled: a suffix shorter than a full viewport of these is only part of the text. */
const NARROWEST_COMPOSER_ROW = 16;
/** Gemini CLI folds a bracketed paste of more than 5 lines or 500 characters into a placeholder. */
const PASTE_FOLD_LINES = 5;
const PASTE_FOLD_CHARS = 500;
const PASTE_PLACEHOLDER = /^\[Pasted Text: (\d+) (lines|chars)(?: #\d+)?\]$/;

const DIALOG_TITLES: readonly { rule: string; pattern: RegExp }[] = [
  { rule: 'trust-dialog', pattern: /Do you trust the files in this folder\?/ },
  { rule: 'key-dialog', pattern: /Enter Gemini API Key/ },
  { rule: 'auth-dialog', pattern: /How would you like to authenticate/ },
];

function isSeparator(line: string, width: number): boolean {
  return line.length >= width - 2 && /^─+$/.test(line);
}

/** A row of half blocks: the top or bottom edge of the composer's band, drawn on terminals with full colour. */
function isBandEdge(line: string): boolean {
  return /^[▀▄]+$/u.test(line);
}

function isBlank(line: string): boolean {
  return line.trim() === '';
}

interface Composer {
  /** Rows of the draft as shown, the prompt glyph and indentation removed. */
  rows: string[];
  /** The separator's row. */
  separator: number;
  /** The row after the composer's last text row. */
  end: number;
}

/** The composer: the lowest prompt row with the input area's separator just above it. */
function findComposer(lines: readonly string[], width: number): Composer | null {
  for (let row = lines.length - 1; row >= 0; row -= 1) {
    if (!PROMPT_ROW.test(lines[row]!)) continue;
    let separator = -1;
    for (let above = row - 1; above >= Math.max(0, row - SEPARATOR_REACH); above -= 1) {
      if (isSeparator(lines[above]!, width)) {
        separator = above;
        break;
      }
    }
    if (separator === -1) continue;
    const rows = [lines[row]!.replace(PROMPT_ROW, '')];
    let end = row + 1;
    // Blank rows belong to the draft only when a further draft row follows them.
    for (let next = row + 1; next < lines.length; next += 1) {
      const line = lines[next]!;
      if (isBlank(line)) continue;
      if (!CONTINUATION_ROW.test(line) || isSeparator(line, width)) break;
      for (let gap = end; gap < next; gap += 1) rows.push('');
      rows.push(line.slice(PROMPT_WIDTH));
      end = next + 1;
    }
    return { rows, separator, end };
  }
  return null;
}

/** A scrolled composer gives a column to its scrollbar; wrapping is judged with that slack. */
const SCROLLBAR_SLACK = 2;

/**
 * The draft as typed: rows the agent wrapped are joined (at a word boundary with the space it
 * dropped, inside a word without), other row breaks are the draft's own newlines.
 */
function draftText(rows: readonly string[], inputWidth: number): string {
  if (rows.length === 1 && PLACEHOLDERS.has(rows[0]!)) return '';
  const wrapWidth = inputWidth - SCROLLBAR_SLACK;
  let text = rows[0]!;
  for (let index = 1; index < rows.length; index += 1) {
    const previous = rows[index - 1]!;
    const next = rows[index]!;
    const firstWord = next.split(' ')[0]!;
    if (previous.length >= wrapWidth) text += next;
    else if (next !== '' && previous.length + 1 + firstWord.length > wrapWidth) text += ` ${next}`;
    else text += `\n${next}`;
  }
  return text;
}

interface Box {
  top: number;
  bottom: number;
  /** The box's rows without its side borders, trimmed. */
  body: string[];
}

/** The rounded box whose bottom edge is the lowest box edge among the screen's last rows. */
function findBottomBox(lines: readonly string[]): Box | null {
  let bottom = -1;
  let rowsBelow = 0;
  for (let row = lines.length - 1; row >= 0 && bottom === -1; row -= 1) {
    if (isBlank(lines[row]!)) continue;
    if (BOX_BOTTOM.test(lines[row]!)) bottom = row;
    // Below a dialog Gemini CLI shows at most a transient line such as "Press Ctrl+C again to exit."
    else if (++rowsBelow > 1) return null;
  }
  if (bottom === -1) return null;
  const indent = BOX_BOTTOM.exec(lines[bottom]!)![1]!.length;
  for (let row = bottom - 1; row >= 0; row -= 1) {
    const top = BOX_TOP.exec(lines[row]!);
    if (top !== null && top[1]!.length === indent) {
      const body = lines.slice(row + 1, bottom).map((line) => line.trim().replace(/^│/, '').replace(/│$/, '').trim());
      return { top: row, bottom, body };
    }
  }
  return null;
}

function reading(phase: ScreenPhase, rule: string, detail: string, extra: Partial<Pick<ScreenReading, 'composer' | 'completion' | 'question'>> = {}): ScreenReading {
  return { phase, rule: `gemini.${rule}`, detail, composer: extra.composer ?? null, completion: extra.completion ?? false, question: extra.question ?? null };
}

function readBox(box: Box): ScreenReading {
  const firstOption = box.body.findIndex((line) => APPROVAL_OPTION.test(line));
  if (firstOption !== -1) {
    const asking = box.body.slice(0, firstOption).findLast((line) => line.endsWith('?')) ?? box.body.find((line) => line !== '') ?? '';
    return reading('permission', 'permission', `tool approval box: ${asking}`, { question: { snippet: asking } });
  }
  const text = box.body.join('\n');
  const titled = DIALOG_TITLES.find(({ pattern }) => pattern.test(text));
  const asking = (titled === undefined ? undefined : box.body.find((line) => titled.pattern.test(line))) ?? box.body.find((line) => line !== '') ?? '';
  return reading('dialog', titled?.rule ?? 'dialog', `dialog box at the bottom: ${asking}`, { question: { snippet: asking } });
}

function readScreen(screen: AgentScreen): ScreenReading {
  const { lines, width } = screen;
  const composer = findComposer(lines, width);
  if (composer !== null) {
    const text = draftText(composer.rows, width - 2 * PROMPT_WIDTH);
    const below = lines.slice(composer.end).filter((line) => !isBlank(line) && !isBandEdge(line));
    // The footer's two rows are the last ones; anything between the composer and them is a menu.
    const footer = below.findIndex((line) => /^ workspace \(/.test(line));
    const completion = (footer === -1 ? below.length : footer) > 0;
    const status = lines[composer.separator - 1] ?? '';
    const busy = BUSY_STATUS.test(status);
    return reading(busy ? 'busy' : 'composer', busy ? 'busy' : 'composer', busy ? `status row: ${status.trim()}` : `composer${text === '' ? ' (empty)' : ''} under the separator`, {
      composer: { text },
      completion,
    });
  }
  // Gemini CLI hides the terminal cursor; a shell shows it at its prompt, under the session summary box the agent leaves.
  const last = lines.findLast((line) => !isBlank(line));
  if (last !== undefined && screen.cursor?.visible !== false && SHELL_PROMPT.test(last)) {
    return reading('exited', 'exited', `no Gemini CLI input area; a shell prompt: ${last.trim()}`);
  }
  const box = findBottomBox(lines);
  if (box !== null) return readBox(box);
  return reading('unknown', 'unknown', 'neither the input area nor a dialog box of Gemini CLI');
}

function compact(text: string): string {
  return text.replace(/\s+/g, '');
}

/** The placeholder Gemini CLI shows for a bracketed paste of `typed`, when it folds one. */
function pastePlaceholderFits(shown: string, typed: string): boolean {
  const match = PASTE_PLACEHOLDER.exec(shown.trim());
  if (match === null) return false;
  const normalized = typed.replace(/\r\n?/g, '\n');
  const lines = normalized.split('\n').length;
  if (lines <= PASTE_FOLD_LINES && normalized.length <= PASTE_FOLD_CHARS) return false;
  return match[2] === 'lines' ? lines > PASTE_FOLD_LINES && Number(match[1]) === lines : lines <= PASTE_FOLD_LINES && Number(match[1]) === normalized.length;
}

export const geminiRules: AgentScreenRules = {
  agent: 'gemini',
  read: readScreen,
  composerShows(composerText, typed) {
    if (pastePlaceholderFits(composerText, typed)) return true;
    const shown = compact(composerText);
    const wanted = compact(typed);
    if (shown === '' || wanted === '') return shown === wanted;
    if (shown === wanted) return true;
    // A draft longer than the input box shows its last rows, the cursor being at its end.
    return wanted.endsWith(shown) && shown.length >= COMPOSER_VIEWPORT_ROWS * NARROWEST_COMPOSER_ROW;
  },
  // Ctrl+C empties the draft, multi-line included. On an empty composer (and, seen once, right
  // after Escape closed a menu) it also arms exit: a second Ctrl+C within 3 s quits the agent.
  clearKeys: ['ctrl+c'],
  // Escape closes the @ and / menus and keeps the text; Tab or Enter would accept an entry.
  dismissCompletionKeys: ['Escape'],
};
