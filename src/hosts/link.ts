/**
 * The link to one host: one long-lived `ssh -T … HOST drover rpc --stdio`, its health, and its
 * reconnection. drover builds no transport of its own; ssh is the transport, drover-rpc the
 * protocol, and this module the state machine between them:
 *
 *   connecting ──▶ up ──(lost, or a ping unanswered: stalled)──▶ reconnecting ──▶ up
 *        │                                                            │
 *        └──(an attempt fails)──▶ reconnecting ──(fails again, downAfterFailures in a row)──▶ down
 *
 *   any attempt ──(ssh cannot log in: a key refused, a host key unknown or changed)──▶ auth_required
 *   any attempt ──(no drover there, or one of another protocol major)──────────────▶ incompatible
 *
 * Attempts after a failure wait with exponential backoff (1 s, 2 s, 4 s … capped at a minute,
 * with jitter); `down` keeps retrying at that pace. `auth_required` and `incompatible` need the
 * user, so they retry only every ten minutes (a login failing every few seconds gets an address
 * banned), or at once on reconnect(). Nothing ever prompts: ssh runs in BatchMode on a pipe.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as delay } from 'node:timers/promises';
import { DroverError, LongLivedChild, TimeoutError, formatTimestamp, shellQuote, wallMicros, type ChildExit } from '../process/index.js';
import { RpcClient, RpcHandshakeError, RpcLinkLostError, type RpcRequestOptions } from './client.js';
import { forwardedSocketProblem, type HostEntry } from './config.js';
import { RPC_PING, type RpcHandshake, type RpcParams, type RpcReply } from './protocol.js';
import { DEFAULT_REMOTE_DROVER, classifySshExit, remoteCommandLine, sshArgv, sshBinary, sshStderrSummary } from './ssh.js';

export type LinkState = 'connecting' | 'up' | 'reconnecting' | 'auth_required' | 'incompatible' | 'down';

export const LINK_STATES: readonly LinkState[] = Object.freeze(['connecting', 'up', 'reconnecting', 'auth_required', 'incompatible', 'down']);

/** What is known of a host now; never a guess (each field says when it is unknown). */
export interface HostHealth {
  readonly name: string;
  readonly ssh: string;
  /** Requests can go to it now: the link is up and its last ping was answered. */
  readonly reachable: boolean;
  readonly linkState: LinkState;
  /** When the host last answered anything (a handshake, a ping, a reply); undefined when never. */
  readonly lastSeenAt: string | undefined;
  /** The last ping's round trip through ssh and the remote drover, in milliseconds. */
  readonly latencyMs: number | undefined;
  /** The remote drover's release, from its handshake (the last one seen). */
  readonly version: string | undefined;
  /** Why the host is not up, and what fixes it when the user must act. */
  readonly problem: string | undefined;
  /** When the next attempt to connect is due, while one is waiting. */
  readonly nextAttemptAt: string | undefined;
}

/** HostHealth as drover prints it in JSON (snake_case; unknowns are null). */
export function hostHealthJson(health: HostHealth): Record<string, unknown> {
  return {
    name: health.name,
    ssh: health.ssh,
    reachable: health.reachable,
    link_state: health.linkState,
    last_seen_at: health.lastSeenAt ?? null,
    latency_ms: health.latencyMs ?? null,
    version: health.version ?? null,
    problem: health.problem ?? null,
    next_attempt_at: health.nextAttemptAt ?? null,
  };
}

export interface LinkTimings {
  /** ssh's ConnectTimeout: reaching the host and its first exchange. */
  readonly connectTimeoutMs: number;
  /** From starting ssh to the remote drover's handshake line (logging in, starting Node there). */
  readonly handshakeTimeoutMs: number;
  /** A ping this long after the last answer, while up. */
  readonly pingIntervalMs: number;
  /** A ping unanswered this long means the link stalled (open but silent): it is killed and reconnected. */
  readonly pingTimeoutMs: number;
  /** The first wait after a failed attempt; doubled after each further one. */
  readonly backoffBaseMs: number;
  /** The longest wait between attempts. */
  readonly backoffCapMs: number;
  /** Failed attempts in a row after which the host is `down`. */
  readonly downAfterFailures: number;
  /** The wait before trying again a host that needs the user (auth_required, incompatible). */
  readonly userActionRetryMs: number;
}

