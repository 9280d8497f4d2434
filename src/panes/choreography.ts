import { performance } from 'node:perf_hooks';
import type { PaneChannel } from '../mux/index.js';
import { AbortedError } from '../process/index.js';
import type { PaneFacts } from './facts.js';

/** Keys in the port's neutral spelling; the adapter translates them and leaves any mode (tmux copy-mode) before sending. */
export const KEY_CLEAR_LINE = 'ctrl+u';
/** What a shell at its prompt takes as "drop this line": a half-typed command, or a quote still waiting for its end. */
export const KEY_CANCEL_LINE = 'ctrl+c';
export const KEY_ENTER = 'Enter';
export const KEY_ERASE = 'Backspace';

/** What the readiness probe and the delivery choreography use of a pane's channel. */
export type ChoreographyChannel = Pick<PaneChannel, 'read' | 'grid' | 'type' | 'paste' | 'keys'>;

/** One pane as the probe and the delivery drive it. */
export interface DrivenPane {
  readonly channel: ChoreographyChannel;
  /** What runs in it, read once before anything is typed. */
  readonly facts: PaneFacts;
  /**
   * The multiplexer takes a bracketed paste (pasteText). Where it does not, text for an agent is
   * typed, which only a single line survives: a line break would be read as Enter.
   */
  readonly pastes: boolean;
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The waits between a keystroke and the read that checks it. */
export interface Pacing {
  /** The longest a send may take to show on the screen; the verifying reads stop as soon as it does. */
  settleMs: number;
  /** Between two screen reads while watching for a send to show. */
  watchMs: number;
  /** Between the two reads whose difference separates booting from parked. */
  stabilityMs: number;
  /** Between two screen reads while waiting for the pane to show something. */
  pollMs: number;
  sleep: Sleep;
  /** Monotonic milliseconds. */
  now: () => number;
}

const sleepFor: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** How often a pane is read while a check waits for a send to show: a live program shows it within milliseconds. */
export const WATCH_INTERVAL_MS = 15;

export const DEFAULT_PACING: Readonly<Pacing> = Object.freeze({
  settleMs: 300,
  stabilityMs: 500,
  pollMs: 100,
  watchMs: WATCH_INTERVAL_MS,
  sleep: sleepFor,
  now: () => performance.now(),
});

/**
 * Reads every `watchMs` until `seen` holds of a reading or `withinMs` has passed, and returns the
 * last reading. The bound is for programs that are slow or never show the send; a live one ends
 * the watch at the first read or within an interval or two.
 */
export async function watchUntil<T>(
  read: () => Promise<T>,
  seen: (reading: T) => boolean,
  withinMs: number,
  pacing: Pick<Pacing, 'watchMs' | 'sleep' | 'now'>,
  signal?: AbortSignal,
): Promise<{ reading: T; seen: boolean }> {
  const until = pacing.now() + withinMs;
  for (;;) {
    if (signal?.aborted) throw new AbortedError();
    const reading = await read();
    if (seen(reading)) return { reading, seen: true };
    const left = until - pacing.now();
    if (left <= 0) return { reading, seen: false };
    await pacing.sleep(Math.min(pacing.watchMs, left), signal);
  }
}
