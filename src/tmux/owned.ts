import { mkdtempSync, rmSync, statSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { LongLivedChild, isProcessAlive, run } from '../process/index.js';
import { AbortedError, DroverError, ServerUnreachableError, TimeoutError } from './errors.js';
import { Endpoint } from './endpoint.js';
import { INCARNATION_FORMAT, incarnationGuard, parseIncarnation, type ServerIncarnation } from './incarnation.js';
import { clientEnvironment } from './transport.js';

/** What is needed to find, prove and retire a daemon drover started. */
export interface OwnedDaemonRecord {
  readonly directory: string;
  readonly socketPath: string;
  readonly pid: number;
  readonly executable: string;
  /** tmux's `#{start_time}`; with the pid it tells this server from a later one (absent in records of older drovers). */
  readonly startTime?: number;
}

export interface DaemonStartOptions {
  /** tmux configuration text; the default is an empty configuration. */
  config?: string;
  executable?: string;
  startupTimeoutMs?: number;
  /** Let the daemon outlive this process (it is then retired by pid, not as a child). */
  persistent?: boolean;
  /** Base for the private directory; defaults to the OS temporary directory. */
  tmpDir?: string;
  env?: NodeJS.ProcessEnv;
  /** Cancels the start: whatever was started or created is removed, and the start fails with AbortedError. */
  signal?: AbortSignal;
}

export const SOCKET_FILE = 'tmux.sock';

/** A running daemon in its private directory, and the means to retire it. */
export class OwnedDaemon {
  private retired = false;

  private constructor(
    readonly record: OwnedDaemonRecord,
    readonly endpoint: Endpoint,
    readonly incarnation: ServerIncarnation,
    private readonly child: LongLivedChild | undefined,
  ) {}

  /**
   * Creates a fresh 0700 directory, writes the configuration, starts `tmux -D` in the
   * foreground and waits until a real client command answers with the daemon's own pid. A
   * failure, the deadline or an abort leaves no daemon, socket or directory behind.
   */
  static async start(options: DaemonStartOptions = {}): Promise<OwnedDaemon> {
    const timeoutMs = options.startupTimeoutMs ?? 5000;
    const signal = options.signal;
    if (signal?.aborted) throw new AbortedError('the tmux server start was aborted before it began', { phase: 'start', delivery: 'not_sent' });
    const started = performance.now();
    const remaining = (): number => Math.max(1, timeoutMs - (performance.now() - started));
    const directory = mkdtempSync(join(options.tmpDir ?? tmpdir(), 'drover-'));
    const socketPath = join(directory, SOCKET_FILE);
    let child: LongLivedChild | undefined;
    try {
      const configPath = join(directory, 'tmux.conf');
      writeFileSync(configPath, options.config ?? '', { mode: 0o600 });
      const endpoint = Endpoint.fromSocketPath(socketPath, { executable: options.executable, env: options.env });
      child = await LongLivedChild.start([endpoint.executable, '-S', socketPath, '-f', configPath, '-D'], {
        env: clientEnvironment(options.env),
        cwd: directory,
        stdin: 'ignore',
        stdout: 'ignore',
        ownedByThisProcess: !options.persistent,
      });
      await waitForSocket(socketPath, child, timeoutMs, remaining(), signal);
      const ask = () =>
        run([endpoint.executable, '-S', socketPath, 'display-message', '-p', INCARNATION_FORMAT], {
          timeoutMs: remaining(),
          env: clientEnvironment(options.env),
          signal,
        });
      let probe = await ask();
      // tmux binds the socket a moment before it listens on it: a refused connection in between is retried.
      while (!probe.ok && /^no server running on/m.test(probe.stderrText()) && !child.exit && !signal?.aborted && performance.now() - started < timeoutMs) {
        await sleep(2);
        probe = await ask();
      }
      if (signal?.aborted) throw abortedStart();
      const incarnation = probe.ok ? parseIncarnation(probe.lossyText()) : undefined;
      if (incarnation?.pid !== child.pid) {
        throw new ServerUnreachableError(`the new tmux server did not answer as expected: ${probe.stderrText().trim() || probe.lossyText().trim()}`, {
          phase: 'start',
        });
      }
      const record = Object.freeze({ directory, socketPath, pid: child.pid, executable: endpoint.executable, startTime: incarnation.startTime });
      return new OwnedDaemon(record, endpoint, incarnation, options.persistent ? undefined : child);
    } catch (caught) {
      const error = signal?.aborted && !(caught instanceof AbortedError && caught.phase === 'start') ? abortedStart(caught) : caught;
      const cleanupErrors: Error[] = [];
      if (child) await child.stop(200).catch((e: Error) => cleanupErrors.push(e));
      try {
        rmSync(directory, { recursive: true, force: true });
      } catch (e) {
        cleanupErrors.push(e as Error);
      }
      if (error instanceof DroverError && cleanupErrors.length === 0) throw error;
      throw new DroverError(`could not start a tmux server: ${(error as Error).message}`, { phase: 'start', cause: error, cleanupErrors });
    }
  }

  /**
   * Takes back ownership of a persistent daemon after proving it is the recorded one: the
   * server at its socket answers with its pid (and start time, when recorded).
   */
  static async adopt(record: OwnedDaemonRecord, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<OwnedDaemon> {
    const endpoint = Endpoint.fromSocketPath(record.socketPath, { executable: record.executable, env: options.env });
    const incarnation = await OwnedDaemon.probe(record, options);
    if (incarnation === undefined) throw new ServerUnreachableError(`no drover-owned tmux server answers at ${record.socketPath}`, { phase: 'connect' });
    return new OwnedDaemon(record, endpoint, incarnation, undefined);
  }

  /** The recorded daemon's incarnation if it still answers at its socket; undefined when another server (or none) does. */
  static async probe(record: OwnedDaemonRecord, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ServerIncarnation | undefined> {
    const probe = await run([record.executable, '-S', record.socketPath, 'display-message', '-p', INCARNATION_FORMAT], {
      timeoutMs: options.timeoutMs ?? 5000,
      env: clientEnvironment(options.env),
    });
    const incarnation = probe.ok ? parseIncarnation(probe.lossyText()) : undefined;
    if (incarnation?.pid !== record.pid) return undefined;
    if (record.startTime !== undefined && incarnation.startTime !== record.startTime) return undefined;
    return incarnation;
  }

  /**
   * Kills the daemon (kill-server, then signals if it lingers), waits for it to exit and
   * removes the private directory. Idempotent once it has succeeded.
   */
  async retire(timeoutMs = 500): Promise<void> {
    if (this.retired) return;
    const cleanupErrors: Error[] = [];
    if (isProcessAlive(this.record.pid)) {
      // Guarded: if another server listens there now, it is not this daemon to kill.
      await run([this.endpoint.executable, '-S', this.record.socketPath, ...incarnationGuard(this.incarnation), ';', 'kill-server'], { timeoutMs, env: clientEnvironment() }).catch(
        () => undefined,
      );
      if (this.child) {
        await this.child.stop(timeoutMs).catch((e: Error) => cleanupErrors.push(e));
      } else if (!(await waitForExit(this.record.pid, timeoutMs))) {
        signal(this.record.pid, 'SIGKILL');
        if (!(await waitForExit(this.record.pid, timeoutMs))) cleanupErrors.push(new DroverError(`tmux server ${this.record.pid} did not exit`, { phase: 'cleanup' }));
      }
    } else if (this.child) {
      await this.child.stop(timeoutMs).catch((e: Error) => cleanupErrors.push(e));
    }
    try {
      rmSync(this.record.directory, { recursive: true, force: true });
    } catch (e) {
      cleanupErrors.push(e as Error);
    }
    if (cleanupErrors.length > 0) {
      throw new DroverError('the owned tmux server was not completely cleaned up; retry close()', { phase: 'cleanup', cleanupErrors });
    }
    this.retired = true;
  }
}


function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (!isProcessAlive(pid)) return true;
    await sleep(5);
  }
  return !isProcessAlive(pid);
}

/** The failure of a start that was aborted, once what it had started is removed. */
export function abortedStart(cause?: unknown, cleanupErrors: readonly Error[] = []): AbortedError {
  return new AbortedError('the tmux server start was aborted; the daemon and its directory were removed', { phase: 'start', cause, cleanupErrors });
}

function isSocket(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isSocket() === true;
}

/** How often the socket is looked for where its directory cannot be watched. */
const UNWATCHED_POLL_MS = 10;

/**
 * Waits until tmux has created its socket, which is an event on the socket's directory. Where
 * the directory cannot be watched (fs.watch unsupported, or inotify out of watches) the socket
 * is looked for every 10 ms instead, within the same deadline. Ends early when tmux exits or
 * the start is aborted.
 */
function waitForSocket(socketPath: string, child: LongLivedChild, startupTimeoutMs: number, remainingMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let watcher: FSWatcher | undefined;
    let poll: NodeJS.Timeout | undefined;
    const finish = (error?: Error): void => {
      if (settled) return;
      settled = true;
      watcher?.close();
      clearInterval(poll);
      clearTimeout(deadline);
      signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const look = (): void => {
      if (!settled && isSocket(socketPath)) finish();
    };
    const lookEvery = (): void => {
      watcher?.close();
      if (!settled) poll ??= setInterval(look, UNWATCHED_POLL_MS);
    };
    const onAbort = (): void => finish(abortedStart());
    const deadline = setTimeout(
      () => finish(new TimeoutError(`tmux did not create its socket within ${startupTimeoutMs} ms`, startupTimeoutMs, { phase: 'start', delivery: 'not_sent' })),
      remainingMs,
    );
    try {
      watcher = watch(dirname(socketPath), { persistent: false }, look);
      watcher.on('error', lookEvery);
    } catch {
      lookEvery();
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    void child.exited.then(() => {
      look();
      const stderr = child.stderr().tail.toString('utf8').trim();
      finish(new ServerUnreachableError(`tmux exited while starting${stderr ? `: ${stderr}` : ''}`, { phase: 'start' }));
    });
    if (signal?.aborted) onAbort();
    // Created before the watch began: no event will say so.
    else look();
  });
}
