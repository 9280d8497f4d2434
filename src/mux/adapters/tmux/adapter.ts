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
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import {
  CommandError,
  Endpoint,
  pasteFromBuffer,
  Server,
  ServerUnreachableError,
  TargetNotFoundError,
  versionAtLeast,
  type Snapshot as TmuxSnapshot,
} from '../../../tmux/index.js';
import { DroverError } from '../../../process/index.js';
import { TMUX_DECLARATION } from '../../capabilities.js';
import { TmuxMuxError } from '../../errors.js';
import { tmuxIds } from '../../identity.js';
import { toTmuxKey, type MuxKey } from '../../keys.js';
import { ContentRevisions } from '../../revision.js';
import { LabelMemory, withPublishedCounts } from '../../rules.js';
import {
  ok,
  refusal,
  type KeyTranslation,
  type MuxAdapter,
  type MuxCreatedPane,
  type MuxGrid,
  type MuxGridRequest,
  type MuxOutcome,
  type MuxPane,
  type MuxSnapshot,
  type MuxWatch,
  type MuxWatchOptions,
} from '../../types.js';
import { TmuxWatch, structureSignature } from './watch.js';

export const TMUX_RESYNC_MS = 5_000;
/** Text up to this size is typed with send-keys -l; longer text goes through a paste buffer (tmux caps one command's size). */
const SEND_KEYS_TEXT_BYTES = 8 * 1024;

export interface TmuxAdapterOptions {
  /** A binding the caller opened and closes; or else `endpoint`, opened on first use. */
  readonly server?: Server;
  readonly endpoint?: Endpoint;
  readonly timeoutMs?: number;
  /** The watch's resync backstop. */
  readonly resyncMs?: number;
}

/** tmux's own filler in the title slot is the host name, which is neither a label nor a program's title. */
function isHostTitle(title: string): boolean {
  return title === hostname();
}

export class TmuxAdapter implements MuxAdapter {
  readonly mux = 'tmux' as const;
  readonly declaration = TMUX_DECLARATION;
  private binding: Server | undefined;
  private readonly ownsBinding: boolean;
  private readonly endpoint: Endpoint | undefined;
  private readonly timeoutMs: number | undefined;
  private readonly resyncMs: number;
  private readonly labels = new LabelMemory();
  private readonly revisions = new ContentRevisions();
  private readonly watches = new Set<TmuxWatch>();

  constructor(options: TmuxAdapterOptions) {
    if ((options.server === undefined) === (options.endpoint === undefined)) throw new TypeError('a tmux adapter needs exactly one of server or endpoint');
    this.binding = options.server;
    this.ownsBinding = options.server === undefined;
    this.endpoint = options.endpoint;
    this.timeoutMs = options.timeoutMs;
    this.resyncMs = options.resyncMs ?? TMUX_RESYNC_MS;
  }

  /** The binding, opened on first use; a binding that lost its server is dropped so the next call opens afresh. */
  private async server(): Promise<Server> {
    if (this.binding !== undefined && !this.binding.isClosed) return this.binding;
    if (!this.ownsBinding) throw new TmuxMuxError('the tmux binding this adapter was given is closed', { reason: 'unreachable', delivery: 'not_sent' });
    try {
      this.binding = await Server.open(this.endpoint!);
    } catch (error) {
      throw this.failure(error);
    }
    return this.binding;
  }

  /** The refusal a tmux failure stands for, as a TmuxMuxError. */
  private failure(error: unknown): unknown {
    if (error instanceof TmuxMuxError || !(error instanceof DroverError)) return error;
    if (error instanceof ServerUnreachableError) {
      if (this.ownsBinding) {
        void this.binding?.close().catch(() => undefined);
        this.binding = undefined;
      }
      return new TmuxMuxError(error.message, { reason: 'unreachable', delivery: error.delivery, cause: error });
    }
    if (error instanceof TargetNotFoundError) return new TmuxMuxError(`tmux has no ${error.target}`, { reason: 'gone', delivery: 'observed', cause: error });
    if (error instanceof CommandError) return new TmuxMuxError(error.message, { reason: 'refused', delivery: error.delivery, cause: error });
    return new TmuxMuxError(error.message, { reason: 'unreachable', delivery: error.delivery, cause: error });
  }

