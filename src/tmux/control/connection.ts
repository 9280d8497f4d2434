import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LongLivedChild } from '../../process/index.js';
import { versionAtLeast } from '../commands.js';
import { Deadline, type OperationOptions } from '../deadline.js';
import type { Endpoint } from '../endpoint.js';
import {
  AbortedError,
  ArgumentError,
  CapacityError,
  ClosedError,
  CommandError,
  DroverError,
  LimitError,
  ServerReplacedError,
  ServerUnreachableError,
  TargetNotFoundError,
  TimeoutError,
  UnsupportedFeatureError,
  type Delivery,
} from '../errors.js';
import { isGuardRefusal } from '../incarnation.js';
import { checkId, type PaneId, type SessionId } from '../ids.js';
import { clientEnvironment, UTF8_CLIENT_FLAG, type CommandResult, type CommandTransport, type ExecOptions } from '../transport.js';
import { ConnectionLostError, ControlProtocolError, type LossReason } from './errors.js';
import { ControlParser, MAX_BLOCK_BYTES, MAX_LINE_BYTES, decodeNotification, type GuardedBlock } from './parser.js';
import { quoteArgument } from './quote.js';
import { planControlCommand, resultOfBlocks } from './routing.js';
import { Subscription, type ControlEvent, type SubscribeOptions } from './subscription.js';
import { controlClientTransition } from './transitions.js';

export interface ControlLimits {
  /** Exchanges admitted at once (written or being written, until their reply ends). */
  maxExchanges: number;
  /** Command bytes waiting for admission, and reply bytes held for unfinished exchanges. */
  maxQueuedBytes: number;
  /** Longest command line and longest line accepted from tmux. */
  maxLineBytes: number;
  /** Largest reply one exchange may return. */
  maxReplyBytes: number;
  maxSubscriptions: number;
  /** Trailing stderr kept from the control client. */
  maxStderrBytes: number;
}

export const DEFAULT_CONTROL_LIMITS: Readonly<ControlLimits> = Object.freeze({
  maxExchanges: 32,
  maxQueuedBytes: 1024 * 1024,
  maxLineBytes: MAX_LINE_BYTES,
  maxReplyBytes: MAX_BLOCK_BYTES,
  maxSubscriptions: 32,
  maxStderrBytes: 256 * 1024,
});

/**
 * The blocks tmux sent within one request's reply window. `command_count`: the caller said
 * how many commands the line holds and exactly that many blocks (or fewer, ending in an
 * error) were taken. `boundary_marker`: every block up to a marker command drover sent right
 * after the line. Hook output run on the connection's behalf can share the window. There is
 * deliberately no success predicate: blocks say what tmux reported per command.
 */
export interface GuardedReply {
  readonly blocks: readonly GuardedBlock[];
  readonly attribution: 'command_count' | 'boundary_marker';
  readonly generation: number;
  readonly elapsedMs: number;
}

export interface ExchangeOptions extends OperationOptions {
  /**
   * How many commands the line holds when each answers with exactly one block (no waiting,
   * no commands queued by it). Without it, a marker command closes the reply window.
   */
  commands?: number;
}

export interface ControlDiagnostics {
  readonly open: boolean;
  readonly generation: number;
  readonly admitted: number;
  readonly queued: number;
  readonly writing: number;
  readonly awaitingReply: number;
  /** Exchanges whose caller gave up (deadline, abort) while tmux still owes their reply. */
  readonly incomplete: number;
  readonly reservedWireBytes: number;
  readonly retainedReplyBytes: number;
  /** Cumulative, across generations. */
  readonly stderrReceivedBytes: number;
  readonly subscriptions: number;
  /** close() has begun and not finished retiring the client. */
  readonly stopping: boolean;
  /** close() has finished (with or without cleanup errors). */
  readonly finished: boolean;
  /** Cleanup failures close() met. */
  readonly cleanupErrors: number;
  readonly events: number;
  readonly gaps: number;
  readonly unsolicitedBlocks: number;
  readonly limits: Readonly<ControlLimits>;
}

