/**
 * The zellij adapter, over the `zellij` CLI (every call a process through src/process run()).
 * One adapter instance drives one session, because every zellij verb is scoped to one: its world
 * has exactly one space, with the constant id "session". Tabs are tab_<id> off zellij's stable
 * tab id; terminal panes keep zellij's terminal_<n>; plugin panes are dropped.
 *
 * zellij's one title slot is shared by rename-pane and the pane's program, so the labels this
 * adapter sets are remembered (rules.ts LabelMemory). A pane or tab that does not exist is only
 * learned from a listing, because zellij's actions exit 0 for it. The session is the configured
 * one, or the single running session; it is looked up again after zellij says it is gone.
 */
import { LimitError, LongLivedChild, run, SpawnError, TimeoutError, type RunResult } from '../../../process/index.js';
import { zellijDeclaration } from '../../capabilities.js';
import { ZellijError } from '../../errors.js';
import { zellijIds } from '../../identity.js';
import { toZellijKey, type MuxKey } from '../../keys.js';
import { LabelMemory, withPublishedCounts } from '../../rules.js';
import { ContentRevisions } from '../../revision.js';
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
  type MuxRefusal,
  type MuxSnapshot,
  type MuxWatch,
  type MuxWatchOptions,
} from '../../types.js';
import {
  censusSignature,
  closePaneArgs,
  closeTabArgs,
  dumpScreenArgs,
  isDefaultTitle,
  LIST_PANES,
  LIST_SESSIONS,
  LIST_TABS,
  MAX_TYPED_TEXT_BYTES,
  newTabArgs,
  parsePaneList,
  parseSessionList,
  parseTabList,
  renamePaneArgs,
  renameTabArgs,
  saysNoSession,
  SCROLL_BUFFER_LINES,
  sendKeysArgs,
  sessionArgs,
  subscribeArgs,
  writeCharsArgs,
  type ZellijPaneRecord,
  type ZellijTabRecord,
} from './protocol.js';
import { DEFAULT_CENSUS_INTERVALS, ZellijWatch, type Census, type CensusIntervals } from './watch.js';

export const ZELLIJ_DEFAULT_TIMEOUT_MS = 5_000;

export interface ZellijAdapterOptions {
  /** The session to drive; undefined means the single running session. */
  readonly session?: string;
  /** The zellij executable: a path, or a name looked up on the child's PATH. Defaults to "zellij". */
  readonly executable?: string;
  /** The environment of every zellij call; XDG_RUNTIME_DIR in it is how zellij finds its sessions. */
  readonly env?: NodeJS.ProcessEnv;
  readonly timeoutMs?: number;
  readonly census?: Partial<CensusIntervals>;
}

export class ZellijAdapter implements MuxAdapter {
  readonly mux = 'zellij' as const;
  readonly declaration;
  private readonly configured: string | undefined;
  private discovered: string | undefined;
  private readonly executable: string;
  private readonly env: NodeJS.ProcessEnv | undefined;
  private readonly timeoutMs: number;
  private readonly intervals: CensusIntervals;
  private readonly labels = new LabelMemory();
  private readonly watches = new Set<ZellijWatch>();
  private readonly revisions = new ContentRevisions();

  constructor(options: ZellijAdapterOptions = {}) {
    this.configured = options.session?.trim() || undefined;
    this.executable = options.executable ?? 'zellij';
    this.env = options.env;
    this.timeoutMs = options.timeoutMs ?? ZELLIJ_DEFAULT_TIMEOUT_MS;
    this.intervals = { ...DEFAULT_CENSUS_INTERVALS, ...options.census };
    this.declaration = zellijDeclaration(this.intervals.idleCeilingMs);
  }

  // ---- the transport ---------------------------------------------------------------------

  /** Runs `zellij ARGS`; every failure is a ZellijError carrying its refusal. */
  private async invoke(args: readonly string[], verb: string, session: string | undefined): Promise<RunResult> {
    let result: RunResult;
    try {
      result = await run([this.executable, ...args], { timeoutMs: this.timeoutMs, env: this.env });
    } catch (error) {
      if (error instanceof TimeoutError) {
        throw new ZellijError(`zellij did not answer \`${verb}\` within ${this.timeoutMs} ms and was killed; the machine may be too busy to start it`, { reason: 'unreachable', delivery: 'possibly_sent', cause: error });
      }
      if (error instanceof SpawnError) throw new ZellijError(`cannot run zellij (${this.executable}): ${error.message}`, { reason: 'unreachable', delivery: 'not_sent', cause: error });
      if (error instanceof LimitError) throw new ZellijError(`zellij \`${verb}\`: ${error.message}`, { reason: 'refused', delivery: error.delivery, cause: error });
      throw error;
    }
    if (result.exitCode === 0) return result;
    const stderr = result.stderrText().trim();
    if (saysNoSession(stderr)) {
      this.discovered = undefined;
      throw new ZellijError(noSessionMessage(session, stderr), { reason: 'unreachable', delivery: 'not_sent' });
    }
    throw new ZellijError(`zellij \`${verb}\` failed (exit ${result.exitCode ?? result.signal}): ${stderr || 'no message'}`, { reason: 'refused', delivery: 'observed' });
  }

