import { rulesFor, type AgentKind, type AgentScreen, type AgentState, type ScreenReading } from '../agents/index.js';
import { questionAnswers, type QuestionAnswer } from './answers.js';
import { lineEndingAt, type ScreenText } from './input-line.js';
import type { QuestionMatchJson, QuestionSkipJson, QuestionSweepJson } from './json-schemas.js';

/**
 * What matched. The first two come from the screen rules of an agent drover knows (its
 * tool-permission prompt, or a dialog such as folder trust or key entry); the others from the
 * line scan used for any other program.
 */
export type QuestionIndicator =
  | 'permission_prompt'
  | 'agent_dialog'
  | 'question_mark'
  | 'yes_no'
  | 'action_word'
  | 'imperative_question'
  | 'colon_prompt'
  | 'enumerated_options'
  | 'press_key';

/**
 * Why a pane is not reported. Line scan: capture_failed, state_changed (the agent's reported
 * state is not waiting or idle), no_agent_state (nothing reported and no agent drover knows),
 * blank_capture, turn_boundary, no_indicator, answered (the prompt shows an answer typed after
 * it and the cursor has moved on). Screen rules: agent_at_composer, agent_busy, agent_exited,
 * screen_unrecognised. Either: pane_dead.
 */
export const QUESTION_SKIP_REASONS = [
  'capture_failed',
  'state_changed',
  'no_agent_state',
  'blank_capture',
  'turn_boundary',
  'no_indicator',
  'answered',
  'pane_dead',
  'agent_at_composer',
  'agent_busy',
  'agent_exited',
  'screen_unrecognised',
] as const;
export type QuestionSkipReason = (typeof QUESTION_SKIP_REASONS)[number];

/** One JSON row of `matches`. `snippet` is the line that asks. */
export interface QuestionMatch {
  pane: string;
  agent_state: AgentState;
  indicator: QuestionIndicator;
  snippet: string;
  /** The agent the pane runs, by its process tree (null for a program drover does not know). */
  agent: string | null;
  /** The screen rule that matched (`gemini.permission`…), null for the line scan. */
  rule: string | null;
  /** What the question offers, read off the same screen: its menu's entries, `y`/`n`…; empty when it wants words. */
  answers: readonly QuestionAnswer[];
}

/** One JSON row of `skipped`. */
export interface QuestionSkip {
  pane: string;
  reason: QuestionSkipReason;
}

export interface QuestionSweep {
  matches: QuestionMatch[];
  skipped: QuestionSkip[];
}

/** A pane as the sweep last saw it; absent from the snapshot means it is gone. */
export interface QuestionCandidate {
  pane: string;
  /** The state the agent's hooks reported (null: none, or its agent is gone). */
  agentState: AgentState | null;
  /** The agent by its process tree, and whether drover has screen rules for it. */
  agent?: string | null;
  agentKind?: AgentKind | null;
  dead?: boolean;
}

/** A date or time that starts a log line (`[12:30]`, `2026-09-02`); a counter such as git's `(1/3)` is not one. */
const LEADING_TIMESTAMP = /^\s*[[(]?\d{1,4}[-/:]\d{1,2}(?!\d*\))/;
const NOT_A_QUESTION_PREFIXES = ['#', '//', '*', '>'];
const MAX_QUESTION_LINE = 120;

/**
 * Class 1, tried only on the line that holds the cursor: a short line ending in "?" that is
 * not a comment, quote or log line. A comment has words after its marker: bash's `select`
 * prompt `#?` is a question.
 */
function isQuestionLine(line: string): boolean {
  const trimmedEnd = line.replace(/[ \t]+$/, '');
  if (!trimmedEnd.endsWith('?') || trimmedEnd.length >= MAX_QUESTION_LINE) return false;
  const trimmedStart = line.replace(/^[ \t]+/, '');
  const marker = NOT_A_QUESTION_PREFIXES.find((prefix) => trimmedStart.startsWith(prefix));
  if (marker !== undefined && /[\p{L}\p{N}]/u.test(trimmedStart.slice(marker.length))) return false;
  return !LEADING_TIMESTAMP.test(line);
}

/**
 * Lines that end in a colon without asking: a Python traceback's header and the line between
 * chained exceptions.
 */
const TRACEBACK_COLON = /^\s*Traceback \(most recent call last\):\s*$|exception occurred:\s*$|cause of the following exception:\s*$/;

/**
 * Class 5: the line ends in a colon, after at least one word (a pager's bare `:` asks
 * nothing), perhaps followed by a default in brackets (`package name: (app)`).
 */
function isColonPrompt(line: string): boolean {
  return /\p{L}[^:]*:[ \t]*(?:[[(][^\])]*[\])][ \t]*)?$/u.test(line) && !TRACEBACK_COLON.test(line);
}

