import { AbortedError, ArgumentError, TimeoutError } from '../errors.js';
import { ConnectionLostError, SubscriptionOverflowError } from './errors.js';
import type { ControlEventKind, DecodedNotification } from './parser.js';

/** A notification (or drover's gap evidence) as delivered to subscribers. */
export interface ControlEvent extends DecodedNotification {
  /** Position in the connection's event stream; it keeps counting across reconnects. */
  readonly sequence: number;
  /** The connection generation the event arrived on. */
  readonly generation: number;
  /** Gaps: how many events and bytes this subscriber lost. */
  readonly lostEvents?: number;
  readonly lostBytes?: number;
  readonly firstLostSequence?: number;
  readonly lastLostSequence?: number;
}

/**
 * reliable: every event is kept, and when the bounds are reached the subscription stops
 * and reports SubscriptionOverflowError after the kept events. tail: the newest events are
 * kept and the oldest dropped, with a gap event saying how many were lost.
 */
export type SubscriptionMode = 'reliable' | 'tail';

export interface SubscribeOptions {
  /** Only events about these panes (plus gaps). */
  panes?: readonly string[];
  /** Only these kinds of events (plus gaps). */
  kinds?: readonly ControlEventKind[];
  mode?: SubscriptionMode;
  /** Events held for a slow reader. Default 1024. */
  maxEvents?: number;
  /** Bytes held for a slow reader (raw lines plus decoded output). Default 1 MiB. */
  maxBytes?: number;
}

export interface NextOptions {
  /** Give up waiting after this long (TimeoutError); without it, wait until an event, the end or a failure. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface SubscriptionDiagnostics {
  readonly mode: SubscriptionMode;
  readonly closed: boolean;
  readonly queuedEvents: number;
  readonly retainedBytes: number;
  /** Events lost and not yet reported to the reader by a gap (tail) or overflow error (reliable). */
  readonly pendingLostEvents: number;
  readonly gaps: number;
  readonly overflowed: boolean;
  readonly limits: { readonly maxEvents: number; readonly maxBytes: number };
}

export const DEFAULT_SUBSCRIPTION_LIMITS = Object.freeze({ maxEvents: 1024, maxBytes: 1024 * 1024 });

interface Waiter {
  resolve(result: IteratorResult<ControlEvent>): void;
  reject(error: Error): void;
}

interface Loss {
  events: number;
  bytes: number;
  first: number;
  last: number;
}

function eventBytes(event: ControlEvent): number {
  return event.raw.length + (event.data?.length ?? 0);
}

/**
 * A bounded stream of one connection's events. The connection's reader only ever appends
 * here and never waits for the consumer, so a slow consumer cannot stall the connection.
 */
export class Subscription implements AsyncIterableIterator<ControlEvent> {
  readonly mode: SubscriptionMode;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private readonly panes: ReadonlySet<string> | undefined;
  private readonly kinds: ReadonlySet<ControlEventKind> | undefined;
  private queue: ControlEvent[] = [];
  private head = 0;
  private queuedBytes = 0;
  private waiters: Waiter[] = [];
  private loss: Loss | undefined;
  private overflowed = false;
  private interruption: ConnectionLostError | undefined;
  private ended = false;
  private closed = false;
  private gapCount = 0;

