import {
  captureArgs,
  checkCells,
  checkName,
  newWindowArgs,
  resolveLayout,
  respawnPaneArgs,
  sendKeysArgs,
  sendTextArgs,
  splitArgs,
  type CaptureSpec,
  type NewWindowSpec,
  type RespawnSpec,
  type SplitSpec,
} from './commands.js';
import { Deadline, type OperationOptions } from './deadline.js';
import { ArgumentError, CommandError, TargetNotFoundError } from './errors.js';
import { escapeFormat, protectArgument } from './escape.js';
import type { PaneId, SessionId, WindowId } from './ids.js';
import { Environment, Hooks, Options } from './settings.js';
import type { Server } from './server.js';
import type { PaneRecord, SessionRecord, WindowRecord } from './snapshot.js';
import type { CommandResult } from './transport.js';

/** The objects one creation reply named, all from the same framed reply. */
export interface CreationReceipt {
  readonly session: Session;
  readonly window: Window;
  readonly pane: Pane;
  readonly result: CommandResult;
}

const GUARD_REFUSED = 'DROVER-GUARD-REFUSED';

/**
 * A tmux format that expands to nothing exactly when the target's windows and panes are
 * the expected sets, evaluated inside tmux's own command queue.
 */
function membershipCondition(windows: readonly WindowId[] | undefined, panes: readonly PaneId[]): string {
  const set = (ids: readonly string[]): string => `|${ids.join('|')}|`;
  // A session's panes span all its windows; a window's panes are its own.
  const overPanes = (inner: string): string => (windows ? `#{W:#{P:${inner}}}` : `#{P:${inner}}`);
  let violations = overPanes(`#{?#{m:*|#{pane_id}|*,${set(panes)}},,x}`);
  const actualPanes = overPanes('|#{pane_id}|');
  for (const pane of panes) violations += `#{?#{m:*|${pane}|*,${actualPanes}},,x}`;
  if (windows) {
    violations += `#{W:#{?#{m:*|#{window_id}|*,${set(windows)}},,x}}`;
    for (const window of windows) violations += `#{?#{m:*|${window}|*,#{W:|#{window_id}|}},,x}`;
  }
  return `#{==:${violations},}`;
}

abstract class Handle<K extends 'session' | 'window' | 'pane', I extends string> {
  abstract readonly kind: K;

  constructor(
    readonly server: Server,
    readonly id: I,
  ) {}

  equals(other: unknown): boolean {
    return other instanceof Handle && other.server === this.server && other.kind === this.kind && other.id === this.id;
  }

  /** Expands a tmux format in this object's context; a vanished object is TargetNotFoundError. */
  async display(format: string, options: OperationOptions = {}): Promise<Buffer> {
    return this.server.display(format, { ...options, target: this as unknown as Session | Window | Pane });
  }

  /** Whether tmux still knows this object. */
  async exists(options: OperationOptions = {}): Promise<boolean> {
    try {
      await this.display('1', options);
      return true;
    } catch (error) {
      if (error instanceof TargetNotFoundError) return false;
      throw error;
    }
  }

  toString(): string {
    return `${this.kind} ${this.id}`;
  }

  toJSON(): { kind: K; id: I } {
    return { kind: this.kind, id: this.id };
  }
}

async function guardedKill(server: Server, target: SessionId | WindowId, kill: string, condition: string, options: OperationOptions): Promise<CommandResult> {
  const result = await server.command(['if-shell', '-F', '-t', target, condition, `${kill} -t '${target}'`, `display-message -p ${GUARD_REFUSED}`], options);
  if (result.stdout.toString('latin1').includes(GUARD_REFUSED)) {
    throw new CommandError(`${target} was not removed: its membership differs from what was expected`, { result, delivery: 'observed' });
  }
  return result;
}

export class Session extends Handle<'session', SessionId> {
  readonly kind = 'session' as const;

