/**
 * The tmux adapter, over the typed tmux client (src/tmux): session → space, window → tab,
 * pane → pane, with tmux's own ids ($3, @7, %12) carried unchanged (identity.ts).
 *
 * The snapshot is one listing (sessions, windows, panes and clients in one tmux invocation).
 * Focus: a pane is focused when it is the active pane of its session's current window and a
 * terminal client (not a control client, such as this adapter's own watch) is attached, since
 * focus is what a person's screen shows; with none attached no pane is focused. The space in
 * front is the session of the most recently active terminal client, or with none attached the
 * most recently active session. tmux has one title slot (pane_title), shared with
 * the pane's program, so the labels this adapter sets are remembered (rules.ts LabelMemory).
 *
 * Identity: the adapter answers for one run of the tmux server (its incarnation: pid and start
 * time), because a server started again at the same socket hands out %0, %1… again, to
 * unrelated panes. A binding the adapter opened itself is dropped when its server stops
 * answering and opened again on a later call, but only onto that same run: any other server
 * answering at the socket is a replacement, and from then on every call fails with `replaced`.
 * A binding the caller gave is never opened again.
 *
 * Every pane verb runs under its call's one deadline however many tmux commands it needs, and
 * every write first returns a pane that a mode (copy mode, a chooser) holds to its live input,
 * in the same tmux invocation as the write: a person can enter copy mode between two
 * keystrokes, and keys sent there would be read as copy-mode commands.
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import {
  ArgumentError,
  captureArgs,
  CommandError,
  Deadline,
  Endpoint,
  failureOf,
  incarnationKey,
  leaveModeArgs,
  pasteFromBuffer,
  respawnPaneArgs,
  sameIncarnation,
  sendKeysArgs,
  sendTextArgs,
  Server,
  ServerReplacedError,
  ServerUnreachableError,
  setOptionArgs,
  splitArgs,
  unsetOptionArgs,
  TargetNotFoundError,
  versionAtLeast,
  type CommandResult,
  type OperationOptions,
  type PaneId,
  type ServerIncarnation,
  type Snapshot as TmuxSnapshot,
} from '../../../tmux/index.js';
import { DroverError, zombieExitStatus } from '../../../process/index.js';
import { TMUX_DECLARATION } from '../../capabilities.js';
import { TmuxMuxError } from '../../errors.js';
import { tmuxIds } from '../../identity.js';
import { toTmuxKey, type MuxKey } from '../../keys.js';
import { ContentRevisions } from '../../revision.js';
import { LabelMemory, withPublishedCounts } from '../../rules.js';
import { visibleScreen } from '../../screen.js';
import {
  ok,
  refusal,
  type KeyTranslation,
  type MuxAdapter,
  type MuxCallOptions,
  type MuxCreatedPane,
  type MuxGrid,
  type MuxGridRequest,
  type MuxOutcome,
  type MuxPane,
  type MuxPaneLocation,
  type MuxPaneLookup,
  type MuxPaneProcess,
  type MuxPaneSize,
  type MuxScreen,
  type MuxSnapshot,
  type MuxSplitRequest,
  type MuxWatch,
  type MuxWatchOptions,
} from '../../types.js';
import { TmuxWatch, censusOf } from './watch.js';

export const TMUX_RESYNC_MS = 5_000;
/** Text up to this size is typed with send-keys -l; longer text goes through a paste buffer (tmux caps one command's size). */
const SEND_KEYS_TEXT_BYTES = 8 * 1024;

/**
 * The pane options drover's agent hooks write their state to (`<state>:<epoch>[:<pid>]`): the
 * current name, then the older one, which is read only when the current one is unset.
 */
export const TMUX_AGENT_STATE_OPTIONS = ['@rk_pane_agent_state', '@rk_agent_state'] as const;

/** A pane's size and cursor, after its id so that a reply about another pane is caught. */
const SCREEN_GEOMETRY = '#{pane_id} #{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{cursor_flag}';
/** The pane's own program and its fate; the command last, since it is the one free-text field. */
const PROCESS_FIELDS = '#{pane_pid}\u001f#{pane_dead}\u001f#{pane_dead_status}\u001f#{pane_dead_signal}\u001f#{pane_current_command}';
/** How long a dead pane's unrecorded exit is waited for, and how often it is looked at again. */
const EXIT_SETTLE_MS = 250;
const EXIT_SETTLE_POLL_MS = 10;
/** What a kept pane runs until its real program replaces it, so that even a program exiting at once is kept. */
const PLACEHOLDER = ['sleep', '86400'];

