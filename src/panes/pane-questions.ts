import { defaultAgentStatusContext, systemProcessLookup, type AgentStatusContext } from '../agents/index.js';
import type { MuxPort } from '../mux/index.js';
import { agentNamerFor } from './facts.js';
import { paneCensus, paneListings, panesInScope, type SessionScope } from './listing.js';
import { requireCapabilities } from './pane-actions.js';
import { discoverCandidates, sweepQuestions, type KeyedQuestionSweep, type QuestionCandidate } from './questions.js';
import { paneKeys, resolvePane } from './target.js';

/** Discovery (waiting and idle panes of a session or of all sessions), or panes named by key or id. */
export type QuestionScope = SessionScope | { kind: 'panes'; panes: readonly string[] };

/** How long one pane's look may take; a pane that does not answer in time is a skipped pane. */
const LOOK_MS = 5000;

/**
 * `drover pane questions`: one snapshot for the agent states, the agents from each pane's
 * process tree (or as the multiplexer detected them), then one read of each candidate's screen
 * with its cursor, judged by the screen rules for an agent drover knows (with or without
 * hooks), by the line scan for any other program whose hooks reported waiting or idle. A
 * failed read is a skipped pane, never an error of the sweep. Named panes are resolved first,
 * so a key of another server run is refused before any pane is read.
 */
export async function paneQuestions(
  port: MuxPort,
  scope: QuestionScope,
  options: { env?: NodeJS.ProcessEnv; agentContext?: AgentStatusContext; cwd?: string } = {},
): Promise<KeyedQuestionSweep> {
  requireCapabilities(port, 'sweeping panes for questions', ['paneScreen']);
  const named: string[] = [];
  if (scope.kind === 'panes') for (const pane of scope.panes) named.push((await resolvePane(port, pane)).paneId);
  const snapshot = await port.snapshot();
  const keys = paneKeys(port, snapshot.incarnation);
  const listings = paneListings(snapshot, scope.kind === 'panes' ? snapshot.panes : panesInScope(snapshot, scope), keys);
  const context = options.agentContext ?? defaultAgentStatusContext();
  const candidates = paneCensus(listings, agentNamerFor(options.cwd), context, await systemProcessLookup()).map(
    ({ listing, agent, status }): QuestionCandidate => ({ pane: listing.paneId, agentState: status.state, agent: agent.name, agentKind: agent.kind, dead: !listing.pane.alive }),
  );
  const ids = scope.kind === 'panes' ? named : discoverCandidates(candidates);
  const byPane = new Map(candidates.map((candidate) => [candidate.pane, candidate]));
  const sweep = await sweepQuestions(ids, byPane, async (candidate) => {
    const screen = await port.readScreen(candidate.pane, { timeoutMs: LOOK_MS });
    if (!screen.ok) throw new Error(screen.detail);
    return screen.value;
  });
  return {
    matches: sweep.matches.map((row) => ({ ...row, paneKey: keys.keyOf(row.pane) })),
    skipped: sweep.skipped.map((row) => ({ ...row, paneKey: keys.keyOf(row.pane) })),
  };
}
