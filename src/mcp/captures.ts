import { randomBytes } from 'node:crypto';
import { ArgumentError } from '../process/index.js';

export interface CaptureLimits {
  maxCaptures: number;
  maxBytes: number;
  ttlMs: number;
}

export const DEFAULT_CAPTURE_LIMITS: Readonly<CaptureLimits> = Object.freeze({ maxCaptures: 16, maxBytes: 8 * 1024 * 1024, ttlMs: 30_000 });

/** What a capture cursor remembers: where in the pane's history the reader has got to. */
export interface RetainedCapture {
  readonly paneId: string;
  /** Absolute line number (history lines + screen row) of the last line the reader saw. */
  readonly lastLine: number;
  readonly text: string;
}

interface Entry extends RetainedCapture {
  readonly cursor: string;
  readonly bytes: number;
  readonly expiresAt: number;
}

/**
 * Bounded capture retention: at most 16 captures and 8 MiB, each for 30 s. The oldest are
 * evicted first; an expired or evicted cursor is an error the agent can act on.
 */
export class CaptureStore {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(
    private readonly limits: CaptureLimits = DEFAULT_CAPTURE_LIMITS,
    private readonly now: () => number = Date.now,
  ) {}

  retain(capture: RetainedCapture): string {
    this.expire();
    const cursor = `c_${randomBytes(9).toString('base64url')}`;
    const bytes = Buffer.byteLength(capture.text);
    if (bytes > this.limits.maxBytes) throw new ArgumentError('capture is larger than the retention limit; ask for fewer lines');
    this.entries.set(cursor, { ...capture, cursor, bytes, expiresAt: this.now() + this.limits.ttlMs });
    this.bytes += bytes;
    while (this.entries.size > this.limits.maxCaptures || this.bytes > this.limits.maxBytes) {
      const oldest = this.entries.keys().next().value as string;
      this.drop(oldest);
    }
    return cursor;
  }

  /** The retained capture for a cursor; throws when it is unknown, expired or evicted. */
  take(cursor: string, paneId: string): RetainedCapture {
    this.expire();
    const entry = this.entries.get(cursor);
    if (!entry) throw new ArgumentError('capture cursor is unknown or expired (cursors live 30 s and at most 16 are kept); capture again without "since"');
    if (entry.paneId !== paneId) throw new ArgumentError('capture cursor belongs to another pane');
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }

  get retainedBytes(): number {
    return this.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }

  private drop(cursor: string): void {
    const entry = this.entries.get(cursor);
    if (!entry) return;
    this.entries.delete(cursor);
    this.bytes -= entry.bytes;
  }

  private expire(): void {
    const now = this.now();
    for (const [cursor, entry] of this.entries) if (entry.expiresAt <= now) this.drop(cursor);
  }
}
