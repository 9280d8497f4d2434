import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before } from 'node:test';
import { isProcessAlive, run, type RunResult } from '../../src/process/index.js';
import { Server, clientEnvironment, resolveExecutable, type StartOptions } from '../../src/tmux/index.js';
import { eventually } from './wait.js';

/** An environment (this process's by default) without what would point a tmux client at the user's server. */
export function testEnvironment(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = { ...base };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

/**
 * Starts an owned tmux server on a private socket in a fresh temporary directory. drover's
 * tmux clients never see $TMUX or $TMUX_PANE, so nothing here can reach the user's server.
 */
export async function startTestServer(options: StartOptions = {}): Promise<Server> {
  return Server.start({ env: testEnvironment(), ...options });
}

/** Runs fn against a fresh owned server that is retired afterwards, even when fn fails. */
export async function withServer<T>(fn: (server: Server) => Promise<T>, options: StartOptions = {}): Promise<T> {
  const server = await startTestServer(options);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/**
 * One owned server for a whole describe() block: started before its tests, retired after
 * them whatever happened. Read `.server` inside tests.
 */
export function useTestServer(options: StartOptions = {}): { readonly server: Server } {
  const holder: { server?: Server } = {};
  before(async () => {
    holder.server = await startTestServer(options);
  });
  after(async () => {
    await holder.server?.close();
  });
  return {
    get server(): Server {
      if (!holder.server) throw new Error('the test server is not running (used outside a test?)');
      return holder.server;
    },
  };
}

/**
 * Stops the tmux server that `tmux` (a client run with the test's socket or environment)
 * reaches, and returns once its process has exited: kill-server returns before the server is
 * gone, and a client that reaches a dying server fails ("server exited unexpectedly"), so a
 * next server at the same socket may only start then.
 */
export async function killTmuxServer(tmux: (...args: string[]) => Promise<RunResult>): Promise<void> {
  const pid = Number((await tmux('display-message', '-p', '#{pid}')).text().trim());
  await tmux('kill-server');
  if (Number.isSafeInteger(pid) && pid > 0) await eventually(`tmux server ${pid} to exit`, () => !isProcessAlive(pid));
}

/**
 * A tmux server started and restarted by the test itself at one socket path, as a user
 * restarts theirs: the new server reuses the socket path (on ext4 even its inode) and hands
 * out pane ids %0, %1… again, to unrelated panes. The path is one of its own in a fresh
 * temporary directory, or one where another server (an owned one, say) listens now.
 */
export class RestartableServer {
  readonly dir: string;
  readonly socketPath: string;
  private readonly ownsDir: boolean;
  private readonly tmux = resolveExecutable('tmux');

  constructor(socketPath?: string) {
    this.ownsDir = socketPath === undefined;
    this.dir = socketPath === undefined ? mkdtempSync(join(tmpdir(), 'drover-restart-')) : dirname(socketPath);
    this.socketPath = socketPath ?? join(this.dir, 'tmux.sock');
  }

  /** Runs one tmux command at the socket; throws with tmux's words when it fails. */
  async tmuxCommand(...args: string[]): Promise<string> {
    const result = await run([this.tmux, '-S', this.socketPath, ...args], { env: clientEnvironment(), timeoutMs: 5000 });
    if (result.exitCode !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${result.stderrText()}`);
    return result.lossyText();
  }

  /** Starts a server with one session whose first pane (%0) runs `command`. */
  async start(command: readonly string[] = ['cat']): Promise<void> {
    await this.tmuxCommand('-f', '/dev/null', 'new-session', '-d', '-x', '200', '-y', '50', ...command);
  }

  async stop(): Promise<void> {
    await run([this.tmux, '-S', this.socketPath, 'kill-server'], { env: clientEnvironment(), timeoutMs: 5000 }).catch(() => undefined);
  }

  /** Stops the server, waits until its process is gone, and starts a new one there. */
  async restart(command?: readonly string[]): Promise<void> {
    await killTmuxServer((...args) => run([this.tmux, '-S', this.socketPath, ...args], { env: clientEnvironment(), timeoutMs: 5000 }));
    await this.start(command);
  }

  /** Everything a pane of whichever server runs now ever showed, read by a fresh client. */
  async history(pane: string): Promise<string> {
    return this.tmuxCommand('capture-pane', '-p', '-J', '-S', '-', '-t', pane);
  }

  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
  }
}