  /** The session this instance drives: the configured one, else the single running one. */
  private async session(): Promise<string> {
    if (this.configured !== undefined) return this.configured;
    if (this.discovered !== undefined) return this.discovered;
    const listed = parseSessionList((await this.invoke(LIST_SESSIONS, 'list-sessions', undefined)).lossyText());
    const running = listed.filter((session) => session.running).map((session) => session.name);
    if (running.length === 1) {
      this.discovered = running[0];
      return running[0]!;
    }
    if (running.length === 0) throw new ZellijError('no zellij session is running on this machine', { reason: 'unreachable', delivery: 'not_sent' });
    throw new ZellijError(`${running.length} zellij sessions are running (${running.join(', ')}), so there is no single one to drive; name one in DROVER_MUX_ENDPOINT_ZELLIJ`, {
      reason: 'refused',
      delivery: 'not_sent',
    });
  }

  private async action(args: readonly string[], verb: string): Promise<string> {
    const session = await this.session();
    return (await this.invoke(sessionArgs(session, args), verb, session)).lossyText();
  }

  private async listPanes(): Promise<ZellijPaneRecord[]> {
    const panes = parsePaneList(await this.action(LIST_PANES, 'action list-panes'));
    if (panes === undefined) throw new ZellijError("zellij's pane listing was not the JSON listing drover asked for", { reason: 'unreachable', delivery: 'observed' });
    return panes;
  }

  private async listTabs(): Promise<ZellijTabRecord[]> {
    const tabs = parseTabList(await this.action(LIST_TABS, 'action list-tabs'));
    if (tabs === undefined) throw new ZellijError("zellij's tab listing was not the JSON listing drover asked for", { reason: 'unreachable', delivery: 'observed' });
    return tabs;
  }

  /** The pane's number, or `gone` when no fresh listing carries it (zellij's actions would exit 0 and do nothing). */
  private async livePane(paneId: string): Promise<number | MuxRefusal> {
    const number = zellijIds.paneNumber(paneId);
    if (number !== undefined && (await this.listPanes()).some((pane) => pane.paneNumber === number)) return number;
    return refusal('gone', `zellij has no pane ${paneId}`);
  }

  private async liveTab(tabId: string): Promise<number | MuxRefusal> {
    const number = zellijIds.tabNumber(tabId);
    if (number !== undefined && (await this.listTabs()).some((tab) => tab.tabNumber === number)) return number;
    return refusal('gone', `zellij has no tab ${tabId}`);
  }

  // ---- the floor -------------------------------------------------------------------------

  async reachable(): Promise<boolean> {
    try {
      await this.listPanes();
      return true;
    } catch {
      return false;
    }
  }

  async snapshot(): Promise<MuxSnapshot> {
    // Sequential on purpose: zellij answers concurrent listings with empty output.
    const records = await this.listPanes();
    const tabs = await this.listTabs();
    const session = await this.session();
    const tabByNumber = new Map(tabs.map((tab) => [tab.tabNumber, tab]));
    const activeTab = tabs.find((tab) => tab.active);
    const panes: MuxPane[] = [];
    for (const record of records) {
      const tab = tabByNumber.get(record.tabNumber);
      if (tab === undefined) continue;
      const paneId = zellijIds.pane(record.paneNumber);
      panes.push({
        paneId,
        spaceId: zellijIds.SPACE,
        spaceLabel: session,
        spaceNumber: 1,
        tabId: zellijIds.tab(tab.tabNumber),
        tabLabel: tab.name,
        cwd: record.cwd,
        // is_focused is per tab; only the active tab's pane is on a screen, and a detached session has no active tab.
        focused: record.focusedInTab && tab.active,
        alive: !record.exited,
        agent: 'shell',
        status: 'unknown',
        ...this.labels.split(paneId, record.title, isDefaultTitle),
        foregroundCommand: record.command === '' ? undefined : record.command,
        readableLines: record.rows + SCROLL_BUFFER_LINES,
      });
    }
    this.labels.retain(panes.map((pane) => pane.paneId));
    return withPublishedCounts(
      [{ spaceId: zellijIds.SPACE, number: 1, label: session, focused: activeTab !== undefined, activeTabId: activeTab === undefined ? null : zellijIds.tab(activeTab.tabNumber) }],
      tabs.map((tab) => ({ tabId: zellijIds.tab(tab.tabNumber), spaceId: zellijIds.SPACE, number: tab.position + 1, label: tab.name, focused: tab.active })),
      panes,
    );
  }

  async refresh(): Promise<void> {
    await Promise.all([...this.watches].map((watch) => watch.refresh()));
  }

