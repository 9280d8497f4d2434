import { AsyncLocalStorage } from 'node:async_hooks';
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { runOnTerminal, terminalDescriptor, type TerminalResult, type TerminalSpec } from '../process/index.js';
import {
  checkName,
  literalSourcePath,
  newSessionArgs,
  waitForArgs,
  type NewSessionSpec,
  type WaitAction,
} from './commands.js';
import {
  ControlConnection,
  ControlTransport,
  waitForOutput,
  waitForTopology,
  type ControlLimits,
  type OutputPredicate,
  type WaitForOutputOptions,
  type WaitForTopologyOptions,
} from './control/index.js';
import { Deadline, type OperationOptions } from './deadline.js';
import { Endpoint, resolvedSocketPath, tmuxVariable } from './endpoint.js';
import {
  AbortedError,
  ArgumentError,
  CapacityError,
  ClosedError,
  CommandError,
  DroverError,
  NoMatchError,
  ReentrantCloseError,
  ServerReplacedError,
  ServerUnreachableError,
  TargetNotFoundError,
  TimeoutError,
  UnsupportedFeatureError,
} from './errors.js';
import { protectArgument } from './escape.js';
import { explainPaneSearch, paneCriteria, type PaneSearchPlan, type Pushdown } from './explain.js';
import { closeAfter } from './lifetime.js';
import { boundedMap, type MapItemContext, type MapOptions } from './map.js';
import { checkId, type EntityKind, type IdOf, type PaneId, type SessionId, type WindowId } from './ids.js';
import { INCARNATION_FORMAT, incarnationGuard, isGuardRefusal, parseIncarnation, sameIncarnation, type ServerIncarnation } from './incarnation.js';
import { Environment, Options, Hooks, Buffers } from './settings.js';
import { abortedStart, OwnedDaemon, type DaemonStartOptions, type OwnedDaemonRecord } from './owned.js';
import { LINK_FORMAT, linksOf, Pane, Session, Window, WindowLink, type CreationReceipt } from './handles.js';
import { Criteria } from './criteria.js';
import {
  CLIENT_FORMAT,
  incompleteCapture,
  parseClientRecords,
  Selection,
  Snapshot,
  snapshotCommands,
  type ClientRecord,
  type PaneRecord,
  type SessionRecord,
  type SnapshotOptions,
  type WindowLinkRecord,
  type WindowRecord,
} from './snapshot.js';
import { CommandResult, SpawnTransport, clientEnvironment, type CommandTransport, type ExecOptions } from './transport.js';

export interface ServerOptions {
  /** Requests admitted at once; further requests wait within their own deadline. Default 32. */
  maxRequests?: number;
  /** Control connections this binding may hold. Default 4. */
  maxControlConnections?: number;
  /** How long close() waits for in-flight work. Default 500 ms. */
  closeTimeoutMs?: number;
  /** Base environment for tmux clients ($TMUX and $TMUX_PANE are always removed). */
  env?: NodeJS.ProcessEnv;
  /**
   * How typed operations reach tmux: a spawned client per command (default), or a
   * persistent control connection (see connect()).
   */
  transport?: 'spawn' | 'control';
}

export interface OpenControlOptions extends OperationOptions {
  /** The session to attach to; by default the first existing one. */
  session?: Session;
  /** Receive pane output events (default true); false attaches with tmux's no-output flag. */
  output?: boolean;
  /** When no session exists, create a detached anchor session (removed on close). Default true; false fails with NoMatchError. */
  anchor?: boolean;
  /** tmux pause-after: pause a pane whose output is this many seconds behind (tmux 3.2+). */
  pauseAfterSeconds?: number;
  limits?: Partial<ControlLimits>;
}

export interface StartOptions extends ServerOptions, Omit<DaemonStartOptions, 'env'> {}

export interface AttachOptions {
  /** The caller's open terminal: a file descriptor, or a stream that has one (process.stdin). */
  terminal: TerminalSpec;
  /** The terminal's type, as TERM names it (xterm-256color): tmux picks the terminal description by it. */
  term: string;
  /** Attach read-only (tmux attach -r). Default false. */
  readOnly?: boolean;
  signal?: AbortSignal;
}

/** Longest TERM accepted: terminal type names are short, and the value reaches tmux's environment. */
const MAX_TERM_BYTES = 256;

function checkTerm(term: unknown): void {
  if (typeof term !== 'string' || term === '') throw new ArgumentError('attach needs the TERM of the terminal (such as xterm-256color)');
  if (Buffer.byteLength(term) > MAX_TERM_BYTES || !/^[\x21-\x7e]+$/.test(term)) {
    throw new ArgumentError(`TERM must be a terminal type name of printable characters without spaces, at most ${MAX_TERM_BYTES} bytes (such as xterm-256color)`);
  }
}

export interface RunOptions extends OperationOptions {
  /** Bytes for the tmux client's stdin (e.g. `load-buffer -`). */
  input?: Uint8Array | string;
}

/** Aggregate evidence of a `;`-joined group: per-step outcomes are not known. */
export interface GroupResult {
  readonly result: CommandResult;
  readonly steps: number;
  readonly ok: boolean;
  readonly transactional: false;
}

