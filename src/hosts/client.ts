/**
 * The asking side of drover-rpc, over any pair of streams (an ssh child's stdout and stdin, or a
 * `drover rpc --stdio` started locally): reads the handshake, refuses an incompatible server,
 * sends requests with ids of its own and matches the replies, and routes watch events.
 */
import type { Readable, Writable } from 'node:stream';
import { DroverError, FrameSplitter, TimeoutError } from '../process/index.js';
import {
  handshakeProblem,
  isCompatible,
  RPC_MAX_LINE_BYTES,
  RPC_UNWATCH,
  RPC_VERSION,
  RPC_WATCH,
  type RpcEvent,
  type RpcHandshake,
  type RpcParams,
  type RpcReply,
} from './protocol.js';

/** The stream ended (or broke) before the reply: whether the request ran is not known. */
export class RpcLinkLostError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'link', delivery: 'possibly_sent' });
  }
}

/**
 * Why no drover-rpc link came up: `incompatible` (a drover of another protocol major; the
 * message names the fix), `not_rpc` (the other side printed something else: a login banner, a
 * shell error), `ended` (the stream closed first: ssh failed, or the command was not found),
 * `timeout` (nothing within the deadline).
 */
export type RpcHandshakeFailure = 'incompatible' | 'not_rpc' | 'ended' | 'timeout';

/** The other side is not a drover-rpc server this drover can use. */
export class RpcHandshakeError extends DroverError {
  constructor(
    message: string,
    readonly reason: RpcHandshakeFailure,
    readonly handshake?: RpcHandshake,
  ) {
    super(message, { phase: 'handshake', delivery: 'not_sent' });
  }

  get incompatible(): boolean {
    return this.reason === 'incompatible';
  }
}

export interface RpcRequestOptions {
  /** How long to wait for the reply; past it the request is given up (it may still run there). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export type RpcEventHandler = (event: RpcEvent['event']) => void;

interface Pending {
  resolve(reply: RpcReply): void;
  reject(error: Error): void;
}

export class RpcClient {
  private readonly pending = new Map<number, Pending>();
  private readonly watchers = new Map<number | string, RpcEventHandler>();
  private nextId = 1;
  private lost: RpcLinkLostError | undefined;
  private readonly closedListeners = new Set<(error: RpcLinkLostError) => void>();

  private constructor(
    readonly handshake: RpcHandshake,
    private readonly output: Writable,
  ) {}

  /**
   * Reads the server's handshake (within `timeoutMs`) and checks it: not drover-rpc, or another
   * major version, is an RpcHandshakeError whose message names the command that fixes it.
   */
  static connect(streams: { readonly input: Readable; readonly output: Writable }, options: { readonly timeoutMs: number; readonly upgradeHint?: (theirs: RpcHandshake) => string }): Promise<RpcClient> {
    const splitter = new FrameSplitter(RPC_MAX_LINE_BYTES);
    return new Promise((resolve, reject) => {
      let client: RpcClient | undefined;
      const timer = setTimeout(() => fail(new RpcHandshakeError(`no drover-rpc handshake within ${options.timeoutMs} ms`, 'timeout')), options.timeoutMs);
      const fail = (error: Error): void => {
        clearTimeout(timer);
        if (client === undefined) reject(error);
      };
      const onLine = (frame: Buffer): void => {
        let value: unknown;
        try {
          value = JSON.parse(frame.toString('utf8'));
        } catch {
          if (client === undefined) fail(new RpcHandshakeError(`the remote side printed something other than drover-rpc: ${JSON.stringify(frame.toString('utf8').slice(0, 120))}`, 'not_rpc'));
          return;
        }
        if (client !== undefined) {
          client.receive(value);
          return;
        }
        const problem = handshakeProblem(value);
        if (problem !== undefined) {
          fail(new RpcHandshakeError(`the remote side does not speak drover-rpc: ${problem}`, 'not_rpc'));
          return;
        }
        const handshake = value as RpcHandshake;
        if (!isCompatible(RPC_VERSION, handshake.version)) {
          const hint = options.upgradeHint?.(handshake) ?? `install drover ${handshake.drover_version === undefined ? '' : 'of the same release '}there`;
          fail(new RpcHandshakeError(`the remote drover ${handshake.drover_version} speaks drover-rpc ${handshake.version}; this drover speaks ${RPC_VERSION}: ${hint}`, 'incompatible', handshake));
          return;
        }
        clearTimeout(timer);
        client = new RpcClient(handshake, streams.output);
        resolve(client);
      };
      streams.input.on('data', (chunk: Buffer) => {
        for (const event of splitter.push(chunk)) {
          if (event.kind === 'frame') onLine(event.frame);
          else if (client !== undefined) client.end('the remote side sent a line over the size limit');
          else fail(new RpcHandshakeError('the handshake line is over the size limit', 'not_rpc'));
        }
      });
      const ended = (): void => {
        if (client !== undefined) client.end('the link to the remote drover ended');
        else fail(new RpcHandshakeError('the link ended before a drover-rpc handshake', 'ended'));
      };
      streams.input.once('end', ended);
      streams.input.once('close', ended);
      streams.input.once('error', ended);
    });
  }