/** What the binding tells a connection when opening it. */
export interface ControlConnectionSpec {
  readonly endpoint: Endpoint;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * A tmux command run before every attach (the first and each reconnect) in the same
   * client; when it fails, the client does not attach. The binding's incarnation guard.
   */
  readonly guard?: readonly string[];
  /** The exact session to attach to. */
  readonly session: SessionId;
  /** Receive %output (false attaches with no-output: commands and topology events only). */
  readonly output: boolean;
  /** tmux pause-after: pause a pane whose output is this many seconds behind. */
  readonly pauseAfterSeconds?: number;
  readonly limits?: Partial<ControlLimits>;
  /** Runs once after the connection is closed (the binding's bookkeeping, anchor removal). */
  readonly onClose?: () => Promise<void>;
}

/** One exchange from submission until its reply ends (or, abandoned, until tmux has answered it). */
class Request {
  readonly wireBytes: number;
  readonly startedAt = performance.now();
  readonly expiresAt: number;
  readonly blocks: GuardedBlock[] = [];
  state: 'waiting' | 'writing' | 'sent' | 'done' = 'waiting';
  started = false;
  solicited = 0;
  replyBytes = 0;
  overflow = false;
  abandoned = false;
  onAbort: (() => void) | undefined;

  constructor(
    readonly text: string,
    readonly commands: number | undefined,
    readonly marker: Buffer | undefined,
    readonly deadline: Deadline,
    private readonly fulfil: (reply: GuardedReply) => void,
    private readonly fail: (error: Error) => void,
    private readonly watched: Set<Request>,
  ) {
    this.wireBytes = Buffer.byteLength(text);
    this.expiresAt = this.startedAt + deadline.remaining();
    watched.add(this);
  }

  resolve(reply: GuardedReply): void {
    this.settle();
    this.fulfil(reply);
  }

  reject(error: Error): void {
    this.settle();
    this.fail(error);
  }

  private settle(): void {
    this.watched.delete(this);
    if (this.onAbort) this.deadline.signal?.removeEventListener('abort', this.onAbort);
  }
}

interface Link {
  readonly generation: number;
  readonly child: LongLivedChild;
  readonly parser: ControlParser;
  readonly pending: Request[];
  session: SessionId;
  /** The guard's reply is still to come, before the attach's own. */
  guardPending: boolean;
  attached: boolean;
  ended: boolean;
  exitReason: string | undefined;
  /** Requests handed over in this tick, written together at its end. */
  outbox: Request[];
  onAttach?: (error?: Error) => void;
}

const CLOSE_GRACE_MS = 500;
/** After the client exits, how long its last output may still take to drain. */
const EXIT_DRAIN_MS = 50;

/**
 * A persistent tmux control-mode client (`tmux -C attach-session`) attached to one session
 * without resizing anything. Commands are pipelined over it and matched to their replies in
 * order; notifications fan out to bounded subscriptions. Every wait is bounded and every
 * loss ends its waiters with a typed error.
 */
export class ControlConnection implements CommandTransport {
  readonly kind = 'control' as const;
  private readonly spec: ControlConnectionSpec;
  private readonly limits: Readonly<ControlLimits>;
  // The global Web Crypto loads Node's crypto only when a connection opens, not in every CLI start.
  private readonly markerPrefix = `DROVER-BOUNDARY-${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString('hex')}-`;
  private link: Link | undefined;
  private generationCount = 0;
  private state: 'new' | 'open' | 'closed' = 'new';
  private closing: Promise<void> | undefined;
  private retired = false;
  private cleanupFailures = 0;
  private readonly waiting: Request[] = [];
  private admitted = 0;
  private writing = 0;
  private queuedBytes = 0;
  private retainedReplyBytes = 0;
  private markers = 0;
  private sequence = 0;
  private eventCount = 0;
  private gapCount = 0;
  private unsolicitedBlocks = 0;
  private stderrBefore = 0;
  private readonly subscriptions = new Set<Subscription>();
  private tmuxVersion: string | undefined;
  /** Exchanges whose callers still wait; one timer enforces all their deadlines. */
  private readonly watched = new Set<Request>();
  private sweepTimer: NodeJS.Timeout | undefined;
  private sweepAt = Number.POSITIVE_INFINITY;

