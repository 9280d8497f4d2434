/**
 * The event stream's memory: every hint gets an id `<run>.<sequence>`, the last `capacity` are
 * kept in a ring, and a client that reconnects with Last-Event-ID gets exactly the ones it missed,
 * or a `resync` when they are no longer kept or its id is from an earlier run. Memory is bounded
 * by the ring, whatever the rate of events.
 */
import { randomBytes } from 'node:crypto';
import type { EventData, EventKind } from './protocol.js';

export interface StreamEvent<K extends EventKind = EventKind> {
  readonly id: string;
  readonly kind: K;
  readonly data: EventData[K];
}

export const DEFAULT_EVENT_CAPACITY = 1000;

/** One event in the text/event-stream framing. */
export function formatEvent(event: StreamEvent): string {
  return `id: ${event.id}\nevent: ${event.kind}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

export type EventListener = (event: StreamEvent) => void;

export class EventHub {
  private readonly run = randomBytes(4).toString('hex');
  private sequence = 0;
  private readonly ring: StreamEvent[] = [];
  private start = 0;
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly capacity: number = DEFAULT_EVENT_CAPACITY) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('the event ring needs room for at least one event');
  }

  publish<K extends EventKind>(kind: K, data: EventData[K]): StreamEvent<K> {
    this.sequence += 1;
    const event: StreamEvent<K> = { id: `${this.run}.${this.sequence}`, kind, data };
    if (this.ring.length < this.capacity) this.ring.push(event);
    else {
      this.ring[this.start] = event;
      this.start = (this.start + 1) % this.capacity;
    }
    for (const listener of [...this.listeners]) listener(event);
    return event;
  }

  /** The id of the newest event ("<run>.0" before the first). */
  lastId(): string {
    return `${this.run}.${this.sequence}`;
  }

  /**
   * The events after `lastEventId`, oldest first; undefined when the caller must resync: the id
   * is from another run, malformed, ahead of this run, or older than the ring reaches.
   */
  since(lastEventId: string): StreamEvent[] | undefined {
    const match = /^([0-9a-f]+)\.(\d+)$/.exec(lastEventId);
    if (match === null || match[1] !== this.run) return undefined;
    const seen = Number(match[2]);
    if (seen > this.sequence) return undefined;
    const kept = this.ordered();
    const oldest = kept.length === 0 ? this.sequence + 1 : this.sequence - kept.length + 1;
    if (seen + 1 < oldest) return undefined;
    return kept.slice(kept.length - (this.sequence - seen));
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.ring.length;
  }

  get subscribers(): number {
    return this.listeners.size;
  }

  private ordered(): StreamEvent[] {
    return [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
  }
}