  async rename(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['rename-session', '-t', this.id, protectArgument(escapeFormat(checkName('session name', name)))], options);
  }

  /**
   * Removes the session (and windows only it links). With expectedWindows and expectedPanes,
   * removal happens only if the membership is exactly those sets, checked in one tmux queue turn.
   */
  async kill(options: OperationOptions & { expectedWindows?: readonly Window[]; expectedPanes?: readonly Pane[] } = {}): Promise<CommandResult> {
    const { expectedWindows, expectedPanes } = options;
    if ((expectedWindows === undefined) !== (expectedPanes === undefined)) throw new ArgumentError('expectedWindows and expectedPanes go together');
    if (expectedWindows && expectedPanes) {
      return guardedKill(this.server, this.id, 'kill-session', membershipCondition(expectedWindows.map((w) => w.id), expectedPanes.map((p) => p.id)), options);
    }
    return this.server.command(['kill-session', '-t', this.id], options);
  }

  async newWindow(spec: NewWindowSpec & OperationOptions & { receipt: true }): Promise<CreationReceipt>;
  async newWindow(spec?: NewWindowSpec & OperationOptions & { receipt?: false }): Promise<Window>;
  async newWindow(spec: NewWindowSpec & OperationOptions & { receipt?: boolean } = {}): Promise<Window | CreationReceipt> {
    const receipt = this.server.receipt(await this.server.command(newWindowArgs(this.id, spec), spec));
    return spec.receipt ? receipt : receipt.window;
  }

  async listWindows(options: OperationOptions = {}): Promise<Window[]> {
    const result = await this.server.command(['list-windows', '-t', this.id, '-F', '#{window_id}'], options);
    return lines(result).map((id) => this.server.window(id));
  }

  async listPanes(options: OperationOptions = {}): Promise<Pane[]> {
    const result = await this.server.command(['list-panes', '-s', '-t', this.id, '-F', '#{pane_id}'], options);
    return lines(result).map((id) => this.server.pane(id));
  }

  /** The session's entry in a fresh snapshot. */
  async snapshot(options: OperationOptions = {}): Promise<SessionRecord> {
    const record = (await this.server.snapshot(options)).session(this.id);
    if (!record) throw new TargetNotFoundError(this.id);
    return record;
  }

  options(): Options {
    return new Options(this.server, { kind: 'session', id: this.id });
  }

  hooks(): Hooks {
    return new Hooks(this.server, { kind: 'session', id: this.id });
  }

  environment(): Environment {
    return new Environment(this.server, { kind: 'session', id: this.id });
  }
}

export class Window extends Handle<'window', WindowId> {
  readonly kind = 'window' as const;