  /** @internal Use Server.openControl(), which accounts for the connection. */
  constructor(spec: ControlConnectionSpec) {
    this.spec = spec;
    this.limits = Object.freeze(checkLimits({ ...DEFAULT_CONTROL_LIMITS, ...spec.limits }));
    if (spec.pauseAfterSeconds !== undefined && (!Number.isSafeInteger(spec.pauseAfterSeconds) || spec.pauseAfterSeconds < 1)) {
      throw new ArgumentError('pauseAfterSeconds must be a positive whole number of seconds');
    }
    checkId('session', spec.session);
  }

  /** @internal Attaches the first generation. */
  async start(options: OperationOptions = {}): Promise<void> {
    if (this.state !== 'new') throw new ClosedError('the control connection was already started');
    this.state = 'open';
    await this.attach(this.spec.session, Deadline.start(options));
  }

  /** Increases with every reconnect; events carry the generation they arrived on. */
  get generation(): number {
    return this.generationCount;
  }

  /** The control client's pid in the current generation. */
  get pid(): number | undefined {
    return this.link?.child.pid;
  }

  /** The session the control client is attached to. */
  get session(): SessionId | undefined {
    return this.link?.session;
  }

  /** True while the current generation can carry commands. */
  get isOpen(): boolean {
    return this.state === 'open' && this.link !== undefined && this.link.attached && !this.link.ended;
  }

  /**
   * Sends one authored tmux command line and returns the blocks of its reply. Bounded by
   * admission (maxExchanges), queued bytes and the deadline; a caller that gives up leaves
   * the reply owed, and it is discarded when it arrives.
   */
  exchange(line: string, options: ExchangeOptions = {}): Promise<GuardedReply> {
    let deadline: Deadline;
    try {
      deadline = Deadline.start(options);
      this.checkLine(line, options.commands);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.submit(line, options.commands, deadline);
  }

  private submit(line: string, commands: number | undefined, deadline: Deadline): Promise<GuardedReply> {
    if (this.state !== 'open') return Promise.reject(new ClosedError('the control connection is closed'));
    const link = this.link;
    if (!link || link.ended) return Promise.reject(this.lostBeforeSending());
    if (deadline.signal?.aborted) return Promise.reject(new AbortedError('the exchange was aborted before it was sent', { delivery: 'not_sent' }));

    let markerLine = '';
    let marker: Buffer | undefined;
    if (commands === undefined) {
      this.markers += 1;
      const text = `${this.markerPrefix}${this.markers}`;
      markerLine = `display-message -p ${text}\n`;
      marker = Buffer.from(`${text}\n`);
    }
    const text = `${line}\n${markerLine}`;
    return new Promise<GuardedReply>((resolve, reject) => {
      const request = new Request(text, commands, marker, deadline, resolve, reject, this.watched);
      if (request.expiresAt < this.sweepAt) this.scheduleSweep(request.expiresAt);
      if (deadline.signal) {
        request.onAbort = () => this.giveUp(request, (delivery) => new AbortedError('the exchange was aborted', { delivery }));
        deadline.signal.addEventListener('abort', request.onAbort, { once: true });
      }
      if (this.admitted < this.limits.maxExchanges && this.waiting.length === 0) {
        this.send(link, request);
      } else if (this.queuedBytes + request.wireBytes > this.limits.maxQueuedBytes) {
        request.state = 'done';
        request.reject(new CapacityError(`the control connection already queues ${this.queuedBytes} bytes of commands (limit ${this.limits.maxQueuedBytes})`));
      } else {
        this.waiting.push(request);
        this.queuedBytes += request.wireBytes;
      }
    });
  }

  private scheduleSweep(at: number): void {
    clearTimeout(this.sweepTimer);
    this.sweepAt = at;
    this.sweepTimer = setTimeout(() => this.sweep(), Math.max(0, Math.ceil(at - performance.now())));
  }

  /** Fails every exchange past its deadline and re-arms the timer for the next one. */
  private sweep(): void {
    this.sweepTimer = undefined;
    this.sweepAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const request of this.watched) {
      if (request.expiresAt > now) {
        next = Math.min(next, request.expiresAt);
        continue;
      }
      const timeoutMs = request.deadline.timeoutMs;
      this.giveUp(request, (delivery) => new TimeoutError(`tmux did not answer a control command within ${timeoutMs} ms`, timeoutMs, { phase: 'control', delivery }));
    }
    if (next !== Number.POSITIVE_INFINITY) this.scheduleSweep(next);
  }

