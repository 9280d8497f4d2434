import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isatty } from 'node:tty';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import {
  AbortedError,
  ArgumentError,
  DroverError,
  LimitError,
  SpawnError,
  TimeoutError,
  decodeUtf8,
} from './errors.js';
import { parseProcStat } from './proc-stat.js';

export interface RunLimits {
  /** Total bytes of all argv strings (UTF-8) plus their terminators. */
  argvBytes: number;
  stdinBytes: number;
  stdoutBytes: number;
  stderrBytes: number;
}

export const DEFAULT_RUN_LIMITS: Readonly<RunLimits> = Object.freeze({
  argvBytes: 256 * 1024,
  stdinBytes: 1024 * 1024,
  stdoutBytes: 1024 * 1024,
  stderrBytes: 256 * 1024,
});

export const DEFAULT_TIMEOUT_MS = 5000;
/** How long cleanup may wait for the kernel to report the killed child's exit. */
const REAP_BOUND_MS = 500;
/**
 * How long output may keep arriving after the child exited. A descendant that inherited the
 * pipes (a daemon it started) can hold them open for ever; its output is not the child's.
 */
export const DRAIN_BOUND_MS = 500;

export interface RunOptions {
  /** Bytes written to the child's stdin, which is then closed. Defaults to empty. */
  input?: Uint8Array | string;
  /** Total deadline in milliseconds, from spawn to completion. Defaults to 5 000. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The complete environment of the child. Defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  limits?: Partial<RunLimits>;
}

/** The evidence of one finished child: argv, pid, final status, elapsed time and raw bytes. */
export class RunResult {
  constructor(
    readonly argv: readonly string[],
    readonly pid: number,
    readonly exitCode: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly elapsedMs: number,
    readonly stdout: Buffer,
    readonly stderr: Buffer,
  ) {
    Object.freeze(this);
  }

  get ok(): boolean {
    return this.exitCode === 0;
  }

  /** stdout decoded as UTF-8; invalid bytes raise DecodeError. */
  text(): string {
    return decodeUtf8(this.stdout, 'stdout');
  }

  /** stdout decoded as UTF-8 with invalid sequences replaced; the bytes stay available. */
  lossyText(): string {
    return this.stdout.toString('utf8');
  }

  stderrText(): string {
    return this.stderr.toString('utf8');
  }
}

/** Local counters only; no identifiers, arguments or output. */
export interface ProcessDiagnostics {
  spawned: number;
  running: number;
  timedOut: number;
}

const counters = { spawned: 0, running: 0, timedOut: 0 };

export function processDiagnostics(): Readonly<ProcessDiagnostics> {
  return Object.freeze({ ...counters });
}

function validateArgv(argv: readonly string[], maxBytes: number): void {
  if (!Array.isArray(argv) || argv.length === 0) {
    throw new ArgumentError('argv must be a non-empty array of strings');
  }
  let total = 0;
  for (const [i, arg] of argv.entries()) {
    if (typeof arg !== 'string') throw new ArgumentError(`argv[${i}] is not a string`);
    if (arg.includes('\0')) throw new ArgumentError(`argv[${i}] contains a NUL byte`);
    total += Buffer.byteLength(arg) + 1;
  }
  if (argv[0] === '') throw new ArgumentError('argv[0] (the executable) is empty');
  if (total > maxBytes) {
    throw new LimitError(`argv is ${total} bytes, over the ${maxBytes}-byte limit`, 'argv', maxBytes, {
      phase: 'validate',
      delivery: 'not_sent',
    });
  }
}

function resolveLimits(limits: Partial<RunLimits> | undefined): RunLimits {
  return { ...DEFAULT_RUN_LIMITS, ...limits };
}

function checkDeadline(timeoutMs: number): void {
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ArgumentError(`timeoutMs must be a positive finite number, got ${timeoutMs}`);
  }
}

/** Kills the child's whole process group (it leads one), falling back to the child alone. */
function killTree(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function destroyPipes(child: ChildProcess): void {
  for (const stream of [child.stdin, child.stdout, child.stderr] as (Readable | Writable | null)[]) {
    stream?.destroy();
  }
}

function waitForExit(child: ChildProcess, boundMs: number): Promise<Error | undefined> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      resolve(new DroverError(`child ${child.pid} did not exit within ${boundMs} ms of SIGKILL`, { phase: 'cleanup' }));
    }, boundMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

