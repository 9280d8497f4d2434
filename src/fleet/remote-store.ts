/**
 * The broker of a store served by `drover broker serve` on another drover's unix socket
 * (DROVER_BROKER=drover+unix:///path/to/broker.sock): every call of the port is one request
 * over the socket, answered by the serving broker. A connection that fails or is cut is opened
 * again for the next call; a call whose reply was lost is sent again when that cannot store
 * anything twice (reads, and sends: each carries an idempotency key, made here when the
 * caller gave none, and the retry carries the same one). Change watching asks the server to
 * wait on its own store's watch (a SQLite hub looks again every pollMs; PostgreSQL wakes on
 * NOTIFY).
 */
import { randomUUID } from 'node:crypto';
import { createConnection, type Socket } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { messageOf } from '../process/index.js';
import type {
  ActivePlacement,
  BroadcastInput,
  Broker,
  ChangeWatch,
  ClaimRequest,
  DeliveryClaim,
  DeliverySnapshot,
  FleetDeletion,
  MemberDeregistration,
  SendInput,
  StampOutcome,
  StoreInfo,
  WatchOptions,
} from './broker.js';
import { formatTimestamp, wallMicros } from './clock.js';
import { StoreError, StoreUnavailableError } from './errors.js';
import type { BroadcastResult, CodingAgent, ConcretePlacement, Fleet, FleetSummary, Member, Message, Placement, PlacementInput, RosterEntry } from './model.js';
import {
  BROKER_METHODS,
  BROKER_PROTOCOL,
  BROKER_PROTOCOL_VERSION,
  MAX_REPLY_BYTES,
  decodeError,
  decodeLine,
  encodeLine,
  readLines,
  remoteBrokerUrl,
  type BrokerMethod,
  type WireError,
} from './remote-protocol.js';

/** How long connecting and the handshake may take. */
const CONNECT_TIMEOUT_MS = 5000;
/** How long a call waits for its reply when no `within` bounds it. */
const DEFAULT_CALL_TIMEOUT_MS = 30_000;
/** What a reply may take beyond the server's own wait (the socket, the forwarding). */
const REPLY_MARGIN_MS = 2000;
/** The first pause before a lost call is sent again; doubled each time, within the call's deadline. */
const RETRY_PAUSE_MS = 100;
/** How long a watch whose connection failed waits before its caller reads again. */
const WATCH_FAILURE_PAUSE_MS = 1000;

/** The connection ended before a reply came: whether the call took effect is unknown. */
class ConnectionLostError extends Error {}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** One connection to the server: the handshake done, requests matched to replies by id. */
class BrokerConnection {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private lost: Error | undefined;

  private constructor(
    private readonly socket: Socket,
    readonly store: StoreInfo,
  ) {}

  get alive(): boolean {
    return this.lost === undefined;
  }

  static open(socketPath: string): Promise<BrokerConnection> {
    return new Promise((resolve, reject) => {
      const where = remoteBrokerUrl(socketPath);
      const socket = createConnection(socketPath);
      let connection: BrokerConnection | undefined;
      const fail = (error: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      };
      const timer = setTimeout(() => fail(new StoreUnavailableError(`the drover broker at ${where} did not answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
      socket.once('error', (error) => {
        if (connection === undefined) fail(new StoreUnavailableError(`cannot reach the drover broker at ${where}: ${messageOf(error)} (is \`drover broker serve\` running there, and the link forwarding it up?)`, { cause: error }));
      });
      socket.once('connect', () => socket.write(encodeLine({ protocol: BROKER_PROTOCOL, version: BROKER_PROTOCOL_VERSION })));
      socket.once('close', () => {
        if (connection === undefined) fail(new StoreUnavailableError(`the drover broker at ${where} closed the connection before its handshake`));
        else connection.drop(new ConnectionLostError(`the connection to the drover broker at ${where} was lost`));
      });
      const onLine = (line: string): void => {
        let message: Record<string, unknown>;
        try {
          message = decodeLine(line) as Record<string, unknown>;
        } catch {
          return fail(new StoreError(`the drover broker at ${where} sent something that is not JSON`));
        }
        if (connection !== undefined) return connection.settle(message);
        clearTimeout(timer);
        if (message.error !== undefined) return fail(decodeError(message.error as WireError, where));
        if (message.protocol !== BROKER_PROTOCOL || message.version !== BROKER_PROTOCOL_VERSION) {
          return fail(new StoreError(`${where} speaks ${JSON.stringify(message.protocol)} version ${JSON.stringify(message.version)}, not ${BROKER_PROTOCOL} version ${BROKER_PROTOCOL_VERSION}`));
        }
        const store = message.store as { kind: StoreInfo['kind']; location: string; read_only: boolean; schema: StoreInfo['schema'] };
        connection = new BrokerConnection(socket, { kind: store.kind, location: store.location, readOnly: store.read_only, schema: store.schema, via: where });
        resolve(connection);
      };
      readLines(socket, MAX_REPLY_BYTES, onLine, () => fail(new StoreError(`the drover broker at ${where} sent a reply longer than ${MAX_REPLY_BYTES} bytes`)));
    });
  }

