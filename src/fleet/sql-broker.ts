import { ArgumentError } from '../process/index.js';
import type {
  ActivePlacement,
  BroadcastInput,
  Broker,
  ChangeWatch,
  ClaimRequest,
  DeliveryClaim,
  DeliverySnapshot,
  Eligibility,
  FleetDeletion,
  MemberDeregistration,
  SendInput,
  StampOutcome,
  StoreInfo,
  WatchOptions,
} from './broker.js';
import { sameActivePlacements } from './broker.js';
import { formatTimestamp, wallMicros } from './clock.js';
import { fleetNotFound, RegistryNotFoundError, RegistryStateError } from './errors.js';
import {
  CODING_AGENTS,
  DIRECTOR_DESCRIPTION,
  DIRECTOR_NAME,
  PLACEMENT_BACKENDS,
  placementHost,
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
import type { SqlStore, SqlTransaction } from './sql.js';

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
  /** 0/1 from SQLite, a boolean from PostgreSQL. */
  is_director: number | boolean;
  p_backend: Placement['backend'] | null;
  p_session: string | null;
  p_window: string | null;
  p_pane: string | null;
  p_created_at: string | null;
  p_gone_at: string | null;
  p_server: string | null;
  p_stale_at: string | null;
  p_endpoint: string | null;
  p_host: string | null;
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
  idempotency_key: string | null;
  claimed_by: string | null;
  claimed_until: string | null;
}

const MEMBER_COLUMNS = `m.member_id, m.fleet_id, m.name, m.description, m.status, m.coding_agent, m.registered_at, m.deregistered_at,
  (f.director_member_id = m.member_id) AS is_director,
  p.backend AS p_backend, p.session AS p_session, p.window AS p_window, p.pane AS p_pane, p.created_at AS p_created_at, p.gone_at AS p_gone_at,
  p.server AS p_server, p.endpoint AS p_endpoint, p.stale_at AS p_stale_at, p.host AS p_host`;

const MEMBER_SELECT = `
  SELECT ${MEMBER_COLUMNS}
  FROM members m
  JOIN fleets f ON f.fleet_id = m.fleet_id
  LEFT JOIN placements p ON p.member_id = m.member_id`;

const MESSAGE_INSERT = `INSERT INTO messages (owner_member_id, from_member_id, to_member_id, type, created_at, status_state,
  status_timestamp, origin_message_id, text, idempotency_key) VALUES ($1, $2, $3, $4, $5, $6, $5, $7, $8, $9) RETURNING message_id`;

/** Messages still owed a pane notification: undelivered rows, not ACKed, not sent to oneself. */
function awaitingNotification(alias: string): string {
  return `${alias}.type = 'unicast' AND ${alias}.status_state = 'input_required' AND ${alias}.notified_at IS NULL
    AND ${alias}.from_member_id != ${alias}.owner_member_id`;
}

function toFleet(row: FleetRow): Fleet {
  return { fleetId: row.fleet_id, name: row.name, createdAt: row.created_at, deletedAt: row.deleted_at, directorMemberId: row.director_member_id };
}

function toActivePlacements(rows: readonly MemberRow[]): ActivePlacement[] {
  return rows.map((row) => ({ memberId: row.member_id, placement: toMember(row).placement as ConcretePlacement }));
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
          endpoint: row.p_endpoint,
          staleAt: row.p_stale_at,
          host: row.p_host,
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

/** The longest idempotency key a client may give. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 200;

/** A client's idempotency key: 1 to 200 printable characters. */
export function validateIdempotencyKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || /[\p{Cc}]/u.test(key)) {
    throw new ArgumentError(`idempotency key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters without control characters (got ${JSON.stringify(key)})`);
  }
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
  if (input.host !== undefined && input.host !== null) requireNonBlank(input.host, 'placement host');
}

/** The same key again, for another message: a client bug that must not pass as a retry. */
function keyReused(key: string, messageId: number): RegistryStateError {
  return new RegistryStateError(`idempotency key ${JSON.stringify(key)} was already used for message ${messageId}, which differs from this one`);
}

export interface SqlBrokerOptions {
  /** Wall-clock microseconds for timestamps; injectable for tests. */
  wallMicros?: () => number;
}

/**
 * The broker over a SQL store: the registry and message rules written once, for SQLite and
 * PostgreSQL alike. Pure of multiplexers: it never starts a process.
 */
