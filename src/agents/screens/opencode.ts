import type { StyledRow, TextStyle } from '../../mux/index.js';
import type { AgentScreen, AgentScreenRules, ScreenReading } from './types.js';

/*
 * opencode's TUI (1.18) keeps its input in a box at the bottom of the screen (centred under
 * the logo on the home screen):
 *
 *   ┃                                 padding row
 *   ┃  the draft, one row per line    (a muted suggestion when empty)
 *   ┃                                 padding row
 *   ┃  Build · Mock Model Mock        agent · model provider
 *   ╹▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀     the box's bottom edge
 *    ⬝⬝■■⬝⬝⬝⬝  esc interrupt …        status row: a spinner and "esc interrupt" while a turn runs
 *
 * The transcript's user messages are boxes with the same left bar, on another background, so
 * the input box is told apart by the background of its agent row. A permission request
 * replaces the whole box (there is no bottom edge then); dialogs are panels drawn over
 * everything, titled, with "esc" at the title row's right end.
 */

const EDGE = /^(\s*)╹▀{8,}/u;
const BAR = '┃';
const BUSY_STATUS = /esc (?:again to )?interrupt|^\s*[⬝■]{4,}/u;
/** The left padding opencode puts between the bar and the text. */
const TEXT_INDENT = 2;
/** The permission box's title row: a warning sign and the stage of the request. */
const PERMISSION_TITLE = /^\s*△\s+(Permission required|Always allow|Reject permission)\s*$/u;
/** What opencode prints when it quits: how to resume the session it leaves. */
const FAREWELL = /^\s*Continue\s+opencode\s+(?:-s|--session)\s+\S+/u;
/**
 * The fewest rows the input box shows before it scrolls its draft (keeping the last rows in
 * view): its height limit is `tui.prompt.max_height`, by default a third of the terminal's
 * height but at least 6.
 */
const MIN_SCROLLED_ROWS = 6;

/** The style of the character at `index` of a row's text, undefined past its end. */
function styleAt(row: StyledRow, index: number): Readonly<TextStyle> | undefined {
  let start = 0;
  for (const span of row) {
    const end = start + span.text.length;
    if (index < end) return span.style;
    start = end;
  }
  return undefined;
}

function reading(phase: ScreenReading['phase'], rule: string, detail: string, extra: Partial<Pick<ScreenReading, 'composer' | 'completion' | 'question'>> = {}): ScreenReading {
  return { phase, rule: `opencode.${rule}`, detail, composer: extra.composer ?? null, completion: extra.completion ?? false, question: extra.question ?? null };
}

interface InputBox {
  /** The column of the box's left bar. */
  column: number;
  /** Rows of the draft (between the padding rows). */
  textRows: number[];
  agentRow: number;
  edgeRow: number;
  /** The first row of the box (its top padding row). */
  topRow: number;
}

/** The input box above the last bottom edge, when its agent row sits right above that edge. */
function findInputBox(screen: AgentScreen): InputBox | undefined {
  let edgeRow = -1;
  for (let y = screen.lines.length - 1; y >= 0 && edgeRow === -1; y -= 1) if (EDGE.test(screen.lines[y]!)) edgeRow = y;
  if (edgeRow < 1) return undefined;
  const column = EDGE.exec(screen.lines[edgeRow]!)![1]!.length;
  const agentRow = edgeRow - 1;
  const hasBar = (y: number): boolean => screen.lines[y]![column] === BAR;
  if (!hasBar(agentRow)) return undefined;
  const background = styleAt(screen.rows[agentRow]!, column + 1)?.bg;
  let topRow = agentRow;
  while (topRow > 0 && hasBar(topRow - 1) && styleAt(screen.rows[topRow - 1]!, column + 1)?.bg === background && !isMenuRow(screen.lines[topRow - 1]!, column)) topRow -= 1;
  const textRows: number[] = [];
  for (let y = topRow + 1; y < agentRow - 1; y += 1) textRows.push(y);
  return { column, textRows, agentRow, edgeRow, topRow };
}

/** A row of a completion menu: the menu's box has a bar on both sides. */
function isMenuRow(line: string, column: number): boolean {
  return line[column] === BAR && line.trimEnd().endsWith(BAR) && line.trimEnd().length > column + 1;
}

/**
 * The draft as shown: each row without the bar and the indent, rows joined with "\n". A
 * draft drawn only in the muted colour of the agent row's "·" is the empty box's suggestion.
 */
function draftText(screen: AgentScreen, box: InputBox): string {
  const agentLine = screen.lines[box.agentRow]!;
  const dot = agentLine.indexOf('·', box.column);
  const muted = dot === -1 ? undefined : styleAt(screen.rows[box.agentRow]!, dot)?.fg;
  let onlyMuted = muted !== undefined;
  const rows = box.textRows.map((y) => {
    const line = screen.lines[y]!;
    const start = box.column + 1 + TEXT_INDENT;
    for (let x = start; x < line.length && onlyMuted; x += 1) if (line[x] !== ' ' && styleAt(screen.rows[y]!, x)?.fg !== muted) onlyMuted = false;
    return line.slice(start);
  });
  const text = rows.join('\n');
  return onlyMuted ? '' : text;
}

