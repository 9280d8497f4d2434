import { performance } from 'node:perf_hooks';
import { AbortedError, ArgumentError, TimeoutError, type Delivery } from './errors.js';

export const DEFAULT_OPERATION_TIMEOUT_MS = 5000;

/** Every live operation accepts a total deadline and an AbortSignal. */
export interface OperationOptions {
  /** Total deadline for the whole operation, including waiting for admission. Default 5 000 ms. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** One operation's budget, shared by every command the operation needs. */
export class Deadline {
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  private readonly expiresAt: number;

  private constructor(timeoutMs: number, signal: AbortSignal | undefined) {
    this.timeoutMs = timeoutMs;
    this.signal = signal;
    this.expiresAt = performance.now() + timeoutMs;
  }

  static start(options: OperationOptions = {}, defaultMs = DEFAULT_OPERATION_TIMEOUT_MS): Deadline {
    const timeoutMs = options.timeoutMs ?? defaultMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ArgumentError(`timeoutMs must be a positive number, got ${timeoutMs}`);
    // Whole milliseconds: a budget left over from another (performance.now() - start) is quoted in messages.
    return new Deadline(Math.ceil(timeoutMs), options.signal);
  }

  /** Milliseconds left; throws when none are, saying what may already have happened. */
  remaining(delivery: Delivery = 'not_sent'): number {
    if (this.signal?.aborted) throw new AbortedError('operation was aborted', { delivery });
    const left = this.expiresAt - performance.now();
    if (left <= 0) throw new TimeoutError(`operation did not finish within ${this.timeoutMs} ms`, this.timeoutMs, { delivery });
    return Math.ceil(left);
  }

  get expired(): boolean {
    return this.expiresAt - performance.now() <= 0;
  }
}