export class SqlBroker implements Broker {
  readonly sql: SqlStore;
  private readonly clock: () => number;
  /** How long each call waits for a busy or unreachable store; the store's own default when unset. */
  private timeoutMs: number | undefined;

  constructor(store: SqlStore, options: SqlBrokerOptions = {}) {
    this.sql = store;
    this.clock = options.wallMicros ?? wallMicros;
  }

  get store(): StoreInfo {
    return this.sql.info;
  }

  timestamp(): string {
    return formatTimestamp(this.clock());
  }

  /** A view of this broker (its class and store included) whose calls wait at most `ms`. */
  within(ms: number): Broker {
    const bounded = Object.create(this) as SqlBroker;
    bounded.timeoutMs = Math.max(0, Math.floor(ms));
    return bounded;
  }

  connectionEnvironment(): Record<string, string> {
    return this.sql.connectionEnvironment();
  }

  watch(options: WatchOptions = {}): Promise<ChangeWatch> {
    return this.sql.watch(options);
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  private read<T>(body: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.sql.transaction('read', body, this.timeoutMs);
  }

  private write<T>(body: (tx: SqlTransaction) => Promise<T>): Promise<T> {
    return this.sql.transaction('write', body, this.timeoutMs);
  }

  // ---- fleets -------------------------------------------------------------------------

  async createFleet(input: { name: string; codingAgent: CodingAgent; directorPlacement: PlacementInput }): Promise<{ fleet: Fleet; director: Member }> {
    requireNonBlank(input.name, 'fleet name');
    validateCodingAgent(input.codingAgent);
    validatePlacement(input.directorPlacement, false);
    return this.write(async (tx) => {
      const now = this.timestamp();
      const { fleet_id: fleetId } = (await tx.get<{ fleet_id: number }>('INSERT INTO fleets (name, created_at) VALUES ($1, $2) RETURNING fleet_id', [input.name, now]))!;
      const { member_id: directorId } = (await tx.get<{ member_id: number }>(
        "INSERT INTO members (fleet_id, name, description, status, coding_agent, registered_at) VALUES ($1, $2, $3, 'active', $4, $5) RETURNING member_id",
        [fleetId, DIRECTOR_NAME, DIRECTOR_DESCRIPTION, input.codingAgent, now],
      ))!;
      await this.insertPlacement(tx, directorId, input.directorPlacement, now);
      await tx.run('UPDATE fleets SET director_member_id = $1 WHERE fleet_id = $2', [directorId, fleetId]);
      tx.announce(fleetId);
      return { fleet: toFleet((await this.fleetRow(tx, fleetId))!), director: (await this.memberRow(tx, directorId))! };
    });
  }

  async listFleets(): Promise<FleetSummary[]> {
    const rows = await this.read((tx) =>
      tx.all<FleetRow & { member_count: number }>(`
        SELECT f.*, (SELECT count(*) FROM members m WHERE m.fleet_id = f.fleet_id AND m.status = 'active') AS member_count
        FROM fleets f WHERE f.deleted_at IS NULL ORDER BY f.created_at DESC, f.fleet_id ASC`),
    );
    return rows.map((row) => ({ ...toFleet(row), memberCount: Number(row.member_count) }));
  }

  async getFleet(fleetId: number): Promise<Fleet> {
    requireId(fleetId, 'fleet id');
    const row = await this.read((tx) => this.fleetRow(tx, fleetId));
    if (!row) throw fleetNotFound(fleetId);
    return toFleet(row);
  }

  async deleteFleet(fleetId: number, expected?: readonly ActivePlacement[]): Promise<FleetDeletion> {
    requireId(fleetId, 'fleet id');
    return this.write(async (tx): Promise<FleetDeletion> => {
      const fleet = await this.fleetRow(tx, fleetId);
      if (!fleet) throw fleetNotFound(fleetId);
      if (expected && !sameActivePlacements(await this.activePlacementsIn(tx, fleetId), expected)) return { status: 'placements_changed' };
      if (fleet.deleted_at !== null) return { status: 'deleted', deregisteredCount: 0 };
      const now = this.timestamp();
      await tx.run('UPDATE fleets SET deleted_at = $1 WHERE fleet_id = $2', [now, fleetId]);
      await tx.run("DELETE FROM placements WHERE member_id IN (SELECT member_id FROM members WHERE fleet_id = $1 AND status = 'active')", [fleetId]);
      const flipped = await tx.run("UPDATE members SET status = 'deregistered', deregistered_at = $1 WHERE fleet_id = $2 AND status = 'active'", [now, fleetId]);
      tx.announce(fleetId);
      return { status: 'deleted', deregisteredCount: flipped };
    });
  }

  activePlacements(fleetId: number): Promise<ActivePlacement[]> {
    return this.read((tx) => this.activePlacementsIn(tx, fleetId));
  }

  placementsInPane(backend: Placement['backend'], pane: string): Promise<ActivePlacement[]> {
    return this.read(async (tx) =>
      toActivePlacements(await tx.all<MemberRow>(`${MEMBER_SELECT} WHERE m.status = 'active' AND p.backend = $1 AND p.pane = $2 ORDER BY m.member_id`, [backend, pane])),
    );
  }

  private async activePlacementsIn(tx: SqlTransaction, fleetId: number): Promise<ActivePlacement[]> {
    return toActivePlacements(await tx.all<MemberRow>(`${MEMBER_SELECT} WHERE m.fleet_id = $1 AND m.status = 'active' AND p.pane IS NOT NULL ORDER BY m.member_id`, [fleetId]));
  }

  // ---- members ------------------------------------------------------------------------

  async registerMember(input: { fleetId: number; name: string; description?: string; codingAgent: CodingAgent; placement?: PlacementInput }): Promise<Member> {
    requireId(input.fleetId, 'fleet id');
    requireNonBlank(input.name, 'member name');
    validateCodingAgent(input.codingAgent);
    if (input.placement) validatePlacement(input.placement, true);
    return this.write(async (tx) => {
      const fleet = await this.fleetRow(tx, input.fleetId);
      if (!fleet) throw fleetNotFound(input.fleetId);
      if (fleet.deleted_at !== null) throw new RegistryStateError(`fleet ${input.fleetId} is deleted`);
      const director = fleet.director_member_id === null ? undefined : await this.memberRow(tx, fleet.director_member_id);
      if (director?.status !== 'active') {
        throw new RegistryStateError(`fleet ${input.fleetId}'s root Director (member ${fleet.director_member_id ?? 'none'}) is not active.`);
      }
      const now = this.timestamp();
      const { member_id: id } = (await tx.get<{ member_id: number }>(
        "INSERT INTO members (fleet_id, name, description, status, coding_agent, registered_at) VALUES ($1, $2, $3, 'active', $4, $5) RETURNING member_id",
        [input.fleetId, input.name, input.description ?? '', input.codingAgent, now],
      ))!;
      if (input.placement) await this.insertPlacement(tx, id, input.placement, now);
      tx.announce(input.fleetId);
      return (await this.memberRow(tx, id))!;
    });
  }

  async getMember(memberId: number): Promise<Member> {
    requireId(memberId, 'member id');
    return this.read((tx) => this.requireActive(tx, memberId));
  }

  async listMembers(fleetId: number): Promise<RosterEntry[]> {
    requireId(fleetId, 'fleet id');
    return this.read(async (tx) => {
      if (!(await this.fleetRow(tx, fleetId))) throw fleetNotFound(fleetId);
      const rows = await tx.all<MemberRow & { last_sent: string | null; last_recv: string | null; last_ack: string | null }>(
        `
        SELECT ${MEMBER_COLUMNS},
               (SELECT max(status_timestamp) FROM messages WHERE from_member_id = m.member_id AND type != 'broadcast_summary') AS last_sent,
               (SELECT max(status_timestamp) FROM messages WHERE owner_member_id = m.member_id AND type != 'broadcast_summary') AS last_recv,
               (SELECT max(status_timestamp) FROM messages WHERE owner_member_id = m.member_id AND type != 'broadcast_summary'
                  AND status_state = 'completed') AS last_ack
        FROM members m JOIN fleets f ON f.fleet_id = m.fleet_id LEFT JOIN placements p ON p.member_id = m.member_id
        WHERE m.fleet_id = $1 AND m.status = 'active'
        ORDER BY is_director DESC, m.member_id`,
        [fleetId],
      );
      return rows.map((row) => ({ ...toMember(row), lastSent: row.last_sent, lastRecv: row.last_recv, lastAck: row.last_ack }));
    });
  }

  async deregisterMember(memberId: number, expected?: Placement | null): Promise<MemberDeregistration> {
    requireId(memberId, 'member id');
    return this.write(async (tx): Promise<MemberDeregistration> => {
      const member = await this.requireActive(tx, memberId);
      if (member.kind === 'director') throw new RegistryStateError("cannot deregister the root Director; use 'drover fleet delete' instead");
      if (expected !== undefined && !samePlacement(member.placement, expected)) return { status: 'placement_changed' };
      await tx.run('DELETE FROM placements WHERE member_id = $1', [memberId]);
      await tx.run("UPDATE members SET status = 'deregistered', deregistered_at = $1 WHERE member_id = $2", [this.timestamp(), memberId]);
      tx.announce(member.fleetId);
      return { status: 'deregistered' };
    });
  }

  async setPlacement(memberId: number, placement: PlacementInput): Promise<Placement> {
    requireId(memberId, 'member id');
    validatePlacement(placement, true);
    return this.write(async (tx) => {
      const member = await this.requireActive(tx, memberId);
      await tx.run('DELETE FROM placements WHERE member_id = $1', [memberId]);
      await this.insertPlacement(tx, memberId, placement, this.timestamp());
      tx.announce(member.fleetId);
      return (await this.memberRow(tx, memberId))!.placement!;
    });
  }

  async recordPane(memberId: number, pane: string): Promise<ConcretePlacement> {
    requireId(memberId, 'member id');
    requireNonBlank(pane, 'placement pane');
    return this.write(async (tx) => {
      const member = await this.requireActive(tx, memberId);
      const updated = await tx.run('UPDATE placements SET pane = $1 WHERE member_id = $2', [pane, memberId]);
      if (updated === 0) throw new RegistryStateError(`member ${memberId} has no placement row; it was not spawned via \`drover member create\`.`);
      tx.announce(member.fleetId);
      return (await this.memberRow(tx, memberId))!.placement as ConcretePlacement;
    });
  }

  async clearPlacement(memberId: number): Promise<boolean> {
    requireId(memberId, 'member id');
    return this.write(async (tx) => {
      await this.requireActive(tx, memberId);
      return (await tx.run('DELETE FROM placements WHERE member_id = $1', [memberId])) > 0;
    });
  }

  markPaneGone(memberId: number, pane: string): Promise<boolean> {
    return this.write(async (tx) => (await tx.run('UPDATE placements SET gone_at = $1 WHERE member_id = $2 AND pane = $3 AND gone_at IS NULL', [this.timestamp(), memberId, pane])) > 0);
  }

  markServerReplaced(memberId: number, pane: string): Promise<boolean> {
    return this.write(async (tx) => (await tx.run('UPDATE placements SET stale_at = $1 WHERE member_id = $2 AND pane = $3 AND stale_at IS NULL', [this.timestamp(), memberId, pane])) > 0);
  }

  // ---- messages -----------------------------------------------------------------------

  async sendMessage(input: SendInput): Promise<Message> {
    requireId(input.from, 'sender member id');
    requireId(input.to, 'recipient member id');
    validateMessageText(input.text);
    if (input.idempotencyKey !== undefined) validateIdempotencyKey(input.idempotencyKey);
    return this.write(async (tx) => {
      if (this.sql.dialect.serializeMessages !== '') await tx.run(this.sql.dialect.serializeMessages);
      const key = input.idempotencyKey ?? null;
      const earlier = key === null ? undefined : await this.messageByKey(tx, input.from, key);
      if (earlier) {
        if (earlier.type !== 'unicast' || earlier.owner_member_id !== input.to || earlier.text !== input.text) throw keyReused(key!, earlier.message_id);
        return toMessage(earlier);
      }
      const sender = await this.activeSender(tx, input.from);
      const recipient = await this.memberRow(tx, input.to);
      if (recipient?.status !== 'active') throw new RegistryNotFoundError('member', input.to, `Destination member not found: ${input.to}`);
      if (recipient.fleetId !== sender.fleetId) {
        throw new RegistryStateError(`members ${input.from} and ${input.to} are not in the same fleet.`);
      }
      const id = await this.insertMessage(tx, recipient.memberId, input.from, recipient.memberId, 'unicast', 'input_required', null, input.text, key);
      tx.announce(sender.fleetId);
      return (await this.messageById(tx, id))!;
    });
  }

  async broadcastMessage(input: BroadcastInput): Promise<BroadcastResult> {
    requireId(input.from, 'sender member id');
    validateMessageText(input.text);
    if (input.idempotencyKey !== undefined) validateIdempotencyKey(input.idempotencyKey);
    return this.write(async (tx) => {
      if (this.sql.dialect.serializeMessages !== '') await tx.run(this.sql.dialect.serializeMessages);
      const key = input.idempotencyKey ?? null;
      const earlier = key === null ? undefined : await this.messageByKey(tx, input.from, key);
      let summaryId: number;
      if (earlier) {
        if (earlier.type !== 'broadcast_summary') throw keyReused(key!, earlier.message_id);
        const delivery = await tx.get<MessageRow>("SELECT * FROM messages WHERE origin_message_id = $1 AND type = 'unicast' LIMIT 1", [earlier.message_id]);
        if (delivery !== undefined && delivery.text !== input.text) throw keyReused(key!, earlier.message_id);
        summaryId = earlier.message_id;
      } else {
        const sender = await this.activeSender(tx, input.from);
        const recipients = await tx.all<{ member_id: number }>(
          "SELECT member_id FROM members WHERE fleet_id = $1 AND status = 'active' AND member_id != $2 ORDER BY member_id",
          [sender.fleetId, input.from],
        );
        summaryId = await this.insertMessage(tx, input.from, input.from, null, 'broadcast_summary', 'completed', null, `Broadcast sent to ${recipients.length} recipients`, key);
        await tx.run('UPDATE messages SET origin_message_id = $1 WHERE message_id = $1', [summaryId]);
        for (const { member_id } of recipients) await this.insertMessage(tx, member_id, input.from, member_id, 'unicast', 'input_required', summaryId, input.text, null);
        tx.announce(sender.fleetId);
      }
      const messages = (await tx.all<MessageRow>('SELECT * FROM messages WHERE origin_message_id = $1 ORDER BY message_id', [summaryId])).map(toMessage);
      const deliveries = messages.filter((message) => message.type === 'unicast');
      return { summary: messages.find((message) => message.messageId === summaryId)!, deliveries, recipients: deliveries.length };
    });
  }

  async pollMessages(memberId: number): Promise<Message[]> {
    requireId(memberId, 'member id');
    return this.read(async (tx) => {
      await this.requireActive(tx, memberId);
      const rows = await tx.all<MessageRow>(
        `SELECT * FROM messages WHERE owner_member_id = $1 AND status_state = 'input_required' AND type != 'broadcast_summary'
        ORDER BY status_timestamp DESC, message_id DESC`,
        [memberId],
      );
      return rows.map(toMessage);
    });
  }

  async ackMessage(memberId: number, messageId: number): Promise<Message> {
    requireId(memberId, 'member id');
    requireId(messageId, 'message id');
    return this.write(async (tx) => {
      const member = await this.requireActive(tx, memberId);
      const message = await this.messageInFleet(tx, messageId, member.fleetId);
      if (message.ownerMemberId !== memberId) throw new RegistryStateError('Only the recipient can ACK a message');
      if (message.statusState !== 'input_required') throw new RegistryStateError(`Cannot ACK message in state ${message.statusState}`);
      await tx.run("UPDATE messages SET status_state = 'completed', status_timestamp = $1, claimed_by = NULL, claimed_until = NULL WHERE message_id = $2", [
        this.timestamp(),
        messageId,
      ]);
      tx.announce(member.fleetId);
      return (await this.messageById(tx, messageId))!;
    });
  }

  async showMessage(messageId: number, fleetId?: number): Promise<Message> {
    requireId(messageId, 'message id');
    if (fleetId !== undefined) requireId(fleetId, 'fleet id');
    return this.read(async (tx) => {
      if (fleetId !== undefined) return this.messageInFleet(tx, messageId, fleetId);
      const message = await this.messageById(tx, messageId);
      if (!message) throw messageNotFound(messageId);
      return message;
    });
  }

  async deliveriesAfter(memberId: number, afterMessageId: number): Promise<{ messages: Message[]; latestMessageId: number }> {
    requireId(memberId, 'member id');
    return this.read(async (tx) => {
      await this.requireActive(tx, memberId);
      const rows = await tx.all<MessageRow>("SELECT * FROM messages WHERE owner_member_id = $1 AND type = 'unicast' AND message_id > $2 ORDER BY message_id", [
        memberId,
        afterMessageId,
      ]);
      const latest = await tx.get<{ id: number }>('SELECT coalesce(max(message_id), 0) AS id FROM messages');
      return { messages: rows.map(toMessage), latestMessageId: Number(latest!.id) };
    });
  }

  // ---- delivery -----------------------------------------------------------------------

  deliverySnapshot(recipientId: number, fleetId: number, exclude: ReadonlySet<number> = new Set()): Promise<DeliverySnapshot> {
    return this.read((tx) => this.snapshotIn(tx, recipientId, fleetId, exclude));
  }

  claimNext(recipientId: number, fleetId: number, request: ClaimRequest): Promise<DeliveryClaim> {
    return this.write(async (tx): Promise<DeliveryClaim> => {
      const snapshot = await this.snapshotIn(tx, recipientId, fleetId, request.exclude);
      const head = snapshot.next;
      if (head === null || snapshot.eligibility !== 'eligible') return { ...snapshot, claimedElsewhere: null, earlierAttempt: false };
      const elsewhere = { ...snapshot, next: null, claimedElsewhere: head, earlierAttempt: false };
      // Claims of one recipient are made one at a time; another dispatcher's claim in progress is not waited for.
      if ((await tx.get(`SELECT member_id FROM members WHERE member_id = $1 ${this.sql.dialect.skipLocked}`, [recipientId])) === undefined) return elsewhere;
      const now = this.timestamp();
      const claim = await tx.get<{ claimed_by: string | null; claimed_until: string | null }>('SELECT claimed_by, claimed_until FROM messages WHERE message_id = $1', [head.messageId]);
      const held = claim?.claimed_by != null && claim.claimed_by !== request.claimant && !claim.claimed_by.startsWith(request.voids) && claim.claimed_until! > now;
      if (held) return elsewhere;
      const until = formatTimestamp(this.clock() + request.leaseMs * 1000);
      await tx.run('UPDATE messages SET claimed_by = $1, claimed_until = $2 WHERE message_id = $3', [request.claimant, until, head.messageId]);
      return { ...snapshot, claimedElsewhere: null, earlierAttempt: claim?.claimed_by != null };
    });
  }

  releaseClaim(messageId: number, claimant: string): Promise<void> {
    return this.write(async (tx) => {
      await tx.run('UPDATE messages SET claimed_by = NULL, claimed_until = NULL WHERE message_id = $1 AND claimed_by = $2', [messageId, claimant]);
    });
  }

  stampNotified(messageId: number): Promise<StampOutcome> {
    return this.write(async (tx): Promise<StampOutcome> => {
      const stamped = await tx.run(
        "UPDATE messages SET notified_at = $1, claimed_by = NULL, claimed_until = NULL WHERE message_id = $2 AND status_state = 'input_required' AND notified_at IS NULL",
        [this.timestamp(), messageId],
      );
      if (stamped > 0) return 'stamped';
      const message = await this.messageById(tx, messageId);
      if (!message) return 'missing';
      return message.statusState === 'completed' ? 'acked' : 'already_notified';
    });
  }

  async recipientsAwaitingNotification(fleetId: number, excludeMemberIds: readonly number[] = []): Promise<number[]> {
    const rows = await this.read((tx) =>
      tx.all<{ member_id: number }>(
        `
        SELECT m.member_id, min(msg.created_at) AS oldest FROM members m
        JOIN fleets f ON f.fleet_id = m.fleet_id
        JOIN placements p ON p.member_id = m.member_id AND p.pane IS NOT NULL AND p.gone_at IS NULL AND p.stale_at IS NULL
        JOIN messages msg ON msg.owner_member_id = m.member_id AND ${awaitingNotification('msg')}
        WHERE m.fleet_id = $1 AND m.status = 'active' AND m.member_id != f.director_member_id
          AND NOT ${this.sql.dialect.inIds('m.member_id', 2)}
        GROUP BY m.member_id ORDER BY oldest, m.member_id`,
        [fleetId, this.sql.dialect.ids(excludeMemberIds)],
      ),
    );
    return rows.map((row) => row.member_id);
  }

  // ---- internals ----------------------------------------------------------------------

  private async snapshotIn(tx: SqlTransaction, recipientId: number, fleetId: number, exclude: ReadonlySet<number>): Promise<DeliverySnapshot> {
    const member = await this.memberRow(tx, recipientId);
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
    const next = await this.oldestAwaitingNotification(tx, recipientId, exclude);
    if (member.placement.staleAt !== null) return verdict('server_replaced', next);
    if (member.placement.goneAt !== null) return verdict('pane_gone', next);
    return verdict(member.placement.pane === null ? 'pending_placement' : 'eligible', next);
  }

  private async oldestAwaitingNotification(tx: SqlTransaction, recipientId: number, exclude: ReadonlySet<number>): Promise<Message | null> {
    const row = await tx.get<MessageRow>(
      `SELECT * FROM messages msg WHERE msg.owner_member_id = $1 AND ${awaitingNotification('msg')}
      AND NOT ${this.sql.dialect.inIds('msg.message_id', 2)} ORDER BY msg.created_at, msg.message_id LIMIT 1`,
      [recipientId, this.sql.dialect.ids(exclude)],
    );
    return row ? toMessage(row) : null;
  }

  private fleetRow(tx: SqlTransaction, fleetId: number): Promise<FleetRow | undefined> {
    return tx.get<FleetRow>('SELECT * FROM fleets WHERE fleet_id = $1', [fleetId]);
  }

  private async memberRow(tx: SqlTransaction, memberId: number): Promise<Member | undefined> {
    const row = await tx.get<MemberRow>(`${MEMBER_SELECT} WHERE m.member_id = $1`, [memberId]);
    return row ? toMember(row) : undefined;
  }

  private async messageById(tx: SqlTransaction, messageId: number): Promise<Message | undefined> {
    const row = await tx.get<MessageRow>('SELECT * FROM messages WHERE message_id = $1', [messageId]);
    return row ? toMessage(row) : undefined;
  }

  private messageByKey(tx: SqlTransaction, from: number, key: string): Promise<MessageRow | undefined> {
    return tx.get<MessageRow>('SELECT * FROM messages WHERE from_member_id = $1 AND idempotency_key = $2', [from, key]);
  }

  /** A message one of whose endpoints is in the fleet; anything else reads as not found. */
  private async messageInFleet(tx: SqlTransaction, messageId: number, fleetId: number): Promise<Message> {
    const message = await this.messageById(tx, messageId);
    if (!message) throw messageNotFound(messageId);
    const endpoints = [message.fromMemberId, ...(message.toMemberId === null ? [] : [message.toMemberId])];
    const inFleet = await tx.get(`SELECT 1 FROM members WHERE fleet_id = $1 AND ${this.sql.dialect.inIds('member_id', 2)}`, [fleetId, this.sql.dialect.ids(endpoints)]);
    if (!inFleet) throw messageNotFound(messageId);
    return message;
  }

  private async requireActive(tx: SqlTransaction, memberId: number): Promise<Member> {
    const member = await this.memberRow(tx, memberId);
    if (member?.status !== 'active') throw memberNotFound(memberId);
    return member;
  }

  private async activeSender(tx: SqlTransaction, memberId: number): Promise<Member> {
    const sender = await this.memberRow(tx, memberId);
    if (sender?.status !== 'active') throw new RegistryNotFoundError('member', memberId, `Sender member not found or not active: ${memberId}`);
    return sender;
  }

  private async insertPlacement(tx: SqlTransaction, memberId: number, placement: PlacementInput, now: string): Promise<void> {
    await tx.run('INSERT INTO placements (member_id, backend, session, "window", pane, server, endpoint, host, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
      memberId,
      placement.backend,
      placement.session,
      placement.window,
      placement.pane ?? null,
      placement.server ?? null,
      placement.endpoint ?? null,
      placementHost(placement.host),
      now,
    ]);
  }

  private async insertMessage(
    tx: SqlTransaction,
    owner: number,
    from: number,
    to: number | null,
    type: Message['type'],
    state: Message['statusState'],
    origin: number | null,
    text: string,
    key: string | null,
  ): Promise<number> {
    const row = await tx.get<{ message_id: number }>(MESSAGE_INSERT, [owner, from, to, type, this.timestamp(), state, origin, text, key]);
    return row!.message_id;
  }
}

function memberNotFound(memberId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('member', memberId, `Member ${memberId} not found`);
}

function messageNotFound(messageId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('message', messageId, `Message ${messageId} not found`);
}