  /** Sends one request; its reply's result, the failure it carries, or ConnectionLostError. */
  request(method: string, args: readonly unknown[], timeoutMs: number | undefined): Promise<unknown> {
    if (this.lost) return Promise.reject(this.lost);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(encodeLine({ id, method, args, ...(timeoutMs === undefined ? {} : { timeout_ms: timeoutMs }) }));
    });
  }

  private settle(message: Record<string, unknown>): void {
    const where = this.store.via!;
    const waiting = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
    if (waiting === undefined) {
      // A refusal of the connection itself (id null): every call on it fails with it.
      if (message.error !== undefined) this.drop(decodeError(message.error as WireError, where));
      return;
    }
    this.pending.delete(message.id as number);
    if (message.error !== undefined) waiting.reject(decodeError(message.error as WireError, where));
    else waiting.resolve(message.result);
  }

  drop(error: Error): void {
    this.lost ??= error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    this.socket.destroy();
  }
}

export interface RemoteBrokerOptions {
  socketPath: string;
  /** Refuse every call that would change the store. */
  readOnly?: boolean;
}

export class RemoteBroker implements Broker {
  readonly socketPath: string;
  private connection: Promise<BrokerConnection> | undefined;
  private info: StoreInfo;
  private readonly readOnly: boolean;
  private timeoutMs: number | undefined;

  private constructor(options: RemoteBrokerOptions, first: BrokerConnection) {
    this.socketPath = options.socketPath;
    this.readOnly = options.readOnly === true;
    this.connection = Promise.resolve(first);
    this.info = { ...first.store, readOnly: first.store.readOnly || this.readOnly };
  }

  /** Connects and greets the server, or StoreUnavailableError naming the socket. */
  static async connect(options: RemoteBrokerOptions): Promise<RemoteBroker> {
    return new RemoteBroker(options, await BrokerConnection.open(options.socketPath));
  }

  get url(): string {
    return remoteBrokerUrl(this.socketPath);
  }

  get store(): StoreInfo {
    return this.info;
  }

  timestamp(): string {
    return formatTimestamp(wallMicros());
  }

  within(ms: number): Broker {
    const bounded = Object.create(this) as RemoteBroker;
    bounded.timeoutMs = Math.max(0, Math.floor(ms));
    return bounded;
  }

  connectionEnvironment(): Record<string, string> {
    return { DROVER_BROKER: this.url };
  }