/**
 * Classes 2–7 in the order they are tried on one line. An enumerated option's digit stands
 * alone (`1) staging`, `(2) production`), so `loader.js:1554:14)` in a stack trace and
 * `ls(1)` in a man page are not options.
 */
const LINE_CLASSES: readonly (readonly [QuestionIndicator, (line: string) => boolean])[] = [
  ['yes_no', (line) => /\[y\/n\]|\(y\/n\)|\(yes\/no\)/i.test(line)],
  ['action_word', (line) => /\b(?:Allow|Approve|Confirm|Proceed)\?/.test(line)],
  ['imperative_question', (line) => /Do you want to|Should I|Would you like/i.test(line)],
  ['colon_prompt', isColonPrompt],
  ['enumerated_options', (line) => /(?:^|\s)\(?[1-9]\)/.test(line)],
  ['press_key', (line) => /press.*key|press.*enter|hit.*enter/i.test(line)],
];

/**
 * Rows that belong to a question drawn above them: the entries of a numbered menu
 * (`❯ 1. Yes`, `2) production`) and a hint in parentheses (`(answer in a few words)`).
 */
const QUESTION_TRAILER = /^[\s│┃|]*(?:[❯›>●○◯•▶*]\s*)?\(?[1-9][.)]\s+\S|^\s*\(.*\)\s*$/u;

/**
 * Whether a line shows an answer typed after its asking part: a y/n word or a digit after the
 * prompt's closing `?`, `]`, `)`, `:` or `>` (`[y/n] y`, `Proceed? yes`), or a digit after the
 * last of the numbered options (`1) staging 2) production 2`).
 */
function showsAnswer(indicator: QuestionIndicator, line: string): boolean {
  if (/[?\]):>]\s+(?:y|n|yes|no|[1-9])\s*$/i.test(line)) return true;
  return indicator === 'enumerated_options' && /(?:^|\s)\(?[1-9]\)\s*\S.*\s[1-9]\s*$/.test(line);
}

/** Rows a menu question may stand above its last row. */
const MAX_QUESTION_ROWS = 12;

/** What the line scan found on a screen: the line that asks and its class, or why nothing asks. */
export type LineScan =
  | { indicator: QuestionIndicator; snippet: string }
  | { reason: Extract<QuestionSkipReason, 'blank_capture' | 'turn_boundary' | 'no_indicator' | 'answered'> };

/** The class of one line; none for a line that starts with an echoed `^C` (an interrupt, and the output after it). */
function classOf(line: string, lastLine: boolean): QuestionIndicator | undefined {
  if (/^\s*\^C/.test(line)) return undefined;
  if (lastLine && isQuestionLine(line)) return 'question_mark';
  return LINE_CLASSES.find(([, test]) => test(line))?.[0];
}

/**
 * Where the program takes input: the row of a visible cursor, else (no cursor reported, or a
 * TUI that hides it and draws its own) the last row that shows anything. `onRow` tells whether
 * the cursor is known to stand on that row, not below it; -1 when nothing is drawn.
 */
function inputRow(screen: ScreenText, bottom: number): { row: number; onRow: boolean } {
  const { cursor } = screen;
  if (cursor === null || !cursor.visible || cursor.y >= screen.lines.length) return { row: bottom, onRow: false };
  if (screen.lines[cursor.y]!.trim() !== '') return { row: cursor.y, onRow: true };
  // A cursor on an empty row: the program ended its last line; what stands right above is what it said last.
  const above = cursor.y - 1;
  return { row: above >= 0 && screen.lines[above]!.trim() !== '' ? above : -1, onRow: false };
}

/**
 * The line scan, judged on the rows that matter. What asks is the line the cursor stands on or
 * right after (without a cursor, the last line drawn), joined with the rows it wrapped from;
 * above it only a menu's question may stand, over its entries or a hint in parentheses.
 * Everything above that the program has moved past — shell history, a traceback, an echoed
 * `^C`, an answered prompt — is history. A prompt that shows an answer typed after it is
 * `answered` unless the cursor still stands on it (the answer waits for Enter). Before that,
 * a blank screen is `blank_capture` and a bare `>` prompt among the last two lines drawn is
 * `turn_boundary`.
 */