  /** The caller stops waiting. A written request keeps its place: tmux still owes its reply, which is discarded. */
  private giveUp(request: Request, error: (delivery: Delivery) => DroverError): void {
    if (request.state === 'done' || request.abandoned) return;
    if (request.state === 'waiting') {
      this.waiting.splice(this.waiting.indexOf(request), 1);
      this.queuedBytes -= request.wireBytes;
      request.state = 'done';
      request.reject(error('not_sent'));
      return;
    }
    request.abandoned = true;
    request.reject(error('possibly_sent'));
  }

  /**
   * Runs tmux arguments over the connection and reports them as a spawned client would
   * (CommandTransport). Arguments control mode cannot carry exactly are refused with
   * UnsupportedFeatureError before anything is sent.
   */
  async execute(args: readonly string[], options: ExecOptions): Promise<CommandResult> {
    if (options.input) throw new UnsupportedFeatureError('a control connection cannot feed a command its stdin; use a spawned client');
    const plan = planControlCommand(args, undefined);
    if (!plan) throw new UnsupportedFeatureError(`tmux ${args[0] ?? ''} cannot run over a control connection with these arguments; use a spawned client`);
    // The plan's line is one line by construction; only this connection's length bound is left to check.
    const deadline = Deadline.start(options);
    this.checkLength(plan.line);
    const reply = await this.submit(plan.line, plan.commands, deadline);
    return resultOfBlocks(args, reply.blocks, reply.elapsedMs, this.pid);
  }

  /** A bounded stream of this connection's notifications. */
  subscribe(options: SubscribeOptions = {}): Subscription {
    if (this.state === 'closed') throw new ClosedError('the control connection is closed');
    if (this.subscriptions.size >= this.limits.maxSubscriptions) throw new CapacityError(`the control connection already has ${this.limits.maxSubscriptions} subscriptions`);
    const subscription = new Subscription(options, () => this.generationCount, (s) => this.subscriptions.delete(s));
    this.subscriptions.add(subscription);
    return subscription;
  }

  /** Stops tmux sending this pane's output to this connection (tmux 3.2+). */
  async pauseOutput(pane: string, options: OperationOptions = {}): Promise<GuardedReply> {
    return this.flowControl(pane, 'pause', options);
  }

  /** Resumes a paused pane's output; what tmux dropped meanwhile is not replayed. */
  async resumeOutput(pane: string, options: OperationOptions = {}): Promise<GuardedReply> {
    return this.flowControl(pane, 'continue', options);
  }

  /**
   * Replaces the control client with a new one (a new generation) on the same session.
   * Subscriptions continue and first see a `gap` event with reason `reconnect`: anything
   * that happened in between is not replayed.
   */
  async reconnect(options: OperationOptions & { session?: string } = {}): Promise<void> {
    if (this.state !== 'open') throw new ClosedError('the control connection is closed');
    const deadline = Deadline.start(options);
    const session = options.session === undefined ? (this.link?.session ?? this.spec.session) : checkId('session', options.session);
    const old = this.link;
    if (old) {
      this.lose(old, 'reconnected', { interruptSubscriptions: false });
      await this.reap(old);
    }
    await this.attach(session, deadline);
    // Exchanges that waited for admission through the switch go out on the new client.
    this.pump(this.link!);
    this.gapCount += 1;
    const gap: ControlEvent = Object.freeze({ kind: 'gap', raw: Buffer.alloc(0), sequence: this.sequence + 1, generation: this.generationCount, reason: 'reconnect' });
    for (const subscription of this.subscriptions) subscription.resume(gap);
  }

  /**
   * Detaches the control client (closing its stdin), waits within `graceMs`, then kills it.
   * Waiting exchanges end with ClosedError, sent ones with ConnectionLostError; subscriptions
   * end after their buffered events. Never touches the tmux server itself. Idempotent.
   */
  close(graceMs = CLOSE_GRACE_MS): Promise<void> {
    if (!this.closing) this.closing = this.shutdown(graceMs);
    return this.closing;
  }

