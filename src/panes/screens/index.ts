import { claudeRules } from './claude.js';
import type { AgentKind, AgentScreenRules } from './types.js';

export * from './capture.js';
export * from './screen.js';
export * from './types.js';

/** Each known agent's screen rules, checked against recorded screens of that agent's releases. */
const RULES: Partial<Record<AgentKind, AgentScreenRules>> = { claude: claudeRules };

/** The screen rules of a known agent. */
export function rulesFor(kind: AgentKind): AgentScreenRules | undefined {
  return RULES[kind];
}