export function scanScreen(screen: ScreenText): LineScan {
  const { lines } = screen;
  let bottom = lines.length - 1;
  while (bottom >= 0 && lines[bottom]!.trim() === '') bottom -= 1;
  if (bottom < 0) return { reason: 'blank_capture' };
  if (lines.slice(Math.max(0, bottom - 1), bottom + 1).some((line) => /^\s*>\s*$/.test(line))) return { reason: 'turn_boundary' };
  const { row, onRow } = inputRow(screen, bottom);
  if (row < 0) return { reason: 'no_indicator' };
  const asking = screen.cursor === null ? lines[row]! : lineEndingAt(screen, row);
  const indicator = classOf(asking, true);
  const found = indicator !== undefined ? { indicator, snippet: asking, onRow } : menuQuestion(lines, row);
  if (found === undefined) return { reason: 'no_indicator' };
  if (!found.onRow && showsAnswer(found.indicator, found.snippet)) return { reason: 'answered' };
  return { indicator: found.indicator, snippet: found.snippet };
}

/** The question a menu's entries (or a hint) on and above `row` stand under, climbing past blank rows. */
function menuQuestion(lines: readonly string[], row: number): { indicator: QuestionIndicator; snippet: string; onRow: false } | undefined {
  for (let at = row; QUESTION_TRAILER.test(lines[at]!); ) {
    let above = at - 1;
    while (above >= 0 && lines[above]!.trim() === '') above -= 1;
    if (above < 0 || row - above > MAX_QUESTION_ROWS) return undefined;
    const indicator = classOf(lines[above]!, false);
    if (indicator !== undefined) return { indicator, snippet: lines[above]!, onRow: false };
    at = above;
  }
  return undefined;
}

type SweptState = Extract<AgentState, 'waiting' | 'idle'>;

/** Only a waiting or idle agent can be holding a question; an active one is mid-turn. */
export function isSweptState(state: AgentState | null): state is SweptState {
  return state === 'waiting' || state === 'idle';
}

/**
 * Judges one pane of a program drover has no screen rules for, from its metadata
 * (undefined: gone from the snapshot) and its screen (undefined: the read failed or was not
 * taken), applying the guards in order, then the line scan.
 */
export function judgePane(pane: string, candidate: QuestionCandidate | undefined, screen: ScreenText | undefined): QuestionMatch | QuestionSkip {
  if (candidate === undefined) return { pane, reason: 'capture_failed' };
  if (candidate.dead) return { pane, reason: 'pane_dead' };
  if (candidate.agentState === null) return { pane, reason: 'no_agent_state' };
  if (!isSweptState(candidate.agentState)) return { pane, reason: 'state_changed' };
  if (screen === undefined) return { pane, reason: 'capture_failed' };
  const scan = scanScreen(screen);
  if ('reason' in scan) return { pane, reason: scan.reason };
  const answers = questionAnswers(screen.lines, scan.snippet, scan.indicator, null);
  return { pane, agent_state: candidate.agentState, indicator: scan.indicator, snippet: scan.snippet, agent: candidate.agent ?? null, rule: null, answers };
}

/** The question an agent drover knows shows by its screen rules. */
export interface AgentQuestion {
  readonly indicator: 'permission_prompt' | 'agent_dialog';
  readonly snippet: string;
  /** The menu under it, with the keys that agent confirms an entry with. */
  readonly answers: QuestionAnswer[];
}

/**
 * The question a screen reading of `agent` shows: a permission prompt or a dialog, read with
 * the answers of the menu in `lines`; undefined in any other phase. The sweep and the
 * dashboard both read an agent's question here, so they name and answer it alike.
 */
export function agentQuestion(reading: ScreenReading, lines: readonly string[], agent: AgentKind | null): AgentQuestion | undefined {
  if (reading.phase !== 'permission' && reading.phase !== 'dialog') return undefined;
  const snippet = reading.question?.snippet ?? reading.detail;
  const indicator = reading.phase === 'permission' ? 'permission_prompt' : 'agent_dialog';
  return { indicator, snippet, answers: questionAnswers(lines, snippet, indicator, agent) };
}

/**
 * Judges one pane of an agent drover knows from its screen reading (undefined: the read
 * failed) of the screen `lines`, where a question's menu is read. The screen decides whatever
 * the hooks said: a permission prompt or dialog is a question (the agent waits on a person even
 * when its hooks cannot say so), a composer, a busy turn or a transcript is not.
 */
export function judgeAgentReading(pane: string, candidate: QuestionCandidate | undefined, reading: ScreenReading | undefined, lines: readonly string[]): QuestionMatch | QuestionSkip {
  if (candidate === undefined) return { pane, reason: 'capture_failed' };
  if (candidate.dead) return { pane, reason: 'pane_dead' };
  if (reading === undefined) return { pane, reason: 'capture_failed' };
  const asked = agentQuestion(reading, lines, candidate.agentKind ?? null);
  if (asked !== undefined) return { pane, agent_state: 'waiting', ...asked, agent: candidate.agent ?? null, rule: reading.rule };
  switch (reading.phase) {
    case 'composer':
      return { pane, reason: 'agent_at_composer' };
    case 'busy':
      return { pane, reason: 'agent_busy' };
    case 'exited':
      return { pane, reason: 'agent_exited' };
    default:
      return { pane, reason: 'screen_unrecognised' };
  }
}