/**
 * Defers a timer's verdict past the next poll for I/O. The event loop runs due timers before it
 * reads the pipes, so after a busy stretch a bound could expire with the child's last output, its
 * EOF or its exit already waiting unread; one poll first lets the runner see them.
 */
function afterPendingIo(verdict: () => void): () => void {
  return () => setImmediate(verdict);
}

/**
 * Runs argv without a shell and collects stdout and stderr separately, within a deadline.
 * Completion is the child's exit and EOF on both pipes, or its exit and DRAIN_BOUND_MS more
 * when a descendant still holds a pipe open: then the pipes are closed and the result is the
 * child's, without waiting for the deadline. At the deadline, on abort or on an output bound,
 * the child's process group is killed, the child reaped and both pipes closed.
 */
export function run(argv: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const limits = resolveLimits(options.limits);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    validateArgv(argv, limits.argvBytes);
    checkDeadline(timeoutMs);
  } catch (error) {
    return Promise.reject(error);
  }
  const input = typeof options.input === 'string' ? Buffer.from(options.input) : options.input;
  if (input && input.byteLength > limits.stdinBytes) {
    return Promise.reject(
      new LimitError(`stdin is ${input.byteLength} bytes, over the ${limits.stdinBytes}-byte limit`, 'stdin', limits.stdinBytes, {
        phase: 'validate',
        delivery: 'not_sent',
      }),
    );
  }
  if (options.signal?.aborted) return Promise.reject(new AbortedError('aborted before start', { delivery: 'not_sent' }));

  const argvCopy = Object.freeze([...argv]);
  const started = performance.now();

  return new Promise<RunResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(argvCopy[0]!, argvCopy.slice(1), {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: options.env ?? process.env,
        cwd: options.cwd,
        detached: true,
      });
    } catch (cause) {
      reject(new SpawnError(`cannot start ${argvCopy[0]}: ${(cause as Error).message}`, { phase: 'spawn', delivery: 'not_sent', cause }));
      return;
    }
    counters.spawned += 1;
    counters.running += 1;

    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrBytes = 0;
    let settled = false;
    let drain: NodeJS.Timeout | undefined;
    const timer = setTimeout(
      afterPendingIo(() => {
        // Exited in time, only seen late: its result stands.
        if (child.exitCode !== null || child.signalCode !== null) finish(child.exitCode, child.signalCode);
        else fail(new TimeoutError(`${argvCopy[0]} did not finish within ${timeoutMs} ms`, timeoutMs));
      }),
      timeoutMs,
    );

    const onAbort = (): void => fail(new AbortedError(`${argvCopy[0]} was aborted`));

    const cleanupListeners = (): void => {
      clearTimeout(timer);
      clearTimeout(drain);
      options.signal?.removeEventListener('abort', onAbort);
    };

    const fail = (error: DroverError): void => {
      if (settled) return;
      settled = true;
      cleanupListeners();
      if (error instanceof TimeoutError) counters.timedOut += 1;
      killTree(child);
      destroyPipes(child);
      void waitForExit(child, REAP_BOUND_MS).then((cleanupError) => {
        counters.running -= 1;
        if (cleanupError) {
          reject(new (error.constructor as typeof DroverError)(error.message, {
            phase: error.phase,
            delivery: error.delivery,
            cause: error.cause,
            cleanupErrors: [cleanupError],
          }));
        } else {
          reject(error);
        }
      });
    };

    child.on('error', (cause: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        fail(new SpawnError(`cannot start ${argvCopy[0]}: ${cause.message}`, { phase: 'spawn', delivery: 'not_sent', cause }));
      } else {
        fail(new DroverError(`${argvCopy[0]} failed: ${cause.message}`, { phase: 'run', delivery: 'possibly_sent', cause }));
      }
    });

    const collect = (which: 'stdout' | 'stderr', max: number) => (chunk: Buffer) => {
      if (settled) return;
      const size = which === 'stdout' ? (stdoutBytes += chunk.length) : (stderrBytes += chunk.length);
      if (size > max) {
        fail(new LimitError(`${argvCopy[0]} wrote more than ${max} bytes to ${which}`, which, max, { phase: 'run', delivery: 'possibly_sent' }));
        return;
      }
      (which === 'stdout' ? stdout : stderr).push(chunk);
    };
    child.stdout!.on('data', collect('stdout', limits.stdoutBytes));
    child.stderr!.on('data', collect('stderr', limits.stderrBytes));
    child.stdin!.on('error', () => {
      // The child may exit without reading its input; its exit status tells the story.
    });
    child.stdin!.end(input ?? undefined);

    const finish = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (settled) return;
      settled = true;
      cleanupListeners();
      counters.running -= 1;
      destroyPipes(child);
      resolve(new RunResult(argvCopy, child.pid!, code, signal, performance.now() - started, Buffer.concat(stdout), Buffer.concat(stderr)));
    };
    child.once('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      if (!settled) drain = setTimeout(afterPendingIo(() => finish(code, signal)), DRAIN_BOUND_MS);
    });
    child.on('close', finish);

    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface ChildExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export interface LongLivedOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Keep at most this many trailing stderr bytes; the total is still counted. */
  stderrBytes?: number;
  /** false: the child may outlive this process (it does not hold the event loop open). */
  ownedByThisProcess?: boolean;
  /** Where the child's stdout goes: a pipe for the caller, or nowhere. */
  stdout?: 'pipe' | 'ignore';
  stdin?: 'pipe' | 'ignore';
}

