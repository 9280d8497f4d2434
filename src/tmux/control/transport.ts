import { performance } from 'node:perf_hooks';
import type { OperationOptions } from '../deadline.js';
import { AbortedError, ClosedError, ServerReplacedError, TimeoutError } from '../errors.js';
import { CommandResult, type CommandTransport, type ExecOptions } from '../transport.js';
import type { ControlConnection } from './connection.js';
import { ConnectionLostError } from './errors.js';
import { planControlCommand, resultOfBlocks } from './routing.js';

/** What the control transport needs from its binding. */
export interface ControlHost {
  /** Opens a command-only connection; NoMatchError when there is no session to attach to. */
  openControl(options: OperationOptions & { output: false; anchor: false }): Promise<ControlConnection>;
}

/** After failing to attach (e.g. no session exists yet), how long typed operations keep to spawned clients. */
const RECONNECT_BACKOFF_MS = 1000;
/** A wedged connection is killed with this much grace: it already failed its caller. */
const RETIRE_GRACE_MS = 100;

/**
 * Routes typed operations over one persistent control connection, and everything control
 * mode cannot do identically (stdin-fed commands, commands that wait or act on the client,
 * target-less commands) through the spawn transport. The connection is opened on first use,
 * replaced when tmux ends it, and retired when it stops answering: that call fails with a
 * TimeoutError (delivery possibly_sent) and the next one goes through a spawned client.
 */
export class ControlTransport implements CommandTransport {
  readonly kind = 'control' as const;
  private connection: ControlConnection | undefined;
  private connecting: Promise<ControlConnection | undefined> | undefined;
  private nextConnectAt = 0;
  private spawnNext = false;
  private closed = false;

  /**
   * `clientPath` is the PATH the spawned clients have: a new pane made over the connection is
   * handed it, as tmux hands a pane the PATH of an unattached client that made it.
   */
  constructor(
    private readonly host: ControlHost,
    private readonly spawn: CommandTransport,
    private readonly clientPath: string | undefined,
  ) {}

  /** Whether the connection is up now: tmux has not ended it, nor has it been retired. */
  get connected(): boolean {
    return this.connection?.isOpen === true;
  }

  /** Opens the connection now if a session exists; otherwise the first call will try again. */
  async warm(options: OperationOptions = {}): Promise<void> {
    await this.current(options.timeoutMs ?? 5000, options.signal);
  }

  async execute(args: readonly string[], options: ExecOptions): Promise<CommandResult> {
    const started = performance.now();
    const left = (): number => {
      const remaining = options.timeoutMs - (performance.now() - started);
      if (remaining <= 0) throw new TimeoutError(`operation did not finish within ${options.timeoutMs} ms`, options.timeoutMs, { delivery: 'not_sent' });
      return remaining;
    };
    const viaSpawn = async (): Promise<CommandResult> => {
      const result = await this.spawn.execute(args, { ...options, timeoutMs: left() });
      if (result.ok && args.includes('new-session')) this.nextConnectAt = 0;
      return result;
    };
    const plan = options.input === undefined && !this.closed ? planControlCommand(args, { clientPath: this.clientPath }) : undefined;
    if (!plan) return viaSpawn();
    if (this.spawnNext) {
      this.spawnNext = false;
      return viaSpawn();
    }
    const connection = await this.current(left(), options.signal);
    if (!connection) return viaSpawn();
    try {
      const reply = await connection.exchange(plan.line, { commands: plan.commands, timeoutMs: left(), signal: options.signal });
      return resultOfBlocks(args, reply.blocks, reply.elapsedMs, connection.pid);
    } catch (error) {
      if (error instanceof ConnectionLostError || error instanceof ClosedError) {
        await this.retire(connection);
        if (error.delivery === 'not_sent') return viaSpawn();
        // What a spawned client reports when its server goes away mid-command.
        const stderr = Buffer.from(`lost server: ${error.message}\n`);
        return new CommandResult(args, Buffer.alloc(0), stderr, 1, performance.now() - started, 'control', connection.pid, args);
      }
      if (error instanceof TimeoutError && error.delivery !== 'not_sent') {
        await this.retire(connection);
        this.spawnNext = true;
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connecting?.catch(() => undefined);
    if (this.connection) await this.retire(this.connection);
  }

  private async current(timeoutMs: number, signal: AbortSignal | undefined): Promise<ControlConnection | undefined> {
    if (this.connection?.isOpen) return this.connection;
    if (this.connection) await this.retire(this.connection);
    if (this.closed || performance.now() < this.nextConnectAt) return undefined;
    this.connecting ??= this.connect(timeoutMs, signal).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(timeoutMs: number, signal: AbortSignal | undefined): Promise<ControlConnection | undefined> {
    try {
      const connection = await this.host.openControl({ output: false, anchor: false, timeoutMs, signal });
      if (this.closed) {
        await connection.close(RETIRE_GRACE_MS).catch(() => undefined);
        return undefined;
      }
      this.connection = connection;
      return connection;
    } catch (error) {
      if (error instanceof TimeoutError || error instanceof AbortedError || error instanceof ServerReplacedError) throw error;
      // No session to attach to, no connection slot left, an unreachable server: a spawned
      // client either does the job or reports the failure the way it always has.
      this.nextConnectAt = performance.now() + RECONNECT_BACKOFF_MS;
      return undefined;
    }
  }

  private async retire(connection: ControlConnection): Promise<void> {
    if (this.connection === connection) this.connection = undefined;
    // The connection already failed its caller; a stuck client is killed regardless.
    await connection.close(RETIRE_GRACE_MS).catch(() => undefined);
  }
}