/** A stalled link is found within pingInterval + pingTimeout (20 s), long before ssh's own 60 s. */
export const DEFAULT_LINK_TIMINGS: LinkTimings = Object.freeze({
  connectTimeoutMs: 10_000,
  handshakeTimeoutMs: 30_000,
  pingIntervalMs: 10_000,
  pingTimeoutMs: 10_000,
  backoffBaseMs: 1000,
  backoffCapMs: 60_000,
  downAfterFailures: 3,
  userActionRetryMs: 10 * 60_000,
});

/**
 * The wait before attempt `failures + 1`, after `failures` failed attempts in a row (≥ 1):
 * base × 2^(failures−1), jittered by ±20 % so hosts that failed together do not retry together,
 * never over the cap. `random` is in [0, 1).
 */
export function backoffDelay(failures: number, timings: Pick<LinkTimings, 'backoffBaseMs' | 'backoffCapMs'>, random: number): number {
  const raw = timings.backoffBaseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30);
  return Math.round(Math.min(timings.backoffCapMs, raw * (0.8 + 0.4 * random)));
}

/** A host's link is not up; nothing was sent to it. */
export class HostUnreachableError extends DroverError {
  constructor(
    readonly host: string,
    readonly linkState: LinkState,
    message: string,
  ) {
    super(message, { phase: 'link', delivery: 'not_sent' });
  }
}

export interface HostLinkOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly timings?: Partial<LinkTimings>;
  /** How the user runs drover here, for the commands problems tell them to run. Default `drover`. */
  readonly droverCommand?: string;
  /** For the backoff's jitter; Math.random by default. */
  readonly random?: () => number;
  /**
   * This machine's `drover broker serve` socket, forwarded to the host for the link's life: to
   * the entry's forward_broker, else to the path the host's drover names in its handshake (the
   * link logs in once to learn it, then again with it forwarded). Only the long-lived link of
   * `broker serve` sets it; short-lived links would take the host's socket over and leave it
   * dead when they end.
   */
  readonly brokerSocket?: string;
}

type Failure = { readonly state: 'auth_required' | 'incompatible' | 'transient'; readonly problem: string };

/** How long ssh may take to exit after its stream ended, so its status and stderr can say why. */
const EXIT_WAIT_MS = 2000;
const STDERR_TAIL_BYTES = 16 * 1024;
const STOP_GRACE_MS = 500;

export class HostLink {
  readonly timings: LinkTimings;
  private linkState: LinkState = 'connecting';
  private child: LongLivedChild | undefined;
  private rpc: RpcClient | undefined;
  private handshake: RpcHandshake | undefined;
  /** The forwarded broker's path the host named in a handshake (see HostLinkOptions.brokerSocket). */
  private learnedBrokerSocket: string | undefined;
  private failures = 0;
  private lastSeen: number | undefined;
  private latency: number | undefined;
  private problem: string | undefined;
  private nextAttempt: number | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private attempting = false;
  private started = false;
  private closed = false;
  /** Bumped by every attempt and by close(): callbacks of an older one are ignored. */
  private generation = 0;
  private readonly healthListeners = new Set<(health: HostHealth) => void>();
  private readonly upListeners = new Set<(client: RpcClient) => void>();
  private readonly droverCommand: string;

  constructor(
    readonly host: HostEntry,
    private readonly options: HostLinkOptions = {},
  ) {
    this.timings = Object.freeze({ ...DEFAULT_LINK_TIMINGS, ...options.timings });
    this.droverCommand = options.droverCommand ?? 'drover';
  }

  /** Starts connecting (once; later calls do nothing). */
  start(): this {
    if (!this.started && !this.closed) {
      this.started = true;
      this.attempt();
    }
    return this;
  }

  get health(): HostHealth {
    return Object.freeze({
      name: this.host.name,
      ssh: this.host.ssh,
      reachable: this.linkState === 'up',
      linkState: this.linkState,
      lastSeenAt: this.lastSeen === undefined ? undefined : formatTimestamp(this.lastSeen),
      latencyMs: this.latency,
      version: this.handshake?.drover_version,
      problem: this.problem,
      nextAttemptAt: this.nextAttempt === undefined ? undefined : formatTimestamp(this.nextAttempt),
    });
  }