  async watch(options: WatchOptions = {}): Promise<ChangeWatch> {
    // A watch has a connection of its own: a long wait never holds up the broker's calls.
    const connection = await BrokerConnection.open(this.socketPath);
    const id = (await connection.request('watch.open', [options], undefined)) as number;
    let outstanding: Promise<unknown> | undefined;
    return {
      next: async (timeoutMs: number, signal?: AbortSignal) => {
        // A wait the caller gave up on may have seen a change: if it has ended, say so now.
        if (outstanding !== undefined) {
          const ended = await Promise.race([outstanding.then(() => true), Promise.resolve(false)]);
          outstanding = undefined;
          if (ended) return;
        }
        if (!connection.alive) {
          await delay(Math.min(timeoutMs, WATCH_FAILURE_PAUSE_MS), undefined, { signal }).catch(() => undefined);
          return;
        }
        const waiting = connection.request('watch.next', [id, timeoutMs], undefined).catch(() => delay(Math.min(timeoutMs, WATCH_FAILURE_PAUSE_MS)));
        const aborted = new Promise<'aborted'>((resolve) => {
          if (signal?.aborted) resolve('aborted');
          signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
        });
        if ((await Promise.race([waiting, aborted])) === 'aborted') outstanding = waiting;
      },
      close: () => {
        connection.drop(new ConnectionLostError('the watch was closed'));
        return Promise.resolve();
      },
    };
  }

  async close(): Promise<void> {
    const opened = this.connection;
    this.connection = undefined;
    const connection = await opened?.catch(() => undefined);
    connection?.drop(new ConnectionLostError(`the broker at ${this.url} was closed`));
  }

  /** The open connection, or a new one when the last was lost. */
  private connected(): Promise<BrokerConnection> {
    let opening = this.connection;
    if (opening === undefined) {
      opening = BrokerConnection.open(this.socketPath);
      this.connection = opening;
    }
    return opening.then(
      (connection) => {
        if (connection.alive) return connection;
        if (this.connection === opening) this.connection = undefined;
        return this.connected();
      },
      (error: unknown) => {
        if (this.connection === opening) this.connection = undefined;
        throw error;
      },
    );
  }

  /**
   * One call of the port. A call that may be repeated safely is sent again, after a short
   * pause, whenever its connection was lost or could not be made, until its deadline.
   */
  private async call<T>(method: BrokerMethod, ...given: unknown[]): Promise<T> {
    // A left-out argument stays left out: JSON would turn it into null, which some methods read.
    const args = given.slice(0, given.findLastIndex((arg) => arg !== undefined) + 1);
    const kind = BROKER_METHODS[method];
    if (this.readOnly && kind !== 'read') throw new StoreError(`the broker at ${this.url} was opened only to read; ${method} would change it`);
    const waitMs = (this.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS) + REPLY_MARGIN_MS;
    const deadline = Date.now() + waitMs;
    for (let pause = RETRY_PAUSE_MS; ; pause *= 2) {
      let sent = false;
      try {
        const connection = await this.connected();
        sent = true;
        return (await this.bounded(connection, connection.request(method, args, this.timeoutMs), deadline - Date.now())) as T;
      } catch (error) {
        const lost = error instanceof ConnectionLostError || (error instanceof StoreUnavailableError && !sent);
        if (!lost) throw error;
        if (sent && kind === 'once') {
          throw new StoreUnavailableError(`the connection to the drover broker at ${this.url} was lost before it answered ${method}; it may or may not have been done`, {
            cause: error,
            delivery: 'possibly_sent',
          });
        }
        if (Date.now() + pause >= deadline) {
          throw error instanceof StoreUnavailableError ? error : new StoreUnavailableError(`${messageOf(error)} and could not be reopened within ${waitMs} ms`, { cause: error });
        }
        await delay(pause);
      }
    }
  }

