import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  defaultAgentStatusContext,
  hookReports,
  rulesFor,
  systemProcessLookup,
  type AgentScreenRules,
  type AgentState,
  type AgentStatusContext,
  type ScreenPhase,
} from '../agents/index.js';
import type { MuxOutcome, MuxPort, MuxScreen } from '../mux/index.js';
import { readFabState, type FabState } from './fab-status.js';
import { agentNamerFor, type PaneAgent } from './facts.js';
import { paneCensus, paneListings, panesInScope, type SessionScope } from './listing.js';
import { buildMapRow, type MapRow, type PaneGlance } from './map-rows.js';
import { lastMeaningfulLine } from './screen-summary.js';
import { paneKeys } from './target.js';
import { currentBranch, WorktreeResolver } from './worktrees.js';

export interface PaneMapOptions {
  env?: NodeJS.ProcessEnv;
  /** Reuse one across calls to keep its git answers. */
  resolver?: WorktreeResolver;
  agentContext?: AgentStatusContext;
  /** Where configured providers (agent names) are looked up; default this process's cwd. */
  cwd?: string;
  /** Also read every pane's screen and branch for its row's `glance` (`pane map --glance`). */
  glance?: boolean;
}

/** What a known agent's screen says about its state; null when it says nothing. */
export function stateOfPhase(phase: ScreenPhase): AgentState | null {
  switch (phase) {
    case 'composer':
      return 'idle';
    case 'busy':
      return 'active';
    case 'permission':
    case 'dialog':
      return 'waiting';
    case 'exited':
    case 'unknown':
      return null;
  }
}

/**
 * Whether a known agent's screen must be read for its state: no hook reported one, or the
 * hooks report `active` but cannot report `waiting` (an agent at a permission prompt would
 * look active for good).
 */
function needsScreen(row: MapRow, agent: PaneAgent): boolean {
  if (agent.kind === null || rulesFor(agent.kind) === undefined) return false;
  if (row.agent.state === null) return true;
  return row.agentStateSource === 'hook' && row.agent.state === 'active' && !hookReports(agent.kind).includes('waiting');
}

/** How long the map waits for one agent's screen before it leaves that agent's state unknown. */
const MAP_SCREEN_MS = 5000;
/** How long after a screen no rule recognised the map looks once more. */
export const UNRECOGNISED_REREAD_MS = 100;

/**
 * An agent's state from its screen (`first`, read by `read`). A frame caught while the agent is
 * drawing it can match no rule at all; such a screen is read once more a moment later, and what
 * that one shows stands (unknown again is unknown). A screen that could not be read is unknown.
 */
export async function judgeAgentScreen(
  first: MuxOutcome<MuxScreen>,
  read: () => Promise<MuxOutcome<MuxScreen>>,
  rules: AgentScreenRules,
  rereadMs = UNRECOGNISED_REREAD_MS,
): Promise<{ state: AgentState | null; screen: MuxOutcome<MuxScreen> }> {
  if (!first.ok) return { state: null, screen: first };
  const phase = rules.read(first.value).phase;
  if (phase !== 'unknown') return { state: stateOfPhase(phase), screen: first };
  await delay(rereadMs);
  const again = await read();
  return { state: again.ok ? stateOfPhase(rules.read(again.value).phase) : null, screen: again.ok ? again : first };
}

/**
 * `drover pane map`: one snapshot of the multiplexer (every pane with its hook state and pid),
 * then per distinct cwd one git lookup (per repo one worktree listing) and per worktree one read
 * of its fab layout. Agents are named from each pane's process tree (read from /proc, no process
 * started) where the multiplexer reports the pane's pid, else as it detected them (herdr); agent
 * state comes from the snapshot itself (hooks, or the multiplexer's own report), and only for an
 * agent drover knows whose state that leaves unknown, or whose hooks cannot report waiting, does
 * the map read that pane's screen.
 */
export async function paneMap(port: MuxPort, scope: SessionScope, options: PaneMapOptions = {}): Promise<MapRow[]> {
  const env = options.env ?? process.env;
  const snapshot = await port.snapshot();
  const listings = paneListings(snapshot, panesInScope(snapshot, scope), paneKeys(port, snapshot.incarnation));
  const resolver = options.resolver ?? new WorktreeResolver({ env });
  const git = await resolver.resolveAll(listings.map((listing) => listing.cwd));
  const fabByWorktree = new Map<string, FabState | undefined>();
  const fabOf = (worktree: string): FabState | undefined => {
    if (!fabByWorktree.has(worktree)) fabByWorktree.set(worktree, readFabState(worktree));
    return fabByWorktree.get(worktree);
  };
  const branchByWorktree = new Map<string, string | null>();
  const branchOf = (worktree: string | null): string | null => {
    if (worktree === null) return null;
    if (!branchByWorktree.has(worktree)) branchByWorktree.set(worktree, currentBranch(worktree));
    return branchByWorktree.get(worktree)!;
  };
  const context = options.agentContext ?? defaultAgentStatusContext();
  const readsScreens = port.declaration.supports.paneScreen;
  return Promise.all(
    paneCensus(listings, agentNamerFor(options.cwd), context, await systemProcessLookup()).map(async ({ listing, agent }) => {
      const info = git.get(listing.cwd)!;
      const row = buildMapRow(listing, info, info.worktree === null ? undefined : fabOf(info.worktree), context);
      row.agentName = agent.name;
      const screenRead = readsScreens && needsScreen(row, agent);
      const glancing = options.glance === true && readsScreens && listing.pane.alive;
      const read = (): Promise<MuxOutcome<MuxScreen>> => port.readScreen(listing.paneId, { timeoutMs: MAP_SCREEN_MS });
      let screen = screenRead || glancing ? await read() : undefined;
      if (screenRead) {
        const judged = await judgeAgentScreen(screen!, read, rulesFor(agent.kind!)!);
        screen = judged.screen;
        if (judged.state !== null) {
          row.agent = { state: judged.state, idleDuration: null };
          row.agentStateSource = 'screen';
        }
      }
      if (options.glance === true) row.glance = glanceOf(branchOf(info.worktree), screen, agent);
      return row;
    }),
  );
}

/** A row's glance from its branch and its screen (undefined: not read, as a dead pane's is not). */
function glanceOf(branch: string | null, screen: MuxOutcome<MuxScreen> | undefined, agent: PaneAgent): PaneGlance {
  if (screen === undefined || !screen.ok) return { branch, lastLine: null, screenDigest: null };
  const text = screen.value.lines.join('\n');
  const hasRules = agent.kind !== null && rulesFor(agent.kind) !== undefined;
  return {
    branch,
    lastLine: lastMeaningfulLine(text, { agent: hasRules, width: screen.value.width }),
    screenDigest: createHash('sha256').update(text).digest('hex').slice(0, 16),
  };
}
