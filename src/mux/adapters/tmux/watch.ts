/**
 * tmux's watch pushes: control clients (tmux -C, attached without taking a size) announce
 * window and session changes, and %output for the panes of the session they are attached to,
 * so one client is attached per session holding a watched pane (at most three: each is a tmux
 * client, and shows its session as attached), or one for topology alone. A resync every 5 s is
 * the backstop for what no client hears (sessions with no control client, a tmux without control
 * mode): it reads each window's last activity, which tmux keeps to the second for every window,
 * and a watched pane no client follows whose window was active since the last resync is
 * announced. refresh() resyncs now and re-arms it.
 */
import { TOPOLOGY_KINDS, type ControlConnection, type ControlEvent, type Server, type Snapshot as TmuxSnapshot } from '../../../tmux/index.js';
import type { MuxWatch, MuxWatchOptions } from '../../types.js';

const MAX_CONTROL_CLIENTS = 3;
/**
 * Output arrives in bursts: the first output of a quiet pane is announced at once, the rest of
 * its burst once per this interval, which is enough to say "look again".
 */
const OUTPUT_COALESCE_MS = 100;

/** What a resync reads of a fresh listing. */
export interface TmuxCensus {
  /** The listing's structure (structureSignature). */
  readonly signature: string;
  /** Each pane's window's last activity, in whole seconds since the epoch, by tmux pane id. */
  readonly activity: ReadonlyMap<string, number>;
}

export interface TmuxWatchSource {
  /** A fresh listing's census; throws when tmux cannot be read. */
  census(): Promise<TmuxCensus>;
  server(): Promise<Server>;
  nativePane(paneId: string): string | undefined;
  paneId(native: string): string;
}

/** Everything structural about a listing, and nothing that moves by itself (activity, focus, size). */
export function structureSignature(listing: TmuxSnapshot): string {
  return JSON.stringify([
    listing.sessions.toArray().map((session) => [session.sessionId, session.sessionName]),
    listing.links.map((link) => [link.sessionId, link.windowIndex, link.windowId]),
    listing.windows.toArray().map((window) => [window.windowId, window.windowName]),
    listing.panes.toArray().map((pane) => [pane.paneId, pane.windowId, pane.paneDead, pane.paneTitle]),
  ]);
}

/** The census of a listing. */
export function censusOf(listing: TmuxSnapshot): TmuxCensus {
  const windowActivity = new Map(listing.windows.toArray().map((window) => [window.windowId as string, window.windowActivity]));
  const activity = new Map<string, number>();
  for (const pane of listing.panes.toArray()) {
    const seconds = windowActivity.get(pane.windowId);
    if (seconds !== undefined) activity.set(pane.paneId, seconds);
  }
  return { signature: structureSignature(listing), activity };
}

export class TmuxWatch implements MuxWatch {
  private closed = false;
  private signature: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Panes announced within the last interval, and whether they printed again since. */
  private readonly bursts = new Map<string, { timer: NodeJS.Timeout; again: boolean }>();
  /** Each control client, with the watched panes whose output it hears. */
  private readonly connections = new Map<ControlConnection, ReadonlySet<string>>();
  private readonly watched: ReadonlySet<string>;
  /** The second the last census began: a window active since then may have printed after tmux listed it. */
  private lastCensusSecond: number | undefined;

  constructor(
    private readonly source: TmuxWatchSource,
    private readonly options: MuxWatchOptions,
    private readonly resyncMs: number,
    private readonly onClosed: (watch: TmuxWatch) => void,
  ) {
    this.watched = new Set(options.panes ?? []);
    void this.start();
  }

  private async start(): Promise<void> {
    if (!(await this.resync())) return;
    await this.attach();
    if (this.closed) return;
    this.options.onUp?.();
    this.arm();
  }

  /** Resync now and start the backstop's interval again. */
  async refresh(): Promise<void> {
    if (this.closed || this.signature === undefined) return;
    clearTimeout(this.timer);
    if (await this.resync()) this.arm();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    for (const burst of this.bursts.values()) clearTimeout(burst.timer);
    this.bursts.clear();
    for (const connection of this.connections.keys()) void connection.close().catch(() => undefined);
    this.connections.clear();
    this.onClosed(this);
  }