/**
 * A dialog's title row: a bold title and "esc" on a centred panel whose background differs
 * from the screen's at the row's start (the transcript's text sits on the screen's own).
 */
function findDialogTitle(screen: AgentScreen): string | undefined {
  for (const row of screen.rows) {
    const outside = row[0]?.style.bg;
    let title: { text: string; bg: TextStyle['bg'] } | undefined;
    for (const span of row) {
      const text = span.text.trim();
      if (text === '') continue;
      if (span.style.bold && span.style.bg !== outside) title = { text, bg: span.style.bg };
      else if (title !== undefined && text === 'esc' && span.style.bg === title.bg) return title.text;
      else title = undefined;
    }
  }
  return undefined;
}

/** The permission box: the last bar-framed block of the screen, whose title row says what it asks. */
function findPermission(screen: AgentScreen): string | undefined {
  let bottom = screen.lines.length - 1;
  while (bottom >= 0 && screen.lines[bottom]!.trim() === '') bottom -= 1;
  if (bottom < 0) return undefined;
  const column = screen.lines[bottom]!.indexOf(BAR);
  if (column === -1 || screen.lines[bottom]!.slice(0, column).trim() !== '') return undefined;
  let titleRow: number | undefined;
  for (let y = bottom; y >= 0 && screen.lines[y]![column] === BAR; y -= 1) if (PERMISSION_TITLE.test(screen.lines[y]!.slice(column + 1))) titleRow = y;
  if (titleRow === undefined) return undefined;
  const title = PERMISSION_TITLE.exec(screen.lines[titleRow]!.slice(column + 1))![1]!;
  // What is asked: the tool's title and the start of its input; the box's last row is its buttons.
  const asked = screen.lines
    .slice(titleRow + 1, bottom + 1)
    .map((line) => line.slice(column + 1).trim())
    .filter((line) => line !== '')
    .slice(0, -1)
    .slice(0, 2);
  return asked.length > 0 ? `${title}: ${asked.join(' ')}` : title;
}

function read(screen: AgentScreen): ScreenReading {
  const dialog = findDialogTitle(screen);
  if (dialog !== undefined) return reading('dialog', 'dialog', `a dialog titled "${dialog}" holds the input`, { question: { snippet: dialog } });
  const box = findInputBox(screen);
  if (box !== undefined) {
    const text = draftText(screen, box);
    const completion = box.topRow > 0 && isMenuRow(screen.lines[box.topRow - 1]!, box.column);
    const status = screen.lines[box.edgeRow + 1] ?? '';
    if (BUSY_STATUS.test(status)) return reading('busy', 'busy', 'the status row under the input box offers to interrupt the running turn', { composer: { text }, completion });
    return reading('composer', 'composer', completion ? 'the input box, with a completion menu open above it' : 'the input box, no turn running', { composer: { text }, completion });
  }
  const permission = findPermission(screen);
  if (permission !== undefined) return reading('permission', 'permission', 'a permission box replaced the input box', { question: { snippet: permission } });
  const farewell = screen.lines.findIndex((line) => FAREWELL.test(line));
  if (farewell !== -1 && screen.lines.slice(farewell + 1).some((line) => line.trim() !== '')) {
    return reading('exited', 'exited', 'opencode printed its "Continue opencode -s …" farewell and something (the shell) wrote below it');
  }
  return reading('unknown', 'unknown', 'no input box, permission box, dialog or farewell');
}

const withoutSpace = (text: string): string => text.replace(/\s+/gu, '');

/**
 * opencode folds a bracketed paste of 3 lines or more, or over 150 characters, into this
 * placeholder (counted on the trimmed paste, in UTF-16 units as its JavaScript does).
 */
function pastePlaceholder(typed: string): string | undefined {
  const trimmed = typed.replace(/\r\n?/gu, '\n').trim();
  const lines = (trimmed.match(/\n/gu)?.length ?? 0) + 1;
  return lines >= 3 || trimmed.length > 150 ? `[Pasted ~${lines} lines]` : undefined;
}

export const opencodeRules: AgentScreenRules = {
  agent: 'opencode',
  read,
  /**
   * Compared without whitespace, since a row break on screen may be a wrap or a newline. A
   * draft taller than the box shows its last rows, so a box full of rows may show a suffix.
   */
  composerShows(composerText, typed) {
    const shown = withoutSpace(composerText);
    const wanted = withoutSpace(typed);
    if (shown === wanted) return true;
    if (composerText.trim() === pastePlaceholder(typed)) return true;
    return shown !== '' && composerText.split('\n').length >= MIN_SCROLLED_ROWS && wanted.endsWith(shown);
  },
  // C-c empties the draft (every line); on an EMPTY draft it quits opencode, even mid-turn.
  clearKeys: Object.freeze(['ctrl+c']),
  dismissCompletionKeys: Object.freeze(['Escape']),
  // A paste opencode folds into its placeholder is submitted with a space appended.
  keysAfterPaste: (typed) => (pastePlaceholder(typed) === undefined ? [] : ['Backspace']),
};
