/**
 * What a pane's screen asks, turned into something a button can answer. An agent drover knows
 * is read by its screen rules (a permission prompt or a dialog is a question); any other
 * program by the question line scan, the same one `drover pane questions` uses. A numbered menu
 * under the question becomes one button per entry (its digit is the key), a [y/n] prompt two,
 * "press any key" one; a question that wants words offers none and is answered by a reply.
 */
import { createHash } from 'node:crypto';
import type { AgentScreen, AgentScreenRules, AgentState, ScreenPhase } from '../agents/index.js';
import { agentQuestion, judgePane } from '../panes/index.js';
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

function fingerprint(parts: readonly string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 16);
}

function question(snippet: string, indicator: string, rule: string | null, options: readonly QuestionOption[], lines: readonly string[]): ScreenQuestion {
  // The rows around the asking line tell two asks with the same wording apart.
  const at = lines.lastIndexOf(snippet);
  const context = at === -1 ? [] : lines.slice(Math.max(0, at - 3), at);
  return { snippet: snippet.trim(), indicator, rule, options, fingerprint: fingerprint([indicator, snippet, ...context, ...options.map((option) => option.label)]) };
}

/** An agent drover knows, by its screen rules. */
export function readAgentScreen(screen: AgentScreen, rules: AgentScreenRules): ScreenVerdict {
  const reading = rules.read(screen);
  const asked = agentQuestion(reading, screen.lines, rules.agent);
  return { phase: reading.phase, rule: reading.rule, question: asked === undefined ? null : question(asked.snippet, asked.indicator, reading.rule, asked.answers, screen.lines) };
}

/**
 * Any other program, by the line scan. `state` is what its hooks reported; without hooks a
 * program in the foreground that is not a shell is scanned as if idle (a shell at its prompt
 * asks nothing).
 */
export function scanProgramScreen(paneId: string, screen: AgentScreen, state: AgentState | null): ScreenVerdict {
  const judged = judgePane(paneId, { pane: paneId, agentState: state }, screen);
  if ('reason' in judged) return { phase: null, rule: null, question: null };
  return { phase: null, rule: null, question: question(judged.snippet, judged.indicator, null, judged.answers, screen.lines) };
}
