import { claudeRules } from './claude.js';
import { codexRules } from './codex.js';
import { geminiRules } from './gemini.js';
import { opencodeRules } from './opencode.js';
import type { AgentKind, AgentScreenRules } from './types.js';

export * from './screen.js';
export * from './types.js';

/** Each known agent's screen rules, checked against recorded screens of that agent's releases. */
const RULES: Partial<Record<AgentKind, AgentScreenRules>> = { claude: claudeRules, codex: codexRules, gemini: geminiRules, opencode: opencodeRules };

/** The screen rules of a known agent. */
export function rulesFor(kind: AgentKind): AgentScreenRules | undefined {
  return RULES[kind];
}
