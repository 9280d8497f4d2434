import { run, RunResult } from '../process/index.js';
import { decodeUtf8 } from '../process/errors.js';
import type { Endpoint } from './endpoint.js';

export interface ExecOptions {
  input?: Uint8Array;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The raw outcome of one tmux command (or `;`-joined group) on either transport. */
export class CommandResult {
  constructor(
    /** The tmux arguments after the endpoint flags. */
    readonly args: readonly string[],
    readonly stdout: Buffer,
    readonly stderr: Buffer,
    readonly exitCode: number | null,
    readonly elapsedMs: number,
    readonly transport: 'spawn' | 'control',
    /** The tmux client's pid (spawn transport) or the control client's pid. */
    readonly pid: number | undefined,
    /** The full argv for the spawn transport. */
    readonly argv: readonly string[],
    /** The signal that ended the tmux client, when one did (exitCode is then null). */
    readonly signal: NodeJS.Signals | null = null,
  ) {
    Object.freeze(this);
  }

  get ok(): boolean {
    return this.exitCode === 0;
  }

  /** stdout as UTF-8; invalid bytes raise DecodeError. */
  text(): string {
    return decodeUtf8(this.stdout, `output of tmux ${this.args[0] ?? ''}`);
  }

  lossyText(): string {
    return this.stdout.toString('utf8');
  }

  /** The non-empty lines of stdout, byte for byte (latin1): for listings of ids and numbers. */
  idLines(): string[] {
    return this.stdout.toString('latin1').split('\n').filter((line) => line !== '');
  }

  stderrText(): string {
    return this.stderr.toString('utf8').trim();
  }
}

/** How commands reach a tmux server: a client process per command, or a control connection. */
export interface CommandTransport {
  readonly kind: 'spawn' | 'control';
  execute(args: readonly string[], options: ExecOptions): Promise<CommandResult>;
  close(): Promise<void>;
}

/**
 * Every client drover runs for its own reading (not one drawing on a person's terminal) says it
 * takes UTF-8. Without it, tmux decides from LC_ALL, LC_CTYPE and LANG, and where none names
 * UTF-8 (a container, cron, a bare ssh command) it replaces every control character and every
 * non-ASCII character of a listing with "_": a window named "résumé" then breaks the framing of
 * a snapshot, and a separator character between fields is lost.
 */
export const UTF8_CLIENT_FLAG = '-u';

/** The environment for tmux clients: $TMUX and $TMUX_PANE removed so nothing implicit leaks in. */
export function clientEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.TMUX;
  delete copy.TMUX_PANE;
  return copy;
}

export class SpawnTransport implements CommandTransport {
  readonly kind = 'spawn' as const;
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly endpoint: Endpoint,
    env?: NodeJS.ProcessEnv,
  ) {
    this.env = clientEnvironment(env);
  }

  /** The PATH these clients run with, which tmux hands a pane they create. */
  get clientPath(): string | undefined {
    return this.env.PATH;
  }

  async execute(args: readonly string[], options: ExecOptions): Promise<CommandResult> {
    const argv = [this.endpoint.executable, UTF8_CLIENT_FLAG, ...this.endpoint.args, ...args];
    const result: RunResult = await run(argv, {
      input: options.input,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      env: this.env,
    });
    return new CommandResult(args, result.stdout, result.stderr, result.exitCode, result.elapsedMs, 'spawn', result.pid, result.argv, result.signal);
  }

  async close(): Promise<void> {
    // Nothing persistent: every command owned its own client.
  }
}
