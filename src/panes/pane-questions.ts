import { captureAgentScreen, defaultAgentStatusContext, systemProcessLookup, type AgentStatusContext } from '../agents/index.js';
import type { Server } from '../tmux/index.js';
import { listPanesIn, paneCensus, type SessionScope } from './listing.js';
import { discoverCandidates, sweepQuestions, type QuestionCandidate, type QuestionSweep } from './questions.js';
import { agentNamerFor } from './tmux-pane.js';

/** Discovery (waiting and idle panes of a session or of all sessions), or panes named by id. */
export type QuestionScope = SessionScope | { kind: 'panes'; panes: readonly string[] };

/**
 * `drover pane questions`: one enumeration for the agent states, the agents from each
 * pane's process tree, then one read of each candidate's screen with its cursor, judged by
 * the screen rules for an agent drover knows (with or without hooks), by the line scan for
 * any other program whose hooks reported waiting or idle. A failed read is a skipped pane,
 * never an error of the sweep.
 */
export async function paneQuestions(
  server: Server,
  scope: QuestionScope,
  options: { env?: NodeJS.ProcessEnv; agentContext?: AgentStatusContext; cwd?: string } = {},
): Promise<QuestionSweep> {
  const listings = await listPanesIn(server, scope.kind === 'panes' ? { kind: 'all' } : scope, options.env);
  const context = options.agentContext ?? defaultAgentStatusContext();
  const candidates = paneCensus(listings, agentNamerFor(options.cwd), context, await systemProcessLookup()).map(
    ({ listing, agent, status }): QuestionCandidate => ({ pane: listing.paneId, agentState: status.state, agent: agent.name, agentKind: agent.kind, dead: listing.dead }),
  );
  const ids = scope.kind === 'panes' ? scope.panes : discoverCandidates(candidates);
  const snapshot = new Map(candidates.map((candidate) => [candidate.pane, candidate]));
  return sweepQuestions(ids, snapshot, async (candidate) => (await captureAgentScreen(server.pane(candidate.pane))).screen);
}
