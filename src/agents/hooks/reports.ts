import type { AgentKind } from '../screens/types.js';
import type { AgentState } from '../state.js';

/** A state an agent's own hook mechanism can report; the screen fills in the rest. */
export type HookState = 'active' | 'waiting' | 'idle';

/**
 * The states each agent's hooks report once `drover agent setup` installed them. Kept apart
 * from the installers, which each take their entry from here: every pane map reads it, and
 * should load no installer (nor the TOML parser Codex's needs) to do so.
 */
export const HOOK_REPORTS = {
  claude: ['active', 'waiting', 'idle'],
  codex: ['active', 'waiting', 'idle'],
  gemini: ['active', 'waiting', 'idle'],
  opencode: ['active', 'waiting', 'idle'],
} as const satisfies Partial<Record<AgentKind, readonly HookState[]>>;

/** The states an agent's own hooks report once `drover agent setup` installed them. */
export function hookReports(kind: AgentKind): readonly AgentState[] {
  const reports: Partial<Record<AgentKind, readonly HookState[]>> = HOOK_REPORTS;
  return reports[kind] ?? [];
}
