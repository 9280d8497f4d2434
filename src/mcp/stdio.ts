import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  JSONRPCMessageSchema,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { ArgumentError } from '../process/index.js';
import { FrameSplitter } from '../process/index.js';

/** The bounds of one stdio session. */
export interface StdioLimits {
  /** Requests handed to the server at once; later ones wait their turn. */
  readonly maxActiveRequests: number;
  /** Requests admitted at once, running and waiting together; one more is refused. */
  readonly maxRequests: number;
  /** The longest message read, in bytes without its newline; a longer one is refused unread. */
  readonly maxFrameBytes: number;
  /** Bytes of waiting requests plus output not yet taken by the client; a request that would pass it is refused. */
  readonly maxQueuedBytes: number;
  /** From the moment a request is read (waiting counts) until it must be answered. */
  readonly requestTimeoutMs: number;
  /** How long output may sit without the client taking any of it before the session fails. */
  readonly writeTimeoutMs: number;
  /** How long a request past its deadline, or a closing session, is given to finish on its own. */
  readonly cleanupTimeoutMs: number;
}

export const DEFAULT_STDIO_LIMITS: Readonly<StdioLimits> = Object.freeze({
  maxActiveRequests: 4,
  maxRequests: 32,
  maxFrameBytes: 1024 * 1024,
  maxQueuedBytes: 4 * 1024 * 1024,
  requestTimeoutMs: 30_000,
  writeTimeoutMs: 500,
  cleanupTimeoutMs: 500,
});

/** JSON-RPC error codes this transport answers with itself. */
export const STDIO_ERRORS = Object.freeze({
  parse: -32700,
  invalidRequest: -32600,
  /** The request was not answered within its deadline (the SDK's own code for a timeout). */
  timeout: -32001,
  /** The session is at its request or byte bound; the request was not started. */
  busy: -32003,
});

/** Output is written in pieces of at most this size, so a client that reads slowly still shows progress. */
const WRITE_PIECE_BYTES = 64 * 1024;

/**
 * How a session ended: the client closed its input, the server closed it, or it failed; a
 * failure says whether output still held is abandoned (the client stopped reading it).
 */
export type StdioEnd = { readonly reason: 'eof' | 'closed' } | { readonly reason: 'failed'; readonly message: string; readonly output: 'abandoned' | 'kept' };

interface Admitted {
  readonly request: JSONRPCRequest;
  readonly bytes: number;
  readonly admittedAt: number;
  state: 'waiting' | 'running';
  timer: NodeJS.Timeout;
}

function checkLimits(limits: StdioLimits): void {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new ArgumentError(`stdio limit ${name} must be a positive whole number (got ${String(value)})`);
  }
  if (limits.maxActiveRequests > limits.maxRequests) throw new ArgumentError('stdio limit maxActiveRequests cannot exceed maxRequests');
}

