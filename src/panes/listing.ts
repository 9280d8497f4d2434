import { agentStateOfMux, resolveAgentStatus, type AgentNamer, type AgentStatus, type AgentStatusContext, type ProcessLookup } from '../agents/index.js';
import type { MuxPane, MuxSnapshot } from '../mux/index.js';
import { NotInTmuxError } from './errors.js';
import { agentOfPane, type PaneAgent } from './facts.js';
import type { AgentStateSource, PaneListing } from './map-rows.js';
import type { PaneKeys } from './target.js';

/**
 * Which panes a discovery covers. `current` is the caller's session: the session (space) of
 * `callerPane` when it is a pane of the multiplexer the port drives, else the one the
 * multiplexer puts in front.
 */
export type SessionScope = { kind: 'current'; callerPane?: string } | { kind: 'session'; name: string } | { kind: 'all' };

/** The space a `current` scope means in this snapshot; NotInTmuxError when there is none. */
function currentSpace(snapshot: MuxSnapshot, callerPane: string | undefined): string {
  const caller = callerPane === undefined ? undefined : snapshot.panes.find((pane) => pane.paneId === callerPane);
  const space = caller?.spaceId ?? snapshot.spaces.find((candidate) => candidate.focused)?.spaceId;
  if (space === undefined) throw new NotInTmuxError('there is no current session: no session is in front and this does not run in one of its panes');
  return space;
}

/** The panes of the snapshot in scope (an unknown session has none). */
export function panesInScope(snapshot: MuxSnapshot, scope: SessionScope): readonly MuxPane[] {
  switch (scope.kind) {
    case 'all':
      return snapshot.panes;
    case 'session':
      return snapshot.panes.filter((pane) => pane.spaceLabel === scope.name);
    case 'current': {
      const space = currentSpace(snapshot, scope.callerPane);
      return snapshot.panes.filter((pane) => pane.spaceId === space);
    }
  }
}

/**
 * What drover knows of a pane's agent state without reading its screen: the state its hooks
 * recorded (tmux pane options), else the state the multiplexer reports when it detects agents
 * itself (herdr), else nothing.
 */
export function agentStatusOf(pane: Pick<MuxPane, 'hookState' | 'status'>, context: AgentStatusContext): { status: AgentStatus; source: AgentStateSource | null } {
  const hook = resolveAgentStatus(pane.hookState ?? '', context);
  if (hook.state !== null) return { status: hook, source: 'hook' };
  const reported = agentStateOfMux(pane.status);
  return { status: reported, source: reported.state === null ? null : 'mux' };
}

/** One listed pane as the map and the sweep see it, from the snapshot alone. */
export function paneListings(snapshot: MuxSnapshot, panes: readonly MuxPane[], keys: PaneKeys): PaneListing[] {
  const tabs = new Map(snapshot.tabs.map((tab) => [tab.tabId, tab]));
  return panes.map((pane) => {
    const tab = tabs.get(pane.tabId);
    return {
      session: pane.spaceLabel,
      windowIndex: tab?.nativeIndex ?? tab?.number ?? 0,
      windowId: pane.tabId,
      windowName: pane.tabLabel ?? tab?.label ?? '',
      paneId: pane.paneId,
      paneKey: keys.keyOf(pane.paneId),
      cwd: pane.cwd,
      pane,
    };
  });
}

/** One listed pane with what drover knows of its agent. */
export interface CensusRow {
  listing: PaneListing;
  /** The agent by the pane's process tree (none for a dead pane), or as the multiplexer detected it. */
  agent: PaneAgent;
  /** The state the agent's hooks (or the multiplexer) reported, as it stands now. */
  status: AgentStatus;
  source: AgentStateSource | null;
}

/** Each listed pane's agent and reported state, from the listing and one process lookup. */
export function paneCensus(listings: readonly PaneListing[], nameAgent: AgentNamer, context: AgentStatusContext, lookup: ProcessLookup): CensusRow[] {
  return listings.map((listing) => ({ listing, agent: agentOfPane(listing.pane, nameAgent, lookup), ...agentStatusOf(listing.pane, context) }));
}
