import { MUX_DECLARATIONS, MuxError, openMux, resolveEndpoint, selectMux, tmuxEndpointOf, zellijIds, type MuxEndpointSpec, type MuxName } from '../mux/index.js';
import { terminationSpans, type TerminationSpans } from '../process/index.js';
import type { OpenMuxOptions } from '../mux/index.js';
import { FleetBackend, requireFleetSupport } from './backend.js';
import type { Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import type { NotifyOptions, PortOpener } from './delivery.js';
import { PaneLocks } from './lock.js';
import { PlacementElsewhereError, PlacementError, PlacementStaleError } from './errors.js';
import { isRemote, type ConcretePlacement, type Placement, type PlacementBackend } from './model.js';
import type { RemotePanes } from './remote.js';
import { paneLockDirectory, resolveDatabasePath } from './sqlite-store.js';
import { openBroker } from './stores.js';

/** How long asking a multiplexer which server it is may take. */
const SERVER_CHECK_TIMEOUT_MS = 2000;

/**
 * How a placement's recorded server compares with the run `backend` answers from now:
 * - `same`: the pane's own server;
 * - `replaced`: another run answers at the pane's own endpoint (a restart at the same socket);
 * - `elsewhere`: another server, whose endpoint the placement cannot be matched with (it was
 *   recorded without one), so nothing can be judged from it.
 */
export function serverVerdict(placement: Pick<Placement, 'endpoint'> & { server: string }, backend: FleetBackend, incarnation: string): 'same' | 'replaced' | 'elsewhere' {
  if (backend.port.sameIncarnation(incarnation, placement.server)) return 'same';
  return placement.endpoint !== null && placement.endpoint === backend.endpoint ? 'replaced' : 'elsewhere';
}

/** The endpoint spec of a socket a placement recorded (see FleetBackend.endpoint). */
function endpointAt(mux: PlacementBackend, socketPath: string): MuxEndpointSpec {
  switch (mux) {
    case 'tmux':
      return { mux, kind: 'socketPath', socketPath };
    case 'herdr':
      // As that variable would name it: the placement's socket, whatever this environment says.
      return { mux, socketPath, source: 'DROVER_MUX_ENDPOINT_HERDR' };
    case 'zellij':
      throw new PlacementError('zellij cannot hold a fleet, so no placement names a zellij endpoint');
  }
}

/** The variable that names the invoking pane on each multiplexer. */
export const INVOKING_PANE_VARIABLE: Readonly<Record<MuxName, string>> = Object.freeze({ tmux: 'TMUX_PANE', herdr: 'HERDR_PANE_ID', zellij: 'ZELLIJ_PANE_ID' });

/** The port's id of the pane this process runs in, from that variable; undefined when it is unset. */
export function invokingPane(mux: MuxName, env: NodeJS.ProcessEnv): string | undefined {
  const value = env[INVOKING_PANE_VARIABLE[mux]];
  if (value === undefined || value === '') return undefined;
  // zellij names its pane by number; the port by its own id.
  return mux === 'zellij' && /^\d+$/.test(value) ? zellijIds.pane(Number(value)) : value;
}

export interface FleetRuntimeOptions {
  env?: NodeJS.ProcessEnv;
  /** An explicit tmux server (the CLI's -L/-S). Otherwise DROVER_MUX_ENDPOINT_TMUX, else $TMUX, else tmux's default. */
  tmuxEndpoint?: OpenMuxOptions['tmuxEndpoint'];
  /** An open broker, the caller's to close; by default the store the environment chooses is opened (and closed with the runtime). */
  broker?: Broker;
  /** Open the store only to read: it must exist, nothing is created, no write lock is taken. */
  readOnly?: boolean;
  /** Ready backends by multiplexer, used instead of opening one (tests); the caller closes them. */
  backends?: Partial<Record<PlacementBackend, FleetBackend>>;
  /** Reaches panes on other hosts (members placed with a host); without it such members are refused, naming their host. */
  remote?: RemotePanes;
  clock?: Clock;
  spans?: TerminationSpans;
}

/**
 * What every fleet command works with: the broker over the chosen store, the pane input
 * locks of this machine, and one backend per multiplexer its placements name, each a mux
 * port opened on first use and closed with the runtime.
 */
export class FleetRuntime {
  readonly env: NodeJS.ProcessEnv;
  readonly broker: Broker;
  readonly locks: PaneLocks;
  readonly clock: Clock;
  readonly spans: TerminationSpans;
  readonly remote: RemotePanes | undefined;
  /**
   * This machine's drover database path: the SQLite store itself, or, beside a server store,
   * where the pane input locks live (they belong to this machine's panes, not to the store).
   */
  private readonly localDatabasePath: string;
  private readonly ownsBroker: boolean;
  private readonly options: FleetRuntimeOptions;
  /** By multiplexer (the endpoint this runtime's environment names), or by multiplexer and a placement's own endpoint. */
  private readonly backends = new Map<string, Promise<FleetBackend>>();

  private constructor(options: FleetRuntimeOptions, broker: Broker, ownsBroker: boolean) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.broker = broker;
    this.ownsBroker = ownsBroker;
    this.localDatabasePath = broker.store.kind === 'sqlite' && broker.store.via === undefined ? broker.store.location : resolveDatabasePath(this.env);
    this.locks = new PaneLocks(paneLockDirectory(this.localDatabasePath));
    this.clock = options.clock ?? systemClock;
    this.spans = options.spans ?? terminationSpans;
    this.remote = options.remote;
    for (const [name, backend] of Object.entries(options.backends ?? {})) this.backends.set(name as PlacementBackend, Promise.resolve(backend));
  }

  static async open(options: FleetRuntimeOptions = {}): Promise<FleetRuntime> {
    if (options.broker) return new FleetRuntime(options, options.broker, false);
    return new FleetRuntime(options, await openBroker({ env: options.env ?? process.env, readOnly: options.readOnly }), true);
  }

  /** What a member's pane needs in its environment to reach this store and share these pane locks. */
  memberEnvironment(): Record<string, string> {
    return { DROVER_DB: this.localDatabasePath, ...this.broker.connectionEnvironment() };
  }

  /** The multiplexer this process runs in: tmux when a tmux server was named explicitly, else the mux selection. */
  invokingBackend(): PlacementBackend {
    if (this.options.tmuxEndpoint) return 'tmux';
    return selectMux({ env: this.env }).mux;
  }

  /** Whether `key` (a multiplexer's name) is a backend the caller injected. */
  private injected(key: string): boolean {
    return (this.options.backends as Partial<Record<string, FleetBackend>> | undefined)?.[key] !== undefined;
  }

  /**
   * Opens (once) the backend of a multiplexer; a failed open is retried on the next call. One
   * that lacks what a fleet needs is refused, naming what it lacks, before anything is asked of it.
   */
  openBackend(name: PlacementBackend): Promise<FleetBackend> {
    return this.opened(name, () => this.openOver(name));
  }

  /** The backend cached under `key`, opened by `open` on first use (and again after a failed open). */
  private opened(key: string, open: () => Promise<FleetBackend>): Promise<FleetBackend> {
    let opening = this.backends.get(key);
    if (!opening) {
      opening = open();
      this.backends.set(key, opening);
      opening.catch(() => this.backends.delete(key));
    }
    return opening;
  }

  /** A backend over a new mux port on the multiplexer's endpoint, as this runtime's environment names it. */
  private async openOver(name: PlacementBackend): Promise<FleetBackend> {
    // Before its endpoint is even resolved: a multiplexer that cannot hold a fleet is asked nothing.
    requireFleetSupport(name, MUX_DECLARATIONS[name]);
    return this.openAt(resolveEndpoint(name, this.env), name === 'tmux' ? this.options.tmuxEndpoint : undefined);
  }

  private async openAt(spec: MuxEndpointSpec, tmuxEndpoint: OpenMuxOptions['tmuxEndpoint']): Promise<FleetBackend> {
    const tmux = spec.mux === 'tmux' ? (tmuxEndpoint ?? tmuxEndpointOf(spec, this.env)) : undefined;
    // Delivery is many small tmux commands (a read, a line, Enter) under a pane lock: over one
    // control connection each costs a round trip, not a tmux client process.
    const port = openMux({ endpoint: spec }, { env: this.env, tmuxEndpoint: tmux, tmuxTransport: 'control' });
    return new FleetBackend(port, this.clock, tmux?.socketPath ?? (spec.mux === 'herdr' ? spec.socketPath : null));
  }

  /**
   * A backend and the run of its multiplexer answering now, asked by `deadline`. A port that
   * met another run is void for good, so it is dropped and a port on the run answering now is
   * opened (an injected backend is the caller's, and its failure is theirs to see).
   */
  current(name: PlacementBackend, deadline: number): Promise<{ backend: FleetBackend; incarnation: string }> {
    return this.currentOf(name, () => this.openOver(name), this.injected(name), deadline);
  }

  private async currentOf(key: string, open: () => Promise<FleetBackend>, injected: boolean, deadline: number): Promise<{ backend: FleetBackend; incarnation: string }> {
    const backend = await this.opened(key, open);
    try {
      return { backend, incarnation: await backend.serverIncarnation(deadline) };
    } catch (error) {
      if (!(error instanceof MuxError && error.replaced) || injected) throw error;
      this.backends.delete(key);
      await backend.close();
      const reopened = await this.opened(key, open);
      return { backend: reopened, incarnation: await reopened.serverIncarnation(deadline) };
    }
  }

  /**
   * The backend of the server a placement's pane lives on, and the run answering there now:
   * the server this runtime reaches, or, when the placement records another endpoint, a port
   * on that one (a command run in another server's pane still reaches the member's own).
   */
  async reach(placement: ConcretePlacement, deadline: number): Promise<{ backend: FleetBackend; incarnation: string }> {
    const reached = await this.openBackend(placement.backend);
    const endpoint = placement.endpoint;
    if (endpoint === null || reached.endpoint === null || reached.endpoint === endpoint || this.injected(placement.backend)) return this.current(placement.backend, deadline);
    return this.currentOf(`${placement.backend} ${endpoint}`, () => this.openAt(endpointAt(placement.backend, endpoint), undefined), false, deadline);
  }

  /**
   * reach(), and the ids of every pane that run has now, for a roster. A binding learns its run
   * once and keeps it, so a restart at the socket may first show in the listing, which the
   * binding then refuses: that server is reached again, as the run it is now.
   */
  async livePanesOf(placement: ConcretePlacement, deadline: number): Promise<{ backend: FleetBackend; incarnation: string; live: Set<string> }> {
    const listed = async (): Promise<{ backend: FleetBackend; incarnation: string; live: Set<string> }> => {
      const reached = await this.reach(placement, deadline);
      return { ...reached, live: await reached.backend.livePanes(deadline) };
    };
    try {
      return await listed();
    } catch (error) {
      if (!(error instanceof MuxError && error.replaced)) throw error;
      return listed();
    }
  }

  /**
   * The backend of a placement's multiplexer, once it is proven to be the run the pane was
   * placed on, asked by `deadline` (at most SERVER_CHECK_TIMEOUT_MS from now). A placement whose
   * server was replaced (a tmux server restarted at the same socket reuses pane ids for
   * unrelated panes) is refused with PlacementStaleError before anything reaches a pane, and
   * the member is marked stale. One whose server is another than the one reached, and which does
   * not say where its own is, is refused with PlacementElsewhereError, and nothing is recorded.
   */
  async backendFor(placement: ConcretePlacement, deadline: number = this.clock.now() + SERVER_CHECK_TIMEOUT_MS): Promise<FleetBackend> {
    // A pane id of another host names nothing here: this machine's multiplexer is never asked about it.
    if (isRemote(placement)) throw new PlacementError(`member ${placement.memberId}'s pane ${placement.pane} is on host ${placement.host}, not this machine`);
    if (placement.staleAt !== null) throw new PlacementStaleError(placement.memberId, placement.pane, placement.backend);
    if (placement.server === null) return this.openBackend(placement.backend);
    const { backend, incarnation } = await this.reach(placement, Math.min(deadline, this.clock.now() + SERVER_CHECK_TIMEOUT_MS));
    const verdict = serverVerdict({ server: placement.server, endpoint: placement.endpoint }, backend, incarnation);
    if (verdict === 'same') return backend;
    if (verdict === 'elsewhere') throw new PlacementElsewhereError(placement.memberId, placement.pane, placement.backend, placement.server, { incarnation, endpoint: backend.endpoint });
    if (!this.broker.store.readOnly) await this.broker.markServerReplaced(placement.memberId, placement.pane);
    throw new PlacementStaleError(placement.memberId, placement.pane, placement.backend);
  }

  /** A placement's pane for input, its multiplexer opened (and its server checked) on demand. */
  readonly openPort: PortOpener = async (placement, deadline) => (await this.backendFor(placement, deadline)).input(placement.pane);

  /** What message delivery needs. */
  get notify(): NotifyOptions {
    return { broker: this.broker, locks: this.locks, openPort: this.openPort, remote: this.remote, clock: this.clock, spans: this.spans };
  }

  /** Closes the backends this runtime opened (not injected ones) and the broker it opened. */
  async close(): Promise<void> {
    const opened = [...this.backends].filter(([name]) => !this.injected(name)).map(([, opening]) => opening);
    this.backends.clear();
    for (const opening of opened) {
      const backend = await opening.catch(() => undefined);
      await backend?.close();
    }
    if (this.ownsBroker) await this.broker.close();
  }
}
