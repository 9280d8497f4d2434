/**
 * tmux's watch pushes: control clients (tmux -C, attached without taking a size) announce
 * window and session changes, and %output for the panes of the session they are attached to,
 * so one client is attached per session holding a watched pane (at most three), or one for
 * topology alone. A resync every 5 s is the backstop for what no client hears (sessions with no
 * control client, a tmux without control mode); refresh() resyncs now and re-arms it.
 */
import { TOPOLOGY_KINDS, type ControlConnection, type ControlEvent, type Server, type Snapshot as TmuxSnapshot } from '../../../tmux/index.js';
import type { MuxWatch, MuxWatchOptions } from '../../types.js';

const MAX_CONTROL_CLIENTS = 3;
/**
 * Output arrives in bursts: the first output of a quiet pane is announced at once, the rest of
 * its burst once per this interval, which is enough to say "look again".
 */
const OUTPUT_COALESCE_MS = 100;

export interface TmuxWatchSource {
  /** The structure signature of a fresh listing; throws when tmux cannot be read. */
  census(): Promise<string>;
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

export class TmuxWatch implements MuxWatch {
  private closed = false;
  private signature: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Panes announced within the last interval, and whether they printed again since. */
  private readonly bursts = new Map<string, { timer: NodeJS.Timeout; again: boolean }>();
  private readonly connections = new Set<ControlConnection>();
  private readonly watched: ReadonlySet<string>;

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
    for (const connection of this.connections) void connection.close().catch(() => undefined);
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
    let signature: string;
    try {
      signature = await this.source.census();
    } catch (error) {
      if (!this.closed) {
        this.close();
        this.options.onDown?.((error as Error).message);
      }
      return false;
    }
    if (this.closed) return false;
    const changed = this.signature !== undefined && signature !== this.signature;
    this.signature = signature;
    if (changed) this.options.onTopologyChange?.();
    return true;
  }

  /** Attaches control clients; without one (no session yet) the resync carries the watch. */
  private async attach(): Promise<void> {
    let server: Server;
    try {
      server = await this.source.server();
    } catch {
      return;
    }
    const sessions = new Set<string>();
    for (const paneId of this.watched) {
      const native = this.source.nativePane(paneId);
      if (native === undefined) continue;
      try {
        sessions.add((await server.pane(native).display('#{session_id}')).toString('utf8').trim());
      } catch {
        // A watched pane that is gone has no output to report.
      }
    }
    const targets: (string | undefined)[] = sessions.size === 0 ? [undefined] : [...sessions].slice(0, MAX_CONTROL_CLIENTS);
    for (const session of targets) {
      if (this.closed) return;
      try {
        const connection = await server.openControl({ session: session === undefined ? undefined : server.session(session), output: session !== undefined, anchor: false });
        if (this.closed) {
          void connection.close().catch(() => undefined);
          return;
        }
        this.connections.add(connection);
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
