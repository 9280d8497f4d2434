import type Database from 'better-sqlite3';
import { ArgumentError } from '../process/index.js';
import { RegistryNotFoundError, RegistryStateError } from './errors.js';
import {
  CODING_AGENTS,
  DIRECTOR_DESCRIPTION,
  DIRECTOR_NAME,
  PLACEMENT_BACKENDS,
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
import type { FleetStore } from './store.js';

interface FleetRow {
  fleet_id: number;
  name: string;
  created_at: string;
  deleted_at: string | null;
  director_member_id: number | null;
}

interface MemberRow {
  member_id: number;
  fleet_id: number;
  name: string;
  description: string;
  status: Member['status'];
  coding_agent: CodingAgent;
  registered_at: string;
  deregistered_at: string | null;
  is_director: 0 | 1;
  p_backend: Placement['backend'] | null;
  p_session: string | null;
  p_window: string | null;
  p_pane: string | null;
  p_created_at: string | null;
  p_gone_at: string | null;
  p_server: string | null;
  p_stale_at: string | null;
}

interface MessageRow {
  message_id: number;
  owner_member_id: number;
  from_member_id: number;
  to_member_id: number | null;
  type: Message['type'];
  created_at: string;
  status_state: Message['statusState'];
  status_timestamp: string;
  origin_message_id: number | null;
  text: string;
  notified_at: string | null;
}

const MEMBER_SELECT = `
  SELECT m.*, (f.director_member_id = m.member_id) AS is_director,
         p.backend AS p_backend, p.session AS p_session, p.window AS p_window, p.pane AS p_pane, p.created_at AS p_created_at, p.gone_at AS p_gone_at,
         p.server AS p_server, p.stale_at AS p_stale_at
  FROM members m
  JOIN fleets f ON f.fleet_id = m.fleet_id
  LEFT JOIN placements p ON p.member_id = m.member_id`;

/** Messages still owed a pane notification: undelivered rows, not ACKed, not sent to oneself. */
function awaitingNotification(alias: string): string {
  return `${alias}.type = 'unicast' AND ${alias}.status_state = 'input_required' AND ${alias}.notified_at IS NULL
    AND ${alias}.from_member_id != ${alias}.owner_member_id`;
}

function toFleet(row: FleetRow): Fleet {
  return { fleetId: row.fleet_id, name: row.name, createdAt: row.created_at, deletedAt: row.deleted_at, directorMemberId: row.director_member_id };
}

function toMember(row: MemberRow): Member {
  const placement: Placement | null =
    row.p_backend === null
      ? null
      : {
          memberId: row.member_id,
          backend: row.p_backend,
          session: row.p_session!,
          window: row.p_window!,
          pane: row.p_pane,
          createdAt: row.p_created_at!,
          goneAt: row.p_gone_at,
          server: row.p_server,
          staleAt: row.p_stale_at,
        };
  return {
    memberId: row.member_id,
    fleetId: row.fleet_id,
    name: row.name,
    description: row.description,
    status: row.status,
    kind: row.is_director ? 'director' : 'member',
    codingAgent: row.coding_agent,
    registeredAt: row.registered_at,
    deregisteredAt: row.deregistered_at,
    placement,
  };
}

function toMessage(row: MessageRow): Message {
  return {
    messageId: row.message_id,
    ownerMemberId: row.owner_member_id,
    fromMemberId: row.from_member_id,
    toMemberId: row.to_member_id,
    type: row.type,
    createdAt: row.created_at,
    statusState: row.status_state,
    statusTimestamp: row.status_timestamp,
    originMessageId: row.origin_message_id,
    text: row.text,
    notifiedAt: row.notified_at,
  };
}

function requireNonBlank(value: string, what: string): void {
  if (typeof value !== 'string' || value.trim() === '') throw new ArgumentError(`${what} may not be empty.`);
}

/** A message body drover stores: any text that is not blank (line breaks are kept, and folded when typed). */
export function validateMessageText(text: string): void {
  requireNonBlank(text, 'text');
}

function requireId(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new ArgumentError(`${what} must be a positive integer, got ${String(value)}`);
}

function validateCodingAgent(agent: string): asserts agent is CodingAgent {
  if (!(CODING_AGENTS as readonly string[]).includes(agent)) {
    throw new ArgumentError(`coding agent must be one of ${CODING_AGENTS.join(', ')} (got '${agent}')`);
  }
}

function validatePlacement(input: PlacementInput, allowPending: boolean): void {
  if (!(PLACEMENT_BACKENDS as readonly string[]).includes(input.backend)) {
    throw new ArgumentError(`placement backend must be one of ${PLACEMENT_BACKENDS.join(', ')} (got '${input.backend}')`);
  }
  requireNonBlank(input.session, 'placement session');
  requireNonBlank(input.window, 'placement window');
  if (input.pane === null || input.pane === undefined) {
    if (!allowPending) throw new ArgumentError('placement pane may not be empty.');
  } else {
    requireNonBlank(input.pane, 'placement pane');
  }
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

export type StampOutcome = 'stamped' | 'acked' | 'already_notified' | 'missing';

/** An active member's concrete placement, for deletion-time locking. */
export interface ActivePlacement {
  memberId: number;
  placement: ConcretePlacement;
}

export type FleetDeletion = { status: 'deleted'; deregisteredCount: number } | { status: 'placements_changed' };
export type MemberDeregistration = { status: 'deregistered' } | { status: 'placement_changed' };

/**
 * The registry and message broker over the store. Pure of multiplexers: it never starts a
 * process. Each method is one short transaction.
 */
export class Broker {
  readonly store: FleetStore;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(store: FleetStore) {
    this.store = store;
  }

  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.store.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }

  // ---- fleets -------------------------------------------------------------------------

  /** Creates a fleet and its root director (placed in the invoking pane) in one transaction. */
  createFleet(input: { name: string; codingAgent: CodingAgent; directorPlacement: PlacementInput }): { fleet: Fleet; director: Member } {
    requireNonBlank(input.name, 'fleet name');
    validateCodingAgent(input.codingAgent);
    validatePlacement(input.directorPlacement, false);
    const fleetId = this.store.write(() => {
      const now = this.store.timestamp();
      const fleet = this.sql('INSERT INTO fleets (name, created_at) VALUES (?, ?)').run(input.name, now);
      const id = Number(fleet.lastInsertRowid);
      const director = this.sql(
        "INSERT INTO members (fleet_id, name, description, status, coding_agent, registered_at) VALUES (?, ?, ?, 'active', ?, ?)",
      ).run(id, DIRECTOR_NAME, DIRECTOR_DESCRIPTION, input.codingAgent, now);
      const directorId = Number(director.lastInsertRowid);
      this.insertPlacement(directorId, input.directorPlacement, now);
      this.sql('UPDATE fleets SET director_member_id = ? WHERE fleet_id = ?').run(directorId, id);
      return id;
    });
    return this.store.read(() => {
      const fleet = this.fleetRow(fleetId)!;
      return { fleet: toFleet(fleet), director: this.memberRow(fleet.director_member_id!)! };
    });
  }

  /** Fleets not deleted, newest first. */
  listFleets(): FleetSummary[] {
    const rows = this.sql(`
      SELECT f.*, (SELECT count(*) FROM members m WHERE m.fleet_id = f.fleet_id AND m.status = 'active') AS member_count
      FROM fleets f WHERE f.deleted_at IS NULL ORDER BY f.created_at DESC, f.fleet_id ASC`).all() as (FleetRow & { member_count: number })[];
    return rows.map((row) => ({ ...toFleet(row), memberCount: row.member_count }));
  }

  /** One fleet, soft-deleted ones included. */
  getFleet(fleetId: number): Fleet {
    requireId(fleetId, 'fleet id');
    const row = this.fleetRow(fleetId);
    if (!row) throw fleetNotFound(fleetId);
    return toFleet(row);
  }

  /**
   * Soft-deletes a fleet: stamps deleted_at, deregisters every active member (director
   * included) and drops their placements; messages stay. Idempotent. With `expected`, the
   * active placement set is revalidated inside the transaction and nothing changes when it moved.
   */
  deleteFleet(fleetId: number, expected?: readonly ActivePlacement[]): FleetDeletion {
    requireId(fleetId, 'fleet id');
    return this.store.write((): FleetDeletion => {
      const fleet = this.fleetRow(fleetId);
      if (!fleet) throw fleetNotFound(fleetId);
      if (expected && !sameActivePlacements(this.activePlacementsIn(fleetId), expected)) return { status: 'placements_changed' };
      if (fleet.deleted_at !== null) return { status: 'deleted', deregisteredCount: 0 };
      const now = this.store.timestamp();
      this.sql('UPDATE fleets SET deleted_at = ? WHERE fleet_id = ?').run(now, fleetId);
      this.sql("DELETE FROM placements WHERE member_id IN (SELECT member_id FROM members WHERE fleet_id = ? AND status = 'active')").run(fleetId);
      const flipped = this.sql("UPDATE members SET status = 'deregistered', deregistered_at = ? WHERE fleet_id = ? AND status = 'active'").run(now, fleetId);
      return { status: 'deleted', deregisteredCount: flipped.changes };
    });
  }

  /** Active members' concrete placements in a fleet, in member order. */
  activePlacements(fleetId: number): ActivePlacement[] {
    return this.store.read(() => this.activePlacementsIn(fleetId));
  }

  private activePlacementsIn(fleetId: number): ActivePlacement[] {
    const rows = this.sql(`${MEMBER_SELECT} WHERE m.fleet_id = ? AND m.status = 'active' AND p.pane IS NOT NULL ORDER BY m.member_id`).all(fleetId) as MemberRow[];
    return rows.map((row) => ({ memberId: row.member_id, placement: toMember(row).placement as ConcretePlacement }));
  }

  // ---- members ------------------------------------------------------------------------

  /** Registers an ordinary member, with a (usually pending) placement when given. */
  registerMember(input: { fleetId: number; name: string; description?: string; codingAgent: CodingAgent; placement?: PlacementInput }): Member {
    requireId(input.fleetId, 'fleet id');
    requireNonBlank(input.name, 'member name');
    validateCodingAgent(input.codingAgent);
    if (input.placement) validatePlacement(input.placement, true);
    const memberId = this.store.write(() => {
      const fleet = this.fleetRow(input.fleetId);
      if (!fleet) throw fleetNotFound(input.fleetId);
      if (fleet.deleted_at !== null) throw new RegistryStateError(`fleet ${input.fleetId} is deleted`);
      const director = fleet.director_member_id === null ? undefined : this.memberRow(fleet.director_member_id);
      if (director?.status !== 'active') {
        throw new RegistryStateError(`fleet ${input.fleetId}'s root Director (member ${fleet.director_member_id ?? 'none'}) is not active.`);
      }
      const now = this.store.timestamp();
      const inserted = this.sql(
        "INSERT INTO members (fleet_id, name, description, status, coding_agent, registered_at) VALUES (?, ?, ?, 'active', ?, ?)",
      ).run(input.fleetId, input.name, input.description ?? '', input.codingAgent, now);
      const id = Number(inserted.lastInsertRowid);
      if (input.placement) this.insertPlacement(id, input.placement, now);
      return id;
    });
    return this.getMember(memberId);
  }

  /** An active member (the director included). */
  getMember(memberId: number): Member {
    requireId(memberId, 'member id');
    return this.requireActive(memberId);
  }

  /** The active roster of a fleet, director first, with each member's latest message activity. */
  listMembers(fleetId: number): RosterEntry[] {
    this.getFleet(fleetId);
    const rows = this.sql(`
      SELECT m.*, (f.director_member_id = m.member_id) AS is_director,
             p.backend AS p_backend, p.session AS p_session, p.window AS p_window, p.pane AS p_pane, p.created_at AS p_created_at, p.gone_at AS p_gone_at,
             p.server AS p_server, p.stale_at AS p_stale_at,
             (SELECT max(status_timestamp) FROM messages WHERE from_member_id = m.member_id AND type != 'broadcast_summary') AS last_sent,
             (SELECT max(status_timestamp) FROM messages WHERE owner_member_id = m.member_id AND type != 'broadcast_summary') AS last_recv,
             (SELECT max(status_timestamp) FROM messages WHERE owner_member_id = m.member_id AND type != 'broadcast_summary'
                AND status_state = 'completed') AS last_ack
      FROM members m JOIN fleets f ON f.fleet_id = m.fleet_id LEFT JOIN placements p ON p.member_id = m.member_id
      WHERE m.fleet_id = ? AND m.status = 'active'
      ORDER BY is_director DESC, m.member_id`).all(fleetId) as (MemberRow & { last_sent: string | null; last_recv: string | null; last_ack: string | null })[];
    return rows.map((row) => ({ ...toMember(row), lastSent: row.last_sent, lastRecv: row.last_recv, lastAck: row.last_ack }));
  }

  /**
   * Deregisters an ordinary member and drops its placement. The root director is refused.
   * With `expected`, the placement is revalidated in the transaction first.
   */
  deregisterMember(memberId: number, expected?: Placement | null): MemberDeregistration {
    requireId(memberId, 'member id');
    return this.store.write((): MemberDeregistration => {
      const member = this.requireActive(memberId);
      if (member.kind === 'director') throw new RegistryStateError("cannot deregister the root Director; use 'drover fleet delete' instead");
      if (expected !== undefined && !samePlacement(member.placement, expected)) return { status: 'placement_changed' };
      this.sql('DELETE FROM placements WHERE member_id = ?').run(memberId);
      this.sql("UPDATE members SET status = 'deregistered', deregistered_at = ? WHERE member_id = ?").run(this.store.timestamp(), memberId);
      return { status: 'deregistered' };
    });
  }

  /** Creates or replaces an active member's placement. */
  setPlacement(memberId: number, placement: PlacementInput): Placement {
    requireId(memberId, 'member id');
    validatePlacement(placement, true);
    return this.store.write(() => {
      this.requireActive(memberId);
      this.sql('DELETE FROM placements WHERE member_id = ?').run(memberId);
      this.insertPlacement(memberId, placement, this.store.timestamp());
      return this.memberRow(memberId)!.placement!;
    });
  }

  /** Records the pane of a pending placement once the multiplexer has created it. */
  recordPane(memberId: number, pane: string): ConcretePlacement {
    requireId(memberId, 'member id');
    requireNonBlank(pane, 'placement pane');
    return this.store.write(() => {
      this.requireActive(memberId);
      const updated = this.sql('UPDATE placements SET pane = ? WHERE member_id = ?').run(pane, memberId);
      if (updated.changes === 0) throw new RegistryStateError(`member ${memberId} has no placement row; it was not spawned via \`drover member create\`.`);
      return this.memberRow(memberId)!.placement as ConcretePlacement;
    });
  }

  /** Drops an active member's placement; returns whether one existed. */
  clearPlacement(memberId: number): boolean {
    requireId(memberId, 'member id');
    return this.store.write(() => {
      this.requireActive(memberId);
      return this.sql('DELETE FROM placements WHERE member_id = ?').run(memberId).changes > 0;
    });
  }

  // ---- messages -----------------------------------------------------------------------

  /** Persists one unicast message. Delivery into the recipient's pane is a separate step. */
  sendMessage(input: { from: number; to: number; text: string }): Message {
    requireId(input.from, 'sender member id');
    requireId(input.to, 'recipient member id');
    validateMessageText(input.text);
    const messageId = this.store.write(() => {
      const sender = this.activeSender(input.from);
      const recipient = this.memberRow(input.to);
      if (recipient?.status !== 'active') throw new RegistryNotFoundError('member', input.to, `Destination member not found: ${input.to}`);
      if (recipient.fleetId !== sender.fleetId) {
        throw new RegistryStateError(`members ${input.from} and ${input.to} are not in the same fleet.`);
      }
      return this.insertMessage(recipient.memberId, input.from, recipient.memberId, 'unicast', 'input_required', null, input.text);
    });
    return this.messageById(messageId)!;
  }

  /** Persists a broadcast: one summary row owned by the sender plus one row per other active member. */
  broadcastMessage(input: { from: number; text: string }): BroadcastResult {
    requireId(input.from, 'sender member id');
    validateMessageText(input.text);
    const summaryId = this.store.write(() => {
      const sender = this.activeSender(input.from);
      const recipients = this.sql("SELECT member_id FROM members WHERE fleet_id = ? AND status = 'active' AND member_id != ? ORDER BY member_id")
        .all(sender.fleetId, input.from) as { member_id: number }[];
      const summary = this.insertMessage(input.from, input.from, null, 'broadcast_summary', 'completed', null, `Broadcast sent to ${recipients.length} recipients`);
      this.sql('UPDATE messages SET origin_message_id = ? WHERE message_id = ?').run(summary, summary);
      for (const { member_id } of recipients) this.insertMessage(member_id, input.from, member_id, 'unicast', 'input_required', summary, input.text);
      return summary;
    });
    return this.store.read(() => {
      const rows = this.sql('SELECT * FROM messages WHERE origin_message_id = ? ORDER BY message_id').all(summaryId) as MessageRow[];
      const messages = rows.map(toMessage);
      const deliveries = messages.filter((message) => message.type === 'unicast');
      return { summary: messages.find((message) => message.messageId === summaryId)!, deliveries, recipients: deliveries.length };
    });
  }

  /** The member's own un-ACKed deliveries, newest status first. */
  pollMessages(memberId: number): Message[] {
    requireId(memberId, 'member id');
    return this.store.read(() => {
      this.requireActive(memberId);
      const rows = this.sql(`SELECT * FROM messages WHERE owner_member_id = ? AND status_state = 'input_required' AND type != 'broadcast_summary'
        ORDER BY status_timestamp DESC, message_id DESC`).all(memberId) as MessageRow[];
      return rows.map(toMessage);
    });
  }

  /** Completes a delivery. Only its recipient may ACK it, and only while it is input_required. */
  ackMessage(memberId: number, messageId: number): Message {
    requireId(memberId, 'member id');
    requireId(messageId, 'message id');
    this.store.write(() => {
      const member = this.requireActive(memberId);
      const message = this.messageInFleet(messageId, member.fleetId);
      if (message.ownerMemberId !== memberId) throw new RegistryStateError('Only the recipient can ACK a message');
      if (message.statusState !== 'input_required') throw new RegistryStateError(`Cannot ACK message in state ${message.statusState}`);
      this.sql("UPDATE messages SET status_state = 'completed', status_timestamp = ? WHERE message_id = ?").run(this.store.timestamp(), messageId);
    });
    return this.messageById(messageId)!;
  }

  /** One message. With `fleetId`, a message none of whose endpoints is in that fleet is not found. */
  showMessage(messageId: number, fleetId?: number): Message {
    requireId(messageId, 'message id');
    if (fleetId !== undefined) requireId(fleetId, 'fleet id');
    return this.store.read(() => {
      if (fleetId !== undefined) return this.messageInFleet(messageId, fleetId);
      const message = this.messageById(messageId);
      if (!message) throw messageNotFound(messageId);
      return message;
    });
  }

  /**
   * The member's deliveries (pending or not) with ids above `afterMessageId`, oldest first,
   * and the highest message id in the database, from one snapshot: what a listener has not
   * seen yet, and where to look from next time.
   */
  deliveriesAfter(memberId: number, afterMessageId: number): { messages: Message[]; latestMessageId: number } {
    requireId(memberId, 'member id');
    return this.store.read(() => {
      this.requireActive(memberId);
      const rows = this.sql(`SELECT * FROM messages WHERE owner_member_id = ? AND type = 'unicast' AND message_id > ? ORDER BY message_id`).all(
        memberId,
        afterMessageId,
      ) as MessageRow[];
      const latest = this.sql('SELECT coalesce(max(message_id), 0) AS id FROM messages').get() as { id: number };
      return { messages: rows.map(toMessage), latestMessageId: latest.id };
    });
  }

  // ---- delivery -----------------------------------------------------------------------

  /**
   * The recipient's notification eligibility and oldest message awaiting notification, in
   * one consistent read. Only an active ordinary member of `fleetId` with a concrete pane is
   * eligible; the root director never receives pane input.
   */
  deliverySnapshot(recipientId: number, fleetId: number, exclude: ReadonlySet<number> = new Set()): DeliverySnapshot {
    return this.store.read((): DeliverySnapshot => {
      const member = this.memberRow(recipientId);
      const verdict = (eligibility: Eligibility, next: Message | null = null): DeliverySnapshot => ({
        recipientId,
        eligibility,
        placement: eligibility === 'eligible' || eligibility === 'pane_gone' || eligibility === 'server_replaced' ? (member!.placement as ConcretePlacement) : null,
        next,
        codingAgent: member?.codingAgent ?? null,
      });
      if (member?.status !== 'active') return verdict('inactive');
      if (member.fleetId !== fleetId) return verdict('fleet_mismatch');
      if (member.kind === 'director') return verdict('director');
      if (member.placement === null) return verdict('no_placement');
      const next = this.oldestAwaitingNotification(recipientId, exclude);
      if (member.placement.staleAt !== null) return verdict('server_replaced', next);
      if (member.placement.goneAt !== null) return verdict('pane_gone', next);
      return verdict(member.placement.pane === null ? 'pending_placement' : 'eligible', next);
    });
  }

  /**
   * Records that a member's pane was found gone, once: only while the placement still names
   * that pane (a re-placed member is not marked). Its messages stay pending.
   */
  markPaneGone(memberId: number, pane: string): boolean {
    return this.store.write(
      () => this.sql('UPDATE placements SET gone_at = ? WHERE member_id = ? AND pane = ? AND gone_at IS NULL').run(this.store.timestamp(), memberId, pane).changes > 0,
    );
  }

  /**
   * Records that the server a member's pane lived on was found replaced, once: only while the
   * placement still names that pane. Its messages stay pending; nothing is ever sent to the pane id again.
   */
  markServerReplaced(memberId: number, pane: string): boolean {
    return this.store.write(
      () => this.sql('UPDATE placements SET stale_at = ? WHERE member_id = ? AND pane = ? AND stale_at IS NULL').run(this.store.timestamp(), memberId, pane).changes > 0,
    );
  }

  /**
   * Stamps notified_at, but only while the message is still input_required and unstamped.
   * A message ACKed or stamped meanwhile is reported as such; both count as notified.
   */
  stampNotified(messageId: number): StampOutcome {
    return this.store.write((): StampOutcome => {
      const stamped = this.sql("UPDATE messages SET notified_at = ? WHERE message_id = ? AND status_state = 'input_required' AND notified_at IS NULL")
        .run(this.store.timestamp(), messageId);
      if (stamped.changes > 0) return 'stamped';
      const message = this.messageById(messageId);
      if (!message) return 'missing';
      return message.statusState === 'completed' ? 'acked' : 'already_notified';
    });
  }

  /**
   * Ordinary members of a fleet with a concrete pane and messages awaiting notification,
   * oldest waiting first: the candidates a `message wait` rotation retries.
   */
  recipientsAwaitingNotification(fleetId: number, excludeMemberIds: readonly number[] = []): number[] {
    const rows = this.sql(`
      SELECT m.member_id, min(msg.created_at) AS oldest FROM members m
      JOIN fleets f ON f.fleet_id = m.fleet_id
      JOIN placements p ON p.member_id = m.member_id AND p.pane IS NOT NULL AND p.gone_at IS NULL AND p.stale_at IS NULL
      JOIN messages msg ON msg.owner_member_id = m.member_id AND ${awaitingNotification('msg')}
      WHERE m.fleet_id = ? AND m.status = 'active' AND m.member_id != f.director_member_id
        AND m.member_id NOT IN (SELECT value FROM json_each(?))
      GROUP BY m.member_id ORDER BY oldest, m.member_id`).all(fleetId, JSON.stringify(excludeMemberIds)) as { member_id: number }[];
    return rows.map((row) => row.member_id);
  }

  // ---- internals ----------------------------------------------------------------------

  private oldestAwaitingNotification(recipientId: number, exclude: ReadonlySet<number>): Message | null {
    const row = this.sql(`SELECT * FROM messages msg WHERE msg.owner_member_id = ? AND ${awaitingNotification('msg')}
      AND message_id NOT IN (SELECT value FROM json_each(?)) ORDER BY created_at, message_id LIMIT 1`)
      .get(recipientId, JSON.stringify([...exclude])) as MessageRow | undefined;
    return row ? toMessage(row) : null;
  }

  private fleetRow(fleetId: number): FleetRow | undefined {
    return this.sql('SELECT * FROM fleets WHERE fleet_id = ?').get(fleetId) as FleetRow | undefined;
  }

  private memberRow(memberId: number): Member | undefined {
    const row = this.sql(`${MEMBER_SELECT} WHERE m.member_id = ?`).get(memberId) as MemberRow | undefined;
    return row ? toMember(row) : undefined;
  }

  private messageById(messageId: number): Message | undefined {
    const row = this.sql('SELECT * FROM messages WHERE message_id = ?').get(messageId) as MessageRow | undefined;
    return row ? toMessage(row) : undefined;
  }

  /** A message one of whose endpoints is in the fleet; anything else reads as not found. */
  private messageInFleet(messageId: number, fleetId: number): Message {
    const message = this.messageById(messageId);
    if (!message) throw messageNotFound(messageId);
    const endpoints = [message.fromMemberId, ...(message.toMemberId === null ? [] : [message.toMemberId])];
    const inFleet = this.sql(`SELECT 1 FROM members WHERE fleet_id = ? AND member_id IN (SELECT value FROM json_each(?))`).get(fleetId, JSON.stringify(endpoints));
    if (!inFleet) throw messageNotFound(messageId);
    return message;
  }

  private requireActive(memberId: number): Member {
    const member = this.memberRow(memberId);
    if (member?.status !== 'active') throw memberNotFound(memberId);
    return member;
  }

  private activeSender(memberId: number): Member {
    const sender = this.memberRow(memberId);
    if (sender?.status !== 'active') throw new RegistryNotFoundError('member', memberId, `Sender member not found or not active: ${memberId}`);
    return sender;
  }

  private insertPlacement(memberId: number, placement: PlacementInput, now: string): void {
    this.sql('INSERT INTO placements (member_id, backend, session, window, pane, server, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
      memberId,
      placement.backend,
      placement.session,
      placement.window,
      placement.pane ?? null,
      placement.server ?? null,
      now,
    );
  }

  private insertMessage(
    owner: number,
    from: number,
    to: number | null,
    type: Message['type'],
    state: Message['statusState'],
    origin: number | null,
    text: string,
  ): number {
    const now = this.store.timestamp();
    const inserted = this.sql(`INSERT INTO messages (owner_member_id, from_member_id, to_member_id, type, created_at, status_state,
      status_timestamp, origin_message_id, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(owner, from, to, type, now, state, now, origin, text);
    return Number(inserted.lastInsertRowid);
  }
}

/** Whether two reads of a fleet's active placements name the same members in the same panes. */
export function sameActivePlacements(current: readonly ActivePlacement[], expected: readonly ActivePlacement[]): boolean {
  if (current.length !== expected.length) return false;
  const byMember = new Map(expected.map((entry) => [entry.memberId, entry.placement]));
  return current.every((entry) => samePlacement(entry.placement, byMember.get(entry.memberId) ?? null));
}

function fleetNotFound(fleetId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('fleet', fleetId, `fleet '${fleetId}' not found.`);
}

function memberNotFound(memberId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('member', memberId, `Member ${memberId} not found`);
}

function messageNotFound(messageId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('message', messageId, `Message ${messageId} not found`);
}