export interface TmuxAdapterOptions {
  /** A binding the caller opened and closes; or else `endpoint`, opened on first use. */
  readonly server?: Server;
  readonly endpoint?: Endpoint;
  /**
   * The environment tmux clients run with, when the adapter opens its own binding: a tmux
   * command client hands its environment to what it spawns, so a pane split off runs with it.
   */
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  /** The watch's resync backstop. */
  readonly resyncMs?: number;
  /**
   * How the adapter's own binding reaches tmux: a client process per command (default), or one
   * persistent control connection, for a caller that sends many small commands.
   */
  readonly transport?: 'spawn' | 'control';
}

/**
 * tmux gives a pane the PATH of the client whose command made it, over `-e PATH=…`; a PATH the
 * caller asks for is therefore set by env(1) in the pane, which also looks the program up in it.
 * A pane running the default shell has no program to wrap, and keeps tmux's rule.
 */
function withOwnPath(env: Readonly<Record<string, string>> | undefined, command: readonly string[] | undefined): { env?: Record<string, string>; command?: string[] } {
  if (command === undefined) return env === undefined ? {} : { env: { ...env } };
  if (env?.PATH === undefined) return { ...(env === undefined ? {} : { env: { ...env } }), command: [...command] };
  const { PATH: path, ...rest } = env;
  return { env: rest, command: ['/usr/bin/env', `PATH=${path}`, ...command] };
}

/** The hook state of a pane: the current option, else the older one; absent when neither is set. */
function hookStateOf(values: readonly (string | undefined)[]): string | undefined {
  return values.map((value) => value?.trim()).find((value) => value !== undefined && value !== '');
}

/** One command's share of an operation's deadline. */
function step(deadline: Deadline): OperationOptions {
  return { timeoutMs: deadline.remaining(), signal: deadline.signal };
}

function wholeNumber(text: string | undefined): number | null {
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : null;
}

export class TmuxAdapter implements MuxAdapter {
  readonly mux = 'tmux' as const;
  readonly declaration = TMUX_DECLARATION;
  private binding: Server | undefined;
  private readonly ownsBinding: boolean;
  private readonly endpoint: Endpoint | undefined;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly timeoutMs: number | undefined;
  private readonly transport: 'spawn' | 'control' | undefined;
  private readonly resyncMs: number;
  private readonly labels = new LabelMemory();
  private readonly revisions = new ContentRevisions();
  private readonly watches = new Set<TmuxWatch>();
  /** The run of the server this adapter answers for, once a command has learnt it. */
  private incarnation: ServerIncarnation | undefined;
  /** Why the adapter answers nothing any more: another server replaced its run at the socket. */
  private replacedBy: TmuxMuxError | undefined;

  constructor(options: TmuxAdapterOptions) {
    if ((options.server === undefined) === (options.endpoint === undefined)) throw new TypeError('a tmux adapter needs exactly one of server or endpoint');
    this.binding = options.server;
    this.ownsBinding = options.server === undefined;
    this.endpoint = options.endpoint;
    this.env = options.env;
    this.timeoutMs = options.timeoutMs;
    this.resyncMs = options.resyncMs ?? TMUX_RESYNC_MS;
    this.transport = options.transport;
  }

  /**
   * The binding, opened on first use. A binding that lost its server is dropped, and the one
   * opened in its place must answer from the same run; another run is a replacement.
   */
  private async server(options: OperationOptions = {}): Promise<Server> {
    if (this.replacedBy !== undefined) throw this.replacedBy;
    if (this.binding !== undefined && !this.binding.isClosed) return this.binding;
    if (!this.ownsBinding) throw new TmuxMuxError('the tmux binding this adapter was given is closed', { reason: 'unreachable', delivery: 'not_sent' });
    let opened: Server;
    try {
      opened = await Server.open(this.endpoint!, { env: this.env, transport: this.transport });
      if (this.incarnation !== undefined) {
        const now = await opened.incarnation(options);
        if (!sameIncarnation(now, this.incarnation)) {
          await opened.close().catch(() => undefined);
          throw this.replaced(
            `the tmux server at ${this.endpoint!.socketPath} is another run now (${incarnationKey(now)}, not ${incarnationKey(this.incarnation)}); its pane ids name other panes, so nothing is sent to it: open a new port to reach it`,
          );
        }
      }
    } catch (error) {
      throw this.failure(error);
    }
    this.binding = opened;
    return opened;
  }

