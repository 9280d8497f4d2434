/**
 * What `drover web` says over HTTP: the JSON shapes of its API, its stable error codes and the
 * events of its stream. The page is compiled against these same types, so this file imports
 * nothing that needs Node at run time.
 */
import type { AgentStatus, MuxCapability, TopologyLatency } from '../mux/index.js';

/** Stable error codes; the English `message` beside each is the fallback a person reads. */
export const API_ERROR_CODES = [
  'bad_request',
  'unsupported_media_type',
  'payload_too_large',
  'unauthorized',
  'forbidden_host',
  'forbidden_origin',
  'read_only',
  'rate_limited',
  'not_found',
  'method_not_allowed',
  'pairing_required',
  'no_pairing_code',
  'pairing_invalid',
  'pairing_expired',
  'pairing_locked',
  'unsupported',
  'refused',
  'gone',
  'unreachable',
  'server_replaced',
  'host_unreachable',
  'possibly_sent',
  'key_refused',
  'question_changed',
  'pane_busy',
  'multiline_unsupported',
  'fleet_unavailable',
  'fleet_refused',
  'internal',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiError {
  readonly error: { readonly code: ApiErrorCode; readonly message: string } & Readonly<Record<string, unknown>>;
}

/** Where a pane's state came from: the multiplexer's own agent detection, the agent's screen, its hooks, or nothing. */
export type StateSource = 'mux' | 'screen' | 'hook' | 'none';

/** The home page's groups, in the order it shows them. */
export const TRIAGE_GROUPS = ['needs_you', 'finished', 'working', 'idle'] as const;
export type TriageGroup = (typeof TRIAGE_GROUPS)[number];

/** One answer a question offers, sent as keys when its button is pressed. */
export interface QuestionOption {
  readonly label: string;
  readonly keys: readonly string[];
}

/** A question a pane is waiting on. `id` names this question; an answer carrying another id is refused. */
export interface QuestionView {
  readonly id: string;
  /** The line that asks. */
  readonly snippet: string;
  /** What recognised it: an agent's screen rule (`permission_prompt`, `agent_dialog`) or the line scan's class. */
  readonly indicator: string;
  /** The screen rule that matched, null for the line scan. */
  readonly rule: string | null;
  /** Empty when the question wants a typed answer. */
  readonly options: readonly QuestionOption[];
}

export interface SpaceView {
  readonly space_id: string;
  readonly number: number;
  readonly label: string;
  readonly focused: boolean;
  readonly active_tab_id: string | null;
  readonly tab_count: number;
  readonly pane_count: number;
}

export interface TabView {
  readonly tab_id: string;
  readonly space_id: string;
  readonly number: number;
  readonly label: string;
  readonly focused: boolean;
  readonly pane_count: number;
}

export interface PaneView {
  /** The machine the pane is on: `local` for this one, else a host of `drover host list`. */
  readonly host: string;
  /** The pane's id on its own machine. */
  readonly pane_id: string;
  /**
   * The pane for good: `local::MUX::INCARNATION::PANE`, the id plus the run of the multiplexer it
   * lives on; `HOST::MUX::INCARNATION::PANE` for a pane on another host. A write naming a key of an
   * earlier run is refused (`server_replaced`), never sent to whichever pane has that id now.
   */
  readonly pane_key: string;
  /** The row is a host's last known one: the host cannot be reached now, so nothing in it is live. */
  readonly stale: boolean;
  /** How old a stale row is; null for a live one. */
  readonly stale_age_ms: number | null;
  readonly space_id: string;
  readonly space_label: string;
  readonly tab_id: string;
  readonly tab_label: string | null;
  /** A name given through drover. */
  readonly label: string | null;
  /** A title the pane's program wrote. */
  readonly title: string | null;
  /** The title outlived the program that wrote it (titles.ts says how drover tells). */
  readonly title_stale: boolean;
  readonly foreground: string | null;
  readonly cwd: string;
  /** The repository the cwd is in (its main worktree's directory name); null outside git or on a host drover cannot read. */
  readonly repo: string | null;
  /** The branch checked out where the cwd is (7 hex digits when detached); null outside git. */
  readonly branch: string | null;
  /** When its screen last changed while drover web watched; null before the first change seen. */
  readonly changed_at: string | null;
  /** The lowest line of its screen with words on it (an agent's transcript only, not its input box). */
  readonly last_line: string | null;
  readonly focused: boolean;
  readonly alive: boolean;
  /** The agent in the pane, when the multiplexer or drover knows it; null otherwise. */
  readonly agent: string | null;
  /** drover reads this agent's screen, so replies get a delivery receipt. */
  readonly verifiable: boolean;
  readonly state: AgentStatus;
  readonly state_source: StateSource;
  readonly question: QuestionView | null;
  /** Its agent finished a turn that nobody has looked at since. */
  readonly finished_unseen: boolean;
  /** The revision of its screen as last read; null before the first read. */
  readonly revision: string | null;
  readonly group: TriageGroup;
}

/** A restart of the multiplexer drover web saw while it served: another run now answers at the same address. */
export interface RestartView {
  readonly at: string;
  /** The run whose panes are gone; keys carrying it are refused. */
  readonly previous_incarnation: string;
  readonly incarnation: string;
}

/** The run of the multiplexer the panes belong to. */
export interface ServerView {
  /** Every pane_key carries it. */
  readonly incarnation: string;
  /** The last restart seen, null when there was none since drover web started. */
  readonly restarted: RestartView | null;
}

/** One other machine drover web shows, and how its link is. */
export interface HostView {
  readonly name: string;
  /** Its link is up: its panes are live and writes to them go through. */
  readonly reachable: boolean;
  readonly link_state: 'connecting' | 'up' | 'reconnecting' | 'auth_required' | 'incompatible' | 'down';
  /** When it last answered anything; null when never. */
  readonly last_seen_at: string | null;
  readonly latency_ms: number | null;
  /** Its panes shown are its last known ones (it cannot be reached now). */
  readonly stale: boolean;
  readonly stale_age_ms: number | null;
  /** Why it did not answer the last read, and what fixes it when the user must act. */
  readonly error: string | null;
}

export interface SnapshotView {
  readonly generated_at: string;
  readonly server: ServerView;
  /** The id of the last event sent before this snapshot was taken. */
  readonly event_id: string;
  readonly spaces: readonly SpaceView[];
  readonly tabs: readonly TabView[];
  /** This machine's panes, then each host's (see `hosts`). */
  readonly panes: readonly PaneView[];
  /** This machine's pane ids in triage order: needs you, finished, working, idle. */
  readonly triage: readonly string[];
  /** Every pane's key, of every host, in triage order. */
  readonly triage_keys: readonly string[];
  /** The other machines of `drover host list`, each with its link's health; empty when there are none. */
  readonly hosts: readonly HostView[];
  readonly counts: Readonly<Record<TriageGroup, number>>;
}

export interface GridView {
  readonly pane_id: string;
  readonly pane_key: string;
  /** The pane's text with SGR styling kept. */
  readonly text: string;
  readonly revision: string;
  readonly truncated: boolean;
  readonly scope: 'viewport' | 'recent';
  readonly lines: number | null;
}

export interface KeyTrayEntry {
  readonly label: string;
  readonly key: string;
  /** Why this multiplexer cannot send it; null when it can. */
  readonly refused: string | null;
}

export interface ConfigView {
  readonly version: string;
  /** The multiplexer's name, for display only. */
  readonly mux: string;
  readonly read_only: boolean;
  readonly supports: Readonly<Record<MuxCapability, boolean>>;
  readonly unsupported_keys: readonly string[];
  readonly notes: Readonly<Partial<Record<MuxCapability, string>>>;
  readonly topology_latency: TopologyLatency;
  readonly spaces: 'one' | 'many';
  readonly keys_tray: readonly KeyTrayEntry[];
  readonly fleet: { readonly available: boolean; readonly reason: string | null };
}

/** A pane drover web made (a new tab or space). */
export interface CreatedPaneView {
  readonly pane_id: string;
  readonly pane_key: string;
  readonly tab_id: string;
  readonly space_id: string;
}

export interface SessionView {
  readonly name: string;
  /** The session this drover web shows. */
  readonly current: boolean;
}

/** The multiplexer's other sessions, where it keeps several (listSessions). */
export interface SessionsView {
  readonly available: boolean;
  /** Why there is no list: the multiplexer's own note. */
  readonly reason: string | null;
  readonly sessions: readonly SessionView[];
}

export interface DeviceView {
  readonly device_id: string;
  readonly name: string;
  readonly paired_at: string;
}

/**
 * submitted / staged_unconfirmed / failed: drover read the agent's screen before and after
 * (its verified delivery). not_verifiable: drover has no screen rules for what runs in the
 * pane, so the text was typed (and Enter pressed) without a check.
 */
export type ReplyStatus = 'submitted' | 'staged_unconfirmed' | 'failed' | 'not_verifiable';

export interface ReplyReceipt {
  readonly pane_id: string;
  readonly pane_key: string;
  readonly status: ReplyStatus;
  readonly reason: string;
  readonly evidence: string | null;
  readonly agent: string | null;
  readonly chars: number;
  readonly typed: boolean;
  readonly submitted: boolean;
  readonly draft_cleared: string | null;
}

export interface FleetMemberView {
  readonly member_id: number;
  readonly name: string;
  readonly kind: 'director' | 'member';
  readonly coding_agent: string;
  readonly pane: string | null;
  /** The pane with the run of the multiplexer it was placed on; null while pending or for a placement older than drover recording the run. */
  readonly pane_key: string | null;
  /** Its pane was closed. */
  readonly gone: boolean;
  /** Its pane's server was restarted: the pane id now names nothing of the member's, and nothing is typed there. */
  readonly stale: boolean;
}

export interface FleetMessageView {
  readonly message_id: number;
  readonly from_member_id: number;
  readonly from_name: string | null;
  readonly to_member_id: number | null;
  readonly created_at: string;
  readonly status_state: 'input_required' | 'completed';
  readonly text: string;
  readonly notified_at: string | null;
}

export interface FleetView {
  readonly fleet_id: number;
  readonly name: string;
  readonly director_member_id: number | null;
  readonly members: readonly FleetMemberView[];
}

export interface FleetListView {
  readonly available: boolean;
  readonly reason: string | null;
  readonly fleets: readonly FleetView[];
}

export interface InboxView {
  readonly fleet_id: number;
  readonly director_member_id: number;
  /** The Director's messages, unacknowledged first, then the latest acknowledged ones. */
  readonly messages: readonly FleetMessageView[];
}

/** The kinds of event the stream carries. Each is a hint to re-read; the snapshot stays the truth. */
export const EVENT_KINDS = ['topology', 'pane', 'agent', 'question', 'fleet', 'restart', 'host', 'resync'] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export interface EventData {
  readonly topology: Record<string, never>;
  readonly pane: { readonly pane_id: string; readonly pane_key: string; readonly revision: string };
  readonly agent: { readonly pane_id: string; readonly pane_key: string; readonly state: AgentStatus; readonly agent: string | null };
  readonly question: { readonly pane_id: string; readonly pane_key: string; readonly question: QuestionView | null };
  readonly fleet: { readonly fleet_id: number; readonly message_id: number; readonly change: 'message' | 'ack' };
  /** Another run of the multiplexer answers now: every pane of the earlier one is gone. */
  readonly restart: RestartView;
  /** A host's link changed (up, down, reconnecting…): its banner and its panes' staleness with it. */
  readonly host: { readonly name: string; readonly reachable: boolean; readonly link_state: HostView['link_state']; readonly last_seen_at: string | null };
  /** The events asked for are no longer kept (or come from an earlier run): re-read everything. */
  readonly resync: Record<string, never>;
}

/** The keys tray: what a phone needs to steer an agent without a keyboard. */
export const KEY_TRAY: readonly { readonly label: string; readonly key: string }[] = Object.freeze([
  { label: 'Esc', key: 'Escape' },
  { label: 'Ctrl-C', key: 'ctrl+c' },
  { label: '↑', key: 'Up' },
  { label: '↓', key: 'Down' },
  { label: '←', key: 'Left' },
  { label: '→', key: 'Right' },
  { label: 'Tab', key: 'Tab' },
  { label: 'Enter', key: 'Enter' },
  { label: 'y', key: 'y' },
  { label: 'n', key: 'n' },
  ...['1', '2', '3', '4', '5', '6', '7', '8', '9', '0'].map((digit) => ({ label: digit, key: digit })),
]);

/** The device cookie: HttpOnly and SameSite=Strict, so neither script nor another site can use it. */
export const DEVICE_COOKIE = 'drover_device';
