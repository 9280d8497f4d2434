import type { StyledRow } from '../../mux/index.js';
import type { AgentScreen, AgentScreenRules, ScreenPhase, ScreenReading } from './types.js';

/*
 * Claude Code 2.1 draws, from the bottom of its (alternate) screen up:
 *   a footer (mode line, hints, the `?` shortcuts help),
 *   the composer between two full-width `─` rules; its first row starts with the mode glyph
 *     (`❯`, or `!` in shell mode) and a no-break space, wrapped and further lines with two
 *     spaces; scrolled, the top rule reads `─── ↑ N more ───`,
 *   an @-file or /-command menu right above the composer, if open,
 *   the spinner row (`✻ Verb… (3s · ↓ 5 tokens)`) while a turn runs, under the transcript.
 * Dialogs and permission prompts replace the composer and footer with a panel under a rule:
 * a title, text, a `❯` choice list and a hint row. Everything is read from the rows below the
 * transcript, so nothing a reply prints can pass for the agent's own UI.
 */

/** A full-width rule; the composer's top one may carry the scroll count or the session name (`claude --name`). */
const RULE = /^─+(?: [^─]+ ─+)?$/u;
/** The Rewind menu draws its top edge with upper-eighth blocks instead of a rule. */
const PANEL_EDGE = /^▔+$/u;
const MODE_GLYPH = /^[❯!](?:\u00a0|$)/u;
const CONTINUATION = /^ {2}/u;
/** Entries of the @/slash menu: two spaces, then the pointer or two more spaces, then the entry. */
const MENU_ENTRY = /^ {2}(?:❯ | {2})\S/u;
/** Spinner frames, then a verb ending in an ellipsis and the optional elapsed/tokens counter. */
const SPINNER = /^[·✢✳✶✻✽*] \S[^…]*…(?: \(.*\))?$/u;
/** Right-aligned notices (effort level, focus-events advice, "esc again to clear") above the composer. */
const NOTICE = /^ {8,}\S/u;
const TIP = /^ {2}⎿/u;
const CHOICE_POINTER = /^\s{0,6}❯ (\S.*)$/u;
const SHELL_PROMPT = /[$#%>]$/u;
const PASTE_PLACEHOLDER = /^\[Pasted text #\d+(?: \+(\d+) lines)?\]$/u;
/** Starts the text of a scrolled composer, whose first rows are off screen. */
const SCROLLED = '…';

/** Claude Code folds a paste longer than this, or of more than FOLD_LINES lines, into a placeholder. */
const FOLD_CHARS = 800;
const FOLD_LINES = 3;

function isRule(line: string, width: number): boolean {
  return line.length >= width - 1 && RULE.test(line);
}

/** The text a person typed on one composer row: the placeholder's dim text and its cursor cell left out. */
function typedText(row: StyledRow): string {
  const spans = row.filter((span) => span.text !== '');
  return spans
    .filter((span, index) => {
      if (span.style.dim) return false;
      // The cursor sits on the placeholder's first letter, the rest of the placeholder is dim.
      if (span.style.inverse && spans[index + 1]?.style.dim) return false;
      return true;
    })
    .map((span) => span.text)
    .join('');
}

/** Drops the first two cells (mode glyph and no-break space, or the continuation indent). */
function afterGutter(row: StyledRow): StyledRow {
  let skip = 2;
  const kept: { text: string; style: StyledRow[number]['style'] }[] = [];
  for (const span of row) {
    const chars = Array.from(span.text);
    const cut = Math.min(skip, chars.length);
    skip -= cut;
    if (cut < chars.length) kept.push({ text: chars.slice(cut).join(''), style: span.style });
  }
  return kept;
}

interface Composer {
  top: number;
  bottom: number;
  text: string;
  shellMode: boolean;
}

/** The composer: the last two rules on screen with only input rows between them. */
function findComposer(screen: AgentScreen): Composer | null {
  const rules = screen.lines.flatMap((line, index) => (isRule(line, screen.width) ? [index] : []));
  const bottom = rules.at(-1);
  const top = rules.at(-2);
  if (top === undefined || bottom === undefined || bottom - top < 2) return null;
  const input = screen.lines.slice(top + 1, bottom);
  const scrolled = screen.lines[top]!.includes('↑');
  const [first, ...rest] = input;
  if (!(MODE_GLYPH.test(first!) || (scrolled && CONTINUATION.test(first!))) || !rest.every((line) => line === '' || CONTINUATION.test(line))) return null;
  const text = screen.rows
    .slice(top + 1, bottom)
    .map((row) => typedText(afterGutter(row)).replace(/\s+$/u, ''))
    .join('\n')
    .replace(/\n+$/u, '');
  return { top, bottom, text: scrolled ? `${SCROLLED}${text}` : text, shellMode: first!.startsWith('!') };
}

/** Rows above the composer that belong to the UI, not the transcript: blanks, notices, the tip. */
function isChrome(line: string): boolean {
  return line === '' || NOTICE.test(line) || TIP.test(line);
}

/** The @/slash menu right above the composer's top rule (no blank row between). */
function completionOpen(screen: AgentScreen, top: number): boolean {
  const above = screen.lines[top - 1];
  return above !== undefined && MENU_ENTRY.test(above);
}

/** The spinner row, looked for between the transcript and the composer (queued prompts and tips may sit between). */
function spinnerRow(screen: AgentScreen, top: number): string | undefined {
  for (let index = top - 1; index >= 0 && index >= top - 12; index -= 1) {
    const line = screen.lines[index]!;
    if (SPINNER.test(line)) return line;
    if (!isChrome(line) && !line.startsWith('❯ ')) return undefined;
  }
  return undefined;
}

interface Panel {
  options: string[];
  /** Index of the first choice row. */
  firstChoice: number;
  start: number;
}

/** A dialog or permission panel: a `❯` choice list below the last rule (or the Rewind edge). */
function findPanel(screen: AgentScreen): Panel | null {
  const edge = screen.lines.findLastIndex((line) => isRule(line, screen.width) || PANEL_EDGE.test(line));
  if (edge < 0) return null;
  const pointer = screen.lines.findIndex((line, index) => index > edge && CHOICE_POINTER.test(line));
  if (pointer < 0) return null;
  const indent = screen.lines[pointer]!.search(/❯/u);
  const isChoice = (line: string | undefined): boolean => line !== undefined && line.length > indent + 2 && line.slice(0, indent + 2).trim() === '' && line[indent + 2] !== ' ';
  let firstChoice = pointer;
  while (firstChoice - 1 > edge && isChoice(screen.lines[firstChoice - 1])) firstChoice -= 1;
  let last = pointer;
  while (isChoice(screen.lines[last + 1])) last += 1;
  const options = screen.lines.slice(firstChoice, last + 1).map((line) => line.slice(indent + 2).trim());
  return { options, firstChoice, start: edge + 1 };
}

/** The line a panel asks: the nearest line above its choices with a question mark, else its title. */
function panelQuestion(screen: AgentScreen, panel: Panel): string {
  const texts = screen.lines.slice(panel.start, panel.firstChoice).map((line) => line.trim());
  return texts.findLast((line) => line.includes('?')) ?? texts.find((line) => line !== '') ?? '';
}

function reading(phase: ScreenPhase, rule: string, detail: string, extra: Partial<Pick<ScreenReading, 'composer' | 'completion' | 'question'>> = {}): ScreenReading {
  return { phase, rule: `claude.${rule}`, detail, composer: null, completion: false, question: null, ...extra };
}

function read(screen: AgentScreen): ScreenReading {
  const composer = findComposer(screen);
  if (composer !== null) {
    const footer = screen.lines.slice(composer.bottom + 1).join(' ');
    const spinner = spinnerRow(screen, composer.top);
    const completion = completionOpen(screen, composer.top);
    const extra = { composer: { text: composer.text }, completion };
    if (spinner !== undefined || footer.includes('esc to interrupt')) {
      return reading('busy', 'turn-running', spinner !== undefined ? `spinner: ${spinner}` : 'the footer offers esc to interrupt', extra);
    }
    const what = composer.shellMode ? 'shell-mode composer' : 'composer';
    return reading('composer', composer.shellMode ? 'shell-mode' : 'composer', composer.text === '' ? `empty ${what}` : `${what} holds a draft`, extra);
  }
  const panel = findPanel(screen);
  if (panel !== null) {
    const question = { snippet: panelQuestion(screen, panel) };
    // Tool permission prompts number their choices and start with Yes; Claude Code's own
    // dialogs (folder trust, API key, auto mode) hide the numbers.
    if (panel.options[0] === '1. Yes') return reading('permission', 'permission', `asks: ${question.snippet}`, { question });
    return reading('dialog', 'dialog', `dialog: ${question.snippet} (choices: ${panel.options.join(' / ')})`, { question });
  }
  const last = screen.lines.findLast((line) => line.trim() !== '') ?? '';
  const cursorOnLast = screen.cursor === null || (screen.cursor.visible && screen.lines[screen.cursor.y]?.trimEnd() === last);
  if (SHELL_PROMPT.test(last.trimEnd()) && cursorOnLast) return reading('exited', 'exited', `a shell prompt and no Claude Code frame: ${last.trim()}`);
  return reading('unknown', 'unknown', 'no composer, dialog or shell prompt recognised');
}

/** Whitespace is where the composer wraps (it drops the space it breaks at), so it is left out of comparisons. */
function squeeze(text: string): string {
  return text.replace(/\s+/gu, '');
}

/** Whether Claude Code folds this paste into a `[Pasted text #N +M lines]` placeholder, and M. */
function foldedLines(typed: string): number | null {
  const lines = typed.replace(/\n+$/u, '').split('\n').length;
  return typed.length > FOLD_CHARS || lines > FOLD_LINES ? lines - 1 : null;
}

function composerShows(composerText: string, typed: string): boolean {
  const shown = composerText.trim();
  if (shown === '') return typed.trim() === '';
  const placeholder = PASTE_PLACEHOLDER.exec(shown);
  if (placeholder !== null) {
    const lines = foldedLines(typed);
    return lines !== null && Number(placeholder[1] ?? 0) === lines;
  }
  const whole = squeeze(typed);
  if (shown.startsWith(SCROLLED)) return whole.endsWith(squeeze(shown.slice(SCROLLED.length)));
  return whole === squeeze(shown);
}

/** Claude Code 2.1's screens (recorded on 2.1.332). */
export const claudeRules: AgentScreenRules = {
  agent: 'claude',
  read,
  composerShows,
  // Escape twice (within about a second) empties the composer, all lines at once; C-u only
  // kills one line and C-c empties it but arms "Press Ctrl-C again to exit".
  clearKeys: Object.freeze(['Escape', 'Escape']),
  dismissCompletionKeys: Object.freeze(['Escape']),
};