  /** Latches the replacement: every later call fails with the same error. */
  private replaced(message: string, cause?: unknown): TmuxMuxError {
    this.replacedBy ??= new TmuxMuxError(message, { reason: 'unreachable', replaced: true, delivery: 'not_sent', cause });
    this.dropBinding();
    return this.replacedBy;
  }

  /** Forgets a binding this adapter opened (a given one stays the caller's), keeping the run it answered for. */
  private dropBinding(): void {
    this.incarnation ??= this.binding?.knownIncarnation;
    if (!this.ownsBinding) return;
    void this.binding?.close().catch(() => undefined);
    this.binding = undefined;
  }

  /** The refusal a tmux failure stands for, as a TmuxMuxError. */
  private failure(error: unknown): unknown {
    if (error instanceof TmuxMuxError || !(error instanceof DroverError)) return error;
    if (error instanceof ServerReplacedError) return this.replaced(error.message, error);
    if (error instanceof ServerUnreachableError) {
      this.dropBinding();
      return new TmuxMuxError(error.message, { reason: 'unreachable', delivery: error.delivery, cause: error });
    }
    if (error instanceof TargetNotFoundError) return new TmuxMuxError(`tmux has no ${error.target}`, { reason: 'gone', delivery: 'observed', cause: error });
    if (error instanceof CommandError) return new TmuxMuxError(error.message, { reason: 'refused', delivery: error.delivery, cause: error });
    // A request tmux was never sent because drover found it malformed (a cwd that does not exist).
    if (error instanceof ArgumentError) return new TmuxMuxError(error.message, { reason: 'refused', delivery: 'not_sent', cause: error });
    return new TmuxMuxError(error.message, { reason: 'unreachable', delivery: error.delivery, cause: error });
  }

  /** Runs one operation against the binding, with every tmux failure classified. */
  private async tmux<T>(operation: (server: Server) => Promise<T>, options?: OperationOptions): Promise<T> {
    try {
      const server = await this.server(options);
      const value = await operation(server);
      this.incarnation ??= server.knownIncarnation;
      return value;
    } catch (error) {
      throw this.failure(error);
    }
  }

  /** Several tmux commands in one invocation (behind the binding's incarnation guard); a failure is its reply's typed error. */
  private async group(server: Server, commands: readonly (readonly string[])[], deadline: Deadline): Promise<CommandResult> {
    const group = await server.runGroup(commands, step(deadline));
    if (!group.ok) throw failureOf(group.result);
    return group.result;
  }

  /** A call's one deadline: its own budget, else the adapter's. */
  private deadline(options: MuxCallOptions): Deadline {
    return Deadline.start({ timeoutMs: options.timeoutMs ?? this.timeoutMs, signal: options.signal });
  }

  private native(kind: 'pane' | 'tab' | 'space', id: string): string {
    const native = kind === 'pane' ? tmuxIds.nativePane(id) : kind === 'tab' ? tmuxIds.nativeTab(id) : tmuxIds.nativeSpace(id);
    if (native === undefined) throw new TmuxMuxError(`tmux has no ${kind} ${id}`, { reason: 'gone', delivery: 'not_sent' });
    return native;
  }

  // ---- the floor -------------------------------------------------------------------------

  async reachable(): Promise<boolean> {
    try {
      // Asked every time: an answer kept from earlier says nothing about the server now.
      await this.tmux((server) => server.command(['display-message', '-p', '#{pid}'], { timeoutMs: this.timeoutMs }));
      return true;
    } catch {
      return false;
    }
  }

  async serverIncarnation(options: MuxCallOptions): Promise<string> {
    const deadline = this.deadline(options);
    return incarnationKey(await this.tmux((server) => server.incarnation(step(deadline)), step(deadline)));
  }

  /** One listing of the whole server, the agent-state pane options included. */
  private listing(options: MuxCallOptions = {}): Promise<TmuxSnapshot> {
    return this.tmux((server) => server.snapshot({ clients: true, paneOptions: TMUX_AGENT_STATE_OPTIONS, timeoutMs: options.timeoutMs ?? this.timeoutMs, signal: options.signal }));
  }

