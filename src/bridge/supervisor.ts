/**
 * Which run of the multiplexer drover web serves. A mux port is bound to one run: once another
 * run answers at the same address (tmux killed and started again at its socket), the port
 * answers every call as `replaced`, for good. The supervisor then treats every pane as gone: it
 * opens a new port through its opener, watches the new run's panes, announces the restart on
 * the event stream and keeps it for the page's banner. A pane is named for good by its key
 * (`local::MUX::INCARNATION::PANE`); a key of an earlier run is refused with `server_replaced`
 * before anything is sent, whatever pane has that id now.
 */
import { isValidMuxId, LOCAL_HOST, looksLikePaneKey, parsePaneKey, type MuxPort } from '../mux/index.js';
import { BridgeError, replacedError } from './errors.js';
import type { EventHub } from './events.js';
import { PaneObserver, type AgentCensus, type ObserverOptions } from './observer.js';
import type { RestartView, SnapshotView } from './protocol.js';

/** A port onto the multiplexer and what is bound to the same run of it (drover's census of agents there). */
export interface MuxLink {
  readonly port: MuxPort;
  readonly census?: AgentCensus;
  /** Releases the port and whatever the link opened with it. */
  close(): Promise<void>;
}

/** Opens a port onto whichever run of the multiplexer answers now. */
export type MuxOpener = () => Promise<MuxLink>;

export interface SupervisorOptions extends Omit<ObserverOptions, 'census' | 'onReplaced' | 'questionNumbers'> {
  readonly hub: EventHub;
  /** A port the caller owns (and closes); the supervisor opens its own only after a replacement. */
  readonly port?: MuxPort;
  readonly census?: AgentCensus;
  /** How to reach a new run; without it a replaced multiplexer is refused but not followed. */
  readonly open?: MuxOpener;
  /** How long after a failed attempt to reach the new run it is tried again. */
  readonly retryMs?: number;
}

/** The pane a request names, with the observer (and so the port) of the run it lives on. */
export interface PaneTarget {
  readonly paneId: string;
  readonly paneKey: string;
  readonly observer: PaneObserver;
  readonly port: MuxPort;
}

const DEFAULT_RETRY_MS = 2000;

export class MuxSupervisor {
  private link: { readonly link: MuxLink; readonly owned: boolean };
  private current: PaneObserver;
  private restart: RestartView | null = null;
  /** Set while the run served is replaced and no port onto the new one is open: why. */
  private lost: string | undefined;
  private switching: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private questions = 0;
  private closed = false;

  private constructor(
    private readonly options: SupervisorOptions,
    link: { link: MuxLink; owned: boolean },
  ) {
    this.link = link;
    this.current = this.observe(link.link);
  }

  /** Opens (or takes) the first port and reads every pane once; fails when the multiplexer cannot be read. */
  static async start(options: SupervisorOptions): Promise<MuxSupervisor> {
    const link = options.port !== undefined ? { link: { port: options.port, census: options.census, close: async () => undefined }, owned: false } : undefined;
    if (link === undefined && options.open === undefined) throw new TypeError('drover web needs a mux port or a way to open one');
    const first = link ?? { link: await options.open!(), owned: true };
    const supervisor = new MuxSupervisor(options, first);
    try {
      await supervisor.current.start();
    } catch (error) {
      await supervisor.close();
      throw error;
    }
    return supervisor;
  }

  /** The port onto the run served now (while a replaced run is being left, still the replaced one's). */
  get port(): MuxPort {
    return this.current.port;
  }

  get observer(): PaneObserver {
    return this.current;
  }

  get incarnation(): string {
    return this.current.incarnation;
  }

  get restarted(): RestartView | null {
    return this.restart;
  }

  /** A snapshot of the run served now; a replacement found on the way is followed first. */
  async snapshot(): Promise<SnapshotView> {
    const observer = this.current;
    try {
      if (this.lost !== undefined) throw replacedError(this.lost);
      return await observer.snapshot(this.restart);
    } catch (error) {
      if (!isReplaced(error) || this.options.open === undefined) throw error;
      await this.replaced(observer.port);
      if (this.lost !== undefined) throw new BridgeError('unreachable', this.lost);
      return this.current.snapshot(this.restart);
    }
  }

