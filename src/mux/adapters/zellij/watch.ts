/**
 * zellij's watch is a hybrid, because its CLI announces no structure change at all:
 * - a census (a fresh listing) finds topology changes: 3 s after a change, doubling to 12 s while
 *   nothing moves; 1.5 s to 3 s while someone is watching. The idle ceiling is the declared
 *   topologyLatency; refresh() takes a census now and drops the interval to its floor;
 * - `subscribe --format json` pushes pane repaints for the watched panes, and a pane_closed that
 *   shortens the census. It only follows panes the latest census listed, since zellij refuses the
 *   whole subscription for one pane it cannot find; a stream that ends is restarted by the next census.
 */
import { createInterface } from 'node:readline';
import type { LongLivedChild } from '../../../process/index.js';
import type { MuxAttention, MuxWatch, MuxWatchOptions } from '../../types.js';
import { parseStreamLine } from './protocol.js';

export interface CensusIntervals {
  readonly idleFloorMs: number;
  readonly idleCeilingMs: number;
  readonly watchedFloorMs: number;
  readonly watchedCeilingMs: number;
}

export const DEFAULT_CENSUS_INTERVALS: CensusIntervals = Object.freeze({ idleFloorMs: 3_000, idleCeilingMs: 12_000, watchedFloorMs: 1_500, watchedCeilingMs: 3_000 });

export interface Census {
  /** Everything structural; a different signature is a topology change. */
  readonly signature: string;
  readonly paneIds: ReadonlySet<string>;
}

export interface CensusSource {
  census(): Promise<Census>;
  /** Starts `zellij subscribe` for these panes. */
  subscribe(paneIds: readonly string[]): Promise<LongLivedChild>;
}

/** The next census delay: the floor after a change, otherwise double the last, within the attention's bounds. */
export function nextCensusDelay(previousMs: number | undefined, changed: boolean, attention: MuxAttention, intervals: CensusIntervals): number {
  const [floor, ceiling] = attention === 'watched' ? [intervals.watchedFloorMs, intervals.watchedCeilingMs] : [intervals.idleFloorMs, intervals.idleCeilingMs];
  if (changed || previousMs === undefined) return floor;
  return Math.min(ceiling, Math.max(floor, previousMs * 2));
}

export class ZellijWatch implements MuxWatch {
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private delayMs: number | undefined;
  private signature: string | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stream: { child: LongLivedChild; paneIds: string } | undefined;
  private readonly screens = new Map<string, string>();
  private onPainted: (() => void) | undefined;

  constructor(
    private readonly source: CensusSource,
    private readonly options: MuxWatchOptions,
    private readonly intervals: CensusIntervals,
    /** How long the watch waits for a new stream's first frames before it counts itself up anyway. */
    private readonly streamReadyMs: number,
    private readonly onClosed: (watch: ZellijWatch) => void,
  ) {
    void this.takeCensus();
  }

  /** Census now, and start again from the floor. */
  refresh(): Promise<void> {
    if (this.closed) return Promise.resolve();
    this.delayMs = undefined;
    return this.takeCensus();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    this.stopStream();
    this.onClosed(this);
  }

  private takeCensus(): Promise<void> {
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    clearTimeout(this.timer);
    this.running = this.census().finally(() => {
      this.running = undefined;
      if (this.again && !this.closed) {
        this.again = false;
        void this.takeCensus();
      }
    });
    return this.running;
  }

  private async census(): Promise<void> {
    let census: Census;
    try {
      census = await this.source.census();
    } catch (error) {
      this.down((error as Error).message);
      return;
    }
    if (this.closed) return;
    const first = this.signature === undefined;
    const changed = !first && census.signature !== this.signature;
    this.signature = census.signature;
    if (changed) this.options.onTopologyChange?.();
    await this.keepStream(census.paneIds);
    if (this.closed) return;
    if (first) this.options.onUp?.();
    const attention = this.options.attention?.() ?? 'idle';
    this.delayMs = nextCensusDelay(this.delayMs, changed, attention, this.intervals);
    this.timer = setTimeout(() => void this.takeCensus(), this.delayMs);
    this.timer.unref();
  }

  private down(reason: string): void {
    if (this.closed) return;
    this.close();
    this.options.onDown?.(reason);
  }

  private async keepStream(listed: ReadonlySet<string>): Promise<void> {
    const wanted = (this.options.panes ?? []).filter((paneId) => listed.has(paneId));
    const key = wanted.join(' ');
    if (this.stream?.paneIds === key) return;
    this.stopStream();
    this.screens.clear();
    if (wanted.length === 0) return;
    let child: LongLivedChild;
    try {
      child = await this.source.subscribe(wanted);
    } catch {
      // No stream means no pushed repaints; the next census tries again.
      return;
    }
    if (this.closed) {
      void child.stop();
      return;
    }
    this.stream = { child, paneIds: key };
    // The watch is up once the stream has painted every pane it follows, so no change falls between the two.
    const painted = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, this.streamReadyMs);
      timer.unref();
      this.onPainted = () => {
        if (!wanted.every((paneId) => this.screens.has(paneId))) return;
        clearTimeout(timer);
        resolve();
      };
      void child.exited.then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => this.onStreamLine(line));
    void child.exited.then(() => {
      if (this.stream?.child === child) this.stream = undefined;
    });
    await painted;
    this.onPainted = undefined;
  }

  private onStreamLine(line: string): void {
    if (this.closed) return;
    const frame = parseStreamLine(line);
    if (frame === undefined) return;
    if (frame.kind === 'closed') {
      this.screens.delete(frame.paneId);
      this.options.onTopologyChange?.();
      void this.refresh();
      return;
    }
    const previous = this.screens.get(frame.paneId);
    this.screens.set(frame.paneId, frame.screen);
    this.onPainted?.();
    if (!frame.initial && previous !== frame.screen) this.options.onPaneChange?.(frame.paneId);
  }

  private stopStream(): void {
    const stream = this.stream;
    this.stream = undefined;
    if (stream !== undefined) void stream.child.stop().catch(() => undefined);
  }
}
