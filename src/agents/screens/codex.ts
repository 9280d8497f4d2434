import type { StyledRow } from '../../mux/index.js';
import type { AgentScreen, AgentScreenRules, ScreenPhase, ScreenReading } from './types.js';

/**
 * Codex's screen, bottom up, while the composer holds the input:
 *
 *   • Working (3s • esc to interrupt)         status row: only before a reply's text streams
 *   › /model   choose what model…             a / or @ popup, its selection in inverse video
 *   › typed text                              the composer: a bold `›` in column 0, further and
 *     wrapped rows indented by two spaces       wrapped rows indented by two (no frame)
 *                                             one blank row
 *     model default · /project · title        status line
 *     ← for agents · ? for shortcuts          footer (`tab to queue message` with a draft while busy)
 *
 * The transcript above draws the person's prompts with a dim `› ` on a background colour and
 * closes each finished turn with a dim "Worked for 14s • 12:44" row (an interrupted or failed
 * one with a `■` row). A tool approval or a dialog (folder trust, sign-in, model migration,
 * agent command center, warnings) takes the composer's place: no composer glyph is left on
 * screen. A reply's text is never drawn in column 0 with those styles, so a reply quoting a
 * dialog or the composer cannot read as one.
 */

/** Codex folds a bracketed paste of more than this many characters into a placeholder. */
const PASTE_FOLD_CHARS = 1000;
/** A second paste of the same size gets a ` #2` after its placeholder. */
const PLACEHOLDER_NUMBER = /(\[Pasted Content \d+ chars\]) #\d+/g;
/**
 * A draft taller than the composer may grow (about half the pane: 8 rows of a 16-row pane)
 * scrolls to the cursor and shows its last rows; fewer rows than this are never a scrolled part.
 */