/**
 * The panes a discovery sweep looks at: those whose agent reported waiting or idle, and
 * every live pane of an agent drover knows (its screen tells, with or without hooks).
 */
export function discoverCandidates(panes: readonly QuestionCandidate[]): string[] {
  return panes.filter((pane) => !pane.dead && (isSweptState(pane.agentState) || (pane.agentKind ?? null) !== null)).map((pane) => pane.pane);
}

/**
 * Judges one pane from one read of its screen, as the sweep does: by the screen rules of an
 * agent drover knows (with or without hooks), else by the line scan when the program's hooks
 * report waiting or idle.
 */
export function judgePaneScreen(pane: string, candidate: QuestionCandidate | undefined, screen: AgentScreen | undefined): QuestionMatch | QuestionSkip {
  const rules = candidate?.agentKind == null ? undefined : rulesFor(candidate.agentKind);
  if (rules === undefined) return judgePane(pane, candidate, screen);
  return judgeAgentReading(pane, candidate, screen === undefined ? undefined : rules.read(screen), screen?.lines ?? []);
}

/**
 * Sweeps `paneIds` in order. `snapshot` is the current view of the panes; `read` reads a
 * pane's screen and may throw, which counts as a failed capture for that pane only. A pane
 * the guards already skip is not read.
 */
export async function sweepQuestions(
  paneIds: readonly string[],
  snapshot: ReadonlyMap<string, QuestionCandidate>,
  read: (candidate: QuestionCandidate) => Promise<AgentScreen>,
): Promise<QuestionSweep> {
  const sweep: QuestionSweep = { matches: [], skipped: [] };
  for (const pane of paneIds) {
    const candidate = snapshot.get(pane);
    const worthLooking = candidate !== undefined && !candidate.dead && ((candidate.agentKind ?? null) !== null || isSweptState(candidate.agentState));
    const screen = worthLooking ? await read(candidate).catch(() => undefined) : undefined;
    const row = judgePaneScreen(pane, candidate, screen);
    if ('reason' in row) sweep.skipped.push(row);
    else sweep.matches.push(row);
  }
  return sweep;
}

export const QUESTION_INDICATORS = [
  'permission_prompt',
  'agent_dialog',
  'question_mark',
  'yes_no',
  'action_word',
  'imperative_question',
  'colon_prompt',
  'enumerated_options',
  'press_key',
] as const satisfies readonly QuestionIndicator[];

/** A sweep whose rows carry each pane's key as well as its id. */
export interface KeyedQuestionSweep {
  matches: (QuestionMatch & Keyed)[];
  skipped: (QuestionSkip & Keyed)[];
}

interface Keyed {
  paneKey: string;
}

export function questionMatchJson(match: QuestionMatch & Keyed): QuestionMatchJson {
  const answers = match.answers.map((answer) => ({ label: answer.label, keys: [...answer.keys] }));
  return { pane_id: match.pane, pane_key: match.paneKey, agent_state: match.agent_state, indicator: match.indicator, snippet: match.snippet, agent: match.agent, rule: match.rule, answers };
}

export function questionSkipJson(skip: QuestionSkip & Keyed): QuestionSkipJson {
  return { pane_id: skip.pane, pane_key: skip.paneKey, reason: skip.reason };
}

/** A match or a skip as its row. */
export function questionRowJson(row: (QuestionMatch | QuestionSkip) & Keyed): QuestionMatchJson | QuestionSkipJson {
  return 'reason' in row ? questionSkipJson(row) : questionMatchJson(row);
}

export function questionSweepJson(sweep: KeyedQuestionSweep): QuestionSweepJson {
  return { matches: sweep.matches.map(questionMatchJson), skipped: sweep.skipped.map(questionSkipJson) };
}

/** The human report: one line per match and per skip, then the counts. */
export function renderQuestionSweep(sweep: QuestionSweep): string {
  if (sweep.matches.length === 0 && sweep.skipped.length === 0) return 'No candidate panes.\n';
  const out = [
    ...sweep.matches.map((m) => `${m.pane} [${m.agent_state}${m.agent === null ? '' : ` ${m.agent}`}] ${m.indicator}: ${m.snippet}`),
    ...sweep.skipped.map((s) => `${s.pane}: ${s.reason}`),
    `${sweep.matches.length} matched, ${sweep.skipped.length} skipped`,
  ];
  return `${out.join('\n')}\n`;
}