  async snapshot(options: MuxCallOptions): Promise<MuxSnapshot> {
    const listing = await this.listing(options);
    // The listing taught the binding its run, so this asks tmux nothing.
    return this.publish(listing, await this.serverIncarnation({}));
  }

  /**
   * The pane's window, then every window of every session (no pane is formatted, so no process
   * of any pane is read): its space is the first session listing that window, as in publish().
   */
  async locatePane(paneId: string, options: MuxCallOptions): Promise<MuxPaneLookup> {
    const deadline = this.deadline(options);
    let location: MuxPaneLocation | undefined;
    try {
      const pane = this.native('pane', paneId);
      const listed = await this.tmux((server) => this.group(server, [['display-message', '-p', '-t', pane, '#{window_id}'], ['list-windows', '-a', '-F', '#{session_id} #{window_id}']], deadline), step(deadline));
      const [windowId, ...windows] = listed.text().split('\n') as [string, ...string[]];
      const session = windows.find((line) => line.endsWith(` ${windowId}`))?.split(' ')[0];
      if (session !== undefined) location = { spaceId: tmuxIds.space(session), tabId: tmuxIds.tab(windowId) };
    } catch (error) {
      if (!(error instanceof TmuxMuxError && error.reason === 'gone')) throw error;
    }
    // The binding learnt its run with that command; only a first contact that failed asks again here.
    return { incarnation: await this.serverIncarnation({}), location };
  }

  private publish(listing: TmuxSnapshot, incarnation: string): MuxSnapshot {
    const sessions = listing.sessions.toArray();
    const people = listing.clients.toArray().filter((client) => !client.clientControlMode && client.sessionId !== null);
    const anyoneLooking = people.length > 0;
    const front =
      people.sort((a, b) => b.clientActivity - a.clientActivity)[0]?.sessionId ??
      [...sessions].sort((a, b) => b.sessionActivity - a.sessionActivity)[0]?.sessionId;
    const tabs: { tabId: string; spaceId: string; number: number; nativeIndex: number; label: string; focused: boolean; size: { width: number; height: number } }[] = [];
    const panes: MuxPane[] = [];
    // tmux's own filler in the title slot is the host name, which is neither a label nor a
    // program's title. Asked once per listing rather than once per pane.
    const host = hostname();
    const isHostTitle = (title: string): boolean => title === host;
    for (const [index, session] of sessions.entries()) {
      const spaceId = tmuxIds.space(session.sessionId);
      for (const [position, link] of session.links().entries()) {
        const window = link.window();
        const tabId = tmuxIds.tab(window.windowId);
        // A window linked into several sessions is published under the first session listing it.
        if (tabs.some((tab) => tab.tabId === tabId)) continue;
        tabs.push({
          tabId,
          spaceId,
          number: position + 1,
          nativeIndex: link.windowIndex,
          label: window.windowName,
          focused: link.windowActive,
          size: { width: window.windowWidth, height: window.windowHeight },
        });
        for (const pane of window.panes()) {
          const paneId = tmuxIds.pane(pane.paneId);
          const hookState = hookStateOf(TMUX_AGENT_STATE_OPTIONS.map((name) => pane.userOption(name)));
          panes.push({
            paneId,
            spaceId,
            spaceLabel: session.sessionName,
            spaceNumber: index + 1,
            tabId,
            tabLabel: window.windowName,
            cwd: pane.paneCurrentPath ?? '',
            focused: anyoneLooking && pane.paneActive && link.windowActive,
            alive: !pane.paneDead,
            agent: 'shell',
            status: 'unknown',
            ...this.labels.split(paneId, pane.paneTitle, isHostTitle),
            foregroundCommand: pane.paneCurrentCommand ?? undefined,
            readableLines: pane.historySize + pane.paneHeight,
            ...(pane.panePid === null ? {} : { pid: pane.panePid }),
            ...(hookState === undefined ? {} : { hookState }),
            geometry: { x: pane.paneLeft, y: pane.paneTop, width: pane.paneWidth, height: pane.paneHeight },
          });
        }
      }
    }
    this.labels.retain(panes.map((pane) => pane.paneId));
    return withPublishedCounts(
      incarnation,
      sessions.map((session, index) => {
        const active = session.links().find((link) => link.windowActive);
        return {
          spaceId: tmuxIds.space(session.sessionId),
          number: index + 1,
          label: session.sessionName,
          focused: session.sessionId === front,
          activeTabId: active === undefined ? null : tmuxIds.tab(active.windowId),
        };
      }),
      tabs,
      panes,
    );
  }

