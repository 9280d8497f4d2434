/**
 * The herdr adapter: workspace → space, tab → tab, pane → pane, ids carried unchanged.
 * Every read is a fresh RPC and the watch is a real event stream, so refresh() has nothing to do.
 * herdr has two title slots (label is the operator's, terminal_title the program's), so pane
 * naming needs no memory here.
 *
 * Incarnation: herdr mints ids from counters it keeps across a restart and never hands an id
 * out twice, so a restarted herdr serves the same panes under the same ids. What a pane id
 * belongs to is therefore the herdr session (the socket it listens on), not one run of its
 * process: the incarnation is a digest of the socket's absolute path, the same before and after
 * a restart and different for every session, and learning it asks herdr nothing. A session
 * whose saved state was deleted would count from the start again under the same incarnation;
 * nothing herdr's socket answers (ping and session.snapshot carry only a version) would tell.
 *
 * A pane is split off with pane.split and its program typed into its shell with pane.run
 * (herdr starts no argv of its own): `exec`, so the pane ends with its program, unless the
 * pane is kept on exit, when the shell stays with the program's last lines.
 */
import { createHash } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DroverError, shellCommandLine } from '../../../process/index.js';
import { HERDR_DECLARATION } from '../../capabilities.js';
import { HerdrError, MuxError } from '../../errors.js';
import { toHerdrKey, type MuxKey } from '../../keys.js';
import { withPublishedCounts } from '../../rules.js';
import { visibleRows } from '../../screen.js';
import {
  ok,
  refusal,
  type KeyTranslation,
  type MuxAdapter,
  type MuxCallOptions,
  type MuxCreatedPane,
  type MuxGrid,
  type MuxGridRequest,
  type MuxOpenedWorktree,
  type MuxOutcome,
  type MuxPane,
  type MuxPaneSize,
  type MuxScreen,
  type MuxSession,
  type MuxSnapshot,
  type MuxSplitRequest,
  type MuxWatch,
  type MuxWatchOptions,
  type MuxWorktree,
  AGENT_STATUSES,
  type AgentStatus,
} from '../../types.js';
import { HERDR_DEFAULT_TIMEOUT_MS, HerdrClient, type HerdrRequestOptions, type HerdrStream } from './client.js';
import { layoutGeometry, ratioStep } from './layout.js';
import { HERDR_SOCKET_FILE, herdrConfigRoot } from './paths.js';
import type { HerdrEvent, HerdrPaneInfo, HerdrSubscription, HerdrWorkspaceInfo } from './protocol.js';

export interface HerdrAdapterOptions {
  readonly socketPath: string;
  /** Per-request deadline; defaults to 5 s. */
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
  /** Where named sessions live, for listSessions; defaults to herdr's config root. */
  readonly configRoot?: string;
}

/** Structure events: each means "re-read the snapshot". */
const TOPOLOGY_SUBSCRIPTIONS: readonly HerdrSubscription[] = [
  'workspace.created',
  'workspace.renamed',
  'workspace.moved',
  'workspace.closed',
  'workspace.focused',
  'tab.created',
  'tab.closed',
  'tab.renamed',
  'tab.moved',
  'tab.focused',
  'pane.created',
  'pane.closed',
  'pane.moved',
  'pane.exited',
  'pane.focused',
].map((type) => ({ type }));