  /** Local counts only: no I/O, identifiers or pane bytes. */
  diagnostics(): ControlDiagnostics {
    const pending = this.link?.pending ?? [];
    let incomplete = 0;
    let pendingBytes = 0;
    for (const request of pending) {
      if (request.abandoned) incomplete += 1;
      pendingBytes += request.wireBytes;
    }
    return Object.freeze({
      open: this.isOpen,
      generation: this.generationCount,
      admitted: this.admitted,
      queued: this.waiting.length,
      writing: this.writing,
      awaitingReply: pending.length - incomplete,
      incomplete,
      reservedWireBytes: this.queuedBytes + pendingBytes,
      retainedReplyBytes: this.retainedReplyBytes,
      stderrReceivedBytes: this.stderrBefore + (this.link?.child.stderr().totalBytes ?? 0),
      subscriptions: this.subscriptions.size,
      stopping: this.closing !== undefined && !this.retired,
      finished: this.retired,
      cleanupErrors: this.cleanupFailures,
      events: this.eventCount,
      gaps: this.gapCount,
      unsolicitedBlocks: this.unsolicitedBlocks,
      limits: this.limits,
    });
  }

  private checkLine(line: string, commands: number | undefined): void {
    if (typeof line !== 'string' || line.trim() === '') throw new ArgumentError('a control command line must be a non-empty string (an empty line would detach the client)');
    if (/[\n\r\0]/.test(line)) throw new ArgumentError('a control command line must be a single line without carriage returns or NUL');
    this.checkLength(line);
    if (commands !== undefined && (!Number.isSafeInteger(commands) || commands < 1)) throw new ArgumentError('commands must be a positive integer');
  }

  private checkLength(line: string): void {
    const bytes = Buffer.byteLength(line) + 1;
    if (bytes > this.limits.maxLineBytes) {
      throw new LimitError(`the control command line is ${bytes} bytes, over the ${this.limits.maxLineBytes}-byte limit`, 'line', this.limits.maxLineBytes, { phase: 'validate', delivery: 'not_sent' });
    }
  }

  private lostBeforeSending(): ConnectionLostError {
    return new ConnectionLostError('the control connection is lost; reconnect() or open a new one', this.link?.exitReason === undefined ? 'eof' : 'exit', 'not_sent', this.link?.exitReason);
  }

  private attach(session: SessionId, deadline: Deadline): Promise<void> {
    return controlClientTransition(this.spec.endpoint.socketPath, deadline, () => this.startClient(session, deadline));
  }

  private async startClient(session: SessionId, deadline: Deadline): Promise<void> {
    const flags = ['ignore-size'];
    if (!this.spec.output) flags.push('no-output');
    if (this.spec.pauseAfterSeconds !== undefined) flags.push(`pause-after=${this.spec.pauseAfterSeconds}`);
    const { endpoint } = this.spec;
    // -N: never start a server; a bare `tmux -C` would create a session, so the target is explicit.
    const guard = this.spec.guard === undefined ? [] : [...this.spec.guard, ';'];
    const argv = [endpoint.executable, '-N', UTF8_CLIENT_FLAG, ...endpoint.args, '-C', ...guard, 'attach-session', '-t', session, '-f', flags.join(',')];
    deadline.remaining();
    const child = await LongLivedChild.start(argv, { env: clientEnvironment(this.spec.env), stderrBytes: this.limits.maxStderrBytes });
    this.generationCount += 1;
    const parser = new ControlParser(
      { block: (block) => this.onBlock(link, block), notification: (line) => this.onNotification(link, line) },
      { maxLineBytes: this.limits.maxLineBytes, maxBlockBytes: this.limits.maxReplyBytes },
    );
    const link: Link = {
      generation: this.generationCount,
      child,
      parser,
      pending: [],
      session,
      guardPending: guard.length > 0,
      attached: false,
      ended: false,
      exitReason: undefined,
      outbox: [],
    };
    if (this.link) this.stderrBefore += this.link.child.stderr().totalBytes;
    this.link = link;
    child.stdin.on('error', () => {
      // A client that exits closes its stdin; the stream end reports the loss.
    });
    child.stdout.on('data', (chunk: Buffer) => this.onData(link, chunk));
    const ended = (): void => this.lose(link, link.exitReason === undefined ? 'eof' : 'exit');
    child.stdout.once('end', ended);
    child.stdout.once('close', ended);
    // A fallback for a stdout that never closes (a process that inherited it): when stdout ends,
    // `ended` has run already, and this wait must not keep a finished command alive.
    void child.exited.then(() => sleep(EXIT_DRAIN_MS, undefined, { ref: false })).then(ended);

    const attached = new Promise<void>((resolve, reject) => {
      link.onAttach = (error) => (error ? reject(error) : resolve());
    });
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => link.onAttach?.(new AbortedError('opening the control connection was aborted', { delivery: 'not_sent' }));
    try {
      timer = setTimeout(() => link.onAttach?.(new TimeoutError(`tmux did not attach the control client within ${deadline.timeoutMs} ms`, deadline.timeoutMs, { phase: 'connect', delivery: 'not_sent' })), deadline.remaining());
      deadline.signal?.addEventListener('abort', onAbort, { once: true });
      await attached;
    } catch (error) {
      this.lose(link, 'closed', { interruptSubscriptions: false });
      await this.reap(link, 0);
      throw error;
    } finally {
      clearTimeout(timer);
      deadline.signal?.removeEventListener('abort', onAbort);
      link.onAttach = undefined;
    }
  }