  /**
   * The pane a path segment names: a key (refused as replaced unless it is of the run served
   * now) or a bare pane id, which means that id on the run served now.
   */
  target(segment: string): PaneTarget {
    if (this.lost !== undefined) throw replacedError(this.lost);
    const observer = this.current;
    const on = (paneId: string): PaneTarget => ({ paneId, paneKey: observer.paneKey(paneId), observer, port: observer.port });
    if (!looksLikePaneKey(segment)) {
      if (!isValidMuxId(segment)) throw new BridgeError('bad_request', `${JSON.stringify(segment)} is neither a pane key nor a pane id`);
      return on(segment);
    }
    const parsed = parsePaneKey(segment);
    if (!parsed.ok) throw new BridgeError('bad_request', parsed.problem);
    const { key } = parsed;
    if (key.host !== LOCAL_HOST) throw new BridgeError('bad_request', `pane key ${segment} names a pane on ${key.host}; drover web serves this machine's panes`);
    if (key.mux !== this.port.mux) throw new BridgeError('bad_request', `pane key ${segment} names a ${key.mux} pane; drover web serves ${this.port.mux}`);
    if (!this.port.sameIncarnation(key.incarnation, this.incarnation)) {
      const when = this.restart === null ? '' : ` (restarted at ${this.restart.at})`;
      throw new BridgeError(
        'server_replaced',
        `pane ${key.paneId} belonged to an earlier run of the ${key.mux} server, which was replaced${when}; nothing was sent. The new server's panes are in the snapshot`,
        { details: { pane_key: segment, incarnation: this.incarnation } },
      );
    }
    return on(key.paneId);
  }

  /**
   * Runs a call against the run served now; a refusal by its port that says the multiplexer was
   * replaced starts the switch to the new run and is answered as `server_replaced` (the port sent
   * nothing). Check a pane's key with target() before, not inside: its refusal is no news of the port.
   */
  async run<T>(task: (observer: PaneObserver) => Promise<T>): Promise<T> {
    const observer = this.current;
    try {
      if (this.lost !== undefined) throw replacedError(this.lost);
      return await task(observer);
    } catch (error) {
      if (isReplaced(error)) void this.replaced(observer.port);
      throw error;
    }
  }

  /** The port `from` reported its run replaced: switch once, whoever else reports it too. */
  replaced(from: MuxPort): Promise<void> {
    if (this.closed || from !== this.port) return this.switching ?? Promise.resolve();
    this.switching ??= this.follow().finally(() => {
      this.switching = undefined;
    });
    return this.switching;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.current.close();
    if (this.link.owned) await this.link.link.close().catch(() => undefined);
  }

  private observe(link: MuxLink): PaneObserver {
    const { concurrency, rewatchMs, log } = this.options;
    const observer: PaneObserver = new PaneObserver(link.port, this.options.hub, {
      concurrency,
      rewatchMs,
      log,
      census: link.census,
      onReplaced: () => void this.replaced(observer.port),
      questionNumbers: () => (this.questions += 1),
    });
    return observer;
  }

  /** Leaves the replaced run and opens a port onto the new one; a failed attempt is tried again later. */
  private async follow(): Promise<void> {
    clearTimeout(this.retryTimer);
    const replacedPort = this.port;
    const previous = this.current.incarnation;
    const mux = replacedPort.mux;
    if (this.lost === undefined) {
      // Every pane of the old run is gone: stop reading it, and let the page look again.
      this.current.close();
      if (this.link.owned) void this.link.link.close().catch(() => undefined);
      this.lost = `the ${mux} server drover web was reading was replaced by another run`;
      this.options.hub.publish('topology', {});
      if (this.options.open === undefined) {
        this.lost += '; drover web was given one port and cannot open another: start drover web again to see the new server';
        this.options.log?.(this.lost);
      }
    }
    if (this.options.open === undefined) return;
    let link: MuxLink | undefined;
    try {
      link = await this.options.open();
      const observer = this.observe(link);
      await observer.start();
      if (this.closed) throw new Error('drover web is closing');
      this.link = { link, owned: true };
      this.current = observer;
    } catch (error) {
      await link?.close().catch(() => undefined);
      if (this.closed) return;
      this.lost = `the ${mux} server was replaced and the new one cannot be read yet (${(error as Error).message})`;
      this.retryTimer = setTimeout(() => void this.replaced(replacedPort), this.options.retryMs ?? DEFAULT_RETRY_MS);
      this.retryTimer.unref();
      return;
    }
    this.lost = undefined;
    this.restart = { at: new Date().toISOString(), previous_incarnation: previous, incarnation: this.current.incarnation };
    this.options.log?.(`the ${mux} server was restarted (${previous} → ${this.current.incarnation}); showing the new server's panes`);
    this.options.hub.publish('restart', this.restart);
  }
}

function isReplaced(error: unknown): boolean {
  return (error instanceof BridgeError && error.code === 'server_replaced') || (error as { replaced?: unknown } | null)?.replaced === true;
}