  /** A reply within `ms`, or StoreUnavailableError (the connection is dropped: a late reply has no one to go to). */
  private async bounded(connection: BrokerConnection, reply: Promise<unknown>, ms: number): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new StoreUnavailableError(`the drover broker at ${this.url} did not answer within ${Math.max(0, ms)} ms`);
        connection.drop(error);
        reject(error);
      }, Math.max(0, ms));
    });
    try {
      return await Promise.race([reply, expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  // ---- the port, call by call ------------------------------------------------------------

  createFleet(input: { name: string; codingAgent: CodingAgent; directorPlacement: PlacementInput }): Promise<{ fleet: Fleet; director: Member }> {
    return this.call('createFleet', input);
  }

  listFleets(): Promise<FleetSummary[]> {
    return this.call('listFleets');
  }

  getFleet(fleetId: number): Promise<Fleet> {
    return this.call('getFleet', fleetId);
  }

  deleteFleet(fleetId: number, expected?: readonly ActivePlacement[]): Promise<FleetDeletion> {
    return this.call('deleteFleet', fleetId, expected);
  }

  activePlacements(fleetId: number): Promise<ActivePlacement[]> {
    return this.call('activePlacements', fleetId);
  }

  placementsInPane(backend: Placement['backend'], pane: string): Promise<ActivePlacement[]> {
    return this.call('placementsInPane', backend, pane);
  }

  registerMember(input: { fleetId: number; name: string; description?: string; codingAgent: CodingAgent; placement?: PlacementInput }): Promise<Member> {
    return this.call('registerMember', input);
  }

  getMember(memberId: number): Promise<Member> {
    return this.call('getMember', memberId);
  }

  listMembers(fleetId: number): Promise<RosterEntry[]> {
    return this.call('listMembers', fleetId);
  }

  deregisterMember(memberId: number, expected?: Placement | null): Promise<MemberDeregistration> {
    return this.call('deregisterMember', memberId, expected);
  }

  setPlacement(memberId: number, placement: PlacementInput): Promise<Placement> {
    return this.call('setPlacement', memberId, placement);
  }

  recordPane(memberId: number, pane: string): Promise<ConcretePlacement> {
    return this.call('recordPane', memberId, pane);
  }

  clearPlacement(memberId: number): Promise<boolean> {
    return this.call('clearPlacement', memberId);
  }

  markPaneGone(memberId: number, pane: string): Promise<boolean> {
    return this.call('markPaneGone', memberId, pane);
  }

  markServerReplaced(memberId: number, pane: string): Promise<boolean> {
    return this.call('markServerReplaced', memberId, pane);
  }

  /** A send without a key of the caller's gets one here, so its retries store it once. */
  sendMessage(input: SendInput): Promise<Message> {
    return this.call('sendMessage', { ...input, idempotencyKey: input.idempotencyKey ?? generatedKey() });
  }

  broadcastMessage(input: BroadcastInput): Promise<BroadcastResult> {
    return this.call('broadcastMessage', { ...input, idempotencyKey: input.idempotencyKey ?? generatedKey() });
  }

  pollMessages(memberId: number): Promise<Message[]> {
    return this.call('pollMessages', memberId);
  }

  ackMessage(memberId: number, messageId: number): Promise<Message> {
    return this.call('ackMessage', memberId, messageId);
  }

  showMessage(messageId: number, fleetId?: number): Promise<Message> {
    return this.call('showMessage', messageId, fleetId);
  }

  deliveriesAfter(memberId: number, afterMessageId: number): Promise<{ messages: Message[]; latestMessageId: number }> {
    return this.call('deliveriesAfter', memberId, afterMessageId);
  }

  deliverySnapshot(recipientId: number, fleetId: number, exclude?: ReadonlySet<number>): Promise<DeliverySnapshot> {
    return this.call('deliverySnapshot', recipientId, fleetId, exclude);
  }

  claimNext(recipientId: number, fleetId: number, request: ClaimRequest): Promise<DeliveryClaim> {
    return this.call('claimNext', recipientId, fleetId, request);
  }

  releaseClaim(messageId: number, claimant: string): Promise<void> {
    return this.call('releaseClaim', messageId, claimant);
  }

  stampNotified(messageId: number): Promise<StampOutcome> {
    return this.call('stampNotified', messageId);
  }

  recipientsAwaitingNotification(fleetId: number, excludeMemberIds?: readonly number[]): Promise<number[]> {
    return this.call('recipientsAwaitingNotification', fleetId, excludeMemberIds);
  }
}

/** A key for a send whose caller gave none: unique, and recognisably drover's own. */
function generatedKey(): string {
  return `drover-remote-${randomUUID()}`;
}
