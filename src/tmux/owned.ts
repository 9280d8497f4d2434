import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { LongLivedChild, isProcessAlive, run } from '../process/index.js';
import { DroverError, ServerUnreachableError, TimeoutError } from './errors.js';
import { Endpoint } from './endpoint.js';
import { clientEnvironment } from './transport.js';

/** What is needed to find, prove and retire a daemon drover started. */
export interface OwnedDaemonRecord {
  readonly directory: string;
  readonly socketPath: string;
  readonly pid: number;
  readonly executable: string;
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
}

export const SOCKET_FILE = 'tmux.sock';

/** A running daemon in its private directory, and the means to retire it. */
export class OwnedDaemon {
  private retired = false;

  private constructor(
    readonly record: OwnedDaemonRecord,
    readonly endpoint: Endpoint,
    private readonly child: LongLivedChild | undefined,
  ) {}

  /**
   * Creates a fresh 0700 directory, writes the configuration, starts `tmux -D` in the
   * foreground and waits until a real client command answers with the daemon's own pid.
   */
  static async start(options: DaemonStartOptions = {}): Promise<OwnedDaemon> {
    const timeoutMs = options.startupTimeoutMs ?? 5000;
    const started = performance.now();
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
      await waitForSocket(socketPath, child, started, timeoutMs);
      const remaining = Math.max(1, timeoutMs - (performance.now() - started));
      const probe = await run([endpoint.executable, '-S', socketPath, 'display-message', '-p', '#{pid}'], {
        timeoutMs: remaining,
        env: clientEnvironment(options.env),
      });
      if (!probe.ok || probe.lossyText().trim() !== String(child.pid)) {
        throw new ServerUnreachableError(`the new tmux server did not answer as expected: ${probe.stderrText().trim() || probe.lossyText().trim()}`, {
          phase: 'start',
        });
      }
      const record = Object.freeze({ directory, socketPath, pid: child.pid, executable: endpoint.executable });
      return new OwnedDaemon(record, endpoint, options.persistent ? undefined : child);
    } catch (error) {
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

  /** Takes back ownership of a persistent daemon after proving it is the recorded one. */
  static async adopt(record: OwnedDaemonRecord, options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<OwnedDaemon> {
    const endpoint = Endpoint.fromSocketPath(record.socketPath, { executable: record.executable, env: options.env });
    const probe = await run([endpoint.executable, '-S', record.socketPath, 'display-message', '-p', '#{pid}'], {
      timeoutMs: options.timeoutMs ?? 5000,
      env: clientEnvironment(options.env),
    });
    if (!probe.ok || probe.lossyText().trim() !== String(record.pid)) {
      throw new ServerUnreachableError(`no drover-owned tmux server answers at ${record.socketPath}`, { phase: 'connect' });
    }
    return new OwnedDaemon(record, endpoint, undefined);
  }

  /**
   * Kills the daemon (kill-server, then signals if it lingers), waits for it to exit and
   * removes the private directory. Idempotent once it has succeeded.
   */
  async retire(timeoutMs = 500): Promise<void> {
    if (this.retired) return;
    const cleanupErrors: Error[] = [];
    if (isProcessAlive(this.record.pid)) {
      await run([this.endpoint.executable, '-S', this.record.socketPath, 'kill-server'], { timeoutMs, env: clientEnvironment() }).catch(() => undefined);
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

async function waitForSocket(socketPath: string, child: LongLivedChild, started: number, timeoutMs: number): Promise<void> {
  for (;;) {
    try {
      if (statSync(socketPath).isSocket()) return;
    } catch {
      // not there yet
    }
    if (child.exit) {
      const stderr = child.stderr().tail.toString('utf8').trim();
      throw new ServerUnreachableError(`tmux exited while starting${stderr ? `: ${stderr}` : ''}`, { phase: 'start' });
    }
    if (performance.now() - started > timeoutMs) throw new TimeoutError(`tmux did not create its socket within ${timeoutMs} ms`, timeoutMs, { phase: 'start', delivery: 'not_sent' });
    await sleep(2);
  }
}