  async refresh(): Promise<void> {
    await Promise.all([...this.watches].map((watch) => watch.refresh()));
  }

  watch(options: MuxWatchOptions): MuxWatch {
    const watch = new TmuxWatch(
      {
        census: async () => censusOf(await this.listing()),
        server: () => this.server(),
        nativePane: (paneId) => tmuxIds.nativePane(paneId),
        paneId: (native) => tmuxIds.pane(native),
      },
      options,
      this.resyncMs,
      (closed) => this.watches.delete(closed),
    );
    this.watches.add(watch);
    return watch;
  }

  translateKey(key: MuxKey): KeyTranslation {
    return toTmuxKey(key);
  }

  // ---- the verbs -------------------------------------------------------------------------

  async readGrid(paneId: string, request: MuxGridRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxGrid>> {
    const pane = this.native('pane', paneId);
    const deadline = this.deadline(options);
    const recent = request.scope === 'recent';
    const lines = request.lines ?? 1_000;
    const bytes = await this.tmux(
      (server) => server.pane(pane).capture({ escapes: request.styling === 'preserve', ...(recent ? { start: -lines } : {}), ...step(deadline) }),
      step(deadline),
    );
    // Rows below the last line written are blank padding, not content.
    let rows = bytes.toString('utf8').replace(/\n$/, '').split('\n');
    while (rows.length > 1 && rows[rows.length - 1]!.trim() === '') rows.pop();
    if (recent) rows = rows.slice(-lines);
    const text = rows.join('\n');
    return ok({ paneId, text, truncated: false, revision: this.revisions.revise(`${paneId} ${request.scope} ${request.styling}`, text) });
  }

  /** The visible screen, styled, with the pane's size and cursor, from one tmux invocation. */
  async readScreen(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxScreen>> {
    const pane = this.native('pane', paneId) as PaneId;
    const deadline = this.deadline(options);
    const reply = await this.tmux((server) => this.group(server, [['display-message', '-p', '-t', pane, SCREEN_GEOMETRY], captureArgs(pane, { escapes: true, trailingSpaces: true })], deadline), step(deadline));
    const out = reply.stdout.toString('utf8');
    const newline = out.indexOf('\n');
    const [shown, width, height, x, y, visible] = out.slice(0, newline).split(' ');
    if (newline === -1 || shown !== pane) return refusal('gone', `tmux has no pane ${paneId}`);
    const cursorX = wholeNumber(x);
    const cursorY = wholeNumber(y);
    const screen = visibleScreen(out.slice(newline + 1), {
      width: wholeNumber(width) ?? 0,
      height: wholeNumber(height) ?? 0,
      cursor: cursorX === null || cursorY === null ? null : { x: cursorX, y: cursorY, visible: visible === '1' },
      writtenSpacesKept: true,
    });
    return ok(Object.freeze({ paneId, ...screen }));
  }

  /** The pane's own program, its foreground command and, once it exited (a kept pane), its status, in one display. */
  async readProcess(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxPaneProcess>> {
    const pane = this.native('pane', paneId);
    const deadline = this.deadline(options);
    const display = async () => {
      const shown = await this.tmux((server) => server.pane(pane).display(PROCESS_FIELDS, step(deadline)), step(deadline));
      const [pidText, dead, status, signal, ...command] = shown.toString('utf8').split('\u001f');
      return { pid: wholeNumber(pidText), dead: dead === '1', status: wholeNumber(status), signalled: signal !== '', foreground: command.join('\u001f') };
    };
    let shown = await display();
    let exitStatus = shown.dead ? shown.status : null;
    // tmux marks a pane dead when its terminal closes, which can come before it reaps the program
    // (a moment on a busy machine, or a long while when it misses the exit). Until then the status
    // is the zombie's to read, or, once the program is past its exit, soon tmux's.
    const settle = Date.now() + EXIT_SETTLE_MS;
    while (shown.dead && exitStatus === null && !shown.signalled && shown.pid !== null) {
      exitStatus = await zombieExitStatus(shown.pid);
      if (exitStatus !== null || Date.now() >= settle || deadline.expired) break;
      await delay(EXIT_SETTLE_POLL_MS);
      shown = await display();
      exitStatus = shown.status;
    }
    return ok({ paneId, pid: shown.pid, foreground: shown.foreground, dead: shown.dead, exitStatus });
  }

  async typeText(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId) as PaneId;
    const deadline = this.deadline(options);
    if (Buffer.byteLength(text) <= SEND_KEYS_TEXT_BYTES) {
      await this.tmux((server) => this.group(server, [leaveModeArgs(pane), sendTextArgs(pane, text)], deadline), step(deadline));
      return ok(undefined);
    }
    // Not bracketed, and a separator of "\n" keeps line feeds as they are: the bytes arrive as if typed.
    await this.tmux((server) => pasteFromBuffer(server.pane(pane), text, { bracketed: false, separator: '\n', leaveMode: true, ...step(deadline) }), step(deadline));
    return ok(undefined);
  }

  /** paste-buffer -p from a buffer of its own; tmux turns each line feed into the carriage return a terminal pastes. */
  async pasteText(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    const deadline = this.deadline(options);
    await this.tmux((server) => pasteFromBuffer(server.pane(pane), text, { bracketed: true, leaveMode: true, ...step(deadline) }), step(deadline));
    return ok(undefined);
  }

  async sendKeys(paneId: string, keys: readonly string[], options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId) as PaneId;
    const deadline = this.deadline(options);
    await this.tmux((server) => this.group(server, [leaveModeArgs(pane), sendKeysArgs(pane, keys)], deadline), step(deadline));
    return ok(undefined);
  }

  /** tmux's one title slot; "" clears it. */
  async renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    await this.tmux((server) => server.pane(pane).setTitle(label ?? '', { timeoutMs: this.timeoutMs }));
    if (label === null) this.labels.forget(paneId);
    else this.labels.remember(paneId, label);
    return ok(undefined);
  }