function agentStatus(value: unknown): AgentStatus {
  return (AGENT_STATUSES as readonly unknown[]).includes(value) ? (value as AgentStatus) : 'unknown';
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function createdPane(workspace: HerdrWorkspaceInfo, pane: HerdrPaneInfo): MuxCreatedPane {
  return { paneId: pane.pane_id, spaceId: workspace.workspace_id, spaceLabel: workspace.label, tabId: pane.tab_id, cwd: pane.cwd ?? '' };
}

/** The incarnation of the herdr session listening at a socket (see the header). */
function herdrIncarnation(socketPath: string): string {
  return createHash('sha256').update(resolve(socketPath)).digest('hex').slice(0, 16);
}

/** One deadline over the requests of one call, each given what is left of it. */
function budget(options: MuxCallOptions, defaultMs: number): () => HerdrRequestOptions {
  const until = performance.now() + (options.timeoutMs ?? defaultMs);
  return () => {
    const timeoutMs = Math.floor(until - performance.now());
    if (timeoutMs <= 0) throw new HerdrError(`herdr did not finish the call within ${options.timeoutMs ?? defaultMs} ms`, { reason: 'unreachable', phase: 'admit', delivery: 'not_sent' });
    return { timeoutMs, signal: options.signal };
  };
}

async function isSocket(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

export class HerdrAdapter implements MuxAdapter {
  readonly mux = 'herdr' as const;
  readonly declaration = HERDR_DECLARATION;
  readonly client: HerdrClient;
  private readonly configRoot: string;
  private readonly timeoutMs: number;
  private readonly incarnation: string;
  /** The socket this adapter drives, resolved: which of the listed sessions is its own. */
  private readonly socketPath: string;
  private readonly streams = new Set<HerdrStream>();

  constructor(options: HerdrAdapterOptions) {
    this.client = new HerdrClient(options);
    this.configRoot = options.configRoot ?? herdrConfigRoot();
    this.timeoutMs = options.timeoutMs ?? HERDR_DEFAULT_TIMEOUT_MS;
    this.incarnation = herdrIncarnation(options.socketPath);
    this.socketPath = resolve(options.socketPath);
  }

  async serverIncarnation(): Promise<string> {
    return this.incarnation;
  }

  async reachable(): Promise<boolean> {
    try {
      await this.client.ping();
      return true;
    } catch {
      return false;
    }
  }

  async snapshot(options: MuxCallOptions): Promise<MuxSnapshot> {
    const world = await this.client.sessionSnapshot(options);
    const workspaces = new Map(world.workspaces.map((workspace) => [workspace.workspace_id, workspace]));
    const tabs = new Map(world.tabs.map((tab) => [tab.tab_id, tab]));
    const layouts = new Map((Array.isArray(world.layouts) ? world.layouts : []).map((layout) => [layout.tab_id, layoutGeometry(layout)]));
    const focusedWorkspace = world.focused_workspace_id ?? world.workspaces.find((workspace) => workspace.focused)?.workspace_id;
    const panes: MuxPane[] = world.panes.map((pane) => {
      const workspace = workspaces.get(pane.workspace_id);
      const scroll = pane.scroll;
      return {
        paneId: pane.pane_id,
        spaceId: pane.workspace_id,
        spaceLabel: workspace?.label ?? '',
        spaceNumber: workspace?.number ?? 0,
        tabId: pane.tab_id,
        tabLabel: tabs.get(pane.tab_id)?.label,
        cwd: pane.cwd ?? '',
        focused: pane.focused === true,
        alive: true,
        agent: (nonEmpty(pane.agent) ?? 'shell').toLowerCase(),
        status: agentStatus(pane.agent_status),
        paneLabel: nonEmpty(pane.label),
        terminalTitle: nonEmpty(pane.terminal_title),
        readableLines: scroll ? scroll.max_offset_from_bottom + scroll.viewport_rows : undefined,
        agentSession: pane.agent_session ?? undefined,
        geometry: layouts.get(pane.tab_id)?.panes.get(pane.pane_id),
      };
    });
    return withPublishedCounts(
      this.incarnation,
      world.workspaces.map((workspace) => ({
        spaceId: workspace.workspace_id,
        number: workspace.number,
        label: workspace.label,
        focused: workspace.workspace_id === focusedWorkspace,
        activeTabId: nonEmpty(workspace.active_tab_id) ?? null,
        repoRoot: workspace.worktree?.repo_root,
        isWorktree: workspace.worktree ? workspace.worktree.is_linked_worktree : undefined,
      })),
      world.tabs.map((tab) => ({ tabId: tab.tab_id, spaceId: tab.workspace_id, number: tab.number, label: tab.label, focused: tab.focused === true, size: layouts.get(tab.tab_id)?.size })),
      panes,
    );
  }

  async refresh(): Promise<void> {
    // Every snapshot() is a fresh RPC and the watch a live stream: there is no clock to move.
  }

  watch(options: MuxWatchOptions): MuxWatch {
    let closed = false;
    let stream: HerdrStream | undefined;
    const subscriptions = [
      ...TOPOLOGY_SUBSCRIPTIONS,
      ...(options.panes ?? []).map((paneId) => ({ type: 'pane.agent_status_changed', pane_id: paneId })),
    ];
    const watched = new Set(options.panes ?? []);
    const onEvent = (event: HerdrEvent): void => {
      const paneId = event.data.pane_id;
      if (event.event === 'pane_agent_status_changed') {
        if (typeof paneId === 'string' && watched.has(paneId)) options.onPaneChange?.(paneId);
        return;
      }
      options.onTopologyChange?.();
    };
    this.client
      .subscribe(subscriptions, {
        onEvent,
        onClose: (reason) => {
          if (stream !== undefined) this.streams.delete(stream);
          if (!closed) options.onDown?.(reason);
        },
      })
      .then(
        (opened) => {
          if (closed) {
            opened.close();
            return;
          }
          stream = opened;
          this.streams.add(opened);
          options.onUp?.();
        },
        (error: Error) => {
          if (!closed) options.onDown?.(error.message);
        },
      );
    return {
      close: () => {
        closed = true;
        if (stream !== undefined) {
          this.streams.delete(stream);
          stream.close();
        }
      },
    };
  }

  translateKey(key: MuxKey): KeyTranslation {
    return toHerdrKey(key);
  }

  async readGrid(paneId: string, request: MuxGridRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxGrid>> {
    const read = await this.client.paneRead(
      paneId,
      {
        source: request.scope === 'viewport' ? 'visible' : 'recent',
        format: request.styling === 'preserve' ? 'ansi' : 'text',
        lines: request.lines,
      },
      options,
    );
    return ok({ paneId, text: read.text, truncated: read.truncated === true, revision: `${read.revision}` });
  }

  /** herdr reports neither a pane's size nor its cursor: the visible rows are the screen. */
  async readScreen(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxScreen>> {
    const read = await this.client.paneRead(paneId, { source: 'visible', format: 'ansi' }, options);
    return ok(Object.freeze({ paneId, ...visibleRows(read.text) }));
  }

  async typeText(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    await this.client.paneSendText(paneId, text, options);
    return ok(undefined);
  }

  async sendKeys(paneId: string, keys: readonly string[], options: MuxCallOptions): Promise<MuxOutcome<void>> {
    await this.client.paneSendKeys(paneId, keys, options);
    return ok(undefined);
  }

  async renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>> {
    await this.client.paneRename(paneId, label);
    return ok(undefined);
  }

  /**
   * A split that cannot be completed is closed again, with what is left of the budget, and the
   * failure reported says whether that close succeeded.
   */
  async splitPane(request: MuxSplitRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxCreatedPane>> {
    const next = budget(options, this.timeoutMs);
    const pane = await this.client.paneSplit(
      { target_pane_id: request.besidePaneId, direction: request.direction === 'right' ? 'right' : 'down', cwd: request.cwd, env: request.env === undefined ? undefined : { ...request.env }, focus: false },
      next(),
    );
    try {
      const workspace = await this.client.workspaceGet(pane.workspace_id, next());
      if (request.command !== undefined) {
        const line = shellCommandLine(request.command);
        await this.client.paneRun(pane.pane_id, request.keepOnExit === true ? line : `exec ${line}`, next());
      }
      return ok(createdPane(workspace, pane));
    } catch (error) {
      let fate = 'closed again';
      try {
        await this.client.paneClose(pane.pane_id, next());
      } catch (closeError) {
        fate = `left open: closing it failed: ${(closeError as Error).message}`;
      }
      // The failure that stopped the split is the one reported, saying what became of its pane.
      throw new HerdrError(`herdr could not finish the new pane ${pane.pane_id} (${fate}): ${(error as Error).message}`, {
        reason: error instanceof MuxError ? error.reason : 'unreachable',
        delivery: error instanceof DroverError ? error.delivery : 'possibly_sent',
        cause: error,
      });
    }
  }

  /** A kept pane's program was typed into its shell, which stays whatever drover asks now. */
  async releaseKeptPane(paneId: string): Promise<MuxOutcome<void>> {
    return refusal('refused', `herdr cannot let pane ${paneId} close when its program exits: the program was typed into the pane's shell, which stays`);
  }

  async closePane(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    await this.client.paneClose(paneId, options);
    return ok(undefined);
  }

  /** Each axis asked for: the tab's layout read afresh, then the one ratio move that gives the pane that size. */
  async resizePane(paneId: string, size: MuxPaneSize, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const next = budget(options, this.timeoutMs);
    for (const axis of ['width', 'height'] as const) {
      const cells = size[axis];
      if (cells === undefined) continue;
      const step = ratioStep(await this.client.paneLayout(paneId, next()), paneId, axis, cells);
      if (step === undefined) return refusal('gone', `herdr's layout of its tab has no pane ${paneId}`);
      if (step !== null) await this.client.paneResize(paneId, step.direction, step.amount, next());
    }
    return ok(undefined);
  }

  /** One call moves the focused pane, tab and workspace together. */
  async setFocus(paneId: string): Promise<MuxOutcome<void>> {
    await this.client.paneFocus(paneId);
    return ok(undefined);
  }

  async createTab(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const { rootPane } = await this.client.tabCreate({ workspace_id: request.spaceId, label: request.label, cwd: request.cwd });
    const workspace = await this.client.workspaceGet(rootPane.workspace_id);
    return ok(createdPane(workspace, rootPane));
  }

  async renameTab(tabId: string, label: string): Promise<MuxOutcome<void>> {
    await this.client.tabRename(tabId, label);
    return ok(undefined);
  }

  async closeTab(tabId: string): Promise<MuxOutcome<void>> {
    await this.client.tabClose(tabId);
    return ok(undefined);
  }

  async createSpace(request: { label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const { workspace, rootPane } = await this.client.workspaceCreate({ label: request.label, cwd: request.cwd });
    return ok(createdPane(workspace, rootPane));
  }

  async listWorktrees(request: { repoRoot: string }): Promise<MuxOutcome<readonly MuxWorktree[]>> {
    const worktrees = await this.client.worktreeList(request.repoRoot);
    return ok(
      worktrees.map((worktree) => ({
        path: worktree.path,
        branch: worktree.branch ?? null,
        openSpaceId: worktree.open_workspace_id ?? null,
        linked: worktree.is_linked_worktree === true,
        prunable: worktree.is_prunable === true,
      })),
    );
  }

  /** Not atomic in herdr: a failed open can leave the checkout behind; openWorktree recovers it. */
  async createWorktree(request: { repoRoot: string; branch: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    const { workspace, rootPane } = await this.client.worktreeCreate(request.repoRoot, request.branch);
    return ok(createdPane(workspace, rootPane));
  }

  /** Asking for a checkout that is already open is an answer (alreadyOpen), not a refusal. */
  async openWorktree(request: { repoRoot: string; path: string }): Promise<MuxOutcome<MuxOpenedWorktree>> {
    const opened = await this.client.worktreeOpen(request.repoRoot, request.path);
    return ok({ pane: createdPane(opened.workspace, opened.rootPane), alreadyOpen: opened.alreadyOpen });
  }

  /** One directory listing, off the socket: a stopped session removes its socket file. */
  async listSessions(): Promise<MuxOutcome<readonly MuxSession[]>> {
    const sessions: MuxSession[] = [];
    const defaultSocket = join(this.configRoot, HERDR_SOCKET_FILE);
    const session = (name: string, endpoint: string): MuxSession => ({ name, endpoint, current: resolve(endpoint) === this.socketPath });
    if (await isSocket(defaultSocket)) sessions.push(session('default', defaultSocket));
    let names: string[];
    try {
      names = await readdir(join(this.configRoot, 'sessions'));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok(sessions);
      return refusal('refused', `cannot list herdr sessions in ${this.configRoot}: ${(error as Error).message}`);
    }
    for (const name of names.sort()) {
      const endpoint = join(this.configRoot, 'sessions', name, HERDR_SOCKET_FILE);
      if (await isSocket(endpoint)) sessions.push(session(name, endpoint));
    }
    return ok(sessions);
  }

  async close(): Promise<void> {
    for (const stream of this.streams) stream.close();
    this.streams.clear();
  }
}
