/** The records the broker returns. Library fields are camelCase; the CLI renders snake_case JSON. */
import { formatPaneKey, LOCAL_HOST, MUX_NAMES, type MuxName } from '../mux/index.js';
import type { MessageJson } from './json-schemas.js';

export const CODING_AGENTS = Object.freeze(['claude', 'codex', 'gemini', 'opencode', 'shell'] as const);
export type CodingAgent = (typeof CODING_AGENTS)[number];

/** The multiplexers a placement can name: any the mux port drives (a fleet refuses one that lacks what it needs). */
export const PLACEMENT_BACKENDS: readonly MuxName[] = MUX_NAMES;
export type PlacementBackend = MuxName;

export const DIRECTOR_NAME = 'Director';
export const DIRECTOR_DESCRIPTION = 'Root Director for this fleet';

export interface Fleet {
  fleetId: number;
  name: string;
  createdAt: string;
  deletedAt: string | null;
  /** NULL only inside the transaction that bootstraps the fleet. */
  directorMemberId: number | null;
}

export interface FleetSummary extends Fleet {
  /** Active members, the director included. */
  memberCount: number;
}

/** Where a member's pane lives. `pane` is NULL while the pane is being created (pending). */
export interface Placement {
  memberId: number;
  backend: PlacementBackend;
  session: string;
  window: string;
  pane: string | null;
  createdAt: string;
  /** When delivery found the pane gone from its multiplexer; null while it exists (or was never checked). */
  goneAt: string | null;
  /**
   * The run of the multiplexer the pane lives on, its incarnation as the mux port reports it
   * (a tmux server's pid and start time, a herdr session); null for placements recorded before
   * drover kept it.
   */
  server: string | null;
  /**
   * Where that server is reached (a tmux or herdr socket path): the server a command must ask
   * about the pane, whichever one the command itself runs in; null for placements recorded
   * before drover kept it.
   */
  endpoint: string | null;
  /**
   * When drover found that server gone and another one in its place (a tmux server restarted
   * at the same socket reuses pane ids): drover then never acts on the pane id again.
   */
  staleAt: string | null;
  /**
   * The configured host (see `drover host add`) whose multiplexer holds the pane; null for this
   * machine. A pane elsewhere is typed into by that host's own drover, over its link.
   */
  host: string | null;
}

export interface ConcretePlacement extends Placement {
  pane: string;
}

export interface PlacementInput {
  backend: PlacementBackend;
  session: string;
  window: string;
  /** Omitted or null: pending until the pane is recorded. */
  pane?: string | null;
  /** The multiplexer server the pane is (or will be) made on; see Placement.server. */
  server?: string | null;
  /** Where that server is reached; see Placement.endpoint. */
  endpoint?: string | null;
  /** The host the pane is (or will be) on; omitted, null or `local`: this machine. */
  host?: string | null;
}

export type MemberStatus = 'active' | 'deregistered';
/** `director` is the fleet's root director; every other member is ordinary. */
export type MemberKind = 'director' | 'member';

export interface Member {
  memberId: number;
  fleetId: number;
  name: string;
  description: string;
  status: MemberStatus;
  kind: MemberKind;
  codingAgent: CodingAgent;
  registeredAt: string;
  deregisteredAt: string | null;
  placement: Placement | null;
}

/** A roster row: the member plus its latest message activity (broadcast summaries excluded). */
export interface RosterEntry extends Member {
  lastSent: string | null;
  lastRecv: string | null;
  lastAck: string | null;
}

export type MessageType = 'unicast' | 'broadcast_summary';
/** `input_required` until the recipient ACKs; the only transition is to `completed`. */
export type MessageState = 'input_required' | 'completed';

/** One delivery row. A broadcast is one summary row plus one delivery row per recipient. */
export interface Message {
  messageId: number;
  /** The recipient, or the broadcaster for a summary row. */
  ownerMemberId: number;
  fromMemberId: number;
  /** NULL for a broadcast summary. */
  toMemberId: number | null;
  type: MessageType;
  createdAt: string;
  statusState: MessageState;
  statusTimestamp: string;
  /** NULL for a unicast; the summary's id for a broadcast's rows (the summary points at itself). */
  originMessageId: number | null;
  /** Exactly as sent; never truncated. */
  text: string;
  /** When a complete pane submission of this message was stamped; NULL until then. */
  notifiedAt: string | null;
}

export interface BroadcastResult {
  summary: Message;
  deliveries: Message[];
  recipients: number;
}

/** Two placements name the same pane input when their host, backend, session, window, pane and server agree. */
export function samePlacement(a: Placement | null, b: Placement | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.memberId === b.memberId && a.host === b.host && a.backend === b.backend && a.session === b.session && a.window === b.window && a.pane === b.pane && a.server === b.server
  );
}

/** The host a placement names, as stored: null for this machine, however it was spelled. */
export function placementHost(host: string | null | undefined): string | null {
  return host === undefined || host === null || host === LOCAL_HOST ? null : host;
}

/** A placement whose pane is on another host, typed into by that host's drover. */
export function isRemote(placement: Placement): placement is Placement & { host: string } {
  return placement.host !== null;
}

export function isConcrete(placement: Placement | null): placement is ConcretePlacement {
  return placement !== null && placement.pane !== null;
}

/**
 * The pane key of a placement's pane (its host, its multiplexer, the run it lives on, the pane
 * id), which names that pane and no other; null while the pane is pending, or when the
 * placement predates drover recording its server.
 */
export function placementPaneKey(placement: Placement | null): string | null {
  if (placement === null || placement.pane === null || placement.server === null) return null;
  return formatPaneKey({ host: placement.host ?? LOCAL_HOST, mux: placement.backend, incarnation: placement.server, paneId: placement.pane });
}

/** A message as drover prints it in JSON (CLI and MCP alike): snake_case, text exactly as stored. */
export function messageJson(message: Message): MessageJson {
  return {
    message_id: message.messageId,
    owner_member_id: message.ownerMemberId,
    from_member_id: message.fromMemberId,
    to_member_id: message.toMemberId,
    type: message.type,
    created_at: message.createdAt,
    status_state: message.statusState,
    status_timestamp: message.statusTimestamp,
    origin_message_id: message.originMessageId,
    text: message.text,
    notified_at: message.notifiedAt,
  };
}