  /**
   * split-window beside the pane, detached. A pane kept on exit is split running a placeholder,
   * told to remain on exit, and only then respawned with its program, in that order, so that
   * even a program that exits at once leaves its pane, its last lines and its status.
   */
  async splitPane(request: MuxSplitRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxCreatedPane>> {
    const beside = this.native('pane', request.besidePaneId) as PaneId;
    const deadline = this.deadline(options);
    return this.tmux(async (server) => {
      const hazard = await this.spawnHazard(server, deadline);
      if (hazard !== undefined) return refusal('refused', hazard);
      const direction = request.direction === 'right' ? 'horizontal' : 'vertical';
      const spawn = { cwd: request.cwd, ...withOwnPath(request.env, request.command) };
      const kept = request.keepOnExit === true && request.command !== undefined;
      const receipt = server.receipt(await server.command(splitArgs(beside, { direction, ...(kept ? { cwd: request.cwd, command: PLACEHOLDER } : spawn) }), { deadline }));
      const pane = receipt.pane.id as PaneId;
      if (request.keepOnExit === true) {
        const scope = { kind: 'pane', id: pane } as const;
        try {
          await this.group(server, [setOptionArgs(scope, 'remain-on-exit', 'on'), ...(kept ? [respawnPaneArgs(pane, { ...spawn, kill: true })] : [])], deadline);
        } catch (error) {
          if (!deadline.expired) await receipt.pane.kill(step(deadline)).catch(() => undefined);
          throw error;
        }
      }
      return ok(await this.created(server, receipt.session.id, receipt.window.id, pane, request.cwd, deadline));
    }, step(deadline));
  }

  /** Unsets the pane's own remain-on-exit, so the window's or server's setting decides again. */
  async releaseKeptPane(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId) as PaneId;
    const deadline = this.deadline(options);
    await this.tmux((server) => server.command(unsetOptionArgs({ kind: 'pane', id: pane }, 'remain-on-exit'), step(deadline)), step(deadline));
    return ok(undefined);
  }

  async closePane(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    const deadline = this.deadline(options);
    await this.tmux((server) => server.pane(pane).kill(step(deadline)), step(deadline));
    this.labels.forget(paneId);
    return ok(undefined);
  }

  /** resize-pane -x/-y: tmux takes the difference from the pane's neighbours and keeps every pane within the window. */
  async resizePane(paneId: string, size: MuxPaneSize, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    const deadline = this.deadline(options);
    await this.tmux((server) => server.pane(pane).resize({ width: size.width, height: size.height }, step(deadline)), step(deadline));
    return ok(undefined);
  }

