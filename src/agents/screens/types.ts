import type { VisibleScreen } from '../../mux/index.js';

/** The coding agents drover knows by name: their screens, processes and hooks. */
export const AGENT_KINDS = Object.freeze(['claude', 'codex', 'gemini', 'opencode'] as const);
export type AgentKind = (typeof AGENT_KINDS)[number];

export function isAgentKind(value: string): value is AgentKind {
  return (AGENT_KINDS as readonly string[]).includes(value);
}

/**
 * One pane's visible screen, as an agent's screen rules read it: the port's screen (MuxScreen,
 * what a pane channel reads) without saying which pane, so a MuxScreen is read as it is.
 */
export type AgentScreen = VisibleScreen;

/**
 * What an agent's screen shows:
 * - composer: the prompt input is on screen and takes a prompt (the agent is idle);
 * - busy: a turn is running (the composer may be on screen too, taking typeahead);
 * - dialog: something other than the composer holds the input: a folder-trust or API-key
 *   dialog, a theme or model picker, a login screen. Typing there is not a prompt;
 * - permission: the agent asks the person to allow a tool call: a question;
 * - exited: the agent is gone and the pane shows what it left behind;
 * - unknown: nothing the rules recognise (a splash while starting, an unfamiliar version).
 */
export type ScreenPhase = 'composer' | 'busy' | 'dialog' | 'permission' | 'exited' | 'unknown';

export interface ScreenReading {
  readonly phase: ScreenPhase;
  /** The rule that decided, as `<agent>.<rule>` (e.g. `claude.trust-dialog`); `drover pane explain` shows it. */
  readonly rule: string;
  /** One line for a person: what the rule saw. */
  readonly detail: string;
  /**
   * The composer's text when the composer is on screen: frame runes, the prompt glyph and
   * padding removed, wrapped rows joined as the agent wraps them, and "" when it is empty
   * (a dimmed placeholder suggestion counts as empty). null when no composer is visible.
   */
  readonly composer: { readonly text: string } | null;
  /** An @-file, /-command or other completion menu is open over the composer. */
  readonly completion: boolean;
  /** For permission and dialog: the line that asks (what a question sweep reports). */
  readonly question: { readonly snippet: string } | null;
}

/** One agent's screen knowledge, checked against recorded screens of every phase of the real agent. */
export interface AgentScreenRules {
  readonly agent: AgentKind;
  read(screen: AgentScreen): ScreenReading;
  /**
   * Whether the composer (its `text` as read) shows `typed`: the text itself (as the agent
   * wraps and trims it), or the agent's placeholder for a paste of that size.
   */
  composerShows(composerText: string, typed: string): boolean;
  /** Keys (neutral spelling: `ctrl+u`, `Escape`, `Backspace`) that empty a filled composer, multi-line drafts included. */
  readonly clearKeys: readonly string[];
  /** Keys (neutral spelling) that close an open completion menu and keep the composer's text. */
  readonly dismissCompletionKeys: readonly string[];
  /**
   * Keys that undo what the agent itself adds to a paste of `typed` (opencode appends a
   * space to a paste it folds into a placeholder); empty for most agents.
   */
  keysAfterPaste?(typed: string): readonly string[];
}