  private arm(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void (async () => {
        if (!(await this.resync())) return;
        if (this.connections.size === 0) await this.attach();
        this.arm();
      })();
    }, this.resyncMs);
    this.timer.unref();
  }

  /** Takes a census; false (after onDown) when tmux cannot be read. */
  private async resync(): Promise<boolean> {
    const startedSecond = Math.floor(Date.now() / 1000);
    let census: TmuxCensus;
    try {
      census = await this.source.census();
    } catch (error) {
      if (!this.closed) {
        this.close();
        this.options.onDown?.((error as Error).message);
      }
      return false;
    }
    if (this.closed) return false;
    const changed = this.signature !== undefined && census.signature !== this.signature;
    this.signature = census.signature;
    if (changed) this.options.onTopologyChange?.();
    this.announceActive(census.activity);
    this.lastCensusSecond = startedSecond;
    return true;
  }

  /** Announces each watched pane no control client follows whose window was active since the last census began. */
  private announceActive(activity: ReadonlyMap<string, number>): void {
    const since = this.lastCensusSecond;
    if (since === undefined) return;
    const followed = new Set([...this.connections.values()].flatMap((panes) => [...panes]));
    for (const paneId of this.watched) {
      if (followed.has(paneId) || this.bursts.has(paneId)) continue;
      const native = this.source.nativePane(paneId);
      const seconds = native === undefined ? undefined : activity.get(native);
      if (seconds !== undefined && seconds >= since) this.announce(paneId);
    }
  }

  /** Attaches control clients; without one (no session yet) the resync carries the watch. */
  private async attach(): Promise<void> {
    let server: Server;
    try {
      server = await this.source.server();
    } catch {
      return;
    }
    const panesBySession = new Map<string, string[]>();
    for (const paneId of this.watched) {
      const native = this.source.nativePane(paneId);
      if (native === undefined) continue;
      try {
        const session = (await server.pane(native).display('#{session_id}')).toString('utf8').trim();
        panesBySession.set(session, [...(panesBySession.get(session) ?? []), paneId]);
      } catch {
        // A watched pane that is gone has no output to report.
      }
    }
    const targets: (string | undefined)[] = panesBySession.size === 0 ? [undefined] : [...panesBySession.keys()].slice(0, MAX_CONTROL_CLIENTS);
    for (const session of targets) {
      if (this.closed) return;
      try {
        const connection = await server.openControl({ session: session === undefined ? undefined : server.session(session), output: session !== undefined, anchor: false });
        if (this.closed) {
          void connection.close().catch(() => undefined);
          return;
        }
        this.connections.set(connection, new Set(session === undefined ? [] : panesBySession.get(session)));
        void this.follow(connection);
      } catch {
        // No session to attach to, or no room for another client: the resync still covers topology.
      }
    }
  }

  private async follow(connection: ControlConnection): Promise<void> {
    const subscription = connection.subscribe({ kinds: [...TOPOLOGY_KINDS, 'output', 'extended-output'], mode: 'tail' });
    try {
      for await (const event of subscription) this.onEvent(event);
    } catch {
      // The client was lost; the next resync says whether tmux itself went away.
    } finally {
      this.connections.delete(connection);
      void connection.close().catch(() => undefined);
    }
  }

  private onEvent(event: ControlEvent): void {
    if (this.closed) return;
    if (event.kind === 'output' || event.kind === 'extended-output') {
      const paneId = event.pane === undefined ? undefined : this.source.paneId(event.pane);
      if (paneId === undefined || !this.watched.has(paneId)) return;
      const burst = this.bursts.get(paneId);
      if (burst !== undefined) burst.again = true;
      else this.announce(paneId);
      return;
    }
    // A topology notification, or a gap in the stream: either way, look again.
    this.options.onTopologyChange?.();
  }

  private announce(paneId: string): void {
    const burst = {
      again: false,
      timer: setTimeout(() => {
        this.bursts.delete(paneId);
        if (burst.again && !this.closed) this.announce(paneId);
      }, OUTPUT_COALESCE_MS),
    };
    this.bursts.set(paneId, burst);
    this.options.onPaneChange?.(paneId);
  }
}
