import { shellQuote } from '../../process/index.js';
import type { AgentState } from '../state.js';

/** Ends every hook command drover installs, so setup can find and replace them. */
export const AGENT_HOOK_MARKER = '# drover agent state';

/**
 * The hook command for one state: silent and successful outside tmux or when drover fails,
 * because a hook must never get in the agent's way. `drover` is the argv that runs drover.
 */
export function agentHookCommand(drover: readonly string[], state: AgentState): string {
  return `[ -n "$TMUX_PANE" ] || exit 0; ${[...drover, 'agent', 'hook', state].map(shellQuote).join(' ')} >/dev/null 2>&1 || true ${AGENT_HOOK_MARKER}`;
}