  private onData(link: Link, chunk: Buffer): void {
    if (link.ended) return;
    try {
      link.parser.push(chunk);
    } catch (error) {
      this.lose(link, 'protocol', { cause: error });
      void this.reap(link, 0);
    }
  }

  private onBlock(link: Link, block: GuardedBlock): void {
    if (link.guardPending) {
      link.guardPending = false;
      // On another server the guard fails and tmux skips the attach: the client only exits.
      if (!block.guardSuccess) link.onAttach?.(attachFailure(block.body.toString('utf8').trim(), link.session));
      return;
    }
    if (!link.attached) {
      link.attached = true;
      link.onAttach?.(block.guardSuccess ? undefined : attachFailure(block.body.toString('utf8').trim(), link.session));
      return;
    }
    const request = link.pending[0];
    if (!request) {
      if (block.flags !== 1) {
        this.unsolicitedBlocks += 1;
        return;
      }
      throw new ControlProtocolError('tmux sent a reply that no command was waiting for; the connection is failed closed');
    }
    if (block.flags !== 1) {
      // Hooks run on this client's behalf: part of the window once a request's reply has begun.
      if (!request.started) {
        this.unsolicitedBlocks += 1;
        return;
      }
    } else {
      request.started = true;
      if (request.marker && block.body.equals(request.marker)) {
        this.finish(link, request);
        return;
      }
    }
    request.blocks.push(block);
    request.replyBytes += block.bodyBytes;
    this.retainedReplyBytes += block.body.length;
    if (block.truncated || request.replyBytes > this.limits.maxReplyBytes || this.retainedReplyBytes > this.limits.maxQueuedBytes) request.overflow = true;
    if (block.flags === 1 && request.commands !== undefined) {
      request.solicited += 1;
      if (!block.guardSuccess || request.solicited === request.commands) this.finish(link, request);
    }
  }

  private finish(link: Link, request: Request): void {
    link.pending.shift();
    this.admitted -= 1;
    for (const block of request.blocks) this.retainedReplyBytes -= block.body.length;
    const wasAbandoned = request.abandoned;
    request.state = 'done';
    if (!wasAbandoned) {
      if (request.overflow) {
        request.reject(
          new LimitError(`the reply to a control command is over the ${this.limits.maxReplyBytes}-byte reply limit`, 'reply', this.limits.maxReplyBytes, {
            phase: 'control',
            delivery: 'observed',
          }),
        );
      } else {
        request.resolve(
          Object.freeze({
            blocks: Object.freeze(request.blocks),
            attribution: request.commands === undefined ? ('boundary_marker' as const) : ('command_count' as const),
            generation: link.generation,
            elapsedMs: performance.now() - request.startedAt,
          }),
        );
      }
    }
    this.pump(link);
  }