/**
 * The MCP SDK's transport contract over a borrowed input and output stream, with every bound a
 * session has: how many requests run and wait, how long a message and the waiting bytes may
 * be, when a request must be answered and how long output may stall. Refusals are JSON-RPC
 * errors, never silence, and the session goes on after each. Closing it never closes the
 * streams it borrowed.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly limits: StdioLimits;
  /** Settles once, when the session ends, with how it ended. */
  readonly ended: Promise<StdioEnd>;

  private readonly splitter: FrameSplitter;
  /** Admitted requests in arrival order, by their id as a string key. */
  private readonly admitted = new Map<string, Admitted>();
  private running = 0;
  private waitingBytes = 0;
  private unflushedBytes = 0;
  private lastProgress = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  private readonly flushWaiters = new Set<() => void>();
  private state: 'new' | 'open' | 'draining' | 'ended' = 'new';
  private settle!: (end: StdioEnd) => void;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    limits: Partial<StdioLimits> = {},
  ) {
    this.limits = Object.freeze({ ...DEFAULT_STDIO_LIMITS, ...limits });
    checkLimits(this.limits);
    this.splitter = new FrameSplitter(this.limits.maxFrameBytes);
    this.ended = new Promise((resolve) => (this.settle = resolve));
  }

  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('a stdio transport runs once; make another');
    this.state = 'open';
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onInputError);
    this.output.on('error', this.onOutputError);
  }

  /** How much of a request's deadline is left, in ms, or undefined for an id this session does not hold. */
  remainingMs(id: RequestId): number | undefined {
    const entry = this.admitted.get(String(id));
    return entry === undefined ? undefined : Math.max(0, entry.admittedAt + this.limits.requestTimeoutMs - Date.now());
  }

  /** Requests admitted now: running, and waiting for a turn. */
  get load(): { readonly running: number; readonly waiting: number; readonly queuedBytes: number } {
    return { running: this.running, waiting: this.admitted.size - this.running, queuedBytes: this.waitingBytes + this.unflushedBytes };
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.state === 'ended') return;
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id;
      if (id !== undefined && id !== null) {
        const key = String(id);
        const entry = this.admitted.get(key);
        // A request this session already answered (its deadline passed): the late answer is dropped.
        if (entry === undefined) return;
        this.retire(key, entry);
      }
    }
    this.write(message);
    this.finishIfDrained();
  }

  /** Ends the session: waiting requests are dropped, running ones aborted, output given the cleanup bound to flush. */
  async close(): Promise<void> {
    await this.end({ reason: 'closed' });
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.state !== 'open') return;
    for (const event of this.splitter.push(chunk)) {
      if (this.state !== 'open') return;
      if (event.kind === 'oversize') {
        this.refuse(null, STDIO_ERRORS.invalidRequest, `request refused: a message longer than ${this.limits.maxFrameBytes} bytes was not read; send it in smaller requests`);
      } else this.receive(event.frame);
    }
  };

  private readonly onEnd = (): void => {
    if (this.state !== 'open') return;
    this.state = 'draining';
    this.finishIfDrained();
  };

  private readonly onInputError = (error: Error): void => {
    void this.end({ reason: 'failed', message: `reading requests failed: ${error.message}`, output: 'kept' });
  };

  private readonly onOutputError = (error: Error): void => {
    void this.end({ reason: 'failed', message: `writing answers failed: ${error.message}`, output: 'abandoned' });
  };

  private receive(frame: Buffer): void {
    if (frame.toString('latin1').trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(frame.toString('utf8'));
    } catch {
      this.refuse(null, STDIO_ERRORS.parse, 'parse error: a message was not JSON');
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const id = typeof value === 'object' && value !== null && 'id' in value && (typeof value.id === 'string' || typeof value.id === 'number') ? value.id : null;
      this.refuse(id, STDIO_ERRORS.invalidRequest, 'invalid request: a message was not a JSON-RPC 2.0 request, notification or response');
      return;
    }
    const message = parsed.data;
    if (isJSONRPCRequest(message)) this.admit(message, frame.length);
    else if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') this.cancel(message);
    else this.onmessage?.(message);
  }

  private admit(request: JSONRPCRequest, bytes: number): void {
    const key = String(request.id);
    if (this.admitted.has(key)) {
      this.refuse(request.id, STDIO_ERRORS.invalidRequest, 'invalid request: its id is already in use by a request that has not been answered');
      return;
    }
    if (this.admitted.size >= this.limits.maxRequests) {
      this.refuse(request.id, STDIO_ERRORS.busy, `server busy: ${this.limits.maxRequests} requests are admitted already (${this.running} running); send it again once one is answered`);
      return;
    }
    const mustWait = this.running >= this.limits.maxActiveRequests;
    const queued = this.waitingBytes + this.unflushedBytes + (mustWait ? bytes : 0);
    if (queued > this.limits.maxQueuedBytes) {
      this.refuse(request.id, STDIO_ERRORS.busy, `server busy: waiting requests and unread answers would hold more than ${this.limits.maxQueuedBytes} bytes; send it again once answers are read`);
      return;
    }
    const entry: Admitted = { request, bytes, admittedAt: Date.now(), state: 'waiting', timer: setTimeout(() => this.expire(key), this.limits.requestTimeoutMs) };
    this.admitted.set(key, entry);
    if (mustWait) this.waitingBytes += bytes;
    else this.run(entry);
  }

  private run(entry: Admitted): void {
    entry.state = 'running';
    this.running += 1;
    this.onmessage?.(entry.request);
  }

  /** Starts waiting requests, oldest first, while there are turns free. */
  private startWaiting(): void {
    for (const entry of this.admitted.values()) {
      if (this.running >= this.limits.maxActiveRequests || this.state === 'ended') return;
      if (entry.state !== 'waiting') continue;
      this.waitingBytes -= entry.bytes;
      this.run(entry);
    }
  }

  /**
   * A cancelled waiting request is dropped (it never ran). A running one is the server's to
   * abort, and is answered by nobody: its turn is held for the cleanup bound, while its handler
   * stops, then freed.
   */
  private cancel(notification: JSONRPCMessage & { params?: { requestId?: RequestId } }): void {
    const id = notification.params?.requestId;
    const key = String(id);
    const entry = id === undefined ? undefined : this.admitted.get(key);
    if (entry?.state === 'waiting') {
      this.retire(key, entry);
      return;
    }
    if (entry?.state === 'running') {
      clearTimeout(entry.timer);
      entry.timer = setTimeout(() => {
        if (this.admitted.get(key) !== entry) return;
        this.retire(key, entry);
        this.finishIfDrained();
      }, this.limits.cleanupTimeoutMs);
    }
    this.onmessage?.(notification);
  }

  /**
   * A request's deadline passed. A waiting one is answered at once; a running one gets the
   * cleanup bound to answer with its own evidence, then is answered here and aborted.
   */
  private expire(key: string): void {
    const entry = this.admitted.get(key);
    if (entry === undefined) return;
    const message = `request timed out: not answered within ${this.limits.requestTimeoutMs} ms`;
    if (entry.state === 'waiting') {
      this.retire(key, entry);
      this.write({ jsonrpc: '2.0', id: entry.request.id, error: { code: STDIO_ERRORS.timeout, message: `${message} (it waited for a turn the whole time)` } });
      this.startWaiting();
      this.finishIfDrained();
      return;
    }
    entry.timer = setTimeout(() => {
      if (this.admitted.get(key) !== entry) return;
      this.retire(key, entry);
      this.write({ jsonrpc: '2.0', id: entry.request.id, error: { code: STDIO_ERRORS.timeout, message } });
      this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: entry.request.id, reason: message } });
      this.finishIfDrained();
    }, this.limits.cleanupTimeoutMs);
  }

  private retire(key: string, entry: Admitted): void {
    clearTimeout(entry.timer);
    this.admitted.delete(key);
    if (entry.state === 'running') this.running -= 1;
    else this.waitingBytes -= entry.bytes;
    this.startWaiting();
  }

  private refuse(id: RequestId | null, code: number, message: string): void {
    this.write({ jsonrpc: '2.0', id, error: { code, message } } as JSONRPCMessage);
  }

  /** Writes one message in order with everything before it, counting it until the client takes it. */
  private write(message: JSONRPCMessage): void {
    if (this.state === 'ended') return;
    const line = Buffer.from(`${JSON.stringify(message)}\n`);
    if (this.unflushedBytes === 0) this.lastProgress = Date.now();
    for (let offset = 0; offset < line.length; offset += WRITE_PIECE_BYTES) {
      const piece = line.subarray(offset, offset + WRITE_PIECE_BYTES);
      this.unflushedBytes += piece.length;
      this.output.write(piece, (error) => {
        if (error) return;
        this.unflushedBytes -= piece.length;
        this.lastProgress = Date.now();
        if (this.unflushedBytes === 0) for (const waiter of this.flushWaiters) waiter();
        this.finishIfDrained();
      });
    }
    this.watchOutput();
  }

  /** While output is unflushed, checks that the client takes some of it every writeTimeoutMs. */
  private watchOutput(): void {
    if (this.stallTimer !== undefined || this.unflushedBytes === 0) return;
    const check = (): void => {
      this.stallTimer = undefined;
      if (this.state === 'ended' || this.unflushedBytes === 0) return;
      const idle = Date.now() - this.lastProgress;
      if (idle >= this.limits.writeTimeoutMs) {
        void this.end({ reason: 'failed', message: `the client took none of ${this.unflushedBytes} bytes of answers for ${this.limits.writeTimeoutMs} ms; it is not reading`, output: 'abandoned' });
        return;
      }
      this.stallTimer = setTimeout(check, this.limits.writeTimeoutMs - idle);
    };
    this.stallTimer = setTimeout(check, this.limits.writeTimeoutMs);
  }

  /** After the client's end of input, the session ends once every admitted request is answered and flushed. */
  private finishIfDrained(): void {
    if (this.state === 'draining' && this.admitted.size === 0 && this.unflushedBytes === 0) void this.end({ reason: 'eof' });
  }

  private async end(how: StdioEnd): Promise<void> {
    if (this.state === 'ended') return;
    const wasOpen = this.state !== 'new';
    this.state = 'ended';
    this.input.off('data', this.onData);
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onInputError);
    // Stop reading a borrowed input nobody else listens to, so it holds the process no longer.
    if (this.input.listenerCount('data') === 0) this.input.pause();
    for (const entry of this.admitted.values()) clearTimeout(entry.timer);
    this.admitted.clear();
    this.running = 0;
    this.waitingBytes = 0;
    if (how.reason === 'closed' && this.unflushedBytes > 0) await this.flushed(this.limits.cleanupTimeoutMs);
    clearTimeout(this.stallTimer);
    this.output.off('error', this.onOutputError);
    if (how.reason === 'failed') this.onerror?.(new Error(how.message));
    this.settle(how);
    if (wasOpen) this.onclose?.();
  }

  /** Resolves when written output is flushed, or after `ms`. */
  private flushed(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.flushWaiters.add(() => {
        clearTimeout(timer);
        resolve();
      });
    }).finally(() => this.flushWaiters.clear());
  }
}