  /** The remote drover's handshake, from the link that is up (or was last). */
  get remote(): RpcHandshake | undefined {
    return this.handshake;
  }

  /** Where on the host this link forwards the broker socket: the entry's forward_broker, else the path the host named; undefined before either is known. */
  private get brokerForwardedTo(): string | undefined {
    return this.host.forwardBroker ?? this.learnedBrokerSocket;
  }

  /** The link's client while it is up; undefined otherwise. A new one after each reconnect. */
  get client(): RpcClient | undefined {
    return this.linkState === 'up' ? this.rpc : undefined;
  }

  /** Called on every change of health (state, latency, problem); returns the unsubscribe. */
  onHealth(listener: (health: HostHealth) => void): () => void {
    this.healthListeners.add(listener);
    return () => this.healthListeners.delete(listener);
  }

  /** Called with the new client each time the link comes up (to open watches on it again). */
  onUp(listener: (client: RpcClient) => void): () => void {
    this.upListeners.add(listener);
    return () => this.upListeners.delete(listener);
  }

  /**
   * The health once the link has settled: up, or a state that will not change without waiting
   * (auth_required, incompatible, down). At the deadline, the health as it is then.
   */
  settled(options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<HostHealth> {
    const isSettled = (state: LinkState): boolean => state === 'up' || state === 'auth_required' || state === 'incompatible' || state === 'down';
    if (isSettled(this.linkState) || this.closed) return Promise.resolve(this.health);
    this.start();
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        unsubscribe();
        options.signal?.removeEventListener('abort', finish);
        resolve(this.health);
      };
      const timer = setTimeout(finish, options.timeoutMs);
      const unsubscribe = this.onHealth((health) => {
        if (isSettled(health.linkState)) finish();
      });
      options.signal?.addEventListener('abort', finish, { once: true });
    });
  }

  /** The client once the link is up; HostUnreachableError when it settles otherwise or the deadline passes. */
  async whenUp(options: { readonly timeoutMs: number; readonly signal?: AbortSignal }): Promise<RpcClient> {
    const health = await this.settled(options);
    const client = this.client;
    if (client !== undefined) return client;
    throw this.unreachable(health);
  }

  private unreachable(health: HostHealth): HostUnreachableError {
    return new HostUnreachableError(this.host.name, health.linkState, `host ${this.host.name} is ${health.linkState.replace('_', ' ')}${health.problem === undefined ? '' : `: ${health.problem}`}`);
  }

  /**
   * One request over the link as it is now: HostUnreachableError (nothing sent) when it is not
   * up; RpcLinkLostError (possibly sent) when it is lost before the reply.
   */
  async request(method: string, params: RpcParams, options: RpcRequestOptions): Promise<RpcReply> {
    const client = this.client;
    if (client === undefined) throw this.unreachable(this.health);
    const reply = await client.request(method, params, options);
    this.seen();
    return reply;
  }

  /** Tries now: cancels a pending wait (after auth_required, say, once the user has fixed it). */
  reconnect(): void {
    if (this.closed || this.attempting || this.linkState === 'up') return;
    this.started = true;
    this.attempt();
  }

  /** Ends the link and every timer; requests in flight fail as possibly sent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.generation += 1;
    this.clearTimers();
    const child = this.child;
    this.child = undefined;
    this.rpc?.end('the link was closed');
    this.rpc = undefined;
    child?.stdin.end();
    await child?.stop(STOP_GRACE_MS).catch(() => undefined);
    this.healthListeners.clear();
    this.upListeners.clear();
  }

  private clearTimers(): void {
    clearTimeout(this.retryTimer);
    clearTimeout(this.pingTimer);
    this.retryTimer = undefined;
    this.pingTimer = undefined;
  }

  private emit(): void {
    const health = this.health;
    for (const listener of this.healthListeners) listener(health);
  }

  private seen(): void {
    this.lastSeen = wallMicros();
  }

  private attempt(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.nextAttempt = undefined;
    this.attempting = true;
    const generation = ++this.generation;
    void this.connect(generation).finally(() => {
      if (generation === this.generation) this.attempting = false;
    });
  }

  private async connect(generation: number): Promise<void> {
    let argv: string[];
    try {
      const remote = remoteCommandLine(this.host.drover ?? DEFAULT_REMOTE_DROVER, ['rpc', '--stdio']);
      const forwarded = this.brokerForwardedTo;
      const local = this.options.brokerSocket;
      const forwardSocket = forwarded !== undefined && local !== undefined ? { remote: forwarded, local } : undefined;
      argv = sshArgv(sshBinary(this.options.env), this.host.ssh, remote, { connectTimeoutMs: this.timings.connectTimeoutMs, forwardSocket });
    } catch (error) {
      this.failed(generation, { state: 'transient', problem: (error as Error).message });
      return;
    }
    let child: LongLivedChild;
    try {
      child = await LongLivedChild.start(argv, { env: this.options.env, stderrBytes: STDERR_TAIL_BYTES });
    } catch (error) {
      this.failed(generation, { state: 'transient', problem: (error as Error).message });
      return;
    }
    // The link's loss is read from stdout's end; a write racing it must not throw.
    child.stdin.on('error', () => undefined);
    if (generation !== this.generation) {
      await child.stop(STOP_GRACE_MS).catch(() => undefined);
      return;
    }
    this.child = child;
    let client: RpcClient;
    try {
      client = await RpcClient.connect({ input: child.stdout, output: child.stdin }, { timeoutMs: this.timings.handshakeTimeoutMs, upgradeHint: () => this.installHint() });
    } catch (error) {
      const exit = await Promise.race([child.exited, delay(EXIT_WAIT_MS).then(() => undefined)]);
      await child.stop(STOP_GRACE_MS).catch(() => undefined);
      if (this.child === child) this.child = undefined;
      this.failed(generation, this.judge(error, exit, child.stderr().tail.toString('utf8')));
      return;
    }
    if (generation !== this.generation) {
      client.end('the link was replaced');
      await child.stop(STOP_GRACE_MS).catch(() => undefined);
      return;
    }
    const offered = client.handshake.broker_socket;
    if (this.options.brokerSocket !== undefined && this.brokerForwardedTo === undefined && typeof offered === 'string' && forwardedSocketProblem(offered) === undefined) {
      // The host named where it takes a hub's broker: log in again with the socket forwarded there.
      this.learnedBrokerSocket = offered;
      client.end('logging in again to forward the broker');
      await child.stop(STOP_GRACE_MS).catch(() => undefined);
      if (this.child === child) this.child = undefined;
      return this.connect(generation);
    }
    this.rpc = client;
    this.handshake = client.handshake;
    this.seen();
    client.onLost((error) => {
      // Lost before it was up (its first ping went unanswered): a failed attempt like any other.
      if (this.linkState === 'up') void this.lost(generation, child, error);
      else void child.stop(STOP_GRACE_MS).catch(() => undefined).then(() => this.failed(generation, { state: 'transient', problem: error.message }));
    });
    // Up comes with its latency: one ping first.
    if (!(await this.ping(generation, client))) return;
    this.problem = undefined;
    this.linkState = 'up';
    this.emit();
    for (const listener of this.upListeners) listener(client);
  }

  /** Why an attempt failed, from the handshake's error and ssh's exit and stderr. */
  private judge(error: unknown, exit: ChildExit | undefined, stderr: string): Failure {
    const ssh = sshStderrSummary(stderr);
    const alias = this.host.ssh;
    if (error instanceof RpcHandshakeError && error.reason === 'incompatible') return { state: 'incompatible', problem: error.message };
    if (error instanceof RpcHandshakeError && error.reason === 'not_rpc') {
      return { state: 'incompatible', problem: `${error.message} (a login script that prints to stdout breaks every ssh command's output; drover-rpc needs the first line)` };
    }
    switch (classifySshExit(exit, stderr)) {
      case 'auth':
        return {
          state: 'auth_required',
          problem: `ssh could not log in to ${alias} (${ssh ?? 'refused'}); drover never prompts: run \`ssh ${alias}\` once by hand (accept the host key, load your key into ssh-agent), then \`${this.droverCommand} host check ${this.host.name}\``,
        };
      case 'missing':
        return {
          state: 'incompatible',
          problem: `no drover to run on ${this.host.name}${ssh === undefined ? '' : ` (${ssh})`}: ${this.installHint()}, or name the drover program there: \`${this.droverCommand} host remove ${this.host.name}\`, then \`${this.droverCommand} host add ${this.host.name} --ssh ${shellQuote(this.host.ssh)} --drover PATH\``,
        };
      case 'exited':
        return { state: 'incompatible', problem: `drover on ${this.host.name} exited (status ${exit?.exitCode}) before speaking drover-rpc${ssh === undefined ? '' : `: ${ssh}`}` };
      case 'transient':
        return { state: 'transient', problem: ssh === undefined ? (error as Error).message : `${(error as Error).message}: ${ssh}` };
    }
  }

  /** How to put this drover's release on the host: the fix for a host too old or without drover. */
  installHint(): string {
    return `install this drover's release there with \`${this.droverCommand} host add ${this.host.name} --install\``;
  }

  private failed(generation: number, failure: Failure): void {
    if (generation !== this.generation || this.closed) return;
    this.failures += 1;
    this.problem = failure.problem;
    let wait: number;
    if (failure.state === 'transient') {
      this.linkState = this.failures >= this.timings.downAfterFailures ? 'down' : 'reconnecting';
      wait = backoffDelay(this.failures, this.timings, (this.options.random ?? Math.random)());
    } else {
      this.linkState = failure.state;
      wait = this.timings.userActionRetryMs;
    }
    this.nextAttempt = wallMicros() + wait * 1000;
    this.retryTimer = setTimeout(() => this.attempt(), wait);
    this.emit();
  }

  /**
   * The link went (ssh ended, or a ping found it stalled). A link that had stayed up (its
   * failures were forgiven by a later ping) is tried again at once; one that keeps dropping
   * right after coming up waits its backoff, so a flapping host is never hammered.
   */
  private async lost(generation: number, child: LongLivedChild, error: RpcLinkLostError): Promise<void> {
    if (generation !== this.generation || this.closed) return;
    clearTimeout(this.pingTimer);
    this.pingTimer = undefined;
    this.rpc = undefined;
    this.child = undefined;
    this.linkState = 'reconnecting';
    this.problem = error.message;
    this.emit();
    const exit = await Promise.race([child.exited, delay(EXIT_WAIT_MS).then(() => undefined)]);
    await child.stop(STOP_GRACE_MS).catch(() => undefined);
    const ssh = exit === undefined ? undefined : sshStderrSummary(child.stderr().tail.toString('utf8'));
    if (generation !== this.generation || this.closed) return;
    if (ssh !== undefined) this.problem = `${error.message}: ${ssh}`;
    if (this.failures === 0) {
      this.attempt();
      return;
    }
    const wait = backoffDelay(this.failures, this.timings, (this.options.random ?? Math.random)());
    this.nextAttempt = wallMicros() + wait * 1000;
    this.retryTimer = setTimeout(() => this.attempt(), wait);
    this.emit();
  }

  /** One ping; on success the latency and the next ping, on failure the link is ended as lost. */
  private async ping(generation: number, client: RpcClient): Promise<boolean> {
    const started = performance.now();
    try {
      await client.request(RPC_PING, {}, { timeoutMs: this.timings.pingTimeoutMs });
    } catch (error) {
      if (error instanceof TimeoutError) client.end(`no answer to a ping within ${this.timings.pingTimeoutMs} ms: the link stalled`);
      return false;
    }
    if (generation !== this.generation || this.closed) return false;
    const latency = Math.round((performance.now() - started) * 10) / 10;
    const changed = latency !== this.latency;
    this.latency = latency;
    this.seen();
    // A ping answered on a link that is up: it stayed up, so earlier failures are forgiven.
    if (this.linkState === 'up') this.failures = 0;
    if (changed && this.linkState === 'up') this.emit();
    this.pingTimer = setTimeout(() => void this.ping(generation, client), this.timings.pingIntervalMs);
    return true;
  }
}