/**
 * A child that lives beyond one call (a tmux daemon, a control client). Its lifetime is
 * still bounded: `stop()` signals it, waits at most `graceMs`, then kills and reaps it.
 */
export class LongLivedChild {
  readonly argv: readonly string[];
  readonly pid: number;
  readonly exited: Promise<ChildExit>;
  private readonly child: ChildProcess;
  private stderrTail: Buffer = Buffer.alloc(0);
  private stderrTotal = 0;
  private exitInfo: ChildExit | undefined;

  private constructor(argv: readonly string[], child: ChildProcess, stderrBytes: number) {
    this.argv = argv;
    this.child = child;
    this.pid = child.pid!;
    this.exited = new Promise<ChildExit>((resolve) => {
      child.once('exit', (exitCode, signal) => {
        this.exitInfo = { exitCode, signal };
        counters.running -= 1;
        resolve(this.exitInfo);
      });
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTotal += chunk.length;
      const joined = Buffer.concat([this.stderrTail, chunk]);
      this.stderrTail = joined.length > stderrBytes ? joined.subarray(joined.length - stderrBytes) : joined;
    });
  }

  /** Starts argv without a shell; resolves once the OS reports the child running. */
  static start(argv: readonly string[], options: LongLivedOptions = {}): Promise<LongLivedChild> {
    validateArgv(argv, DEFAULT_RUN_LIMITS.argvBytes);
    const argvCopy = Object.freeze([...argv]);
    const owned = options.ownedByThisProcess ?? true;
    return new Promise((resolve, reject) => {
      let child: ChildProcess;
      try {
        child = spawn(argvCopy[0]!, argvCopy.slice(1), {
          stdio: [options.stdin ?? 'pipe', options.stdout ?? 'pipe', owned ? 'pipe' : 'ignore'],
          env: options.env ?? process.env,
          cwd: options.cwd,
          detached: true,
        });
      } catch (cause) {
        reject(new SpawnError(`cannot start ${argvCopy[0]}: ${(cause as Error).message}`, { phase: 'spawn', cause }));
        return;
      }
      const onError = (cause: Error): void => {
        reject(new SpawnError(`cannot start ${argvCopy[0]}: ${cause.message}`, { phase: 'spawn', cause }));
      };
      child.once('error', onError);
      child.once('spawn', () => {
        child.off('error', onError);
        child.on('error', () => {
          // Later errors (EPIPE on a closed stdin) surface through exit and stream ends.
        });
        counters.spawned += 1;
        counters.running += 1;
        if (!owned) child.unref();
        resolve(new LongLivedChild(argvCopy, child, options.stderrBytes ?? DEFAULT_RUN_LIMITS.stderrBytes));
      });
    });
  }

  get stdin(): Writable {
    return this.child.stdin!;
  }

  get stdout(): Readable {
    return this.child.stdout!;
  }