  async rename(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['rename-window', '-t', this.id, protectArgument(escapeFormat(checkName('window name', name)))], options);
  }

  /** Removes the window; with expectedPanes, only if its panes are exactly those. */
  async kill(options: OperationOptions & { expectedPanes?: readonly Pane[] } = {}): Promise<CommandResult> {
    if (options.expectedPanes) {
      return guardedKill(this.server, this.id, 'kill-window', membershipCondition(undefined, options.expectedPanes.map((p) => p.id)), options);
    }
    return this.server.command(['kill-window', '-t', this.id], options);
  }

  /** Makes this the current window of its session. */
  async select(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['select-window', '-t', this.id], options);
  }

  /** Moves the window to an index of a session (tmux move-window); an index in use fails. */
  async move(session: Session, index: number, options: OperationOptions = {}): Promise<CommandResult> {
    if (session.server !== this.server) throw new ArgumentError('the session belongs to another binding');
    if (!Number.isSafeInteger(index) || index < 0) throw new ArgumentError('window index must be a non-negative integer');
    return this.server.command(['move-window', '-d', '-s', this.id, '-t', `${session.id}:${index}`], options);
  }

  /** Splits the window's active pane. */
  async split(spec: SplitSpec & OperationOptions): Promise<Pane> {
    return this.server.receipt(await this.server.command(splitArgs(this.id, spec), spec)).pane;
  }

  /** Applies a layout: a tmux layout name, an unambiguous prefix, or a saved layout string. */
  async selectLayout(layout: string, options: OperationOptions = {}): Promise<CommandResult> {
    const deadline = Deadline.start(options);
    const needsVersion = layout.includes('mirrored');
    const resolved = resolveLayout(layout, needsVersion ? await this.server.version({ timeoutMs: deadline.remaining(), signal: options.signal }) : undefined);
    return this.server.command(['select-layout', '-t', this.id, protectArgument(resolved)], { deadline });
  }

  async resize(size: { width?: number; height?: number }, options: OperationOptions = {}): Promise<CommandResult> {
    const args = ['resize-window', '-t', this.id];
    if (size.width !== undefined) args.push('-x', String(checkCells('width', size.width)));
    if (size.height !== undefined) args.push('-y', String(checkCells('height', size.height)));
    if (args.length === 3) throw new ArgumentError('resize needs a width or a height');
    return this.server.command(args, options);
  }

  async listPanes(options: OperationOptions = {}): Promise<Pane[]> {
    const result = await this.server.command(['list-panes', '-t', this.id, '-F', '#{pane_id}'], options);
    return lines(result).map((id) => this.server.pane(id));
  }

  async snapshot(options: OperationOptions = {}): Promise<WindowRecord> {
    const record = (await this.server.snapshot(options)).window(this.id);
    if (!record) throw new TargetNotFoundError(this.id);
    return record;
  }

  options(): Options {
    return new Options(this.server, { kind: 'window', id: this.id });
  }

  hooks(): Hooks {
    return new Hooks(this.server, { kind: 'window', id: this.id });
  }
}

export type ResizeSpec =
  | { width?: number; height?: number }
  | { direction: 'left' | 'right' | 'up' | 'down'; cells?: number }
  | { zoom: true };

export interface PasteSpec {
  /** Delete the buffer after pasting. */
  delete?: boolean;
  /** Ask for bracketed paste markers (honoured only if the program enabled bracket mode). */
  bracketed?: boolean;
  /** Replace newlines with this separator instead of tmux's default carriage return. */
  separator?: string;
}

export class Pane extends Handle<'pane', PaneId> {
  readonly kind = 'pane' as const;

  /** Types text literally (no key-name interpretation). Dispatch only: nothing here waits for a program. */
  async sendText(text: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(sendTextArgs(this.id, text), options);
  }

  /** Sends tmux key names, e.g. ['C-u'], ['Enter'], ['Escape']. */
  async sendKeys(keys: readonly string[], options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(sendKeysArgs(this.id, keys), options);
  }

  /** The pane's screen (visible part by default) as raw bytes. */
  async capture(spec: CaptureSpec & OperationOptions = {}): Promise<Buffer> {
    return (await this.server.command(captureArgs(this.id, spec), spec)).stdout;
  }

