import {
  breakPaneArgs,
  captureArgs,
  captureNeedsVersion,
  checkCells,
  checkName,
  copyCommandArgs,
  copyModeArgs,
  copyModeNeedsVersion,
  joinPaneArgs,
  layoutNeedsVersion,
  linkWindowArgs,
  newWindowArgs,
  pasteBufferArgs,
  pipePaneArgs,
  resolveLayout,
  respawnPaneArgs,
  sendKeysArgs,
  sendTextArgs,
  splitArgs,
  type BreakSpec,
  type CaptureSpec,
  type CopyModeSpec,
  type JoinSpec,
  type NewWindowSpec,
  type PasteSpec,
  type PipeSpec,
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

export type { PasteSpec } from './commands.js';

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

/** Destination handles must come from the same binding: ids of another server name other objects. */
function sameBinding(server: Server, other: { readonly server: Server }, what: string): void {
  if (other.server !== server) throw new ArgumentError(`the ${what} belongs to another binding`);
}

/** Handles of the window links a list-windows listing printed with LINK_FORMAT. */
export function linksOf(server: Server, result: CommandResult): WindowLink[] {
  return result.idLines().map((line) => {
    const [session, index, window] = line.split(' ');
    return server.windowLink(session!, Number(index), window!);
  });
}

export const LINK_FORMAT = '#{session_id} #{window_index} #{window_id}';

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
    return result.idLines().map((id) => this.server.window(id));
  }

  async listPanes(options: OperationOptions = {}): Promise<Pane[]> {
    const result = await this.server.command(['list-panes', '-s', '-t', this.id, '-F', '#{pane_id}'], options);
    return result.idLines().map((id) => this.server.pane(id));
  }

  /** The session's window links in tmux's order (by index). */
  async listWindowLinks(options: OperationOptions = {}): Promise<WindowLink[]> {
    return linksOf(this.server, await this.server.command(['list-windows', '-t', this.id, '-F', LINK_FORMAT], options));
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
    sameBinding(this.server, session, 'session');
    if (!Number.isSafeInteger(index) || index < 0) throw new ArgumentError('window index must be a non-negative integer');
    return this.server.command(['move-window', '-d', '-s', this.id, '-t', `${session.id}:${index}`], options);
  }

  /** Swaps this window's place with another window's (tmux swap-window); focus stays unless asked. */
  async swap(other: Window, options: OperationOptions & { focus?: boolean } = {}): Promise<CommandResult> {
    sameBinding(this.server, other, 'window');
    return this.server.command(['swap-window', ...(options.focus ? [] : ['-d']), '-s', this.id, '-t', other.id], options);
  }

  /**
   * Links this window into a session at an explicit index (the same window, shown in both
   * places); an index in use fails rather than replacing what is there.
   */
  async link(session: Session, index: number, options: OperationOptions & { focus?: boolean } = {}): Promise<WindowLink> {
    sameBinding(this.server, session, 'session');
    await this.server.command(linkWindowArgs(this.id, session.id, index, options.focus), options);
    return this.server.windowLink(session.id, index, this.id);
  }

  /** Every place this window is linked into, in listing order. */
  async listWindowLinks(options: OperationOptions = {}): Promise<WindowLink[]> {
    return (await this.server.listWindowLinks(options)).filter((link) => link.windowId === this.id);
  }

  /** Splits the window's active pane. */
  async split(spec: SplitSpec & OperationOptions): Promise<Pane> {
    return this.server.receipt(await this.server.command(splitArgs(this.id, spec), spec)).pane;
  }

  /** Applies a layout: a tmux layout name, an unambiguous prefix, or a saved layout string. */
  async selectLayout(layout: string, options: OperationOptions = {}): Promise<CommandResult> {
    const deadline = Deadline.start(options);
    const version = layoutNeedsVersion(layout) ? await this.server.version({ timeoutMs: deadline.remaining(), signal: options.signal }) : undefined;
    const resolved = resolveLayout(layout, version);
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
    return result.idLines().map((id) => this.server.pane(id));
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

  /** The pane's screen (visible part by default) as raw bytes; flags this tmux lacks are refused before dispatch. */
  async capture(spec: CaptureSpec & OperationOptions = {}): Promise<Buffer> {
    const deadline = Deadline.start(spec);
    const version = captureNeedsVersion(spec) ? await this.server.version({ timeoutMs: deadline.remaining(), signal: spec.signal }) : undefined;
    return (await this.server.command(captureArgs(this.id, spec, version), { deadline })).stdout;
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

  /**
   * Moves this pane next to a pane (or a window's active pane), splitting it: tmux join-pane,
   * which move-pane is another name for. The direction is required; the pane lands after
   * the target unless `before`.
   */
  async join(target: Pane | Window, spec: JoinSpec & OperationOptions): Promise<CommandResult> {
    sameBinding(this.server, target, target.kind);
    return this.server.command(joinPaneArgs(this.id, target.id, spec), spec);
  }

  /** Breaks this pane out into a new window of `session`; returns that window. */
  async breakOut(session: Session, spec: BreakSpec & OperationOptions = {}): Promise<Window> {
    sameBinding(this.server, session, 'session');
    return this.server.receipt(await this.server.command(breakPaneArgs(this.id, session.id, spec), spec)).window;
  }

  /**
   * Pipes the pane to an authored shell command (output only unless `input` is asked), or
   * closes its pipe when the command is null. Says tmux started it, nothing about the command.
   */
  async pipe(shellCommand: string | null, spec: PipeSpec & OperationOptions = {}): Promise<CommandResult> {
    // Only the deadline goes on: the spec's `input` is a pipe direction, not bytes for tmux's stdin.
    return this.server.command(pipePaneArgs(this.id, shellCommand, spec), { timeoutMs: spec.timeoutMs, signal: spec.signal });
  }

  /** Swaps this pane with another of the same binding. */
  async swap(other: Pane, options: OperationOptions & { keepFocus?: boolean } = {}): Promise<CommandResult> {
    sameBinding(this.server, other, 'pane');
    return this.server.command(['swap-pane', '-s', this.id, '-t', other.id, ...(options.keepFocus ? ['-d'] : [])], options);
  }

  /** Restarts the pane's program; a live program is refused unless kill is set. */
  async respawn(spec: RespawnSpec & OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(respawnPaneArgs(this.id, spec), spec);
  }

  /** Pastes a named buffer into the pane. */
  async paste(buffer: string, spec: PasteSpec & OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(pasteBufferArgs(this.id, buffer, spec), spec);
  }

  /** Whether the pane is in a mode (copy mode, view mode…) that would swallow typed keys. */
  async inMode(options: OperationOptions = {}): Promise<boolean> {
    return (await this.display('#{pane_in_mode}', options)).toString('latin1') === '1';
  }

  /** Leaves copy or view mode. */
  async cancelMode(options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(['send-keys', '-t', this.id, '-X', 'cancel'], options);
  }

  /**
   * Enters copy mode, or changes it (scroll, cancel…); every flag defaults to off. With a
   * source pane, copy mode shows that pane's contents. A flag this tmux lacks is refused
   * before dispatch.
   */
  async copyMode(spec: CopyModeSpec & OperationOptions & { source?: Pane } = {}): Promise<CommandResult> {
    if (spec.source !== undefined) sameBinding(this.server, spec.source, 'source pane');
    const deadline = Deadline.start(spec);
    const version = copyModeNeedsVersion(spec) ? await this.server.version({ timeoutMs: deadline.remaining(), signal: spec.signal }) : undefined;
    return this.server.command(copyModeArgs(this.id, spec, spec.source?.id, version), { deadline });
  }

  /** Sends a copy-mode command (`begin-selection`, `search-backward` …) with its arguments; tmux refuses it outside copy mode. */
  async copyCommand(command: string, args: readonly string[] = [], options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(copyCommandArgs(this.id, command, args), options);
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
    if (!Number.isSafeInteger(index) || index < 0) throw new ArgumentError('window index must be a non-negative integer');
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

  equals(other: unknown): boolean {
    return other instanceof WindowLink && other.server === this.server && other.sessionId === this.sessionId && other.index === this.index && other.windowId === this.windowId;
  }

  /** Confirms the session still has this window at this index. */
  private async check(deadline: Deadline): Promise<void> {
    await this.display('', { deadline });
  }

  /**
   * Expands a tmux format in this link's context. The link's identity is printed in the same
   * reply, so a link that moved or went away is TargetNotFoundError, never another window's answer.
   */
  async display(format: string, options: OperationOptions & { deadline?: Deadline } = {}): Promise<Buffer> {
    if (format !== '') checkName('format', format);
    const result = await this.server.command(['display-message', '-p', '-t', this.target, protectArgument(`#{session_id} #{window_id} ${format}`)], options);
    const out = result.stdout.subarray(0, result.stdout.at(-1) === 0x0a ? -1 : undefined);
    const expected = Buffer.from(`${this.sessionId} ${this.windowId} `);
    if (!out.subarray(0, expected.length).equals(expected)) throw new TargetNotFoundError(this.target, { result });
    return out.subarray(expected.length);
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

  /** Moves this link to an index of a session (tmux move-window); an index in use fails. Returns the link there. */
  async move(session: Session, index: number, options: OperationOptions = {}): Promise<WindowLink> {
    sameBinding(this.server, session, 'session');
    const destination = this.server.windowLink(session.id, index, this.windowId);
    const deadline = Deadline.start(options);
    await this.check(deadline);
    await this.server.command(['move-window', '-d', '-s', this.target, '-t', destination.target], { deadline });
    return destination;
  }

  /**
   * Swaps the windows of two links (tmux swap-window), each checked first; returns the two
   * links as they are afterwards, this place first.
   */
  async swap(other: WindowLink, options: OperationOptions & { focus?: boolean } = {}): Promise<[WindowLink, WindowLink]> {
    sameBinding(this.server, other, 'window link');
    const deadline = Deadline.start(options);
    await this.check(deadline);
    await other.check(deadline);
    await this.server.command(['swap-window', ...(options.focus ? [] : ['-d']), '-s', this.target, '-t', other.target], { deadline });
    return [this.server.windowLink(this.sessionId, this.index, other.windowId), this.server.windowLink(other.sessionId, other.index, this.windowId)];
  }

  /** The window's options, reached through this link: each access checks the link first. */
  options(): Options {
    return new Options(this.server, { kind: 'window', id: this.windowId }, (deadline) => this.check(deadline));
  }

  /** The window's hooks, reached through this link: each access checks the link first. */
  hooks(): Hooks {
    return new Hooks(this.server, { kind: 'window', id: this.windowId }, (deadline) => this.check(deadline));
  }

  toString(): string {
    return `window link ${this.target} (${this.windowId})`;
  }

  toJSON(): { kind: 'window-link'; session_id: SessionId; index: number; window_id: WindowId } {
    return { kind: 'window-link', session_id: this.sessionId, index: this.index, window_id: this.windowId };
  }
}