  /**
   * Moves the window and the pane in one tmux invocation, and carries every attached
   * non-control client that shows another session, because a session's current window is
   * only on the screens attached to that session.
   */
  async setFocus(paneId: string): Promise<MuxOutcome<void>> {
    const native = this.native('pane', paneId);
    const listing = await this.listing();
    const pane = listing.panes.toArray().find((candidate) => candidate.paneId === native);
    if (pane === undefined) return refusal('gone', `tmux has no pane ${paneId}`);
    const link = pane.primaryLink();
    const commands: string[][] = [
      ['select-window', '-t', link.windowId],
      ['select-pane', '-t', native],
      ...listing.clients
        .toArray()
        .filter((client) => !client.clientControlMode && client.sessionId !== null && client.sessionId !== link.sessionId && client.clientTty !== null)
        .map((client) => ['switch-client', '-c', client.clientTty!, '-t', link.sessionId]),
    ];
    const group = await this.tmux((server) => server.runGroup(commands, { timeoutMs: this.timeoutMs }));
    if (!group.ok) {
      const message = group.result.stderrText().trim();
      return refusal(/can't find (window|pane)/.test(message) ? 'gone' : 'refused', `tmux could not focus ${paneId}: ${message}`);
    }
    return ok(undefined);
  }

  /**
   * tmux before 3.7 crashes the whole server when it spawns a window while the global
   * window-size is manual (tmux issue 4849), so that combination is refused with its remedy.
   */
  private async spawnHazard(server: Server, deadline: Deadline): Promise<string | undefined> {
    if (versionAtLeast(await server.version(step(deadline)), '3.7')) return undefined;
    const size = await server.options('global-window').getOrUndefined('window-size', step(deadline));
    if (size?.as('string') !== 'manual') return undefined;
    return 'this tmux (before 3.7) crashes when it creates a window while window-size is manual; run `tmux set -g window-size latest` first';
  }

  async createTab(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const session = this.native('space', request.spaceId);
    const deadline = this.deadline({});
    return this.tmux(async (server) => {
      const hazard = await this.spawnHazard(server, deadline);
      if (hazard !== undefined) return refusal('refused', hazard);
      const receipt = await server.session(session).newWindow({ receipt: true, name: request.label, cwd: request.cwd, ...step(deadline) });
      return ok(await this.created(server, receipt.session.id, receipt.window.id, receipt.pane.id, request.cwd, deadline));
    });
  }

  async createSpace(request: { label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const deadline = this.deadline({});
    return this.tmux(async (server) => {
      const hazard = await this.spawnHazard(server, deadline);
      if (hazard !== undefined) return refusal('refused', hazard);
      const receipt = await server.newSession({ receipt: true, name: request.label, cwd: request.cwd, ...step(deadline) });
      return ok(await this.created(server, receipt.session.id, receipt.window.id, receipt.pane.id, request.cwd, deadline));
    });
  }

  /**
   * A requested cwd is reported as asked: right after creation the pane's process may not have
   * changed into it yet, so tmux's current path can still be the server's own directory.
   */
  private async created(server: Server, session: string, window: string, pane: string, cwd: string | undefined, deadline: Deadline): Promise<MuxCreatedPane> {
    const [name, path] = (await server.pane(pane).display('#{session_name}\u001f#{pane_current_path}', step(deadline))).toString('utf8').split('\u001f');
    return { paneId: tmuxIds.pane(pane), spaceId: tmuxIds.space(session), spaceLabel: name ?? '', tabId: tmuxIds.tab(window), cwd: cwd ? resolve(cwd) : path?.trim() || '' };
  }

  async renameTab(tabId: string, label: string): Promise<MuxOutcome<void>> {
    const window = this.native('tab', tabId);
    await this.tmux((server) => server.window(window).rename(label, { timeoutMs: this.timeoutMs }));
    return ok(undefined);
  }

  /** Ends the session too when it was the session's last window, exactly as tmux does. */
  async closeTab(tabId: string): Promise<MuxOutcome<void>> {
    const window = this.native('tab', tabId);
    await this.tmux((server) => server.window(window).kill({ timeoutMs: this.timeoutMs }));
    return ok(undefined);
  }

  async close(): Promise<void> {
    for (const watch of [...this.watches]) watch.close();
    if (this.ownsBinding) await this.binding?.close().catch(() => undefined);
  }
}
