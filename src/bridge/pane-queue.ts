import type { PaneTarget } from './supervisor.js';

/** Runs one write to a pane while whatever else types into it (a fleet delivery) is held off. */
export type PaneInputGuard = <T>(pane: PaneTarget, write: () => Promise<T>) => Promise<T>;

/**
 * A serialised section per pane: two writes to one pane never interleave their keystrokes,
 * within this server (the queue, by pane key, so panes of two runs of the multiplexer never share
 * a place in it) or with other drover processes (the input guard).
 */
export class PaneQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(private readonly guard: PaneInputGuard) {}

  run<T>(pane: PaneTarget, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(pane.paneKey) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.guard(pane, task));
    const tail = next.catch(() => undefined);
    this.tails.set(pane.paneKey, tail);
    void tail.then(() => {
      if (this.tails.get(pane.paneKey) === tail) this.tails.delete(pane.paneKey);
    });
    return next;
  }
}
