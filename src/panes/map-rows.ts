import { agentStatusLabel, type AgentStatus, type AgentStatusContext } from '../agents/index.js';
import type { MuxName, MuxPane } from '../mux/index.js';
import { agentStatusOf } from './listing.js';
import type { MapRowJson } from './json-schemas.js';
import type { FabState } from './fab-status.js';
import { worktreeLabel, type WorktreeInfo } from './worktrees.js';
import { foldBody } from './printable.js';

/** One pane as the map lists it, from the multiplexer's one snapshot. */
export interface PaneListing {
  /** The pane's space: a tmux session, a herdr workspace, the zellij session. */
  session: string;
  /** The tab's own number where the multiplexer keeps one (tmux's window index), else its 1-based position. */
  windowIndex: number;
  /** The tab id (`@N` on tmux, stable across swap-window); null only for a listing that lacks it. */
  windowId: string | null;
  windowName: string;
  paneId: string;
  paneKey: string;
  cwd: string;
  /** What the snapshot says of the pane: its hook state, multiplexer-reported status, liveness, pid and detected agent. */
  pane: Pick<MuxPane, 'hookState' | 'status' | 'alive' | 'pid' | 'agent'>;
}

/** One pane of `drover pane map`, resolved. `fab` is undefined when the worktree has no fab layout. */
export interface MapRow {
  session: string;
  windowIndex: number;
  windowId: string | null;
  pane: string;
  paneKey: string;
  tab: string;
  worktree: string;
  repo: string | null;
  fab: FabState | undefined;
  agent: AgentStatus;
  /** The agent the pane runs, by its process tree (a node process running codex is codex). */
  agentName: string | null;
  /** Where the state came from: the agent's hooks, the multiplexer's own detection, or the agent's screen where neither tells. */
  agentStateSource: AgentStateSource | null;
  /** What a glance at the pane shows (`pane map --glance`); undefined when not asked for. */
  glance?: PaneGlance;
}

/** What a row of a dashboard shows of a pane beyond the map: the branch, and its screen in one line. */
export interface PaneGlance {
  /** The branch checked out in its worktree (7 hex digits when detached); null outside git. */
  branch: string | null;
  /** The lowest line with words on its screen (an agent's transcript, not its input box); null for a blank screen or one that could not be read. */
  lastLine: string | null;
  /** Changes whenever what the screen shows does; null when it could not be read. */
  screenDigest: string | null;
}

export const AGENT_STATE_SOURCES = Object.freeze(['hook', 'mux', 'screen'] as const);
export type AgentStateSource = (typeof AGENT_STATE_SOURCES)[number];

export function buildMapRow(listing: PaneListing, git: WorktreeInfo, fab: FabState | undefined, agentContext: AgentStatusContext): MapRow {
  const { status, source } = agentStatusOf(listing.pane, agentContext);
  return {
    session: listing.session,
    windowIndex: listing.windowIndex,
    windowId: listing.windowId === '' ? null : listing.windowId,
    pane: listing.paneId,
    paneKey: listing.paneKey,
    tab: listing.windowName,
    worktree: worktreeLabel(listing.cwd, git),
    repo: git.repo,
    fab,
    agent: status,
    agentName: null,
    agentStateSource: source,
  };
}

export function mapRowJson(row: MapRow): MapRowJson {
  return {
    session: row.session,
    window_index: row.windowIndex,
    window_id: row.windowId,
    pane_id: row.pane,
    pane_key: row.paneKey,
    tab: row.tab,
    worktree: row.worktree,
    repo: row.repo,
    change: row.fab?.change ?? null,
    stage: row.fab?.stage ?? null,
    display_state: row.fab?.displayState ?? null,
    agent_state: row.agent.state,
    agent_idle_duration: row.agent.idleDuration,
    pr_url: row.fab?.prUrl ?? null,
    pr_number: row.fab?.prNumber ?? null,
    agent: row.agentName,
    agent_state_source: row.agentStateSource,
    ...(row.glance === undefined ? {} : { branch: row.glance.branch, last_line: row.glance.lastLine, screen_digest: row.glance.screenDigest }),
  };
}

const NONE = '—';

function changeLabel(fab: FabState | undefined): string {
  if (fab === undefined) return NONE;
  return fab.change ?? '(no change)';
}

function width(text: string): number {
  return Array.from(text).length;
}

/** Columns separated by two spaces, padded to the widest cell; the last column is not padded. */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => width(row[column] ?? ''))));
  return all
    .map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat(widths[column]! - width(cell) + 2))).join(''))
    .map((line) => `${line}\n`)
    .join('');
}

/** `claude idle (2m)`, `codex waiting (screen)`, `active`, or an em dash when nothing is known. */
function agentColumn(row: MapRow): string {
  const state = row.agent.state === null ? null : `${agentStatusLabel(row.agent)}${row.agentStateSource === 'screen' ? ' (screen)' : ''}`;
  if (row.agentName === null) return state ?? NONE;
  return state === null ? row.agentName : `${row.agentName} ${state}`;
}

/**
 * The human table: Session (with --all-sessions only), Pane, WinIdx, Tab, Worktree, Change,
 * Stage, Agent. A pane outside a fab worktree shows em dashes for Change and Stage; a fab
 * worktree without an active change shows `(no change)`.
 */
export function renderMapTable(rows: readonly MapRow[], options: { allSessions: boolean; mux: MuxName }): string {
  if (rows.length === 0) return `No ${options.mux} panes found.\n`;
  // A glance adds what each pane shows, last: its line is the widest cell.
  const glanced = rows.some((row) => row.glance !== undefined);
  const header = ['Pane', 'WinIdx', 'Tab', 'Worktree', 'Change', 'Stage', 'Agent', ...(glanced ? ['Branch', 'Last line'] : [])];
  const cells = rows.map((row) => [
    row.pane,
    String(row.windowIndex),
    row.tab,
    row.worktree,
    changeLabel(row.fab),
    row.fab?.stage ?? NONE,
    agentColumn(row),
    ...(glanced ? [row.glance?.branch ?? NONE, row.glance?.lastLine ?? NONE] : []),
  ]);
  // Session and window names are whatever someone typed: shown printable, never as raw controls.
  const printable = (table: string[][]): string[][] => table.map((line) => line.map(foldBody));
  if (!options.allSessions) return renderTable(header, printable(cells));
  return renderTable(['Session', ...header], printable(cells.map((line, index) => [rows[index]!.session, ...line])));
}