  /** @internal Created by ControlConnection.subscribe. */
  constructor(
    options: SubscribeOptions,
    private readonly generation: () => number,
    private readonly detach: (subscription: Subscription) => void,
  ) {
    const mode = options.mode ?? 'reliable';
    if (mode !== 'reliable' && mode !== 'tail') throw new ArgumentError(`subscription mode must be "reliable" or "tail", not ${JSON.stringify(mode)}`);
    this.mode = mode;
    this.maxEvents = positive('maxEvents', options.maxEvents ?? DEFAULT_SUBSCRIPTION_LIMITS.maxEvents);
    this.maxBytes = positive('maxBytes', options.maxBytes ?? DEFAULT_SUBSCRIPTION_LIMITS.maxBytes);
    this.panes = options.panes ? new Set(options.panes) : undefined;
    this.kinds = options.kinds ? new Set(options.kinds) : undefined;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** @internal Offers an event from the connection's reader; never blocks. */
  offer(event: ControlEvent): void {
    if (this.closed || this.ended) return;
    if (event.kind !== 'gap') {
      if (this.kinds && !this.kinds.has(event.kind)) return;
      if (this.panes && (event.pane === undefined || !this.panes.has(event.pane))) return;
    }
    const size = eventBytes(event);
    if (this.overflowed) {
      this.recordLoss(event, size);
      return;
    }
    if (event.kind !== 'gap' && !this.fits(size)) {
      if (this.mode === 'reliable') {
        this.overflowed = true;
        this.recordLoss(event, size);
        this.wake();
        return;
      }
      while (this.length > 0 && !this.fits(size)) {
        const dropped = this.queue[this.head]!;
        this.shift();
        this.recordLoss(dropped, eventBytes(dropped));
      }
      if (!this.fits(size)) {
        this.recordLoss(event, size);
        this.wake();
        return;
      }
    }
    this.queue.push(event);
    this.queuedBytes += size;
    this.wake();
  }

  /** @internal The connection was lost: waiting readers get the error until a reconnect. */
  interrupt(error: ConnectionLostError): void {
    if (this.closed || this.ended) return;
    this.interruption = error;
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }

  /** @internal A new generation carries events again; the reader first sees the gap. */
  resume(gap: ControlEvent): void {
    if (this.closed || this.ended) return;
    this.interruption = undefined;
    this.gapCount += 1;
    this.offer(gap);
  }

  /** @internal The connection was closed: buffered events stay readable, then the stream ends. */
  end(): void {
    this.ended = true;
    this.wake();
  }

  /** The next event; `done` once the subscription or its connection is closed. */
  next(options: NextOptions = {}): Promise<IteratorResult<ControlEvent>> {
    const ready = this.take();
    if (ready) return ready;
    if (options.signal?.aborted) return Promise.reject(new AbortedError('the wait for an event was aborted', { delivery: 'not_sent' }));
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const cleanup = (): void => {
        if (timer) clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
      };
      const waiter: Waiter = {
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      const onAbort = (): void => waiter.reject(new AbortedError('the wait for an event was aborted', { delivery: 'not_sent' }));
      if (options.timeoutMs !== undefined) {
        if (!Number.isFinite(options.timeoutMs) || options.timeoutMs <= 0) throw new ArgumentError('timeoutMs must be a positive number');
        const timeoutMs = options.timeoutMs;
        timer = setTimeout(() => waiter.reject(new TimeoutError(`no event arrived within ${timeoutMs} ms`, timeoutMs, { phase: 'subscribe', delivery: 'not_sent' })), timeoutMs);
      }
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Events already buffered, without waiting (gaps included). */
  drain(): ControlEvent[] {
    const events: ControlEvent[] = [];
    for (;;) {
      const gap = this.takeGap();
      if (gap) events.push(gap);
      if (this.length === 0) return events;
      events.push(this.shift());
    }
  }

  async return(): Promise<IteratorResult<ControlEvent>> {
    this.close();
    return { done: true, value: undefined };
  }

  /** Stops the subscription, discards what it holds and ends waiting readers. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.loss = undefined;
    for (const waiter of this.waiters.splice(0)) waiter.resolve({ done: true, value: undefined });
    this.detach(this);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Local counts only: no I/O, identifiers or pane bytes. */
  diagnostics(): SubscriptionDiagnostics {
    return Object.freeze({
      mode: this.mode,
      closed: this.closed,
      queuedEvents: this.length,
      retainedBytes: this.queuedBytes,
      pendingLostEvents: this.loss?.events ?? 0,
      gaps: this.gapCount,
      overflowed: this.overflowed,
      limits: Object.freeze({ maxEvents: this.maxEvents, maxBytes: this.maxBytes }),
    });
  }

  private get length(): number {
    return this.queue.length - this.head;
  }

  private fits(size: number): boolean {
    return this.length < this.maxEvents && this.queuedBytes + size <= this.maxBytes;
  }

  private shift(): ControlEvent {
    const event = this.queue[this.head]!;
    this.head += 1;
    this.queuedBytes -= eventBytes(event);
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return event;
  }

  private recordLoss(event: ControlEvent, size: number): void {
    if (!this.loss) this.loss = { events: 0, bytes: 0, first: event.sequence, last: event.sequence };
    this.loss.events += 1;
    this.loss.bytes += size;
    this.loss.last = event.sequence;
  }

  /** In tail mode, lost events are always the oldest, so their gap comes first. */
  private takeGap(): ControlEvent | undefined {
    if (this.mode !== 'tail' || !this.loss) return undefined;
    const loss = this.loss;
    this.loss = undefined;
    this.gapCount += 1;
    return Object.freeze({
      kind: 'gap',
      raw: Buffer.alloc(0),
      sequence: loss.first,
      generation: this.generation(),
      reason: 'overflow',
      lostEvents: loss.events,
      lostBytes: loss.bytes,
      firstLostSequence: loss.first,
      lastLostSequence: loss.last,
    });
  }

  private take(): Promise<IteratorResult<ControlEvent>> | undefined {
    if (this.closed) return Promise.resolve({ done: true, value: undefined });
    const gap = this.takeGap();
    if (gap) return Promise.resolve({ done: false, value: gap });
    if (this.length > 0) return Promise.resolve({ done: false, value: this.shift() });
    if (this.overflowed) {
      const lost = this.loss?.events ?? 0;
      return Promise.reject(
        new SubscriptionOverflowError(`the subscription overflowed (${this.maxEvents} events / ${this.maxBytes} bytes held); ${lost} later events were not kept`, lost),
      );
    }
    if (this.interruption) return Promise.reject(this.interruption);
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return undefined;
  }

  private wake(): void {
    while (this.waiters.length > 0) {
      const ready = this.take();
      if (!ready) return;
      const waiter = this.waiters.shift()!;
      ready.then(waiter.resolve, waiter.reject);
    }
  }
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new ArgumentError(`${name} must be a positive integer`);
  return value;
}
