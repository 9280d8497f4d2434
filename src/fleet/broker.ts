import {
  samePlacement,
  type BroadcastResult,
  type CodingAgent,
  type ConcretePlacement,
  type Fleet,
  type FleetSummary,
  type Member,
  type Message,
  type Placement,
  type PlacementInput,
  type RosterEntry,
} from './model.js';

/** The stores a fleet's broker can keep its records in. */
export type StoreKind = 'sqlite' | 'postgresql';

export interface SchemaState {
  /** The version found when the store was opened (0: new). */
  openedAt: number;
  /** The version after the migrations applied on open. */
  current: number;
  /** The newest version this drover knows for this kind of store. */
  latest: number;
}

/** Which store a broker works on, as drover may show it: never with a password. */
export interface StoreInfo {
  kind: StoreKind;
  /** The SQLite file, or the PostgreSQL URL with its password masked. */
  location: string;
  /** Opened only to read: nothing is created or changed through it. */
  readOnly: boolean;
  schema: SchemaState;
  /**
   * Set when the store is another machine's, reached through a `drover broker serve` socket
   * (its drover+unix:// URL): the location is then a path or URL on that machine.
   */
  via?: string;
}

/** Why a recipient can or cannot receive pane notifications right now. */
export type Eligibility = 'eligible' | 'inactive' | 'director' | 'fleet_mismatch' | 'no_placement' | 'pending_placement' | 'pane_gone' | 'server_replaced';

/** One short consistent read of a recipient's notification eligibility. */
export interface DeliverySnapshot {
  recipientId: number;
  eligibility: Eligibility;
  /** The concrete placement when eligible, or when its pane (or its pane's server) was found gone. */
  placement: ConcretePlacement | null;
  /** The oldest message awaiting notification, by (created_at, message_id), not in `exclude`. */
  next: Message | null;
  /** The recipient's coding agent (null when the recipient is unknown). */
  codingAgent: CodingAgent | null;
}

export interface ClaimRequest {
  /** Messages this dispatcher has attempted already: never claimed again by it. */
  exclude: ReadonlySet<number>;
  /** Who claims: `HOST/…`, unique to one dispatching process. */
  claimant: string;
  /**
   * Claims whose claimant starts with this are void: the caller holds the pane input lock
   * they were made under, so whoever made them has died or let go (the host's own prefix).
   */
  voids: string;
  /** How long the claim stands if it is neither stamped nor released. */
  leaseMs: number;
}

/**
 * A delivery snapshot whose `next` message is now claimed by the caller until it stamps or
 * releases it (or the lease runs out). When the recipient's oldest message is claimed by
 * another dispatcher, `next` is null and `claimedElsewhere` names that message: messages go
 * to a pane in order, so nothing younger is claimed past it.
 */
export interface DeliveryClaim extends DeliverySnapshot {
  claimedElsewhere: Message | null;
  /**
   * `next` carried a claim that was neither stamped nor released (its dispatcher died, or
   * could not stamp a line it had submitted): that delivery may have typed or submitted its
   * line, so the pane is read for it before the line is typed again.
   */
  earlierAttempt: boolean;
}

export type StampOutcome = 'stamped' | 'acked' | 'already_notified' | 'missing';

/** An active member's concrete placement, for deletion-time locking. */
export interface ActivePlacement {
  memberId: number;
  placement: ConcretePlacement;
}

export type FleetDeletion = { status: 'deleted'; deregisteredCount: number } | { status: 'placements_changed' };
export type MemberDeregistration = { status: 'deregistered' } | { status: 'placement_changed' };

export interface SendInput {
  from: number;
  to: number;
  text: string;
  /**
   * The client's key for this send: a retry with the same key (after a lost reply, a cut link,
   * a crash) returns the message the first attempt stored and never stores a second one.
   */
  idempotencyKey?: string;
}

export interface BroadcastInput {
  from: number;
  text: string;
  /** As for a send: one key, one broadcast. */
  idempotencyKey?: string;
}

/**
 * Tells a waiting dispatcher or listener that the store changed. A store that can signal
 * (PostgreSQL) wakes it on a change; one that cannot (SQLite) lets it look again after `pollMs`.
 */
