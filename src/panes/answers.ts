/**
 * The answers a question on a screen offers, each with the keys that give it: a numbered menu
 * under the asking line is one answer per entry, a [y/n] prompt two, "press any key" one; a
 * question that wants words offers none. `drover pane questions` prints them with each match,
 * so a script (or a hub showing another machine's panes) can answer without reading the
 * screen itself.
 */
import type { AgentKind } from '../agents/index.js';

/** One answer: what it says, and the keys (`pane keys` names) that choose it. */
export interface QuestionAnswer {
  readonly label: string;
  readonly keys: readonly string[];
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
export function menuAnswers(lines: readonly string[], from: number, confirmsOnDigit = true): QuestionAnswer[] {
  const answers: QuestionAnswer[] = [];
  for (const line of lines.slice(Math.max(0, from), from + MENU_SEARCH_ROWS)) {
    const match = MENU_ROW.exec(line);
    if (match === null) continue;
    const digit = match[1]!;
    if (Number(digit) !== answers.length + 1) continue;
    answers.push({ label: `${digit}. ${match[2]!}`, keys: confirmsOnDigit ? [digit] : [digit, 'Enter'] });
  }
  return answers.length >= 2 ? answers : [];
}

/** Answers written inline on the question line: `[y/n]`, `1) staging 2) production`. */
function inlineAnswers(snippet: string): QuestionAnswer[] {
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
export function questionLineAnswers(snippet: string, indicator: string): QuestionAnswer[] {
  return indicator === 'press_key' ? [{ label: 'Continue', keys: ['Enter'] }] : inlineAnswers(snippet);
}

/** The lowest row showing the asking line; a line not found stands just above the search window at the bottom. */
function rowOf(lines: readonly string[], snippet: string): number {
  const wanted = snippet.trim();
  for (let i = lines.length - 1; i >= 0; i -= 1) if (lines[i]!.includes(wanted)) return i;
  return Math.max(0, lines.length - MENU_SEARCH_ROWS);
}

/**
 * The answers the question `snippet` offers on a screen of `lines`. Read by an agent's screen
 * rules (`agent` set), only its menu counts, with the keys that agent takes; read by the line
 * scan, a menu under the line, else what the line itself offers.
 */
export function questionAnswers(lines: readonly string[], snippet: string, indicator: string, agent: AgentKind | null): QuestionAnswer[] {
  const below = menuAnswers(lines, rowOf(lines, snippet) + 1, agent === null ? true : CONFIRMS_ON_DIGIT[agent]);
  if (agent !== null || below.length > 0) return below;
  return questionLineAnswers(snippet, indicator);
}