const SCROLLED_MIN_ROWS = 5;
/** The status indicator (its bullet blinks • ◦), above the composer while a turn waits for the model or runs a tool. */
const WORKING_ROW = /^\S .*\((?:\d+[hms] ?)+• esc to interrupt\)$/;
/** The footer's hint when the composer holds a draft during a turn: Tab queues it, Enter steers the turn. */
const QUEUE_HINT = /^ {2}tab to queue message/;
/** Rows that close a turn in the transcript: dim "Worked for …", or `■` for an interrupt or error. */
const TURN_DONE = /^ {2}Worked for .+ • \d{1,2}:\d\d(?: [AP]M)?$/;
const TURN_STOPPED = /^■ /;
const HEADER_BOX = /^ {2}>_ OpenAI Codex \(v[\d.]+/;
/** The approval overlay's last row. */
const APPROVAL_HINT = /esc to cancel$/;
/** An option of a selection list (approval, trust, migration), `›` or `>` marking the selected one. */
const SELECTED_OPTION = /^[›>] \d+\. \S/;
const MENTIONS_HINT = /^ {2}enter\/tab insert · esc close/;
const SHELL_PROMPT = /[$#%>❯]\s?$/;

/**
 * Screens that replace the composer, known by a row of their own frame; `asking` finds the
 * row that says what they want when it is not that one.
 */
const DIALOGS: readonly { rule: string; pattern: RegExp; asking?: (lines: readonly string[], row: number) => string | undefined }[] = [
  { rule: 'trust-dialog', pattern: /^ {2}Trust this folder\? / },
  // The sign-in screens name their step on the first row under the welcome.
  { rule: 'sign-in', pattern: /^ {2}Welcome to Codex, OpenAI's command-line coding agent$/, asking: (lines, row) => lines.slice(row + 1).find((line) => !isBlank(line)) },
  { rule: 'agent-command-center', pattern: /^ {2}Agent command center {2}/ },
  { rule: 'warnings', pattern: /^ {2}k keep & next · esc dismiss & close/, asking: (lines, row) => lines.slice(0, row).findLast((line) => /^ {2}Warnings · \d+ of \d+/.test(line)) },
];

function isBlank(line: string): boolean {
  return line.trim() === '';
}

/** The composer's prompt glyph: a bold `›` span in column 0, neither dim (a transcript prompt) nor inverse (a selected option). */
function isComposerGlyph(row: StyledRow): boolean {
  const [first] = row;
  return first !== undefined && first.text.startsWith('›') && first.style.bold === true && first.style.dim !== true && first.style.inverse !== true;
}

/** A prompt the person sent, as the transcript draws it: dim `› ` on a background colour. */
function isTranscriptPrompt(row: StyledRow): boolean {
  const [first] = row;
  return first !== undefined && first.text.startsWith('›') && first.style.dim === true && first.style.bg !== undefined;
}

function isInverseOption(row: StyledRow): boolean {
  const [first] = row;
  return first !== undefined && first.style.inverse === true && /^› /.test(first.text);
}

interface Composer {
  /** The prompt row. */
  top: number;
  text: string;
}

/**
 * The lowest composer glyph row and the draft under it. The draft ends above the blank row
 * that parts it from the status line, three rows from the bottom; a draft may itself hold
 * blank rows, so that row is found from the bottom, not from the glyph.
 */
function findComposer(screen: AgentScreen): Composer | null {
  const { rows, lines } = screen;
  let top = -1;
  for (let row = rows.length - 1; row >= 0 && top === -1; row -= 1) if (isComposerGlyph(rows[row]!)) top = row;
  if (top === -1) return null;
  let bottom = top;
  const spacer = lines.length - 3;
  if (spacer > top && isBlank(lines[spacer]!)) bottom = spacer - 1;
  else while (bottom + 1 < lines.length && /^ {2}\S/.test(lines[bottom + 1]!)) bottom += 1;
  // Typed text is never dim; the placeholder and the ↑ of a scrolled draft are.
  const shown = rows.slice(top, bottom + 1).map((row, index) =>
    row
      .filter((span) => span.style.dim !== true)
      .map((span) => span.text)
      .join('')
      .replace(index === 0 ? /^› ?/ : /^ {2}/, '')
      .replace(/\s+$/, ''),
  );
  return { top, text: shown.join('\n').replace(/\s+$/, '') };
}

function reading(phase: ScreenPhase, rule: string, detail: string, extra: Partial<Pick<ScreenReading, 'composer' | 'completion' | 'question'>> = {}): ScreenReading {
  return { phase, rule: `codex.${rule}`, detail, composer: extra.composer ?? null, completion: extra.completion ?? false, question: extra.question ?? null };
}

/**
 * Whether a reply is still streaming (Codex hides its status row while text streams): the
 * last prompt in the transcript has no row closing its turn below it. Once that prompt has
 * scrolled away, a finished turn's closing row is the last thing above the composer, and a
 * fresh screen still shows the header box.
 */
function streamingReply(screen: AgentScreen, composerTop: number, completion: boolean): boolean {
  const { rows, lines } = screen;
  let lastPrompt = -1;
  let lastDone = -1;
  let lastContent = -1;
  for (let row = 0; row < composerTop; row += 1) {
    const line = lines[row]!;
    if (isTranscriptPrompt(rows[row]!)) lastPrompt = row;
    if ((TURN_DONE.test(line) && rows[row]!.every((span) => span.style.dim === true || span.text.trim() === '')) || TURN_STOPPED.test(line)) lastDone = row;
    if (!isBlank(line) && !WORKING_ROW.test(line)) lastContent = row;
  }
  if (lastPrompt !== -1) return lastDone < lastPrompt;
  // A popup hides where the transcript ends.
  if (completion || lastContent === -1 || lines.slice(0, composerTop).some((line) => HEADER_BOX.test(line))) return false;
  return lastDone < lastContent;
}

/**
 * The status indicator: a few rows over the composer (queued messages may sit between),
 * below the transcript's last closed turn or prompt.
 */
function statusRow(screen: AgentScreen, composerTop: number): string | undefined {
  const { rows, lines } = screen;
  for (let row = composerTop - 1; row >= Math.max(0, composerTop - 12); row -= 1) {
    const line = lines[row]!;
    if (TURN_DONE.test(line) || TURN_STOPPED.test(line) || isTranscriptPrompt(rows[row]!)) return undefined;
    if (WORKING_ROW.test(line)) return line.trim();
  }
  return undefined;
}

function readComposer(screen: AgentScreen, composer: Composer): ScreenReading {
  const { rows, lines } = screen;
  const popup = Math.max(0, composer.top - 16);
  // The @ popup ends with its key hints; both popups mark their selection in inverse video.
  const completion = lines.slice(popup, composer.top).some((line) => MENTIONS_HINT.test(line)) || rows.slice(popup, composer.top).some(isInverseOption);
  const state = { composer: { text: composer.text }, completion };
  const working = statusRow(screen, composer.top);
  if (working !== undefined) return reading('busy', 'working', `the status row above the composer: ${working}`, state);
  if (QUEUE_HINT.test(lines.at(-1) ?? '')) return reading('busy', 'queue-hint', 'the footer offers "tab to queue message": a turn is running', state);
  if (streamingReply(screen, composer.top, completion)) return reading('busy', 'streaming', 'the last prompt in the transcript has no row closing its turn: the reply is streaming', state);
  return reading('composer', 'composer', composer.text === '' ? 'the composer is empty' : `the composer holds ${composer.text.length} characters`, state);
}

/** The approval overlay: a selected option, no composer, and "… esc to cancel" on its last row. */
function readApproval(screen: AgentScreen): ScreenReading | null {
  const { rows, lines } = screen;
  const last = lines.findLastIndex((line) => !isBlank(line));
  if (last === -1 || !APPROVAL_HINT.test(lines[last]!)) return null;
  const option = rows.findLastIndex((row) => isInverseOption(row));
  if (option === -1) return null;
  // The question is the bold row the overlay opens with, above its details and options.
  let question = -1;
  for (let row = option - 1; row >= 0 && question === -1; row -= 1) {
    if (isBlank(lines[row]!) || isTranscriptPrompt(rows[row]!)) continue;
    const spans = rows[row]!.filter((span) => span.text.trim() !== '');
    if (spans.length > 0 && spans.every((span) => span.style.bold === true) && /\?$/.test(lines[row]!)) question = row;
  }
  const snippet = (question === -1 ? lines[option]! : lines[question]!).trim();
  return reading('permission', 'approval', `the approval overlay asks: ${snippet}`, { question: { snippet } });
}

function readDialog(screen: AgentScreen): ScreenReading | null {
  const { rows, lines } = screen;
  for (const { rule, pattern, asking } of DIALOGS) {
    const row = lines.findIndex((line) => pattern.test(line));
    if (row === -1) continue;
    const snippet = (asking?.(lines, row) ?? lines[row]!).trim();
    return reading('dialog', rule, `a ${rule} screen holds the input: ${snippet}`, { question: { snippet } });
  }
  const option = rows.findIndex((row) => isInverseOption(row) || SELECTED_OPTION.test(row.map((span) => span.text).join('')));
  if (option === -1) return null;
  const title = lines.slice(0, option).find((line) => !isBlank(line) && !HEADER_BOX.test(line));
  const snippet = (title ?? lines[option]!).trim();
  return reading('dialog', 'selection', `a selection list holds the input: ${snippet}`, { question: { snippet } });
}

function read(screen: AgentScreen): ScreenReading {
  const composer = findComposer(screen);
  if (composer !== null) return readComposer(screen, composer);
  const approval = readApproval(screen);
  if (approval !== null) return approval;
  const dialog = readDialog(screen);
  if (dialog !== null) return dialog;
  const { lines, cursor } = screen;
  const last = lines.findLastIndex((line) => !isBlank(line));
  if (last !== -1 && SHELL_PROMPT.test(lines[last]!) && cursor?.visible === true && cursor.y === last) {
    return reading('exited', 'shell', `the cursor waits on a shell prompt: ${lines[last]!.trim()}`);
  }
  return reading('unknown', 'unknown', 'no composer, approval, dialog or shell prompt');
}

/** Text compared as Codex shows it: wrapping drops the spaces where a row breaks, so whitespace does not count. */
function squeezed(text: string): string {
  return text.replace(/\s+/g, '');
}

/** What the composer shows for `typed`: a paste of more than PASTE_FOLD_CHARS characters folds into its placeholder. */
function shownFor(typed: string): string {
  const length = Array.from(typed).length;
  return length > PASTE_FOLD_CHARS ? `[Pasted Content ${length} chars]` : typed;
}

function composerShows(composerText: string, typed: string): boolean {
  const shown = squeezed(composerText.replace(PLACEHOLDER_NUMBER, '$1'));
  const expected = squeezed(shownFor(typed));
  if (shown === '' || expected === '') return shown === expected;
  if (shown === expected) return true;
  // A draft taller than the composer shows its last rows.
  return composerText.split('\n').length >= SCROLLED_MIN_ROWS && expected.endsWith(shown);
}

export const codexRules: AgentScreenRules = {
  agent: 'codex',
  read,
  composerShows,
  // ctrl+c empties a draft (all rows, also during a turn); on an EMPTY composer it quits Codex at once (idle) or interrupts the turn (busy).
  clearKeys: Object.freeze(['ctrl+c']),
  // Escape closes the @ and / popups and keeps the text; without a popup it interrupts a running turn.
  dismissCompletionKeys: Object.freeze(['Escape']),
};
