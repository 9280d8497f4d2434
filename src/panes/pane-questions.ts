import type { Server } from '../tmux/index.js';
import { defaultAgentStatusContext, pickAgentStateOption, resolveAgentStatus, type AgentStatusContext } from './agent-state.js';
import { listPanesIn, type SessionScope } from './listing.js';
import { QUESTION_CAPTURE_LINES, discoverCandidates, sweepQuestions, type QuestionCandidate, type QuestionSweep } from './questions.js';

/** Discovery (waiting and idle panes of a session or of all sessions), or panes named by id. */
export type QuestionScope = SessionScope | { kind: 'panes'; panes: readonly string[] };

/**
 * `drover pane questions`: one enumeration for the agent states, then one capture of the
 * last 20 lines per candidate that passes the state guard. A failed capture is a skipped
 * pane, never an error of the sweep.
 */
export async function paneQuestions(
  server: Server,
  scope: QuestionScope,
  options: { env?: NodeJS.ProcessEnv; agentContext?: AgentStatusContext } = {},
): Promise<QuestionSweep> {
  const listings = await listPanesIn(server, scope.kind === 'panes' ? { kind: 'all' } : scope, options.env);
  const context = options.agentContext ?? defaultAgentStatusContext();
  const candidates = listings.map(
    (listing): QuestionCandidate => ({
      pane: listing.paneId,
      agentState: resolveAgentStatus(pickAgentStateOption(listing.agentStateOption, listing.legacyAgentStateOption), context).state,
    }),
  );
  const ids = scope.kind === 'panes' ? scope.panes : discoverCandidates(candidates);
  const snapshot = new Map(candidates.map((candidate) => [candidate.pane, candidate]));
  return sweepQuestions(ids, snapshot, async (pane) => (await server.pane(pane).capture({ start: -QUESTION_CAPTURE_LINES })).toString('utf8'));
}