  private pump(link: Link): void {
    while (this.admitted < this.limits.maxExchanges && this.waiting.length > 0 && !link.ended) {
      const request = this.waiting.shift()!;
      this.queuedBytes -= request.wireBytes;
      this.send(link, request);
    }
  }

  private send(link: Link, request: Request): void {
    this.admitted += 1;
    request.state = 'writing';
    link.pending.push(request);
    this.writing += 1;
    link.outbox.push(request);
    if (link.outbox.length === 1) process.nextTick(() => this.flush(link));
  }

  /** One write for every command issued in the same tick. */
  private flush(link: Link): void {
    const batch = link.outbox;
    link.outbox = [];
    let text = '';
    for (const request of batch) text += request.text;
    link.child.stdin.write(text, () => {
      this.writing -= batch.length;
      for (const request of batch) if (request.state === 'writing') request.state = 'sent';
    });
  }

  private onNotification(link: Link, line: Buffer): void {
    this.sequence += 1;
    this.eventCount += 1;
    const isExit = line.length >= 5 && line.toString('latin1', 0, 5) === '%exit';
    if (this.subscriptions.size === 0 && !isExit && !line.subarray(0, 17).equals(SESSION_CHANGED)) return;
    const decoded = decodeNotification(line);
    if (decoded.kind === 'exit') link.exitReason = decoded.reason ?? '';
    if (decoded.kind === 'session-changed' && decoded.session) link.session = decoded.session;
    this.dispatch(Object.freeze({ ...decoded, sequence: this.sequence, generation: link.generation }));
  }

  private dispatch(event: ControlEvent): void {
    for (const subscription of this.subscriptions) subscription.offer(event);
  }

  /**
   * Ends a generation: sent requests and (for the current generation) waiting ones fail with
   * ConnectionLostError, subscriptions are interrupted. Safe to call more than once.
   */
  private lose(link: Link, reason: LossReason, options: { interruptSubscriptions?: boolean; cause?: unknown } = {}): void {
    if (link.ended) return;
    link.ended = true;
    const exitReason = link.exitReason === '' ? undefined : link.exitReason;
    const what =
      reason === 'protocol'
        ? `the control stream broke its framing: ${(options.cause as Error | undefined)?.message ?? 'unknown error'}`
        : reason === 'exit'
          ? `tmux ended the control client${exitReason ? ` (${exitReason})` : ''}`
          : reason === 'eof'
            ? 'the control client exited without a word (was the server killed?)'
            : reason === 'closed'
              ? 'the control connection was closed'
              : 'the control connection was replaced by a new generation';
    const onAttach = link.onAttach;
    if (onAttach) {
      // The client's stderr (why it could not attach) may still be in flight when stdout closes.
      void link.child.exited.then(() => sleep(EXIT_DRAIN_MS)).then(() => onAttach(attachLoss(link.child.stderr().tail.toString('utf8').trim())));
    }
    for (const request of link.pending.splice(0)) {
      this.admitted -= 1;
      for (const block of request.blocks) this.retainedReplyBytes -= block.body.length;
      const abandoned = request.abandoned;
      request.state = 'done';
      if (!abandoned) request.reject(new ConnectionLostError(`${what} before tmux answered`, reason, 'possibly_sent', exitReason, options.cause));
    }
    if (link === this.link && reason !== 'reconnected') {
      for (const request of this.waiting.splice(0)) {
        this.queuedBytes -= request.wireBytes;
        request.state = 'done';
        request.reject(
          reason === 'closed' ? new ClosedError('the control connection was closed before this command was sent') : new ConnectionLostError(`${what}; the command was not sent`, reason, 'not_sent', exitReason),
        );
      }
    }
    if (options.interruptSubscriptions !== false && reason !== 'closed') {
      const error = new ConnectionLostError(`${what}; reconnect() to receive events again`, reason, 'observed', exitReason, options.cause);
      for (const subscription of this.subscriptions) subscription.interrupt(error);
    }
  }

  /** Makes sure a generation's client is gone and its pipes closed. */
  private async reap(link: Link, graceMs = CLOSE_GRACE_MS): Promise<void> {
    await link.child.stop(graceMs);
  }

