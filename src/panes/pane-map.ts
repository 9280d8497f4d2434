import type { Server } from '../tmux/index.js';
import { defaultAgentStatusContext, type AgentStatusContext } from './agent-state.js';
import { readFabState, type FabState } from './fab-status.js';
import { listPanesIn, type SessionScope } from './listing.js';
import { buildMapRow, type MapRow } from './map-rows.js';
import { WorktreeResolver } from './worktrees.js';

export interface PaneMapOptions {
  env?: NodeJS.ProcessEnv;
  /** Reuse one across calls to keep its git answers. */
  resolver?: WorktreeResolver;
  agentContext?: AgentStatusContext;
}

/**
 * `drover pane map`: one pane enumeration, then per distinct cwd one git lookup (per repo
 * one worktree listing) and per worktree one read of its fab layout. Agent state comes
 * from the enumeration itself, so it costs no extra process.
 */
export async function paneMap(server: Server, scope: SessionScope, options: PaneMapOptions = {}): Promise<MapRow[]> {
  const env = options.env ?? process.env;
  const listings = await listPanesIn(server, scope, env);
  const resolver = options.resolver ?? new WorktreeResolver({ env });
  const git = await resolver.resolveAll(listings.map((listing) => listing.cwd));
  const fabByWorktree = new Map<string, FabState | undefined>();
  const fabOf = (worktree: string): FabState | undefined => {
    if (!fabByWorktree.has(worktree)) fabByWorktree.set(worktree, readFabState(worktree));
    return fabByWorktree.get(worktree);
  };
  const context = options.agentContext ?? defaultAgentStatusContext();
  return listings.map((listing) => {
    const info = git.get(listing.cwd)!;
    return buildMapRow(listing, info, info.worktree === null ? undefined : fabOf(info.worktree), context);
  });
}
