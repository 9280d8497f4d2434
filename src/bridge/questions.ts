/**
 * What a pane's screen asks, turned into something a button can answer. An agent drover knows
 * is read by its screen rules (a permission prompt or a dialog is a question); any other
 * program by the question line scan, the same one `drover pane questions` uses. A numbered menu
 * under the question becomes one button per entry (its digit is the key), a [y/n] prompt two,
 * "press any key" one; a question that wants words offers none and is answered by a reply.
 */
import { createHash } from 'node:crypto';
import type { AgentKind, AgentScreen, AgentScreenRules, AgentState, ScreenPhase } from '../agents/index.js';
import { judgePane } from '../panes/index.js';
import type { QuestionOption } from './protocol.js';

/** A question as read off one screen; the observer gives it an id while it stays on screen. */
export interface ScreenQuestion {
  readonly snippet: string;
  readonly indicator: string;
  readonly rule: string | null;
  readonly options: readonly QuestionOption[];
  /** Equal for the same question read twice; different for a different question. */
  readonly fingerprint: string;
}

export interface ScreenVerdict {
  /** The agent's phase by its screen rules; null for a program drover has no rules for. */
  readonly phase: ScreenPhase | null;
  readonly rule: string | null;
  readonly question: ScreenQuestion | null;
}

const MENU_ROW = /^[\s│┃|]*(?:[❯›>●○◯•▶*]\s*)?([1-9])[.)]\s+(\S.*?)[\s│┃|]*$/u;
const MENU_SEARCH_ROWS = 12;

/**
 * How a numbered menu takes a choice, as the agents' releases drover supports do it: Claude Code
 * moves its selection on a digit and confirms on Enter; Codex and Gemini CLI confirm on the digit
 * (an Enter after it would reach whatever comes next).
 */
const CONFIRMS_ON_DIGIT: Readonly<Record<AgentKind, boolean>> = { claude: false, codex: true, gemini: true, opencode: true };

/** The numbered entries of a menu drawn on the rows after `from`: 1, 2, 3… in order, each once. */
export function menuOptions(lines: readonly string[], from: number, confirmsOnDigit = true): QuestionOption[] {
  const options: QuestionOption[] = [];
  for (const line of lines.slice(Math.max(0, from), from + MENU_SEARCH_ROWS)) {
    const match = MENU_ROW.exec(line);
    if (match === null) continue;
    const digit = match[1]!;
    if (Number(digit) !== options.length + 1) continue;
    options.push({ label: `${digit}. ${match[2]!}`, keys: confirmsOnDigit ? [digit] : [digit, 'Enter'] });
  }
  return options.length >= 2 ? options : [];
}

/** Options written inline on the question line: `[y/n]`, `1) staging 2) production`. */
function inlineOptions(snippet: string): QuestionOption[] {
  if (/\[y\/n\]|\(y\/n\)/i.test(snippet) || /\by to \w+.*\bn to \w+/i.test(snippet)) {
    return [
      { label: 'y', keys: ['y'] },
      { label: 'n', keys: ['n'] },
    ];
  }
  const enumerated = [...snippet.matchAll(/([1-9])\)\s*([^)]*?)(?=\s+[1-9]\)|\s*$)/g)];
  if (enumerated.length >= 2) return enumerated.map((match) => ({ label: `${match[1]}) ${match[2]!.trim()}`, keys: [match[1]!] }));
  return [];
}

/** The answers a question offers on its own line (no menu under it): Enter for "press any key", else what it writes inline. */
export function questionLineOptions(snippet: string, indicator: string): QuestionOption[] {
  return indicator === 'press_key' ? [{ label: 'Continue', keys: ['Enter'] }] : inlineOptions(snippet);
}

function fingerprint(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 16);
}

function question(snippet: string, indicator: string, rule: string | null, options: readonly QuestionOption[], lines: readonly string[]): ScreenQuestion {
  // The rows around the asking line tell two asks with the same wording apart.
  const at = lines.lastIndexOf(snippet);
  const context = at === -1 ? [] : lines.slice(Math.max(0, at - 3), at);
  return { snippet: snippet.trim(), indicator, rule, options, fingerprint: fingerprint([indicator, snippet, ...context, ...options.map((option) => option.label)]) };
}

function rowOf(lines: readonly string[], snippet: string): number {
  const wanted = snippet.trim();
  for (let i = lines.length - 1; i >= 0; i -= 1) if (lines[i]!.includes(wanted)) return i;
  return Math.max(0, lines.length - MENU_SEARCH_ROWS);
}

/** An agent drover knows, by its screen rules. */
export function readAgentScreen(screen: AgentScreen, rules: AgentScreenRules): ScreenVerdict {
  const reading = rules.read(screen);
  if (reading.phase !== 'permission' && reading.phase !== 'dialog') return { phase: reading.phase, rule: reading.rule, question: null };
  const snippet = reading.question?.snippet ?? reading.detail;
  const options = menuOptions(screen.lines, rowOf(screen.lines, snippet) + 1, CONFIRMS_ON_DIGIT[rules.agent]);
  return {
    phase: reading.phase,
    rule: reading.rule,
    question: question(snippet, reading.phase === 'permission' ? 'permission_prompt' : 'agent_dialog', reading.rule, options, screen.lines),
  };
}

/**
 * Any other program, by the line scan. `state` is what its hooks reported; without hooks a
 * program in the foreground that is not a shell is scanned as if idle (a shell at its prompt
 * asks nothing).
 */
export function scanProgramScreen(paneId: string, screen: AgentScreen, state: AgentState | null): ScreenVerdict {
  const judged = judgePane(paneId, { pane: paneId, agentState: state }, screen);
  if ('reason' in judged) return { phase: null, rule: null, question: null };
  const below = menuOptions(screen.lines, rowOf(screen.lines, judged.snippet) + 1);
  const options = below.length > 0 ? below : questionLineOptions(judged.snippet, judged.indicator);
  return { phase: null, rule: null, question: question(judged.snippet, judged.indicator, null, options, screen.lines) };
}