  private async shutdown(graceMs: number): Promise<void> {
    this.state = 'closed';
    clearTimeout(this.sweepTimer);
    const cleanupErrors: Error[] = [];
    const link = this.link;
    for (const subscription of this.subscriptions) subscription.end();
    this.subscriptions.clear();
    if (link) {
      const wasLive = !link.ended;
      this.lose(link, 'closed');
      // A client that already ended needs no turn: only ending a live one is a detach.
      if (wasLive) {
        await controlClientTransition(this.spec.endpoint.socketPath, undefined, async () => {
          link.child.stdin.end();
          const exited = await Promise.race([link.child.exited.then(() => true), sleep(graceMs / 2, undefined, { ref: false }).then(() => false)]);
          if (!exited) await link.child.stop(graceMs / 2).catch((e: Error) => cleanupErrors.push(e));
        });
      }
      await link.child.stop(0).catch((e: Error) => cleanupErrors.push(e));
    }
    if (this.spec.onClose) await this.spec.onClose().catch((e: Error) => cleanupErrors.push(e));
    this.retired = true;
    this.cleanupFailures = cleanupErrors.length;
    if (cleanupErrors.length > 0) throw new DroverError('closing the control connection left resources behind', { phase: 'cleanup', cleanupErrors });
  }

  /** Closes the connection, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private async flowControl(pane: string, action: 'pause' | 'continue', options: OperationOptions): Promise<GuardedReply> {
    checkId('pane', pane);
    const deadline = Deadline.start(options);
    if (this.tmuxVersion === undefined) {
      const reply = await this.exchange("display-message -p '#{version}'", { commands: 1, timeoutMs: deadline.remaining(), signal: options.signal });
      this.tmuxVersion = reply.blocks[0]?.body.toString('utf8').trim() ?? '';
    }
    if (!versionAtLeast(this.tmuxVersion, '3.2')) {
      throw new UnsupportedFeatureError(`pausing pane output needs tmux 3.2 or newer; this server runs ${this.tmuxVersion || 'an unknown version'}`);
    }
    const reply = await this.exchange(`refresh-client -A ${quoteArgument(`${pane}:${action}`)}`, { commands: 1, timeoutMs: deadline.remaining('possibly_sent'), signal: options.signal });
    const failed = reply.blocks.find((block) => !block.guardSuccess);
    if (failed) throw new CommandError(`tmux refused to ${action} ${pane}: ${failed.body.toString('utf8').trim()}`, { delivery: 'observed' });
    // tmux writes %pause / %continue inside this block rather than as separate notifications.
    const link = this.link;
    for (const block of reply.blocks) {
      for (const line of block.body.toString('latin1').split('\n')) {
        if (link && (line.startsWith('%pause ') || line.startsWith('%continue '))) this.onNotification(link, Buffer.from(line, 'latin1'));
      }
    }
    if (action === 'continue' && link) {
      this.gapCount += 1;
      this.dispatch(Object.freeze({ kind: 'gap', raw: Buffer.alloc(0), sequence: this.sequence, generation: link.generation, pane: pane as PaneId, reason: 'paused' }));
    }
    return reply;
  }
}

const SESSION_CHANGED = Buffer.from('%session-changed ');

function attachLoss(stderr: string): Error {
  if (/^(no server running|error connecting to)/m.test(stderr)) return new ServerUnreachableError(`tmux server unreachable: ${stderr}`);
  return new ServerUnreachableError(`the control client ended before attaching${stderr ? `: ${stderr}` : ''}`);
}

function attachFailure(message: string, session: SessionId): Error {
  if (isGuardRefusal(message)) return new ServerReplacedError('the tmux server is another one now (it was restarted); the control client did not attach');
  if (/can't find session/.test(message)) return new TargetNotFoundError(session);
  if (/unknown flag -f|unknown option/.test(message)) {
    return new UnsupportedFeatureError(`this tmux cannot attach a control client without resizing windows (attach-session -f needs tmux 3.2+): ${message}`);
  }
  return new CommandError(`tmux refused to attach the control client: ${message}`, { delivery: 'observed' });
}

function checkLimits(limits: ControlLimits): ControlLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new ArgumentError(`control limit ${name} must be a positive integer`);
  }
  return limits;
}