  watch(options: MuxWatchOptions): MuxWatch {
    const watch = new ZellijWatch(
      {
        census: () => this.census(),
        subscribe: async (paneIds) => {
          const session = await this.session();
          return LongLivedChild.start([this.executable, ...sessionArgs(session, subscribeArgs(paneIds))], { env: this.env, stdin: 'ignore' });
        },
      },
      options,
      this.intervals,
      this.timeoutMs,
      (closed) => this.watches.delete(closed),
    );
    this.watches.add(watch);
    return watch;
  }

  private async census(): Promise<Census> {
    const panes = await this.listPanes();
    const tabs = await this.listTabs();
    return { signature: censusSignature(panes, tabs), paneIds: new Set(panes.map((pane) => zellijIds.pane(pane.paneNumber))) };
  }

  translateKey(key: MuxKey): KeyTranslation {
    return toZellijKey(key);
  }

  // ---- the verbs -------------------------------------------------------------------------

  async readGrid(paneId: string, request: MuxGridRequest): Promise<MuxOutcome<MuxGrid>> {
    const live = await this.livePane(paneId);
    if (typeof live !== 'number') return live;
    const recent = request.scope === 'recent';
    const stdout = await this.action(dumpScreenArgs(paneId, request.styling === 'preserve', recent), 'action dump-screen');
    let lines = stdout.replace(/\n$/, '').split('\n');
    if (recent && request.lines !== undefined) lines = lines.slice(-request.lines);
    const text = lines.join('\n');
    return ok({ paneId, text, truncated: false, revision: this.revisions.revise(`${paneId} ${request.scope} ${request.styling}`, text) });
  }

  async typeText(paneId: string, text: string): Promise<MuxOutcome<void>> {
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_TYPED_TEXT_BYTES) {
      return refusal('refused', `zellij takes typed text as one command argument; ${bytes} bytes is over the ${MAX_TYPED_TEXT_BYTES}-byte limit of one argument, and drover does not split a message`);
    }
    const live = await this.livePane(paneId);
    if (typeof live !== 'number') return live;
    await this.action(writeCharsArgs(paneId, text), 'action write-chars');
    return ok(undefined);
  }

  async sendKeys(paneId: string, keys: readonly string[]): Promise<MuxOutcome<void>> {
    const live = await this.livePane(paneId);
    if (typeof live !== 'number') return live;
    await this.action(sendKeysArgs(paneId, keys), 'action send-keys');
    return ok(undefined);
  }

  async renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>> {
    const live = await this.livePane(paneId);
    if (typeof live !== 'number') return live;
    await this.action(renamePaneArgs(paneId, label ?? ''), 'action rename-pane');
    if (label === null) this.labels.forget(paneId);
    else this.labels.remember(paneId, label);
    return ok(undefined);
  }

  async closePane(paneId: string): Promise<MuxOutcome<void>> {
    const live = await this.livePane(paneId);
    if (typeof live !== 'number') return live;
    await this.action(closePaneArgs(paneId), 'action close-pane');
    this.labels.forget(paneId);
    return ok(undefined);
  }

  async createTab(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    if (request.spaceId !== zellijIds.SPACE) return refusal('gone', `zellij has one space, ${zellijIds.SPACE}; there is no space ${request.spaceId}`);
    const printed = (await this.action(newTabArgs(request.label, request.cwd), 'action new-tab')).trim();
    if (!/^\d+$/.test(printed)) return refusal('refused', `zellij new-tab printed ${JSON.stringify(printed)} where a tab id was expected`);
    const tabNumber = Number(printed);
    const inTab = (await this.listPanes()).filter((pane) => pane.tabNumber === tabNumber);
    const pane = inTab.find((candidate) => candidate.focusedInTab) ?? inTab[0];
    if (pane === undefined) return refusal('refused', `zellij created tab ${tabNumber} but its listing shows no pane in it`);
    return ok({
      paneId: zellijIds.pane(pane.paneNumber),
      spaceId: zellijIds.SPACE,
      spaceLabel: await this.session(),
      tabId: zellijIds.tab(tabNumber),
      cwd: pane.cwd || (request.cwd ?? ''),
    });
  }

  async renameTab(tabId: string, label: string): Promise<MuxOutcome<void>> {
    const live = await this.liveTab(tabId);
    if (typeof live !== 'number') return live;
    await this.action(renameTabArgs(live, label), 'action rename-tab-by-id');
    return ok(undefined);
  }

  async closeTab(tabId: string): Promise<MuxOutcome<void>> {
    const live = await this.liveTab(tabId);
    if (typeof live !== 'number') return live;
    await this.action(closeTabArgs(live), 'action close-tab-by-id');
    return ok(undefined);
  }

  async close(): Promise<void> {
    for (const watch of [...this.watches]) watch.close();
  }
}

function noSessionMessage(session: string | undefined, stderr: string): string {
  if (/there is no active session/i.test(stderr)) {
    return `the zellij session ${JSON.stringify(session)} has exited; attach to it once to bring it back (drover does not resurrect sessions)`;
  }
  if (stderr.includes('No active zellij sessions')) return 'no zellij session is running on this machine';
  return `no running zellij session is called ${JSON.stringify(session)}`;
}