  get exit(): ChildExit | undefined {
    return this.exitInfo;
  }

  /** The last bytes the child wrote to stderr, and how many it wrote in all. */
  stderr(): { tail: Buffer; totalBytes: number } {
    return { tail: this.stderrTail, totalBytes: this.stderrTotal };
  }

  /** Sends `signal`, then SIGKILL to the group after graceMs; resolves once reaped. */
  async stop(graceMs = REAP_BOUND_MS, signal: NodeJS.Signals = 'SIGTERM'): Promise<ChildExit> {
    if (this.exitInfo) {
      destroyPipes(this.child);
      return this.exitInfo;
    }
    try {
      process.kill(this.pid, signal);
    } catch {
      // exited meanwhile
    }
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), graceMs).unref());
    if ((await Promise.race([this.exited, timer])) === 'late') {
      killTree(this.child);
      const cleanupError = await waitForExit(this.child, REAP_BOUND_MS);
      if (cleanupError) {
        destroyPipes(this.child);
        throw cleanupError;
      }
    }
    destroyPipes(this.child);
    return this.exited;
  }
}

export interface TerminalResult {
  argv: readonly string[];
  pid: number;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  elapsedMs: number;
}

export interface TerminalOptions {
  /** The caller's open terminal, as a descriptor or a stream that has one (process.stdin): the child's stdin, stdout and stderr. */
  terminal: TerminalSpec;
  /** The complete environment of the child. Defaults to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Ends the child (SIGTERM, SIGKILL after 500 ms); the call then fails with AbortedError once it is reaped. */
  signal?: AbortSignal;
}

export type TerminalSpec = number | { readonly fd: number };

/** The descriptor of a terminal the caller passed; ArgumentError when it is not an open terminal. */
export function terminalDescriptor(terminal: TerminalSpec): number {
  const fd = typeof terminal === 'number' ? terminal : terminal?.fd;
  if (!Number.isSafeInteger(fd) || fd < 0) throw new ArgumentError('terminal must be an open terminal: a file descriptor, or a stream that has one (process.stdin)');
  if (!isatty(fd)) throw new ArgumentError(`terminal ${fd} is not an open terminal (a tty)`);
  return fd;
}

/**
 * Runs an interactive child (tmux attach) on a terminal the caller gives: the child reads,
 * draws and sizes itself there. There is no deadline: the user ends it; the AbortSignal is the
 * explicit cancellation, and the child is reaped before the call fails.
 */
export function runOnTerminal(argv: readonly string[], options: TerminalOptions): Promise<TerminalResult> {
  let fd: number;
  try {
    validateArgv(argv, DEFAULT_RUN_LIMITS.argvBytes);
    fd = terminalDescriptor(options.terminal);
  } catch (error) {
    return Promise.reject(error);
  }
  if (options.signal?.aborted) return Promise.reject(new AbortedError('aborted before start', { delivery: 'not_sent' }));
  const argvCopy = Object.freeze([...argv]);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(argvCopy[0]!, argvCopy.slice(1), { stdio: [fd, fd, fd], env: options.env ?? process.env });
    counters.spawned += 1;
    counters.running += 1;
    let kill: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      child.kill('SIGTERM');
      kill = setTimeout(() => child.kill('SIGKILL'), REAP_BOUND_MS);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (cause) => {
      clearTimeout(kill);
      options.signal?.removeEventListener('abort', onAbort);
      if (child.pid === undefined) counters.running -= 1;
      reject(new SpawnError(`cannot start ${argvCopy[0]}: ${cause.message}`, { phase: 'spawn', cause }));
    });
    child.once('exit', (exitCode, signal) => {
      counters.running -= 1;
      clearTimeout(kill);
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) reject(new AbortedError(`${argvCopy[0]} was aborted`));
      else resolve({ argv: argvCopy, pid: child.pid!, exitCode, signal, elapsedMs: performance.now() - started });
    });
  });
}

/**
 * Whether a process exists and has not exited. A zombie (exited, not yet reaped by its
 * parent) counts as exited: it runs nothing and holds no sockets.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return parseProcStat(stat).fields[0] !== 'Z';
  } catch {
    // No /proc (not Linux): trust the signal probe.
    return true;
  }
}
