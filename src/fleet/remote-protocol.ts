/**
 * The drover broker protocol: a fleet's store served over a unix socket (`drover broker serve`)
 * to drover processes that cannot open it themselves (members on other machines, reaching the
 * hub's socket through the host link's ssh forwarding). JSON lines, one request and one reply
 * each, matched by id, any number in flight:
 *
 *   client → {"protocol":"drover-broker","version":1}
 *   server → {"protocol":"drover-broker","version":1,"store":{kind,location,read_only,schema}}
 *   client → {"id":1,"method":"sendMessage","args":[{…}],"timeout_ms":5000}
 *   server → {"id":1,"result":{…}}   or   {"id":1,"error":{"name","message","phase","delivery",…}}
 *
 * The methods are the Broker port's, by name, with their arguments as the port takes them (a
 * Set travels as {"$set":[…]}); change watching is `watch.open`, `watch.next`, `watch.close`.
 * A request line longer than MAX_REQUEST_BYTES is refused and the connection closed.
 */
import type { Socket } from 'node:net';
import { ArgumentError, DroverError, messageOf, type Delivery } from '../process/index.js';
import { RegistryNotFoundError, RegistryStateError, StoreError, StoreUnavailableError } from './errors.js';

export const BROKER_PROTOCOL = 'drover-broker';
export const BROKER_PROTOCOL_VERSION = 1;
/** The longest request line a server reads: a message body is the only large part. */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;
/** The longest reply line a client reads (a long roster or poll). */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** How DROVER_BROKER names a broker served over a unix socket. */
export const REMOTE_BROKER_SCHEME = 'drover+unix://';

/** The longest socket path a unix socket address holds (sun_path, with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * How a call may be sent again after the connection was lost before its reply: `read` and
 * `idempotent` calls are sent again (a send always carries an idempotency key, so a retry
 * stores nothing new); a `once` call is not, and its caller hears the outcome is unknown.
 */
export type CallKind = 'read' | 'idempotent' | 'once';

export const BROKER_METHODS = Object.freeze({
  listFleets: 'read',
  getFleet: 'read',
  activePlacements: 'read',
  placementsInPane: 'read',
  getMember: 'read',
  listMembers: 'read',
  pollMessages: 'read',
  showMessage: 'read',
  deliveriesAfter: 'read',
  deliverySnapshot: 'read',
  recipientsAwaitingNotification: 'read',
  createFleet: 'once',
  deleteFleet: 'idempotent',
  registerMember: 'once',
  deregisterMember: 'once',
  setPlacement: 'idempotent',
  recordPane: 'idempotent',
  clearPlacement: 'once',
  markPaneGone: 'once',
  markServerReplaced: 'once',
  sendMessage: 'idempotent',
  broadcastMessage: 'idempotent',
  ackMessage: 'once',
  claimNext: 'idempotent',
  releaseClaim: 'idempotent',
  stampNotified: 'idempotent',
} satisfies Record<string, CallKind>);

export type BrokerMethod = keyof typeof BROKER_METHODS;

export function isBrokerMethod(name: unknown): name is BrokerMethod {
  return typeof name === 'string' && Object.hasOwn(BROKER_METHODS, name);
}

/** The socket path a `drover+unix:///path` setting names, or ArgumentError naming `source`. */
export function parseRemoteBrokerUrl(value: string, source: string): string {
  const path = value.slice(REMOTE_BROKER_SCHEME.length);
  const example = `${REMOTE_BROKER_SCHEME}/home/me/.local/state/drover/broker/broker.sock`;
  if (!value.startsWith(REMOTE_BROKER_SCHEME) || !path.startsWith('/')) {
    throw new ArgumentError(`${source} must name the broker's socket by absolute path, as ${example} (got ${JSON.stringify(value)})`);
  }
  checkSocketPath(path, source);
  return path;
}

/** A unix socket path a socket can be bound at and connected to, or ArgumentError naming `source`. */
export function checkSocketPath(path: string, source: string): void {
  if (path.includes('\0')) throw new ArgumentError(`${source}: the socket path holds a NUL byte`);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new ArgumentError(`${source}: the socket path ${path} is ${Buffer.byteLength(path)} bytes, longer than a unix socket address holds (${MAX_SOCKET_PATH_BYTES})`);
  }
}

export function remoteBrokerUrl(socketPath: string): string {
  return `${REMOTE_BROKER_SCHEME}${socketPath}`;
}

/** JSON with Sets as {"$set":[…]}, the one non-JSON value the port takes. */
export function encodeLine(value: unknown): string {
  return `${JSON.stringify(value, (_key, item: unknown) => (item instanceof Set ? { $set: [...(item as Set<unknown>)] } : item))}\n`;
}

export function decodeLine(line: string): unknown {
  return JSON.parse(line, (_key, item: unknown) => {
    if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
      const keys = Object.keys(item);
      const members = (item as { $set?: unknown }).$set;
      if (keys.length === 1 && Array.isArray(members)) return new Set(members);
    }
    return item;
  });
}

/**
 * Splits a socket's bytes into lines, refusing one longer than `maxBytes` (onTooLong, and
 * nothing more is read). Lines are whole UTF-8: bytes are gathered before decoding.
 */
export function readLines(socket: Socket, maxBytes: number, onLine: (line: string) => void, onTooLong: () => void): void {
  let chunks: Buffer[] = [];
  let size = 0;
  const onData = (data: Buffer): void => {
    let start = 0;
    for (let newline = data.indexOf(10, start); newline !== -1; newline = data.indexOf(10, start)) {
      if (size + newline - start > maxBytes) return tooLong();
      chunks.push(data.subarray(start, newline));
      const line = Buffer.concat(chunks).toString('utf8');
      chunks = [];
      size = 0;
      start = newline + 1;
      onLine(line);
      if (socket.destroyed) return;
    }
    if (size + data.length - start > maxBytes) return tooLong();
    chunks.push(data.subarray(start));
    size += data.length - start;
  };
  const tooLong = (): void => {
    socket.off('data', onData);
    chunks = [];
    onTooLong();
  };
  socket.on('data', onData);
}

/** A failure as it crosses the socket. */
export interface WireError {
  name: string;
  message: string;
  phase?: string;
  delivery?: Delivery;
  kind?: RegistryNotFoundError['kind'];
  id?: number;
}

export function encodeError(error: unknown): WireError {
  const wire: WireError = { name: error instanceof Error ? error.name : 'Error', message: messageOf(error) };
  if (error instanceof DroverError) Object.assign(wire, { phase: error.phase, delivery: error.delivery });
  if (error instanceof RegistryNotFoundError) Object.assign(wire, { kind: error.kind, id: error.id });
  return wire;
}

/** The failure a reply carries, as the class the port's callers test for. */
export function decodeError(wire: WireError, where: string): Error {
  const context = { ...(wire.phase === undefined ? {} : { phase: wire.phase }), ...(wire.delivery === undefined ? {} : { delivery: wire.delivery }) };
  switch (wire.name) {
    case 'ArgumentError':
      return new ArgumentError(wire.message, context);
    case 'RegistryNotFoundError':
      return new RegistryNotFoundError(wire.kind ?? 'member', wire.id ?? 0, wire.message);
    case 'RegistryStateError':
      return new RegistryStateError(wire.message, context);
    case 'StoreUnavailableError':
      return new StoreUnavailableError(wire.message, context);
    case 'StoreError':
      return new StoreError(wire.message, context);
    default:
      return new StoreError(`the drover broker at ${where} failed: ${wire.message}`, context);
  }
}