  /** Runs one operation against the binding, with every tmux failure classified. */
  private async tmux<T>(operation: (server: Server) => Promise<T>): Promise<T> {
    const server = await this.server();
    try {
      return await operation(server);
    } catch (error) {
      throw this.failure(error);
    }
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

  /** One listing of the whole server. */
  private listing(): Promise<TmuxSnapshot> {
    return this.tmux((server) => server.snapshot({ clients: true, timeoutMs: this.timeoutMs }));
  }

  async snapshot(): Promise<MuxSnapshot> {
    return this.publish(await this.listing());
  }

  private publish(listing: TmuxSnapshot): MuxSnapshot {
    const sessions = listing.sessions.toArray();
    const people = listing.clients.toArray().filter((client) => !client.clientControlMode && client.sessionId !== null);
    const anyoneLooking = people.length > 0;
    const front =
      people.sort((a, b) => b.clientActivity - a.clientActivity)[0]?.sessionId ??
      [...sessions].sort((a, b) => b.sessionActivity - a.sessionActivity)[0]?.sessionId;
    const tabs: { tabId: string; spaceId: string; number: number; label: string; focused: boolean }[] = [];
    const panes: MuxPane[] = [];
    for (const [index, session] of sessions.entries()) {
      const spaceId = tmuxIds.space(session.sessionId);
      for (const [position, link] of session.links().entries()) {
        const window = link.window();
        const tabId = tmuxIds.tab(window.windowId);
        // A window linked into several sessions is published under the first session listing it.
        if (tabs.some((tab) => tab.tabId === tabId)) continue;
        tabs.push({ tabId, spaceId, number: position + 1, label: window.windowName, focused: link.windowActive });
        for (const pane of window.panes()) {
          const paneId = tmuxIds.pane(pane.paneId);
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
          });
        }
      }
    }
    this.labels.retain(panes.map((pane) => pane.paneId));
    return withPublishedCounts(
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
        census: async () => structureSignature(await this.listing()),
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

  async readGrid(paneId: string, request: MuxGridRequest): Promise<MuxOutcome<MuxGrid>> {
    const pane = this.native('pane', paneId);
    const recent = request.scope === 'recent';
    const lines = request.lines ?? 1_000;
    const bytes = await this.tmux((server) =>
      server.pane(pane).capture({ escapes: request.styling === 'preserve', ...(recent ? { start: -lines } : {}), timeoutMs: this.timeoutMs }),
    );
    // Rows below the last line written are blank padding, not content.
    let rows = bytes.toString('utf8').replace(/\n$/, '').split('\n');
    while (rows.length > 1 && rows[rows.length - 1]!.trim() === '') rows.pop();
    if (recent) rows = rows.slice(-lines);
    const text = rows.join('\n');
    return ok({ paneId, text, truncated: false, revision: this.revisions.revise(`${paneId} ${request.scope} ${request.styling}`, text) });
  }

  async typeText(paneId: string, text: string): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    if (Buffer.byteLength(text) <= SEND_KEYS_TEXT_BYTES) {
      await this.tmux((server) => server.pane(pane).sendText(text, { timeoutMs: this.timeoutMs }));
      return ok(undefined);
    }
    // Not bracketed, and a separator of "\n" keeps line feeds as they are: the bytes arrive as if typed.
    await this.tmux((server) => pasteFromBuffer(server.pane(pane), text, { bracketed: false, separator: '\n', timeoutMs: this.timeoutMs }));
    return ok(undefined);
  }

  /** paste-buffer -p from a buffer of its own; tmux turns each line feed into the carriage return a terminal pastes. */
  async pasteText(paneId: string, text: string): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    await this.tmux((server) => pasteFromBuffer(server.pane(pane), text, { bracketed: true, timeoutMs: this.timeoutMs }));
    return ok(undefined);
  }

  async sendKeys(paneId: string, keys: readonly string[]): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    await this.tmux((server) => server.pane(pane).sendKeys(keys, { timeoutMs: this.timeoutMs }));
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

  async closePane(paneId: string): Promise<MuxOutcome<void>> {
    const pane = this.native('pane', paneId);
    await this.tmux((server) => server.pane(pane).kill({ timeoutMs: this.timeoutMs }));
    this.labels.forget(paneId);
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
  private async spawnHazard(server: Server): Promise<string | undefined> {
    if (versionAtLeast(await server.version({ timeoutMs: this.timeoutMs }), '3.7')) return undefined;
    const size = await server.options('global-window').getOrUndefined('window-size', { timeoutMs: this.timeoutMs });
    if (size?.as('string') !== 'manual') return undefined;
    return 'this tmux (before 3.7) crashes when it creates a window while window-size is manual; run `tmux set -g window-size latest` first';
  }

  async createTab(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const session = this.native('space', request.spaceId);
    return this.tmux(async (server) => {
      const hazard = await this.spawnHazard(server);
      if (hazard !== undefined) return refusal('refused', hazard);
      const receipt = await server.session(session).newWindow({ receipt: true, name: request.label, cwd: request.cwd, timeoutMs: this.timeoutMs });
      return ok(await this.created(server, receipt.session.id, receipt.window.id, receipt.pane.id, request.cwd));
    });
  }

  async createSpace(request: { label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    return this.tmux(async (server) => {
      const hazard = await this.spawnHazard(server);
      if (hazard !== undefined) return refusal('refused', hazard);
      const receipt = await server.newSession({ receipt: true, name: request.label, cwd: request.cwd, timeoutMs: this.timeoutMs });
      return ok(await this.created(server, receipt.session.id, receipt.window.id, receipt.pane.id, request.cwd));
    });
  }

  /**
   * A requested cwd is reported as asked: right after creation the pane's process may not have
   * changed into it yet, so tmux's current path can still be the server's own directory.
   */
  private async created(server: Server, session: string, window: string, pane: string, cwd: string | undefined): Promise<MuxCreatedPane> {
    const [name, path] = (await server.pane(pane).display('#{session_name}\u001f#{pane_current_path}', { timeoutMs: this.timeoutMs })).toString('utf8').split('\u001f');
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
