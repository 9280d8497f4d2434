/** The termination signals a pane-input or lifecycle span defers. */
export const DEFERRED_SIGNALS: readonly NodeJS.Signals[] = Object.freeze(['SIGINT', 'SIGTERM', 'SIGHUP']);

/** The part of `process` a span needs; injectable so nesting is testable in-process. */
export interface SignalHost {
  readonly pid: number;
  on(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  kill(pid: number, signal: NodeJS.Signals): unknown;
}

/**
 * Defers SIGINT, SIGTERM and SIGHUP across spans in which an interrupted process would leave
 * a pane or the registry half-done. Node cannot mask signals, so while any span is open a
 * listener records the first signal instead of letting it kill the process; when the
 * outermost span ends the listeners are removed and the signal is raised again, so it takes
 * its normal action then (by default the process dies of it). Spans nest. SIGKILL cannot be
 * deferred.
 */
export class TerminationSpans {
  private readonly host: SignalHost;
  private depthCount = 0;
  private pending: NodeJS.Signals | undefined;
  private readonly listener = (signal: NodeJS.Signals): void => {
    this.pending ??= signal;
  };

  constructor(host: SignalHost = process) {
    this.host = host;
  }

  get depth(): number {
    return this.depthCount;
  }

  /** The signal waiting for the outermost span to end, if any. */
  get deferred(): NodeJS.Signals | undefined {
    return this.pending;
  }

  enter(): void {
    if (this.depthCount === 0) for (const signal of DEFERRED_SIGNALS) this.host.on(signal, this.listener);
    this.depthCount += 1;
  }

  exit(): void {
    if (this.depthCount === 0) throw new Error('termination span exited more often than entered');
    this.depthCount -= 1;
    if (this.depthCount > 0) return;
    for (const signal of DEFERRED_SIGNALS) this.host.off(signal, this.listener);
    const signal = this.pending;
    this.pending = undefined;
    if (signal) this.host.kill(this.host.pid, signal);
  }

  /** Runs body inside a span; a signal received meanwhile is delivered once the outermost span ends. */
  async run<T>(body: () => Promise<T> | T): Promise<T> {
    this.enter();
    try {
      return await body();
    } finally {
      this.exit();
    }
  }
}

/** The process-wide spans every pane-input and lifecycle operation shares. */
export const terminationSpans = new TerminationSpans();
