import { resolveEndpoint as resolveMuxEndpoint, selectMux, tmuxEndpointOf } from '../mux/index.js';
import { DroverError, terminationSpans, type TerminationSpans } from '../process/index.js';
import { Server, type Endpoint } from '../tmux/index.js';
import type { FleetBackend } from './backend.js';
import { Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import type { NotifyOptions, PortOpener } from './delivery.js';
import { HerdrFleetBackend, type HerdrConnector } from './herdr-backend.js';
import { PaneLocks } from './lock.js';
import { PlacementStaleError } from './errors.js';
import type { ConcretePlacement, PlacementBackend } from './model.js';
import { FleetStore } from './store.js';
import { TmuxFleetBackend } from './tmux-backend.js';

/** How long asking a multiplexer which server it is may take. */
const SERVER_CHECK_TIMEOUT_MS = 2000;

/** The variable that names the invoking pane on each backend. */
export const INVOKING_PANE_VARIABLE: Readonly<Record<PlacementBackend, string>> = Object.freeze({ tmux: 'TMUX_PANE', herdr: 'HERDR_PANE_ID' });

export interface FleetRuntimeOptions {
  env?: NodeJS.ProcessEnv;
  /** An explicit tmux server (the CLI's -L/-S). Otherwise DROVER_MUX_ENDPOINT_TMUX, else $TMUX, else tmux's default. */
  tmuxEndpoint?: Endpoint;
  /** An open store; by default DROVER_DB is opened (and closed with the runtime). */
  store?: FleetStore;
  /** Open DROVER_DB only to read: it must exist, nothing is created, no write lock is taken. */
  readOnly?: boolean;
  /** A broker over `store` (tests inject failing ones). */
  broker?: Broker;
  /** Ready backends by name, used instead of opening one (tests). */
  backends?: Partial<Record<PlacementBackend, FleetBackend>>;
  herdrConnector?: HerdrConnector;
  clock?: Clock;
  spans?: TerminationSpans;
}

/**
 * What every fleet command works with: the database, the pane input locks, and the
 * multiplexer backends its placements name, each opened on first use and closed with the
 * runtime.
 */
export class FleetRuntime {
  readonly env: NodeJS.ProcessEnv;
  readonly store: FleetStore;
  readonly broker: Broker;
  readonly locks: PaneLocks;
  readonly clock: Clock;
  readonly spans: TerminationSpans;
  private readonly ownsStore: boolean;
  private readonly options: FleetRuntimeOptions;
  private readonly backends = new Map<PlacementBackend, Promise<FleetBackend>>();

  private constructor(options: FleetRuntimeOptions, store: FleetStore, ownsStore: boolean) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.store = store;
    this.ownsStore = ownsStore;
    this.broker = options.broker ?? new Broker(store);
    this.locks = new PaneLocks(store.lockDirectory);
    this.clock = options.clock ?? systemClock;
    this.spans = options.spans ?? terminationSpans;
    for (const [name, backend] of Object.entries(options.backends ?? {})) this.backends.set(name as PlacementBackend, Promise.resolve(backend));
  }

  static open(options: FleetRuntimeOptions = {}): FleetRuntime {
    if (options.store) return new FleetRuntime(options, options.store, false);
    return new FleetRuntime(options, FleetStore.open({ env: options.env ?? process.env, readOnly: options.readOnly }), true);
  }

  /** The backend this process runs in: tmux when a tmux server was named explicitly, else the mux selection. */
  invokingBackend(): PlacementBackend {
    if (this.options.tmuxEndpoint) return 'tmux';
    const selection = selectMux({ env: this.env });
    if (selection.mux === 'zellij') throw new DroverError('drover fleets run on tmux or herdr; DROVER_MUX selects zellij', { phase: 'select', delivery: 'not_sent' });
    return selection.mux;
  }

  /** Opens (once) the backend a placement names; a failed open is retried on the next call. */
  openBackend(name: PlacementBackend): Promise<FleetBackend> {
    let opening = this.backends.get(name);
    if (!opening) {
      opening = name === 'tmux' ? this.openTmux() : Promise.resolve(new HerdrFleetBackend(this.herdrSocket(), this.options.herdrConnector));
      this.backends.set(name, opening);
      opening.catch(() => this.backends.delete(name));
    }
    return opening;
  }

  private async openTmux(): Promise<FleetBackend> {
    return new TmuxFleetBackend(await Server.open(this.tmuxEndpoint(), { env: this.env }));
  }

  private tmuxEndpoint(): Endpoint {
    if (this.options.tmuxEndpoint) return this.options.tmuxEndpoint;
    const spec = resolveMuxEndpoint('tmux', this.env);
    if (spec.mux !== 'tmux') throw new Error('unreachable: the tmux endpoint resolved to another multiplexer');
    return tmuxEndpointOf(spec, this.env);
  }

  private herdrSocket(): string {
    const spec = resolveMuxEndpoint('herdr', this.env);
    if (spec.mux !== 'herdr') throw new Error('unreachable: the herdr endpoint resolved to another multiplexer');
    return spec.socketPath;
  }

  /**
   * The backend of a placement's multiplexer, once it is proven to be the server the pane
   * was placed on. A placement whose server was replaced (a tmux server restarted at the
   * same socket reuses pane ids for unrelated panes) is refused with PlacementStaleError
   * before anything reaches a pane, and the member is marked stale.
   */
  async backendFor(placement: ConcretePlacement): Promise<FleetBackend> {
    if (placement.staleAt !== null) throw new PlacementStaleError(placement.memberId, placement.pane);
    const backend = await this.openBackend(placement.backend);
    if (placement.server === null) return backend;
    const now = await backend.serverIdentity(SERVER_CHECK_TIMEOUT_MS);
    if (now === null || now === placement.server) return backend;
    if (!this.store.readOnly) this.broker.markServerReplaced(placement.memberId, placement.pane);
    throw new PlacementStaleError(placement.memberId, placement.pane);
  }

  /** The input port of a placement's multiplexer, opened (and its server checked) on demand. */
  readonly openPort: PortOpener = async (placement) => (await this.backendFor(placement)).input;

  /** What message delivery needs. */
  get notify(): NotifyOptions {
    return { broker: this.broker, locks: this.locks, openPort: this.openPort, clock: this.clock, spans: this.spans };
  }

  /** Closes the backends this runtime opened (not injected ones) and the store it opened. */
  async close(): Promise<void> {
    const opened = [...this.backends].filter(([name]) => this.options.backends?.[name] === undefined).map(([, opening]) => opening);
    this.backends.clear();
    for (const opening of opened) {
      const backend = await opening.catch(() => undefined);
      await backend?.close();
    }
    if (this.ownsStore) this.store.close();
  }
}