  async kill(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['kill-pane', '-t', this.id], options);
  }

  /** Makes this the active pane of its window. */
  async select(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['select-pane', '-t', this.id], options);
  }

  /** Sets the pane title (what programs can also set with an escape sequence). */
  async setTitle(title: string, options: OperationOptions = {}): Promise<CommandResult> {
    if (typeof title !== 'string' || title.includes('\0')) throw new ArgumentError('title must be a string without NUL');
    return this.server.command(['select-pane', '-t', this.id, '-T', protectArgument(escapeFormat(title))], options);
  }

  async split(spec: SplitSpec & OperationOptions): Promise<Pane> {
    return this.server.receipt(await this.server.command(splitArgs(this.id, spec), spec)).pane;
  }

  async resize(spec: ResizeSpec, options: OperationOptions = {}): Promise<CommandResult> {
    const args = ['resize-pane', '-t', this.id];
    if ('zoom' in spec) args.push('-Z');
    else if ('direction' in spec) {
      const flag = { left: '-L', right: '-R', up: '-U', down: '-D' }[spec.direction];
      if (!flag) throw new ArgumentError('direction must be left, right, up or down');
      args.push(flag, String(checkCells('cells', spec.cells ?? 1)));
    } else {
      if (spec.width !== undefined) args.push('-x', String(checkCells('width', spec.width)));
      if (spec.height !== undefined) args.push('-y', String(checkCells('height', spec.height)));
      if (args.length === 3) throw new ArgumentError('resize needs a width, a height, a direction or zoom');
    }
    return this.server.command(args, options);
  }

  /** Swaps this pane with another of the same binding. */
  async swap(other: Pane, options: OperationOptions & { keepFocus?: boolean } = {}): Promise<CommandResult> {
    if (other.server !== this.server) throw new ArgumentError('cannot swap with a pane of another binding');
    return this.server.command(['swap-pane', '-s', this.id, '-t', other.id, ...(options.keepFocus ? ['-d'] : [])], options);
  }

  /** Restarts the pane's program; a live program is refused unless kill is set. */
  async respawn(spec: RespawnSpec & OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(respawnPaneArgs(this.id, spec), spec);
  }

  /** Pastes a named buffer into the pane. */
  async paste(buffer: string, spec: PasteSpec & OperationOptions = {}): Promise<CommandResult> {
    checkName('buffer name', buffer);
    const args = ['paste-buffer', '-b', protectArgument(buffer), '-t', this.id];
    if (spec.delete) args.push('-d');
    if (spec.bracketed) args.push('-p');
    if (spec.separator !== undefined) args.push('-s', protectArgument(spec.separator));
    return this.server.command(args, spec);
  }

  /** Whether the pane is in a mode (copy mode, view mode…) that would swallow typed keys. */
  async inMode(options: OperationOptions = {}): Promise<boolean> {
    return (await this.display('#{pane_in_mode}', options)).toString('latin1') === '1';
  }

  /** Leaves copy or view mode. */
  async cancelMode(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['send-keys', '-t', this.id, '-X', 'cancel'], options);
  }

  /** Enters copy mode. */
  async copyMode(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['copy-mode', '-t', this.id], options);
  }

  async snapshot(options: OperationOptions = {}): Promise<PaneRecord> {
    const record = (await this.server.snapshot(options)).pane(this.id);
    if (!record) throw new TargetNotFoundError(this.id);
    return record;
  }

  options(): Options {
    return new Options(this.server, { kind: 'pane', id: this.id });
  }

  hooks(): Hooks {
    return new Hooks(this.server, { kind: 'pane', id: this.id });
  }
}

/** A window at an index of a session: the three together are the link's identity. */
export class WindowLink {
  constructor(
    readonly server: Server,
    readonly sessionId: SessionId,
    readonly index: number,
    readonly windowId: WindowId,
  ) {
    Object.freeze(this);
  }

  get target(): string {
    return `${this.sessionId}:${this.index}`;
  }

  session(): Session {
    return this.server.session(this.sessionId);
  }

  window(): Window {
    return this.server.window(this.windowId);
  }

  /** Confirms the session still has this window at this index. */
  private async check(deadline: Deadline): Promise<void> {
    const shown = (await this.server.command(['display-message', '-p', '-t', this.target, '#{session_id} #{window_id}'], { deadline })).stdout.toString('latin1').trim();
    if (shown !== `${this.sessionId} ${this.windowId}`) throw new TargetNotFoundError(this.target);
  }

  async select(options: OperationOptions = {}): Promise<CommandResult> {
    const deadline = Deadline.start(options);
    await this.check(deadline);
    return this.server.command(['select-window', '-t', this.target], { deadline });
  }

  /** Removes the link; tmux refuses to unlink a window's last link unless forced (which kills it). */
  async unlink(options: OperationOptions & { force?: boolean } = {}): Promise<CommandResult> {
    const deadline = Deadline.start(options);
    await this.check(deadline);
    return this.server.command(['unlink-window', ...(options.force ? ['-k'] : []), '-t', this.target], { deadline });
  }
}

function lines(result: CommandResult): string[] {
  return result.stdout.toString('latin1').split('\n').filter((line) => line !== '');
}