export interface ChangeWatch {
  /**
   * Resolves when a change was reported since the previous call (or since the watch began),
   * or after `timeoutMs`, or when `signal` aborts. It never rejects: a store whose signal was
   * lost resolves after a short bounded wait instead, so the caller reads again.
   */
  next(timeoutMs: number, signal?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export interface WatchOptions {
  /** Only changes in this fleet wake the watch (default: any). */
  fleetId?: number;
  /** How often a store that cannot signal is read again (default 250 ms). */
  pollMs?: number;
}

/**
 * The fleet's registry and message broker: one interface over every store drover keeps
 * fleets in. Each call is one short transaction; none waits on a pane or a process. The pane
 * input lock is not the store's: delivery takes it around these calls. A store that stays
 * busy or cannot be reached fails a call with StoreUnavailableError; bad input fails with
 * ArgumentError before anything is read.
 */
export interface Broker {
  readonly store: StoreInfo;
  /** The current time as stored in every timestamp column. */
  timestamp(): string;
  /** This broker with every call waiting at most `ms` for a busy or unreachable store. */
  within(ms: number): Broker;
  /** What a process started for a member (its pane) needs in its environment to reach this same store. */
  connectionEnvironment(): Record<string, string>;
  watch(options?: WatchOptions): Promise<ChangeWatch>;
  close(): Promise<void>;

  // fleets
  /** Creates a fleet and its root director (placed in the invoking pane) in one transaction. */
  createFleet(input: { name: string; codingAgent: CodingAgent; directorPlacement: PlacementInput }): Promise<{ fleet: Fleet; director: Member }>;
  /** Fleets not deleted, newest first. */
  listFleets(): Promise<FleetSummary[]>;
  /** One fleet, soft-deleted ones included. */
  getFleet(fleetId: number): Promise<Fleet>;
  /**
   * Soft-deletes a fleet: stamps deleted_at, deregisters every active member (director
   * included) and drops their placements; messages stay. Idempotent. With `expected`, the
   * active placement set is revalidated inside the transaction and nothing changes when it moved.
   */
  deleteFleet(fleetId: number, expected?: readonly ActivePlacement[]): Promise<FleetDeletion>;
  /** Active members' concrete placements in a fleet, in member order. */
  activePlacements(fleetId: number): Promise<ActivePlacement[]>;
  /** Active members of every fleet placed in one pane, by multiplexer and pane id (on any host or run), in member order. */
  placementsInPane(backend: Placement['backend'], pane: string): Promise<ActivePlacement[]>;

  // members and placements
  /** Registers an ordinary member, with a (usually pending) placement when given. */
  registerMember(input: { fleetId: number; name: string; description?: string; codingAgent: CodingAgent; placement?: PlacementInput }): Promise<Member>;
  /** An active member (the director included). */
  getMember(memberId: number): Promise<Member>;
  /** The active roster of a fleet, director first, with each member's latest message activity. */
  listMembers(fleetId: number): Promise<RosterEntry[]>;
  /**
   * Deregisters an ordinary member and drops its placement. The root director is refused.
   * With `expected`, the placement is revalidated in the transaction first.
   */
  deregisterMember(memberId: number, expected?: Placement | null): Promise<MemberDeregistration>;
  /** Creates or replaces an active member's placement. */
  setPlacement(memberId: number, placement: PlacementInput): Promise<Placement>;
  /** Records the pane of a pending placement once the multiplexer has created it. */
  recordPane(memberId: number, pane: string): Promise<ConcretePlacement>;
  /** Drops an active member's placement; returns whether one existed. */
  clearPlacement(memberId: number): Promise<boolean>;
  /**
   * Records that a member's pane was found gone, once: only while the placement still names
   * that pane (a re-placed member is not marked). Its messages stay pending.
   */
  markPaneGone(memberId: number, pane: string): Promise<boolean>;
  /**
   * Records that the server a member's pane lived on was found replaced, once: only while the
   * placement still names that pane. Its messages stay pending; nothing is ever sent to the pane id again.
   */
  markServerReplaced(memberId: number, pane: string): Promise<boolean>;

  // messages
  /** Persists one unicast message. Delivery into the recipient's pane is a separate step. */
  sendMessage(input: SendInput): Promise<Message>;
  /** Persists a broadcast: one summary row owned by the sender plus one row per other active member. */
  broadcastMessage(input: BroadcastInput): Promise<BroadcastResult>;
  /** The member's own un-ACKed deliveries, newest status first. */
  pollMessages(memberId: number): Promise<Message[]>;
  /** Completes a delivery. Only its recipient may ACK it, and only while it is input_required. */
  ackMessage(memberId: number, messageId: number): Promise<Message>;
  /** One message. With `fleetId`, a message none of whose endpoints is in that fleet is not found. */
  showMessage(messageId: number, fleetId?: number): Promise<Message>;
  /**
   * The member's deliveries (pending or not) with ids above `afterMessageId`, oldest first,
   * and the highest message id stored, from one snapshot: what a listener has not seen yet,
   * and where to look from next time. Ids are committed in order, so none is passed over.
   */
  deliveriesAfter(memberId: number, afterMessageId: number): Promise<{ messages: Message[]; latestMessageId: number }>;

  // delivery
  /**
   * The recipient's notification eligibility and oldest message awaiting notification, in
   * one consistent read. Only an active ordinary member of `fleetId` with a concrete pane is
   * eligible; the root director never receives pane input.
   */
  deliverySnapshot(recipientId: number, fleetId: number, exclude?: ReadonlySet<number>): Promise<DeliverySnapshot>;
  /** The snapshot, with its oldest message claimed for delivery by the caller (see DeliveryClaim). */
  claimNext(recipientId: number, fleetId: number, request: ClaimRequest): Promise<DeliveryClaim>;
  /** Gives up a claim the caller holds (a failed attempt); a claim held by another is left alone. */
  releaseClaim(messageId: number, claimant: string): Promise<void>;
  /**
   * Stamps notified_at (and ends any claim), but only while the message is still
   * input_required and unstamped. A message ACKed or stamped meanwhile is reported as such;
   * both count as notified.
   */
  stampNotified(messageId: number): Promise<StampOutcome>;
  /**
   * Ordinary members of a fleet with a concrete pane and messages awaiting notification,
   * oldest waiting first: the candidates a `message wait` rotation retries.
   */
  recipientsAwaitingNotification(fleetId: number, excludeMemberIds?: readonly number[]): Promise<number[]>;
}

/** Whether two reads of a fleet's active placements name the same members in the same panes. */
export function sameActivePlacements(current: readonly ActivePlacement[], expected: readonly ActivePlacement[]): boolean {
  if (current.length !== expected.length) return false;
  const byMember = new Map(expected.map((entry) => [entry.memberId, entry.placement]));
  return current.every((entry) => samePlacement(entry.placement, byMember.get(entry.memberId) ?? null));
}
