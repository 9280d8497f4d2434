/**
 * `drover broker serve`'s server: one broker (the store this machine's environment chooses)
 * answering the drover broker protocol (remote-protocol.ts) on a unix socket that only its
 * owner can reach: the socket is 0600, in a directory no one else may enter or write.
 */
import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { ArgumentError, messageOf } from '../process/index.js';
import type { Broker, ChangeWatch } from './broker.js';
import { StoreError } from './errors.js';
import {
  BROKER_PROTOCOL,
  BROKER_PROTOCOL_VERSION,
  MAX_REQUEST_BYTES,
  checkSocketPath,
  decodeLine,
  encodeError,
  encodeLine,
  isBrokerMethod,
  readLines,
} from './remote-protocol.js';

export interface BrokerServerOptions {
  broker: Broker;
  socketPath: string;
  /** The longest request line read (default MAX_REQUEST_BYTES). */
  maxRequestBytes?: number;
}

/** How long a stale socket file gets to answer before it is taken for a dead server's. */
const STALE_PROBE_MS = 1000;

/**
 * The socket's directory: created 0700 when missing; an existing one must belong to this user
 * and let no one else in (the socket file's own mode is not enough on every system).
 */
function prepareDirectory(directory: string): void {
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const found = statSync(directory);
  if (typeof process.getuid === 'function' && found.uid !== process.getuid()) {
    throw new ArgumentError(`the broker socket's directory ${directory} belongs to another user; choose a directory of your own`);
  }
  if ((found.mode & 0o077) !== 0) {
    throw new ArgumentError(
      `the broker socket's directory ${directory} is open to other users (mode ${(found.mode & 0o777).toString(8).padStart(4, '0')}); use a directory only you can enter (chmod 700)`,
    );
  }
}

/** Whether something answers at a unix socket path. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    const done = (alive: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(true), STALE_PROBE_MS);
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Removes a socket file left by a server that is gone; refuses a live one or anything not a socket. */
async function clearStaleSocket(path: string): Promise<void> {
  const found = lstatSync(path, { throwIfNoEntry: false });
  if (found === undefined) return;
  if (!found.isSocket()) throw new ArgumentError(`${path} exists and is not a socket; drover will not replace it`);
  if (await answers(path)) throw new StoreError(`a broker is already serving at ${path} (stop it first, or give another --socket)`);
  unlinkSync(path);
}

export class BrokerServer {
  private readonly connections = new Set<Socket>();
  private closing: Promise<void> | undefined;

  private constructor(
    readonly socketPath: string,
    private readonly server: Server,
    private readonly options: BrokerServerOptions,
  ) {
    server.on('connection', (socket) => this.accept(socket));
  }

  /** Listens at `socketPath` (a dead server's socket file there is replaced) until closed. */
  static async listen(options: BrokerServerOptions): Promise<BrokerServer> {
    const path = options.socketPath;
    checkSocketPath(path, '--socket');
    prepareDirectory(dirname(path));
    await clearStaleSocket(path);
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => reject(new StoreError(`cannot serve the broker at ${path}: ${messageOf(error)}`, { cause: error })));
      // Owner-only from its first moment (Node binds a socket path within listen()): a chmod after listen
      // left the socket open to the group and others until it ran.
      const umask = process.umask(0o177);
      try {
        server.listen(path, () => resolve());
      } finally {
        process.umask(umask);
      }
    });
    // Where a platform makes sockets without regard to the umask.
    chmodSync(path, 0o600);
    return new BrokerServer(path, server, options);
  }

  /** Stops listening, ends every connection and removes the socket file; the broker stays open (it is the caller's). */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.connections) socket.destroy();
    });
    return this.closing;
  }

  private accept(socket: Socket): void {
    this.connections.add(socket);
    const watches = new Map<number, ChangeWatch>();
    // Ends the waits of this connection's watches when it closes.
    const gone = new AbortController();
    let nextWatchId = 1;
    let greeted = false;
    const reply = (value: unknown): void => {
      if (!socket.destroyed) socket.write(encodeLine(value));
    };
    const refuse = (message: string): void => {
      reply({ id: null, error: encodeError(new ArgumentError(message)) });
      socket.end();
    };
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.connections.delete(socket);
      gone.abort();
      for (const watch of watches.values()) void watch.close().catch(() => undefined);
      watches.clear();
    });

    const handle = async (request: Record<string, unknown>): Promise<unknown> => {
      const { method, args } = request;
      const params = (Array.isArray(args) ? args : []) as unknown[];
      if (method === 'watch.open') {
        const watch = await this.options.broker.watch((params[0] ?? {}) as Parameters<Broker['watch']>[0]);
        const id = nextWatchId++;
        watches.set(id, watch);
        return id;
      }
      if (method === 'watch.next' || method === 'watch.close') {
        const [id, timeoutMs] = params as [number, number];
        const watch = watches.get(id);
        if (watch === undefined) throw new ArgumentError(`no watch ${String(id)} on this connection`);
        if (method === 'watch.close') {
          watches.delete(id);
          await watch.close();
          return null;
        }
        await watch.next(Math.max(0, Number(timeoutMs) || 0), gone.signal);
        return null;
      }
      if (!isBrokerMethod(method)) throw new ArgumentError(`the broker has no method ${JSON.stringify(method)}`);
      const timeout = request.timeout_ms;
      const broker = typeof timeout === 'number' && Number.isFinite(timeout) ? this.options.broker.within(timeout) : this.options.broker;
      const call = broker[method] as (...values: unknown[]) => Promise<unknown>;
      return call.apply(broker, params);
    };

    const onLine = (line: string): void => {
      let request: unknown;
      try {
        request = decodeLine(line);
      } catch {
        return refuse('a request is not JSON');
      }
      if (request === null || typeof request !== 'object' || Array.isArray(request)) return refuse('a request must be a JSON object');
      const fields = request as Record<string, unknown>;
      if (!greeted) {
        if (fields.protocol !== BROKER_PROTOCOL || fields.version !== BROKER_PROTOCOL_VERSION) {
          return refuse(`this broker speaks ${BROKER_PROTOCOL} version ${BROKER_PROTOCOL_VERSION}; the client asked for ${JSON.stringify(fields.protocol)} version ${JSON.stringify(fields.version)}`);
        }
        greeted = true;
        const { kind, location, readOnly, schema } = this.options.broker.store;
        return reply({ protocol: BROKER_PROTOCOL, version: BROKER_PROTOCOL_VERSION, store: { kind, location, read_only: readOnly, schema } });
      }
      const id = fields.id;
      if (typeof id !== 'number' || !Number.isSafeInteger(id)) return refuse('a request needs a whole-number id');
      handle(fields).then(
        (result) => reply({ id, result: result ?? null }),
        (error: unknown) => reply({ id, error: encodeError(error) }),
      );
    };
    const maxBytes = this.options.maxRequestBytes ?? MAX_REQUEST_BYTES;
    readLines(socket, maxBytes, onLine, () => refuse(`a request is longer than ${maxBytes} bytes`));
  }
}
