/**
 * The home page's order: who needs the operator first. Pure, so the order is tested without a
 * multiplexer.
 */
import type { AgentStatus } from '../mux/index.js';
import type { AgentState, ScreenPhase } from '../agents/index.js';
import { TRIAGE_GROUPS, type StateSource, type TriageGroup } from './protocol.js';

export interface StateEvidence {
  /** The multiplexer's own agent status, when it declares agent detection. */
  readonly muxStatus: AgentStatus | null;
  /** A known agent's phase by its screen rules. */
  readonly phase: ScreenPhase | null;
  /** What the agent's hooks reported. */
  readonly hook: AgentState | null;
  readonly asking: boolean;
}

const STATUS_OF_PHASE: Readonly<Record<ScreenPhase, AgentStatus>> = { composer: 'idle', busy: 'working', permission: 'blocked', dialog: 'blocked', exited: 'done', unknown: 'unknown' };

const STATUS_OF_HOOK: Readonly<Record<AgentState, AgentStatus>> = { active: 'working', waiting: 'blocked', idle: 'idle' };

/** The screen phases that show the agent itself at work or waiting; exited and unknown say less. */
const LIVE_PHASES: ReadonlySet<ScreenPhase> = new Set(['composer', 'busy', 'permission', 'dialog']);

/**
 * One state from several witnesses. A question on screen always means blocked. Otherwise an
 * agent's own screen wins when it shows the agent (it shows what hooks cannot: a rejected
 * prompt, an interrupt), then the multiplexer's detection, then a screen the agent left, then
 * the hooks.
 */
export function resolveState(evidence: StateEvidence): { state: AgentStatus; source: StateSource } {
  if (evidence.asking) return { state: 'blocked', source: 'screen' };
  if (evidence.phase !== null && LIVE_PHASES.has(evidence.phase)) return { state: STATUS_OF_PHASE[evidence.phase], source: 'screen' };
  if (evidence.muxStatus !== null && evidence.muxStatus !== 'unknown') return { state: evidence.muxStatus, source: 'mux' };
  if (evidence.phase === 'exited') return { state: 'done', source: 'screen' };
  if (evidence.hook !== null) return { state: statusOfAgentState(evidence.hook), source: 'hook' };
  return { state: 'unknown', source: 'none' };
}

/** A turn ended: the agent was working and now is not, without asking anything. */
export function finishedTurn(before: AgentStatus | undefined, after: AgentStatus): boolean {
  return before === 'working' && (after === 'idle' || after === 'done');
}

export function triageGroup(pane: { readonly state: AgentStatus; readonly asking: boolean; readonly finishedUnseen: boolean }): TriageGroup {
  if (pane.asking || pane.state === 'blocked') return 'needs_you';
  if (pane.finishedUnseen) return 'finished';
  if (pane.state === 'working') return 'working';
  return 'idle';
}

/** Pane ids (or keys) by group, keeping the given order (host, space, tab, pane) inside each group. */
export function triageOrder<P extends { readonly pane_id: string; readonly group: TriageGroup }>(panes: readonly P[], nameOf: (pane: P) => string = (pane) => pane.pane_id): string[] {
  return TRIAGE_GROUPS.flatMap((group) => panes.filter((pane) => pane.group === group).map(nameOf));
}

/** The status of an agent as its hooks (or a host's pane map) report its state. */
export function statusOfAgentState(state: AgentState): AgentStatus {
  return STATUS_OF_HOOK[state];
}

export function triageCounts(panes: readonly { readonly group: TriageGroup }[]): Record<TriageGroup, number> {
  const counts = Object.fromEntries(TRIAGE_GROUPS.map((group) => [group, 0])) as Record<TriageGroup, number>;
  for (const pane of panes) counts[pane.group] += 1;
  return counts;
}
