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

export { formatTimestamp, wallMicros } from '../process/index.js';