  get isOpen(): boolean {
    return this.lost === undefined;
  }

  /** Whether the server answers this method (its handshake lists it). */
  offers(method: string): boolean {
    return this.handshake.capabilities.includes(method);
  }

  /** Called once when the link is lost (never after close() by this side's own choice is awaited). */
  onLost(listener: (error: RpcLinkLostError) => void): () => void {
    this.closedListeners.add(listener);
    return () => this.closedListeners.delete(listener);
  }

  private receive(value: unknown): void {
    if (value === null || typeof value !== 'object') return;
    if ('event' in value) {
      const event = (value as RpcEvent).event;
      this.watchers.get(event.watch)?.(event);
      return;
    }
    const id = (value as { id?: unknown }).id;
    if (typeof id !== 'number') return;
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    pending.resolve(value as RpcReply);
  }

  /** Ends the link's bookkeeping: every request in flight fails as lost (possibly sent). */
  end(reason: string): void {
    if (this.lost !== undefined) return;
    this.lost = new RpcLinkLostError(reason);
    for (const pending of this.pending.values()) pending.reject(new RpcLinkLostError(`${reason} before the reply came; the request may have run`));
    this.pending.clear();
    for (const handler of this.watchers.values()) handler({ watch: '', kind: 'down', detail: reason });
    this.watchers.clear();
    for (const listener of this.closedListeners) listener(this.lost);
  }

  /** One request; the reply as the server gave it (a command's failure is an error reply, not a throw). */
  request(method: string, params: RpcParams, options: RpcRequestOptions): Promise<RpcReply> {
    if (this.lost !== undefined) return Promise.reject(new RpcLinkLostError(`${this.lost.message}; nothing was sent`));
    const id = this.nextId;
    this.nextId += 1;
    return new Promise<RpcReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new TimeoutError(`no reply to ${method} within ${options.timeoutMs} ms; it may have run`, options.timeoutMs, { phase: 'link' }));
      }, options.timeoutMs);
      const settle = <T>(done: (value: T) => void) => (value: T): void => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        done(value);
      };
      const onAbort = (): void => {
        this.pending.delete(id);
        settle(reject)(new DroverError(`${method} was interrupted waiting for its reply; it may have run`, { phase: 'link', delivery: 'possibly_sent' }));
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, { resolve: settle(resolve), reject: settle(reject) });
      this.output.write(`${JSON.stringify({ id, method, params })}\n`);
    });
  }

  /** Opens a subscription; `onEvent` gets its events (a final `down` when the link goes). */
  async watch(params: RpcParams, onEvent: RpcEventHandler, options: RpcRequestOptions): Promise<{ readonly id: number | string; close(): Promise<void> }> {
    // The watch's id is the id its request is about to get; registered before the request goes,
    // so an event that races the reply is not lost.
    const id = this.nextId;
    this.watchers.set(id, onEvent);
    let reply: RpcReply;
    try {
      reply = await this.request(RPC_WATCH, params, options);
    } catch (error) {
      this.watchers.delete(id);
      throw error;
    }
    if ('error' in reply) {
      this.watchers.delete(id);
      throw new DroverError(`the remote watch was refused (${reply.error.code}): ${reply.error.message}`, { phase: 'watch', delivery: 'not_sent' });
    }
    return {
      id,
      close: async () => {
        if (!this.watchers.delete(id) || this.lost !== undefined) return;
        await this.request(RPC_UNWATCH, { watch: id }, options).catch(() => undefined);
      },
    };
  }
}