export interface ServerDiagnostics {
  readonly owned: boolean;
  readonly closed: boolean;
  readonly transport: 'spawn' | 'control';
  /** Requests holding a request slot, until their tmux client is reaped (retirement included). */
  readonly admittedRequests: number;
  /** Process slots reserved: one per admitted request, held until its tmux client is reaped (a request over a control connection holds one too). */
  readonly reservedProcessSlots: number;
  readonly waitingRequests: number;
  /** Control connections registered with the binding, closed ones included until close() prunes them. */
  readonly controlConnections: number;
  /** map() operations running. */
  readonly maps: number;
  readonly limits: { readonly maxRequests: number; readonly maxControlConnections: number; readonly closeTimeoutMs: number };
}

/** Search options: a snapshot's, plus how much of the criteria tmux may filter. */
export interface SearchOptions extends SnapshotOptions, OperationOptions {
  pushdown?: Pushdown;
}

interface SocketIdentity {
  dev: number;
  ino: number;
}

/** Marks the line with which a binding's first spawned command prints the server's incarnation. */
const LEARNING_MARK = 'DROVER-INCARNATION';

/** What tmux answers a listing on a server that has no sessions. */
const EMPTY_SERVER = /no current (target|session)|no sessions/;

const UNREACHABLE = /^(no server running on|error connecting to|server exited unexpectedly|lost server|server version is too old|open terminal failed)/m;
const NOT_FOUND = /can't find (session|window|pane|client)[: ]\s*(.*)$/m;

/** Turns a failed tmux reply into the matching typed error. */
export function failureOf(result: CommandResult): DroverError {
  const message = result.stderrText() || result.stdout.toString('utf8').trim() || `exit status ${result.exitCode}`;
  if (UNREACHABLE.test(message)) {
    const neverConnected = /^(no server running on|error connecting to)/m.test(message);
    return new ServerUnreachableError(`tmux server unreachable: ${message}`, { delivery: neverConnected ? 'not_sent' : 'possibly_sent' });
  }
  const missing = NOT_FOUND.exec(message);
  if (missing) return new TargetNotFoundError(missing[2]!.trim() || missing[1]!, { result });
  return new CommandError(`tmux ${result.args[0] ?? ''} failed: ${message}`, { result });
}

/** One of a binding's requests while it runs. */
interface RunningRequest {
  readonly binding: Server;
  running: boolean;
}

/**
 * The requests the current code runs on behalf of. Async context follows awaits, callbacks and
 * timers, so close() knows when it is called from inside one of its binding's own requests.
 */
const enclosingRequests = new AsyncLocalStorage<readonly RunningRequest[]>();

/** A small counting semaphore whose waiters give up at their own deadline. */
class Admission {
  admitted = 0;
  private readonly waiters: { resolve: () => void; reject: (e: Error) => void }[] = [];
  constructor(readonly limit: number) {}

  get waiting(): number {
    return this.waiters.length;
  }

