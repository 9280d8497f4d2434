import { performance } from 'node:perf_hooks';
import type { PaneChannel } from '../mux/index.js';
import { AbortedError } from '../process/index.js';
import type { PaneFacts } from './facts.js';

/** Keys in the port's neutral spelling; the adapter translates them and leaves any mode (tmux copy-mode) before sending. */
export const KEY_CLEAR_LINE = 'ctrl+u';
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

export const DEFAULT_PACING: Readonly<Pacing> = Object.freeze({ settleMs: 300, stabilityMs: 500, pollMs: 100, watchMs: 15, sleep: sleepFor, now: () => performance.now() });
