import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';

/** Monotonic time and waiting, injectable so budgets and settles are testable without real time. */
export interface Clock {
  /** Monotonic milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const systemClock: Clock = Object.freeze({
  now: () => performance.now(),
  sleep: (ms: number) => (ms > 0 ? delay(ms) : Promise.resolve()),
});

/**
 * Wall-clock microseconds since the epoch. Anchored once per process and advanced by the
 * monotonic clock, so timestamps written by one process never go backwards.
 */
export function wallMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** `2026-10-24T09:00:00.000000+00:00`: UTC, microseconds, sortable as text. */
export function formatTimestamp(micros: number): string {
  if (!Number.isSafeInteger(micros) || micros < 0) throw new RangeError(`timestamp must be a non-negative integer of microseconds, got ${micros}`);
  const millis = Math.floor(micros / 1000);
  const iso = new Date(millis).toISOString();
  const fraction = String(micros % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 19)}.${fraction}+00:00`;
}