  async acquire(deadline: Deadline): Promise<() => void> {
    const remaining = deadline.remaining();
    if (this.admitted < this.limit) {
      this.admitted += 1;
      return () => this.release();
    }
    const signal = deadline.signal;
    await new Promise<void>((resolve, reject) => {
      const settle = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const giveUp = (error: Error): void => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
        settle();
        reject(error);
      };
      const waiter = {
        resolve: () => {
          settle();
          resolve();
        },
        reject: (e: Error) => {
          settle();
          reject(e);
        },
      };
      const onAbort = (): void => giveUp(new AbortedError('the request was aborted while it waited for a request slot', { phase: 'admit', delivery: 'not_sent' }));
      const timer = setTimeout(
        () => giveUp(new TimeoutError(`no request slot became free within ${deadline.timeoutMs} ms`, deadline.timeoutMs, { phase: 'admit', delivery: 'not_sent' })),
        remaining,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
    return () => this.release();
  }

  private release(): void {
    const next = this.waiters.shift();
    if (next) next.resolve();
    else this.admitted -= 1;
  }

  rejectWaiters(error: Error): void {
    for (const waiter of this.waiters.splice(0)) waiter.reject(error);
  }
}

function identityOf(socketPath: string): SocketIdentity | undefined {
  try {
    const stat = statSync(socketPath);
    return stat.isSocket() ? { dev: stat.dev, ino: stat.ino } : undefined;
  } catch {
    return undefined;
  }
}

function probeSocket(socketPath: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ServerUnreachableError(`tmux server at ${socketPath} did not accept a connection within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new ServerUnreachableError(`no tmux server is listening at ${socketPath} (${error.code ?? error.message})`));
    });
  });
}

/**
 * A binding to one tmux server: borrowed (`Server.open`) or owned (`Server.start`). Handles,
 * snapshots and raw commands go through it; `close()` releases what the binding owns.
 */
export class Server {
  readonly endpoint: Endpoint;
  private readonly daemon: OwnedDaemon | undefined;
  private readonly identity: SocketIdentity;
  private readonly admission: Admission;
  private readonly limits: Required<Pick<ServerOptions, 'maxRequests' | 'maxControlConnections' | 'closeTimeoutMs'>>;
  private transport: CommandTransport;
  private readonly spawnTransport: SpawnTransport;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private closed = false;
  private cachedVersion: string | undefined;
  /** The server this binding talks to, once known; a binding never follows another one. */
  private known: ServerIncarnation | undefined;
  /** Aborted by close(): running requests are cancelled with it. */
  private readonly closing = new AbortController();
  private readonly running = new Set<Promise<unknown>>();
  private maps = 0;
  /** Extra resources (control connections) retired with the binding. */
  private readonly owned = new Set<{ close(): Promise<void> }>();

  private constructor(endpoint: Endpoint, identity: SocketIdentity, daemon: OwnedDaemon | undefined, options: ServerOptions) {
    this.endpoint = endpoint;
    this.identity = identity;
    this.daemon = daemon;
    this.known = daemon?.incarnation;
    this.limits = {
      maxRequests: options.maxRequests ?? 32,
      maxControlConnections: options.maxControlConnections ?? 4,
      closeTimeoutMs: options.closeTimeoutMs ?? 500,
    };
    if (!Number.isSafeInteger(this.limits.maxRequests) || this.limits.maxRequests < 1) throw new ArgumentError('maxRequests must be a positive integer');
    this.admission = new Admission(this.limits.maxRequests);
    this.env = options.env;
    this.spawnTransport = new SpawnTransport(endpoint, options.env);
    this.transport = this.spawnTransport;
  }

  /** Applies the requested transport to a new binding, retiring the binding if that fails. */
  private static async withTransport(server: Server, options: ServerOptions & OperationOptions): Promise<Server> {
    if (options.transport === undefined || options.transport === 'spawn') return server;
    try {
      if (options.transport !== 'control') throw new ArgumentError(`transport must be "spawn" or "control", not ${JSON.stringify(options.transport)}`);
      await server.connect({ timeoutMs: options.timeoutMs, signal: options.signal });
      return server;
    } catch (error) {
      await server.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Binds a running server. Starts nothing; a missing socket or a dead server fails here.
   * With `use`, the binding is closed when `use` settles and its value is returned.
   */
  static async open(endpoint: Endpoint, options?: ServerOptions): Promise<Server>;
  static async open<T>(endpoint: Endpoint, options: ServerOptions, use: (server: Server) => Promise<T>): Promise<T>;
  static async open<T>(endpoint: Endpoint, options: ServerOptions = {}, use?: (server: Server) => Promise<T>): Promise<Server | T> {
    const identity = identityOf(endpoint.socketPath);
    if (!identity) throw new ServerUnreachableError(`no tmux server socket at ${endpoint.socketPath}`);
    await probeSocket(endpoint.socketPath, 1000);
    const server = await Server.withTransport(new Server(endpoint, identity, undefined, options), options);
    return use === undefined ? server : closeAfter(server, use);
  }

  /**
   * Starts and owns a private tmux server in a fresh 0700 temporary directory. With `use`,
   * the server is retired when `use` settles, and a failure of `use` is the one thrown.
   * Aborting `signal` before the server is returned retires whatever was started and fails
   * with AbortedError.
   */
  static async start(options?: StartOptions): Promise<Server>;
  static async start<T>(options: StartOptions, use: (server: Server) => Promise<T>): Promise<T>;
  static async start<T>(options: StartOptions = {}, use?: (server: Server) => Promise<T>): Promise<Server | T> {
    const daemon = await OwnedDaemon.start({ ...options, env: options.env });
    const identity = identityOf(daemon.record.socketPath);
    if (!identity) {
      await daemon.retire().catch(() => undefined);
      throw new ServerUnreachableError('the owned tmux server socket disappeared right after start');
    }
    const server = await Server.withTransport(new Server(daemon.endpoint, identity, daemon, options), options);
    if (options.signal?.aborted) {
      const cleanupErrors: Error[] = [];
      await server.close().catch((e: Error) => cleanupErrors.push(e));
      throw abortedStart(undefined, cleanupErrors);
    }
    return use === undefined ? server : closeAfter(server, use);
  }

  /** Binds a persistent daemon drover started earlier, taking back its ownership. */
  static async adopt(record: OwnedDaemonRecord, options: ServerOptions = {}): Promise<Server> {
    const daemon = await OwnedDaemon.adopt(record, { env: options.env });
    const identity = identityOf(record.socketPath);
    if (!identity) throw new ServerUnreachableError(`no tmux server socket at ${record.socketPath}`);
    return Server.withTransport(new Server(daemon.endpoint, identity, daemon, options), options);
  }

  /** True when closing this binding retires the daemon itself. */
  get ownsDaemon(): boolean {
    return this.daemon !== undefined;
  }

  /** Where an owned daemon lives (to record it for later adoption). */
  get ownedRecord(): OwnedDaemonRecord | undefined {
    return this.daemon?.record;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Whether this binding can vouch, without asking tmux, that it still reaches the server it was
   * opened on: it is open, its socket file is the one it was opened on, and its control
   * connection (a client of that very server process) is up. The connection is what decides: a
   * server started again at the same path can reuse the socket's inode; the file check catches
   * a restart before the connection's end has been read. A long-lived holder of bindings opens a
   * new one when this is false, since this binding would refuse the new server.
   */
  get connectedToItsServer(): boolean {
    if (this.closed || !(this.transport instanceof ControlTransport) || !this.transport.connected) return false;
    return this.socketNow() === 'same';
  }

  /** The transport typed operations currently use. */
  get transportKind(): 'spawn' | 'control' {
    return this.transport.kind;
  }

  /** Replaces the transport for typed operations (the control-mode layer installs itself here). */
  useTransport(transport: CommandTransport | undefined): void {
    this.transport = transport ?? this.spawnTransport;
  }

  /**
   * Routes typed operations over a persistent control connection from now on (opened now if
   * a session exists, else on first use). Commands control mode cannot run identically still
   * use a spawned client; results and errors are the same either way. The connection is an
   * attached client: it counts in session_attached of the session it attaches to.
   */
  async connect(options: OperationOptions = {}): Promise<void> {
    if (this.closed) throw new ClosedError();
    if (!(this.transport instanceof ControlTransport)) {
      const checkedSpawn: CommandTransport = {
        kind: 'spawn',
        execute: (args, execOptions) => this.spawned(args, execOptions),
        close: async () => undefined,
      };
      this.transport = new ControlTransport(this, checkedSpawn, this.spawnTransport.clientPath);
    }
    await (this.transport as ControlTransport).warm(options);
  }

  /**
   * Opens a control connection owned by this binding (counted against maxControlConnections,
   * closed by close()). It attaches to the given session, else the first existing one, else
   * a detached anchor session created for it and removed when it closes.
   */
  async openControl(options?: OpenControlOptions): Promise<ControlConnection>;
  async openControl<T>(options: OpenControlOptions, use: (connection: ControlConnection) => Promise<T>): Promise<T>;
  async openControl<T>(options: OpenControlOptions = {}, use?: (connection: ControlConnection) => Promise<T>): Promise<ControlConnection | T> {
    const connection = await this.openControlConnection(options);
    return use === undefined ? connection : closeAfter(connection, use);
  }

  private async openControlConnection(options: OpenControlOptions): Promise<ControlConnection> {
    if (this.closed) throw new ClosedError();
    const deadline = Deadline.start(options);
    if (options.session !== undefined && options.session.server !== this) throw new ArgumentError('the session belongs to another binding');
    if (this.owned.size >= this.limits.maxControlConnections) {
      throw new CapacityError(`this binding already holds ${this.limits.maxControlConnections} control connections`);
    }
    let session: SessionId | undefined = options.session?.id;
    let anchor: SessionId | undefined;
    if (session === undefined) {
      session = (await this.sessionIds(deadline))[0];
      if (session === undefined) {
        if (options.anchor === false) throw new NoMatchError('the tmux server has no session to attach a control client to');
        anchor = await this.createAnchor(deadline);
        session = anchor;
      }
    }
    const incarnation = await this.incarnation({ timeoutMs: deadline.remaining(), signal: options.signal });
    let release: (() => void) | undefined;
    const connection = new ControlConnection({
      endpoint: this.endpoint,
      env: this.env,
      guard: incarnationGuard(incarnation),
      session,
      output: options.output ?? true,
      pauseAfterSeconds: options.pauseAfterSeconds,
      limits: options.limits,
      onClose: async () => {
        release?.();
        if (anchor) await this.removeAnchor(anchor);
      },
    });
    try {
      release = this.adoptResource(connection);
      await connection.start({ timeoutMs: deadline.remaining(), signal: options.signal });
    } catch (error) {
      await connection.close(0).catch(() => undefined);
      throw error;
    }
    return connection;
  }

  private async sessionIds(deadline: Deadline): Promise<SessionId[]> {
    return (await this.listing(['list-sessions', '-F', '#{session_id}'], deadline, this.spawnTransport)).idLines().map((id) => checkId('session', id));
  }

  /**
   * Runs a listing command. A server without sessions answers the listings with an error
   * ("no sessions", "no current target") rather than nothing; that is an empty answer.
   */
  private async listing(args: readonly string[], deadline: Deadline, transport: CommandTransport = this.transport): Promise<CommandResult> {
    const result = await this.execute(args, deadline, undefined, transport);
    if (result.ok) return result;
    if (result.stdout.length === 0 && EMPTY_SERVER.test(result.stderrText())) return new CommandResult(result.args, Buffer.alloc(0), Buffer.alloc(0), 0, result.elapsedMs, result.transport, result.pid, result.argv);
    throw failureOf(result);
  }

  private async createAnchor(deadline: Deadline): Promise<SessionId> {
    const name = `drover-anchor-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
    const result = await this.command(newSessionArgs({ name, command: ['cat'] }), { deadline, transport: this.spawnTransport });
    return this.creationIds(result).session;
  }

  /** Runs while the binding closes too, so it goes straight to a spawned client. */
  private async removeAnchor(anchor: SessionId): Promise<void> {
    const result = await this.spawned(['kill-session', '-t', anchor], { timeoutMs: this.limits.closeTimeoutMs });
    if (result.ok) return;
    const failure = failureOf(result);
    // Already gone (with its server, or killed by someone else): nothing left to remove.
    if (!(failure instanceof TargetNotFoundError || failure instanceof ServerUnreachableError)) throw failure;
  }

  /**
   * Waits until the pane's captured text matches (a substring, a RegExp or a test of the
   * screen) and returns that text. Output is subscribed before the first capture, so nothing
   * written in between is missed. Uses a control connection for the wait's duration.
   */
  async waitForOutput(pane: Pane, predicate: OutputPredicate, options: WaitForOutputOptions = {}): Promise<string> {
    return waitForOutput(this, pane, predicate, options);
  }

  /** Waits until a fresh snapshot satisfies the predicate and returns it (events first, polling as backstop). */
  async waitForTopology(predicate: (snapshot: Snapshot) => boolean, options: WaitForTopologyOptions = {}): Promise<Snapshot> {
    return waitForTopology(this, predicate, options);
  }

  /** Registers a resource retired by close(), counted against the control-connection limit. */
  adoptResource(resource: { close(): Promise<void> }): () => void {
    if (this.closed) throw new ClosedError();
    if (this.owned.size >= this.limits.maxControlConnections) {
      throw new CapacityError(`this binding already holds ${this.limits.maxControlConnections} control connections`);
    }
    this.owned.add(resource);
    return () => this.owned.delete(resource);
  }

  /** The socket file now, beside the one this binding was opened on. */
  private socketNow(): 'same' | 'replaced' | 'gone' {
    const now = identityOf(this.endpoint.socketPath);
    if (!now) return 'gone';
    return now.dev === this.identity.dev && now.ino === this.identity.ino ? 'same' : 'replaced';
  }

  private checkIdentity(): void {
    const socket = this.socketNow();
    if (socket === 'gone') throw new ServerUnreachableError(`the tmux server socket ${this.endpoint.socketPath} is gone`);
    if (socket === 'replaced') throw this.replaced('was replaced');
  }

  private replaced(how: string, delivery: 'not_sent' | 'possibly_sent' = 'not_sent'): ServerReplacedError {
    return new ServerReplacedError(`the tmux server at ${this.endpoint.socketPath} ${how}; this binding will not follow a new server`, { delivery });
  }

  /**
   * Runs tmux arguments in a spawned client behind the incarnation guard, so they run on the
   * server this binding was opened on or not at all. Until the incarnation is known, the
   * command is preceded by one that prints it instead, and the binding keeps what it printed.
   */
  private async spawned(args: readonly string[], options: ExecOptions): Promise<CommandResult> {
    this.checkIdentity();
    const known = this.known;
    const prefix = known ? incarnationGuard(known) : ['display-message', '-p', `${LEARNING_MARK} ${INCARNATION_FORMAT}`];
    const raw = await this.spawnTransport.execute([...prefix, ';', ...args], options);
    let stdout = raw.stdout;
    if (known) {
      if (!raw.ok && isGuardRefusal(raw.stderrText())) throw this.replaced('is another server now (it was restarted)');
    } else {
      const newline = stdout.indexOf(0x0a);
      const first = newline === -1 ? '' : stdout.subarray(0, newline).toString('latin1');
      if (first.startsWith(`${LEARNING_MARK} `)) {
        stdout = stdout.subarray(newline + 1);
        const seen = parseIncarnation(first.slice(LEARNING_MARK.length + 1));
        if (seen !== undefined && this.known === undefined) this.known = seen;
        // Another first command learnt a different server: this one ran on a stranger.
        else if (seen !== undefined && !sameIncarnation(this.known!, seen)) throw this.replaced('is another server now (it was restarted)', 'possibly_sent');
      }
    }
    return new CommandResult(args, stdout, raw.stderr, raw.exitCode, raw.elapsedMs, 'spawn', raw.pid, raw.argv, raw.signal);
  }

  /** Runs tmux arguments on the chosen transport within the deadline, admission included; close() cancels it. */
  private async execute(args: readonly string[], deadline: Deadline, input: Uint8Array | undefined, transport: CommandTransport): Promise<CommandResult> {
    if (this.closed) throw new ClosedError();
    const release = await this.admission.acquire(deadline);
    const work = this.asRequest(async () => {
      try {
        const signal = deadline.signal ? AbortSignal.any([deadline.signal, this.closing.signal]) : this.closing.signal;
        const options = { input, timeoutMs: deadline.remaining(), signal };
        return transport === this.spawnTransport ? await this.spawned(args, options) : await transport.execute(args, options);
      } finally {
        release();
      }
    });
    this.running.add(work);
    try {
      return await work;
    } catch (error) {
      if (error instanceof AbortedError && this.closing.signal.aborted) {
        throw new AbortedError('the binding was closed while this request ran', { phase: error.phase, delivery: error.delivery, cause: error });
      }
      throw error;
    } finally {
      this.running.delete(work);
    }
  }

  /** Which server process this binding talks to, when a command already learnt it; no I/O. */
  get knownIncarnation(): ServerIncarnation | undefined {
    return this.known;
  }

  /** Runs `work` as one of this binding's requests: close() from code it runs is refused. */
  private async asRequest<T>(work: () => Promise<T>): Promise<T> {
    const request: RunningRequest = { binding: this, running: true };
    const enclosing = (enclosingRequests.getStore() ?? []).filter((outer) => outer.running);
    try {
      return await enclosingRequests.run([...enclosing, request], work);
    } finally {
      request.running = false;
    }
  }

  /**
   * Which server process this binding talks to (pid and start time): learnt with its first
   * command, or asked now.
   */
  async incarnation(options: OperationOptions = {}): Promise<ServerIncarnation> {
    if (this.known === undefined) await this.command(['display-message', '-p', '#{pid}'], { ...options, transport: this.spawnTransport });
    if (this.known === undefined) throw new ServerUnreachableError(`the tmux server at ${this.endpoint.socketPath} did not say which server it is`);
    return this.known;
  }

  /**
   * Whether `$TMUX` in `env` names this server: the same socket, through whichever path, and
   * the same server process (a server restarted there is another one).
   */
  async hosts(env: NodeJS.ProcessEnv, options: OperationOptions = {}): Promise<boolean> {
    const named = tmuxVariable(env);
    if (named?.pid === undefined || resolvedSocketPath(named.socketPath) !== resolvedSocketPath(this.endpoint.socketPath)) return false;
    return named.pid === (await this.incarnation(options)).pid;
  }

  /** The id tmux itself resolves `id` to (`%03` is `%3`); TargetNotFoundError when nothing has it. */
  async canonicalId<K extends EntityKind>(kind: K, id: string, options: OperationOptions = {}): Promise<IdOf<K>> {
    checkId(kind, id);
    const result = await this.command(['display-message', '-p', '-t', id, `#{${kind}_id}`], options);
    return checkId(kind, result.text().trim());
  }

  /**
   * Submits a raw tmux command (argv, no shell) and returns its result, including a nonzero
   * status. Separators, formats and aliases keep their tmux meaning; endpoint flags come
   * from the binding and are rejected here.
   */
  async run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    if (!Array.isArray(argv) || argv.length === 0) throw new ArgumentError('argv must be a non-empty array');
    if (typeof argv[0] !== 'string' || argv[0].startsWith('-')) {
      throw new ArgumentError(`raw commands start with a tmux command, not ${JSON.stringify(argv[0])}; the socket comes from the binding`);
    }
    const input = typeof options.input === 'string' ? Buffer.from(options.input) : options.input;
    const transport = input ? this.spawnTransport : this.transport;
    return this.execute(argv, Deadline.start(options), input, transport);
  }

  /** Runs several commands through one client (a spawned one, or the binding's control connection), in order. Not transactional. */
  async runGroup(commands: readonly (readonly string[])[], options: OperationOptions = {}): Promise<GroupResult> {
    if (!Array.isArray(commands) || commands.length === 0) throw new ArgumentError('a group needs at least one command');
    const args: string[] = [];
    commands.forEach((command, i) => {
      if (!Array.isArray(command) || command.length === 0 || command[0]!.startsWith('-')) throw new ArgumentError(`group command ${i} must start with a tmux command`);
      if (i > 0) args.push(';');
      args.push(...command);
    });
    const result = await this.execute(args, Deadline.start(options), undefined, this.transport);
    return Object.freeze({ result, steps: commands.length, ok: result.ok, transactional: false as const });
  }

  /**
   * Runs a tmux command for a typed operation: failures become typed errors (target not
   * found, server unreachable, command error). Used by handles and by drover's other layers.
   */
  async command(
    args: readonly string[],
    options: OperationOptions & { deadline?: Deadline; input?: Uint8Array; transport?: CommandTransport } = {},
  ): Promise<CommandResult> {
    const deadline = options.deadline ?? Deadline.start(options);
    const transport = options.input ? this.spawnTransport : (options.transport ?? this.transport);
    const result = await this.execute(args, deadline, options.input, transport);
    if (!result.ok) throw failureOf(result);
    return result;
  }

  /** Parses the ids printed by CREATION_FORMAT. */
  creationIds(result: CommandResult): { session: SessionId; window: WindowId; pane: PaneId } {
    const match = /^(\$\d+) (@\d+) (%\d+)\n?$/.exec(result.stdout.toString('latin1'));
    if (!match) {
      throw new CommandError(`tmux ${result.args[0]} succeeded but its reply did not name the created objects`, { result, delivery: 'observed' });
    }
    return { session: match[1] as SessionId, window: match[2] as WindowId, pane: match[3] as PaneId };
  }

  receipt(result: CommandResult): CreationReceipt {
    const ids = this.creationIds(result);
    return Object.freeze({ session: this.session(ids.session), window: this.window(ids.window), pane: this.pane(ids.pane), result });
  }

  session(id: string): Session {
    return new Session(this, checkId('session', id));
  }

  window(id: string): Window {
    return new Window(this, checkId('window', id));
  }

  pane(id: string): Pane {
    return new Pane(this, checkId('pane', id));
  }

  windowLink(session: string, index: number, window: string): WindowLink {
    return new WindowLink(this, checkId('session', session), index, checkId('window', window));
  }

  /** Creates a detached session; returns its handle, or the full receipt when asked. */
  async newSession(spec: NewSessionSpec & OperationOptions & { receipt: true }): Promise<CreationReceipt>;
  async newSession(spec?: NewSessionSpec & OperationOptions & { receipt?: false }): Promise<Session>;
  async newSession(spec: NewSessionSpec & OperationOptions & { receipt?: boolean } = {}): Promise<Session | CreationReceipt> {
    const result = await this.command(newSessionArgs(spec), spec);
    const receipt = this.receipt(result);
    return spec.receipt ? receipt : receipt.session;
  }

  /** The server's tmux version (read once per binding). */
  async version(options: OperationOptions = {}): Promise<string> {
    if (this.cachedVersion === undefined) {
      this.cachedVersion = (await this.command(['display-message', '-p', '#{version}'], options)).text().trim();
    }
    return this.cachedVersion;
  }

  /**
   * Reads sessions, windows and panes (clients optional) in one tmux invocation. A server the
   * snapshot's bounds cannot cover fails with IncompleteSnapshotError instead of a smaller graph.
   */
  async snapshot(options: SnapshotOptions & OperationOptions = {}): Promise<Snapshot> {
    const startedAt = Date.now();
    const args = snapshotCommands(options).flatMap((command, i) => (i === 0 ? command : [';', ...command]));
    let result: CommandResult;
    try {
      result = await this.listing(args, Deadline.start(options));
    } catch (error) {
      throw incompleteCapture(error);
    }
    return new Snapshot(result.stdout, { ...options, startedAt, finishedAt: Date.now(), binding: this });
  }

  /**
   * Captures a snapshot and returns the panes matching criteria (wire form or Criteria).
   * `pushdown: 'required'` is refused before any I/O: drover has no tmux-side filter.
   */
  async searchPanes(criteria: Criteria | object | string, options: SearchOptions = {}): Promise<Selection<PaneRecord>> {
    const plan = explainPaneSearch(criteria, options.pushdown);
    if (!plan.executable) throw new UnsupportedFeatureError(`a search with pushdown: required cannot run: ${plan.rejected.join('; ')}`);
    return (await this.snapshot(options)).panes.where(paneCriteria(criteria));
  }

  /** How searchPanes would run these criteria: capture, residual criteria and why nothing is pushed to tmux. No I/O. */
  explainPanes(criteria: Criteria | object | string, options: { pushdown?: Pushdown } = {}): PaneSearchPlan {
    return explainPaneSearch(criteria, options.pushdown);
  }

  /** The handle a captured record names, on this binding; a record captured elsewhere, or a client's, is refused. No I/O. */
  resolve(record: SessionRecord): Session;
  resolve(record: WindowRecord): Window;
  resolve(record: PaneRecord): Pane;
  resolve(record: WindowLinkRecord): WindowLink;
  resolve(record: ClientRecord): never;
  resolve(record: SessionRecord | WindowRecord | PaneRecord | WindowLinkRecord | ClientRecord): Session | Window | Pane | WindowLink {
    if (record.binding !== this) throw new ArgumentError('the record was captured through another binding (or none); resolve it there');
    return record.ref();
  }

  async listSessions(options: OperationOptions = {}): Promise<Session[]> {
    return (await this.listing(['list-sessions', '-F', '#{session_id}'], Deadline.start(options))).idLines().map((id) => this.session(id));
  }

  async listWindows(options: OperationOptions = {}): Promise<Window[]> {
    return [...new Set((await this.listing(['list-windows', '-a', '-F', '#{window_id}'], Deadline.start(options))).idLines())].map((id) => this.window(id));
  }

  async listPanes(options: OperationOptions = {}): Promise<Pane[]> {
    return [...new Set((await this.listing(['list-panes', '-a', '-F', '#{pane_id}'], Deadline.start(options))).idLines())].map((id) => this.pane(id));
  }

  /** Every window link (session, index, window) of the server, in tmux's listing order. */
  async listWindowLinks(options: OperationOptions = {}): Promise<WindowLink[]> {
    return linksOf(this, await this.listing(['list-windows', '-a', '-F', LINK_FORMAT], Deadline.start(options)));
  }

  /**
   * The attached clients as captured records. A record is an observation: its name, tty and
   * pid name whichever client holds them later, so it never becomes a command target.
   */
  async listClients(options: OperationOptions = {}): Promise<ClientRecord[]> {
    return parseClientRecords((await this.listing(['list-clients', '-F', CLIENT_FORMAT], Deadline.start(options))).stdout, this);
  }

  /**
   * Runs `work` over the items, at most `concurrency` (4) at once, results in input order.
   * More than `maxItems` (1 024) items or `maxResultBytes` (1 MiB) of results is refused; the
   * first failure cancels the rest through their signal, and close() cancels the map.
   */
  async map<T, R>(items: Iterable<T>, work: (item: T, context: MapItemContext) => Promise<R>, options: MapOptions<R> = {}): Promise<R[]> {
    if (this.closed) throw new ClosedError();
    this.maps += 1;
    try {
      return await this.asRequest(() => boundedMap(items, work, options, this.closing.signal));
    } finally {
      this.maps -= 1;
    }
  }

  /**
   * Expands a tmux format. With a target, the target's own id is printed in the same reply,
   * so a vanished target is an error instead of tmux's silent fallback to another one.
   */
  async display(format: string, options: OperationOptions & { target?: Session | Window | Pane } = {}): Promise<Buffer> {
    checkName('format', format);
    const target = options.target;
    if (!target) {
      const result = await this.command(['display-message', '-p', protectArgument(format)], options);
      return stripNewline(result.stdout);
    }
    const idVar = target.kind === 'session' ? 'session_id' : target.kind === 'window' ? 'window_id' : 'pane_id';
    const result = await this.command(['display-message', '-p', '-t', target.id, protectArgument(`#{${idVar}} ${format}`)], options);
    const out = stripNewline(result.stdout);
    const space = out.indexOf(0x20);
    const shownId = out.subarray(0, space === -1 ? out.length : space).toString('latin1');
    if (shownId !== target.id) throw new TargetNotFoundError(target.id, { result });
    return space === -1 ? Buffer.alloc(0) : out.subarray(space + 1);
  }

  options(scope: 'server' | 'global-session' | 'global-window' | 'global-pane' = 'server'): Options {
    if (scope === 'server') return new Options(this, { kind: 'server' });
    const of = scope.slice('global-'.length) as 'session' | 'window' | 'pane';
    return new Options(this, { kind: 'global', of });
  }

  /** Global hooks (session scope, tmux -g). */
  hooks(): Hooks {
    return new Hooks(this, { kind: 'global' });
  }

  /** The server's global environment. */
  environment(): Environment {
    return new Environment(this, { kind: 'global' });
  }

  buffers(): Buffers {
    return new Buffers(this);
  }

  /**
   * tmux's wait-for: wait for a signal, send one, lock or unlock a channel. tmux cannot withdraw
   * a lock request: one that ran out of its deadline stays queued there and is granted the lock
   * when it is next released, to a client that is gone, so the channel then stays locked until it
   * is unlocked once more.
   */
  async waitFor(channel: string, action: WaitAction = 'wait', options: OperationOptions = {}): Promise<CommandResult> {
    return this.command(waitForArgs(channel, action), options);
  }

  /** Runs the tmux configuration file at exactly this path on the server (not inert: it executes). */
  async sourceFile(path: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.command(['source-file', '--', protectArgument(literalSourcePath(path))], options);
  }

  /** Switches the named attached client to a session of this server. */
  async switchClient(client: string, session: Session, options: OperationOptions = {}): Promise<CommandResult> {
    checkName('client', client);
    if (session.server !== this) throw new ArgumentError('the session belongs to another binding');
    return this.command(['switch-client', '-E', '-c', protectArgument(client), '-t', session.id], options);
  }

  /**
   * Attaches the caller's terminal to a session as a new tmux client, until that client
   * detaches or exits. The terminal and its TERM are the caller's to give; none is inferred.
   * Aborting ends the client (tmux restores the terminal's modes) and fails with AbortedError;
   * the daemon keeps running either way.
   */
  async attach(session: Session, options: AttachOptions): Promise<TerminalResult> {
    if (session.server !== this) throw new ArgumentError('the session belongs to another binding');
    const terminal = terminalDescriptor(options.terminal);
    checkTerm(options.term);
    if (this.closed) throw new ClosedError();
    const guard = incarnationGuard(await this.incarnation({ signal: options.signal }));
    return runOnTerminal([this.endpoint.executable, ...this.endpoint.args, ...guard, ';', 'attach-session', ...(options.readOnly ? ['-r'] : []), '-t', session.id], {
      terminal,
      env: { ...clientEnvironment(this.env), TERM: options.term },
      signal: options.signal,
    });
  }

  /** Submits kill-server: destroys every session of the daemon, borrowed or not. */
  async kill(options: OperationOptions = {}): Promise<CommandResult> {
    return this.execute(['kill-server'], Deadline.start(options), undefined, this.spawnTransport);
  }

  /**
   * Stops admitting requests, closes owned connections and, when the daemon is owned,
   * retires it and removes its directory. Idempotent; incomplete cleanup throws and can be
   * retried. Called from inside one of the binding's own running requests (a map() item), it
   * fails at once with ReentrantCloseError and leaves the binding open.
   */
  async close(): Promise<void> {
    if (enclosingRequests.getStore()?.some((request) => request.binding === this && request.running)) throw new ReentrantCloseError();
    this.closed = true;
    this.admission.rejectWaiters(new ClosedError('the binding was closed while waiting for admission'));
    this.closing.abort();
    // Cancelled requests end as their clients are killed and reaped; that is waited for within the close bound.
    await Promise.race([Promise.allSettled([...this.running]), sleep(this.limits.closeTimeoutMs, undefined, { ref: false })]);
    const cleanupErrors: Error[] = [];
    for (const resource of [...this.owned]) {
      await resource.close().catch((e: Error) => cleanupErrors.push(e));
      this.owned.delete(resource);
    }
    await this.transport.close().catch((e: Error) => cleanupErrors.push(e));
    if (this.daemon) await this.daemon.retire(this.limits.closeTimeoutMs).catch((e: Error) => cleanupErrors.push(e));
    if (cleanupErrors.length > 0) throw new DroverError('closing the tmux binding left resources behind; retry close()', { phase: 'cleanup', cleanupErrors });
  }

  /** Closes the binding, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** Local counts only: no I/O, no paths, no identifiers. */
  diagnostics(): ServerDiagnostics {
    return Object.freeze({
      owned: this.ownsDaemon,
      closed: this.closed,
      transport: this.transport.kind,
      admittedRequests: this.admission.admitted,
      reservedProcessSlots: this.admission.admitted,
      waitingRequests: this.admission.waiting,
      controlConnections: this.owned.size,
      maps: this.maps,
      limits: Object.freeze({ ...this.limits }),
    });
  }
}

function stripNewline(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, -1) : bytes;
}
