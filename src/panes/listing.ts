import { AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION, pickAgentStateOption, resolveAgentStatus, type AgentNamer, type AgentStatus, type AgentStatusContext, type ProcessLookup } from '../agents/index.js';
import type { Server } from '../tmux/index.js';
import { callerPane, insideTmux } from './caller.js';
import { NotInTmuxError } from './errors.js';
import type { PaneListing } from './map-rows.js';
import { NO_AGENT, type PaneAgent } from './pane-io.js';
import { paneAgent, parseTextRows, requirePane, textRowFormat } from './tmux-pane.js';

const LISTING_FIELDS = [
  'session_name',
  'window_index',
  'window_id',
  'window_name',
  'pane_id',
  'pane_current_path',
  AGENT_STATE_OPTION,
  LEGACY_AGENT_STATE_OPTION,
  'pane_pid',
  'pane_dead',
] as const;

/** Every pane of the server in one `list-panes -a`, agent-state options included. */
export async function listPanes(server: Server): Promise<PaneListing[]> {
  const result = await server.command(['list-panes', '-a', '-F', textRowFormat(LISTING_FIELDS)]);
  return parseTextRows(result.stdout, LISTING_FIELDS).map(([session, index, windowId, windowName, paneId, cwd, agent, legacy, pid, dead]) => ({
    session: session!,
    windowIndex: Number(index),
    windowId: windowId!,
    windowName: windowName!,
    paneId: paneId!,
    cwd: cwd!,
    agentStateOption: agent!,
    legacyAgentStateOption: legacy!,
    panePid: Number(pid),
    dead: dead === '1',
  }));
}

/** Which panes a discovery covers. `current` is the caller's session and needs $TMUX. */
export type SessionScope = { kind: 'current' } | { kind: 'session'; name: string } | { kind: 'all' };

/**
 * The caller's session: the session of $TMUX_PANE when the caller is a pane of this
 * server, else the session tmux itself considers current.
 */
export async function currentSessionName(server: Server, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  if (!insideTmux(env)) throw new NotInTmuxError();
  const pane = callerPane(server, env);
  if (pane !== undefined) return (await requirePane(server, pane, ['session_name'])).values[0]!;
  return (await server.display('#{session_name}')).toString('utf8');
}

/** The panes in scope, from one enumeration filtered here (an unknown session has no panes). */
export async function listPanesIn(server: Server, scope: SessionScope, env: NodeJS.ProcessEnv = process.env): Promise<PaneListing[]> {
  const wanted = scope.kind === 'all' ? undefined : scope.kind === 'session' ? scope.name : await currentSessionName(server, env);
  const panes = await listPanes(server);
  return wanted === undefined ? panes : panes.filter((pane) => pane.session === wanted);
}

/** One listed pane with what drover knows of its agent. */
export interface CensusRow {
  listing: PaneListing;
  /** The agent by the pane's process tree (none for a dead pane). */
  agent: PaneAgent;
  /** The state the agent's hooks reported, as it stands now. */
  status: AgentStatus;
}

/** Each listed pane's agent and hook state, from the listing and one process lookup. */
export function paneCensus(listings: readonly PaneListing[], nameAgent: AgentNamer, context: AgentStatusContext, lookup: ProcessLookup): CensusRow[] {
  return listings.map((listing) => ({
    listing,
    agent: listing.dead ? NO_AGENT : paneAgent(listing.panePid, nameAgent, lookup),
    status: resolveAgentStatus(pickAgentStateOption(listing.agentStateOption, listing.legacyAgentStateOption), context),
  }));
}
