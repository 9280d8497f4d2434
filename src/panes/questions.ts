import { z } from 'zod';
import { AGENT_STATES, type AgentKind, type AgentState, type ScreenReading } from '../agents/index.js';
import { tailLines } from './tail.js';

/** The sweep always looks at the last 20 lines of a pane; it is not a flag. */
export const QUESTION_CAPTURE_LINES = 20;

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
 * blank_capture, turn_boundary, no_indicator. Screen rules: agent_at_composer, agent_busy,
 * agent_exited, screen_unrecognised. Either: pane_dead.
 */
export type QuestionSkipReason =
  | 'capture_failed'
  | 'state_changed'
  | 'no_agent_state'
  | 'blank_capture'
  | 'turn_boundary'
  | 'no_indicator'
  | 'pane_dead'
  | 'agent_at_composer'
  | 'agent_busy'
  | 'agent_exited'
  | 'screen_unrecognised';

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

const LEADING_TIMESTAMP = /^\s*[[(]?\d{1,4}[-/:]\d{1,2}/;
const NOT_A_QUESTION_PREFIXES = ['#', '//', '*', '>'];
const MAX_QUESTION_LINE = 120;

/** Class 1, tried only on the last non-empty line: a short line ending in "?" that is not a comment, quote or log line. */
function isQuestionLine(line: string): boolean {
  const trimmedEnd = line.replace(/[ \t]+$/, '');
  if (!trimmedEnd.endsWith('?') || trimmedEnd.length >= MAX_QUESTION_LINE) return false;
  const trimmedStart = line.replace(/^[ \t]+/, '');
  if (NOT_A_QUESTION_PREFIXES.some((prefix) => trimmedStart.startsWith(prefix))) return false;
  return !LEADING_TIMESTAMP.test(line);
}

/** Classes 2–7 in the order they are tried on one line. */
const LINE_CLASSES: readonly (readonly [QuestionIndicator, (line: string) => boolean])[] = [
  ['yes_no', (line) => /\[y\/n\]|\(y\/n\)|\(yes\/no\)/i.test(line)],
  ['action_word', (line) => /\b(?:Allow|Approve|Confirm|Proceed)\?/.test(line)],
  ['imperative_question', (line) => /Do you want to|Should I|Would you like/i.test(line)],
  ['colon_prompt', (line) => /:[ \t]*$/.test(line)],
  ['enumerated_options', (line) => /[1-9]\)/.test(line)],
  ['press_key', (line) => /press.*key|press.*enter|hit.*enter/i.test(line)],
];

function lines(capture: string): string[] {
  const rows = capture.split('\n');
  if (rows.at(-1) === '') rows.pop();
  return rows;
}

/**
 * Scans non-empty lines from the bottom up; the first line matching any class wins, and
 * within a line the classes are tried in table order (question_mark first, on the last
 * line only). Permission prompts drawn by an agent are not a class of their own.
 */
export function scanIndicators(capture: string): { indicator: QuestionIndicator; snippet: string } | undefined {
  const nonEmpty = lines(capture).filter((line) => line.trim() !== '');
  for (let i = nonEmpty.length - 1; i >= 0; i -= 1) {
    const line = nonEmpty[i]!;
    if (i === nonEmpty.length - 1 && isQuestionLine(line)) return { indicator: 'question_mark', snippet: line };
    const matched = LINE_CLASSES.find(([, test]) => test(line));
    if (matched) return { indicator: matched[0], snippet: line };
  }
  return undefined;
}

/** A bare `>` prompt line among the last two lines: an ordinary end of turn, not a question. */
function hasTurnBoundary(capture: string): boolean {
  return lines(capture)
    .slice(-2)
    .some((line) => /^\s*>\s*$/.test(line));
}

type SweptState = Extract<AgentState, 'waiting' | 'idle'>;

/** Only a waiting or idle agent can be holding a question; an active one is mid-turn. */
export function isSweptState(state: AgentState | null): state is SweptState {
  return state === 'waiting' || state === 'idle';
}

/**
 * Judges one pane of a program drover has no screen rules for, from its metadata
 * (undefined: gone from the snapshot) and its capture (undefined: the capture failed or was
 * not taken), applying the guards in order.
 */
export function judgePane(pane: string, candidate: QuestionCandidate | undefined, capture: string | undefined): QuestionMatch | QuestionSkip {
  if (candidate === undefined) return { pane, reason: 'capture_failed' };
  if (candidate.dead) return { pane, reason: 'pane_dead' };
  if (candidate.agentState === null) return { pane, reason: 'no_agent_state' };
  if (!isSweptState(candidate.agentState)) return { pane, reason: 'state_changed' };
  if (capture === undefined) return { pane, reason: 'capture_failed' };
  const tail = tailLines(capture, QUESTION_CAPTURE_LINES);
  if (tail.trim() === '') return { pane, reason: 'blank_capture' };
  if (hasTurnBoundary(tail)) return { pane, reason: 'turn_boundary' };
  const found = scanIndicators(tail);
  if (found === undefined) return { pane, reason: 'no_indicator' };
  return { pane, agent_state: candidate.agentState, indicator: found.indicator, snippet: found.snippet, agent: candidate.agent ?? null, rule: null };
}

/**
 * Judges one pane of an agent drover knows from its screen reading (undefined: the read
 * failed). The screen decides whatever the hooks said: a permission prompt or dialog is a
 * question (the agent waits on a person even when its hooks cannot say so), a composer,
 * a busy turn or a transcript is not.
 */
export function judgeAgentReading(pane: string, candidate: QuestionCandidate | undefined, reading: ScreenReading | undefined): QuestionMatch | QuestionSkip {
  if (candidate === undefined || reading === undefined) return { pane, reason: 'capture_failed' };
  if (candidate.dead) return { pane, reason: 'pane_dead' };
  const agent = candidate.agent ?? null;
  switch (reading.phase) {
    case 'permission':
    case 'dialog':
      return {
        pane,
        agent_state: 'waiting',
        indicator: reading.phase === 'permission' ? 'permission_prompt' : 'agent_dialog',
        snippet: reading.question?.snippet ?? reading.detail,
        agent,
        rule: reading.rule,
      };
    case 'composer':
      return { pane, reason: 'agent_at_composer' };
    case 'busy':
      return { pane, reason: 'agent_busy' };
    case 'exited':
      return { pane, reason: 'agent_exited' };
    case 'unknown':
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

/** How the sweep reads one pane: the screen rules' reading for a known agent, else the captured text. */
export type PaneLook = { reading: ScreenReading } | { capture: string };

/**
 * Sweeps `paneIds` in order. `snapshot` is the current view of the panes; `look` reads a
 * pane and may throw, which counts as a failed capture for that pane only. A pane the
 * guards already skip is not read.
 */
export async function sweepQuestions(
  paneIds: readonly string[],
  snapshot: ReadonlyMap<string, QuestionCandidate>,
  look: (candidate: QuestionCandidate) => Promise<PaneLook>,
): Promise<QuestionSweep> {
  const sweep: QuestionSweep = { matches: [], skipped: [] };
  for (const pane of paneIds) {
    const candidate = snapshot.get(pane);
    const known = (candidate?.agentKind ?? null) !== null;
    const worthLooking = candidate !== undefined && !candidate.dead && (known || isSweptState(candidate.agentState));
    const seen = worthLooking ? await look(candidate).catch(() => undefined) : undefined;
    const row =
      seen !== undefined && 'reading' in seen
        ? judgeAgentReading(pane, candidate, seen.reading)
        : known && worthLooking
          ? judgeAgentReading(pane, candidate, undefined)
          : judgePane(pane, candidate, seen?.capture);
    if ('reason' in row) sweep.skipped.push(row);
    else sweep.matches.push(row);
  }
  return sweep;
}

const QUESTION_INDICATORS = [
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

const QUESTION_SKIP_REASONS = [
  'capture_failed',
  'state_changed',
  'no_agent_state',
  'blank_capture',
  'turn_boundary',
  'no_indicator',
  'pane_dead',
  'agent_at_composer',
  'agent_busy',
  'agent_exited',
  'screen_unrecognised',
] as const satisfies readonly QuestionSkipReason[];

/**
 * The `--json` rows of a sweep (and the MCP questions tool's result). The row types are
 * inferred from these schemas and the builders return them, so a field added to a row and not
 * to its schema does not compile.
 */
export const questionMatchJsonSchema = z.strictObject({
  pane_id: z.string(),
  agent_state: z.enum(AGENT_STATES),
  indicator: z.enum(QUESTION_INDICATORS),
  snippet: z.string().describe('the line that asks'),
  agent: z.string().nullable(),
  rule: z.string().nullable().describe('the screen rule that matched; null for the line scan'),
});
export const questionSkipJsonSchema = z.strictObject({ pane_id: z.string(), reason: z.enum(QUESTION_SKIP_REASONS) });
export const questionSweepJsonSchema = z.strictObject({ matches: z.array(questionMatchJsonSchema), skipped: z.array(questionSkipJsonSchema) });
export type QuestionMatchJson = z.infer<typeof questionMatchJsonSchema>;
export type QuestionSkipJson = z.infer<typeof questionSkipJsonSchema>;
export type QuestionSweepJson = z.infer<typeof questionSweepJsonSchema>;

export function questionMatchJson(match: QuestionMatch): QuestionMatchJson {
  return { pane_id: match.pane, agent_state: match.agent_state, indicator: match.indicator, snippet: match.snippet, agent: match.agent, rule: match.rule };
}

export function questionSkipJson(skip: QuestionSkip): QuestionSkipJson {
  return { pane_id: skip.pane, reason: skip.reason };
}

/** A match or a skip as its row. */
export function questionRowJson(row: QuestionMatch | QuestionSkip): QuestionMatchJson | QuestionSkipJson {
  return 'reason' in row ? questionSkipJson(row) : questionMatchJson(row);
}

export function questionSweepJson(sweep: QuestionSweep): QuestionSweepJson {
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
