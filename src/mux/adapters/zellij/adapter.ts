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
 *
 * Incarnation: a zellij session started again under the same name (killed and started, or
 * resurrected) numbers its panes from terminal_0 again, so the adapter answers for one run of
 * its session, told by when zellij created it. list-sessions prints only the session's age in
 * whole seconds, read through a process, so a run is known as a span of possible creation
 * seconds (`lo-hi`), and two incarnations are the same run when their spans meet. Every call
 * checks the run (one list-sessions more per call: before an action, after a listing, so a
 * listing is never of a run it is not labelled with); a session whose span no longer meets
 * the first one seen is a replacement, and from then on every call fails with `replaced`.
 * zellij has no guard tying a command to one run, so a restart in the moment between the check
 * and the action is not caught, nor one within the span's seconds of the session's creation.
 */
import { performance } from 'node:perf_hooks';
import { LimitError, LongLivedChild, run, SpawnError, TimeoutError, type RunResult } from '../../../process/index.js';
import { zellijDeclaration } from '../../capabilities.js';
import { ZellijError } from '../../errors.js';
import { zellijIds } from '../../identity.js';
import { toZellijKey, type MuxKey } from '../../keys.js';
import { LabelMemory, withPublishedCounts } from '../../rules.js';
import { ContentRevisions } from '../../revision.js';
import { visibleRows, visibleScreen } from '../../screen.js';
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
  type MuxPaneProcess,
  type MuxRefusal,
  type MuxScreen,
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
  type ZellijSessionRecord,
  type ZellijTabRecord,
} from './protocol.js';
import { DEFAULT_CENSUS_INTERVALS, ZellijWatch, type Census, type CensusIntervals } from './watch.js';

export const ZELLIJ_DEFAULT_TIMEOUT_MS = 5_000;

/** A run of a session as the span of seconds (since the epoch) in which zellij created it. */
interface RunSpan {
  readonly lo: number;
  readonly hi: number;
}

function spanOf(incarnation: string): RunSpan | undefined {
  const match = /^(\d+)-(\d+)$/.exec(incarnation);
  return match === null ? undefined : { lo: Number(match[1]), hi: Number(match[2]) };
}

/** Whether two zellij incarnations can be the same run: their spans of creation seconds meet. */
export function sameZellijRun(a: string, b: string): boolean {
  const x = spanOf(a);
  const y = spanOf(b);
  return x === undefined || y === undefined ? a === b : x.lo <= y.hi && y.lo <= x.hi;
}

/** One call's budget, shared by the zellij processes it runs. */
interface Call {
  readonly until: number;
  readonly budgetMs: number;
  readonly signal?: AbortSignal;
}

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
  /** The run of the session this adapter answers for (its first incarnation, and the span narrowed by later readings). */
  private run: { readonly incarnation: string; span: RunSpan } | undefined;
  /** Why the adapter answers nothing any more: its session was started again. */
  private replacedBy: ZellijError | undefined;

  constructor(options: ZellijAdapterOptions = {}) {
    this.configured = options.session?.trim() || undefined;
    this.executable = options.executable ?? 'zellij';
    this.env = options.env;
    this.timeoutMs = options.timeoutMs ?? ZELLIJ_DEFAULT_TIMEOUT_MS;
    this.intervals = { ...DEFAULT_CENSUS_INTERVALS, ...options.census };
    this.declaration = zellijDeclaration(this.intervals.idleCeilingMs);
  }

  // ---- the transport ---------------------------------------------------------------------

  /** A call's one deadline: its own budget, else the adapter's. */
  private call(options: MuxCallOptions = {}): Call {
    const budgetMs = options.timeoutMs ?? this.timeoutMs;
    return { until: performance.now() + budgetMs, budgetMs, signal: options.signal };
  }

  /** Runs `zellij ARGS` within what is left of the call; every failure is a ZellijError carrying its refusal. */
  private async invoke(args: readonly string[], verb: string, session: string | undefined, call: Call): Promise<RunResult> {
    const slow = (delivery: 'not_sent' | 'possibly_sent', cause?: unknown): ZellijError =>
      new ZellijError(`zellij did not answer \`${verb}\` within ${call.budgetMs} ms and was killed; the machine may be too busy to start it`, { reason: 'unreachable', delivery, cause });
    const left = Math.floor(call.until - performance.now());
    if (left <= 0) throw slow('not_sent');
    let result: RunResult;
    try {
      result = await run([this.executable, ...args], { timeoutMs: left, signal: call.signal, env: this.env });
    } catch (error) {
      if (error instanceof TimeoutError) throw slow('possibly_sent', error);
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

  /** The session this instance drives, from a listing: the configured one, else the single running one. */
  private pick(listed: readonly ZellijSessionRecord[]): ZellijSessionRecord | undefined {
    const name = this.configured ?? this.discovered;
    if (name !== undefined) return listed.find((session) => session.name === name && session.running);
    const running = listed.filter((session) => session.running);
    if (running.length === 1) {
      this.discovered = running[0]!.name;
      return running[0];
    }
    if (running.length === 0) throw new ZellijError('no zellij session is running on this machine', { reason: 'unreachable', delivery: 'not_sent' });
    throw new ZellijError(`${running.length} zellij sessions are running (${running.map((session) => session.name).join(', ')}), so there is no single one to drive; name one in DROVER_MUX_ENDPOINT_ZELLIJ`, {
      reason: 'refused',
      delivery: 'not_sent',
    });
  }

  private async sessionListing(call: Call): Promise<ZellijSessionRecord[]> {
    return parseSessionList((await this.invoke(LIST_SESSIONS, 'list-sessions', undefined, call)).lossyText());
  }

  /** The session this instance drives: the configured one, else the single running one. */
  private async session(call: Call): Promise<string> {
    if (this.configured !== undefined) return this.configured;
    if (this.discovered !== undefined) return this.discovered;
    return this.pick(await this.sessionListing(call))!.name;
  }

  /**
   * The run of the session answering now, as an incarnation: the adapter's own while the span
   * of its creation meets the first one seen; another run is a replacement, for good.
   */
  private async currentRun(call: Call): Promise<string> {
    if (this.replacedBy !== undefined) throw this.replacedBy;
    const before = Date.now() / 1000;
    const listed = await this.sessionListing(call);
    const after = Date.now() / 1000;
    const session = this.pick(listed);
    if (session === undefined) {
      const name = this.configured ?? this.discovered;
      // A session found rather than named is looked for afresh: another one running alone is a replacement.
      this.discovered = undefined;
      throw new ZellijError(sessionGoneMessage(name, listed.some((candidate) => candidate.name === name)), { reason: 'unreachable', delivery: 'not_sent' });
    }
    if (session.ageSeconds === undefined) {
      throw new ZellijError(`zellij's list-sessions did not say when ${JSON.stringify(session.name)} was created, so a restart of it could not be told apart`, { reason: 'refused', delivery: 'not_sent' });
    }
    // zellij printed the age in whole seconds at a moment between before and after.
    const span = { lo: Math.floor(before - session.ageSeconds - 1), hi: Math.ceil(after - session.ageSeconds) };
    if (this.run === undefined) this.run = { incarnation: `${span.lo}-${span.hi}`, span };
    else if (span.lo <= this.run.span.hi && this.run.span.lo <= span.hi) this.run.span = { lo: Math.max(span.lo, this.run.span.lo), hi: Math.min(span.hi, this.run.span.hi) };
    else {
      this.replacedBy = new ZellijError(
        `the zellij session ${JSON.stringify(session.name)} was started again (created ${new Date(span.hi * 1000).toISOString()}, after ${new Date(this.run.span.hi * 1000).toISOString()}); its pane ids name other panes, so nothing is sent to it: open a new port to reach it`,
        { replaced: true, delivery: 'not_sent' },
      );
      throw this.replacedBy;
    }
    return this.run.incarnation;
  }

  private async action(args: readonly string[], verb: string, call: Call): Promise<string> {
    const session = await this.session(call);
    return (await this.invoke(sessionArgs(session, args), verb, session, call)).lossyText();
  }

  private async listPanes(call: Call): Promise<ZellijPaneRecord[]> {
    const panes = parsePaneList(await this.action(LIST_PANES, 'action list-panes', call));
    if (panes === undefined) throw new ZellijError("zellij's pane listing was not the JSON listing drover asked for", { reason: 'unreachable', delivery: 'observed' });
    return panes;
  }

  private async listTabs(call: Call): Promise<ZellijTabRecord[]> {
    const tabs = parseTabList(await this.action(LIST_TABS, 'action list-tabs', call));
    if (tabs === undefined) throw new ZellijError("zellij's tab listing was not the JSON listing drover asked for", { reason: 'unreachable', delivery: 'observed' });
    return tabs;
  }

  /**
   * Listings of one run: the run is checked after them, so a restart before or while they were
   * read is a replacement rather than the new run's panes under the old run's incarnation (and
   * before them too on first contact, when there is no run yet to compare with).
   */
  private async listingInRun(call: Call): Promise<{ readonly incarnation: string; readonly panes: ZellijPaneRecord[]; readonly tabs: ZellijTabRecord[] }> {
    if (this.run === undefined) await this.currentRun(call);
    // Sequential on purpose: zellij answers concurrent listings with empty output.
    const panes = await this.listPanes(call);
    const tabs = await this.listTabs(call);
    return { incarnation: await this.currentRun(call), panes, tabs };
  }

  /**
   * The pane's listing record, after checking the run, or `gone` when no fresh listing carries
   * it (zellij's actions would exit 0 and do nothing).
   */
  private async livePane(paneId: string, call: Call): Promise<ZellijPaneRecord | MuxRefusal> {
    await this.currentRun(call);
    const number = zellijIds.paneNumber(paneId);
    const record = number === undefined ? undefined : (await this.listPanes(call)).find((pane) => pane.paneNumber === number);
    return record ?? refusal('gone', `zellij has no pane ${paneId}`);
  }

  private async liveTab(tabId: string, call: Call): Promise<number | MuxRefusal> {
    await this.currentRun(call);
    const number = zellijIds.tabNumber(tabId);
    if (number !== undefined && (await this.listTabs(call)).some((tab) => tab.tabNumber === number)) return number;
    return refusal('gone', `zellij has no tab ${tabId}`);
  }

  // ---- the floor -------------------------------------------------------------------------

  async reachable(): Promise<boolean> {
    try {
      await this.listPanes(this.call());
      return true;
    } catch {
      return false;
    }
  }

  async serverIncarnation(options: MuxCallOptions): Promise<string> {
    return this.currentRun(this.call(options));
  }

  sameIncarnation(a: string, b: string): boolean {
    return sameZellijRun(a, b);
  }

  async snapshot(options: MuxCallOptions): Promise<MuxSnapshot> {
    const call = this.call(options);
    const { incarnation, panes: records, tabs } = await this.listingInRun(call);
    const session = await this.session(call);
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
      incarnation,
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
          const session = await this.session(this.call());
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

  /** A census is of one run too: a session started again with the same layout lists the same, and only its run tells. */
  private async census(): Promise<Census> {
    const call = this.call();
    const { panes, tabs } = await this.listingInRun(call);
    return { signature: censusSignature(panes, tabs), paneIds: new Set(panes.map((pane) => zellijIds.pane(pane.paneNumber))) };
  }

  translateKey(key: MuxKey): KeyTranslation {
    return toZellijKey(key);
  }

  // ---- the verbs -------------------------------------------------------------------------

  async readGrid(paneId: string, request: MuxGridRequest, options: MuxCallOptions): Promise<MuxOutcome<MuxGrid>> {
    const call = this.call(options);
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    const recent = request.scope === 'recent';
    const stdout = await this.action(dumpScreenArgs(paneId, request.styling === 'preserve', recent), 'action dump-screen', call);
    let lines = stdout.replace(/\n$/, '').split('\n');
    if (recent && request.lines !== undefined) lines = lines.slice(-request.lines);
    const text = lines.join('\n');
    return ok({ paneId, text, truncated: false, revision: this.revisions.revise(`${paneId} ${request.scope} ${request.styling}`, text) });
  }

  /**
   * The viewport, styled, sized by the listing's content rows and columns. zellij reports where
   * the cursor is, when it does, but not whether it is hidden: a reported cursor counts as shown.
   */
  async readScreen(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxScreen>> {
    const call = this.call(options);
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    const text = await this.action(dumpScreenArgs(paneId, true, false), 'action dump-screen', call);
    const screen = live.rows <= 0 || live.columns <= 0 ? visibleRows(text) : visibleScreen(text, { width: live.columns, height: live.rows, cursor: live.cursor === null ? null : { ...live.cursor, visible: true } });
    return ok(Object.freeze({ paneId, ...screen }));
  }

  /** From the listing: the command the pane was started with (a shell pane names none), its exit and status; never a pid. */
  async readProcess(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<MuxPaneProcess>> {
    const live = await this.livePane(paneId, this.call(options));
    if ('ok' in live) return live;
    const program = live.exited ? '' : (live.command.trim().split(/\s+/)[0] ?? '');
    return ok({ paneId, pid: null, foreground: program.slice(program.lastIndexOf('/') + 1), dead: live.exited, exitStatus: live.exited ? live.exitStatus : null });
  }

  async typeText(paneId: string, text: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_TYPED_TEXT_BYTES) {
      return refusal('refused', `zellij takes typed text as one command argument; ${bytes} bytes is over the ${MAX_TYPED_TEXT_BYTES}-byte limit of one argument, and drover does not split a message`);
    }
    const call = this.call(options);
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    await this.action(writeCharsArgs(paneId, text), 'action write-chars', call);
    return ok(undefined);
  }

  async sendKeys(paneId: string, keys: readonly string[], options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const call = this.call(options);
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    await this.action(sendKeysArgs(paneId, keys), 'action send-keys', call);
    return ok(undefined);
  }

  async renamePane(paneId: string, label: string | null): Promise<MuxOutcome<void>> {
    const call = this.call();
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    await this.action(renamePaneArgs(paneId, label ?? ''), 'action rename-pane', call);
    if (label === null) this.labels.forget(paneId);
    else this.labels.remember(paneId, label);
    return ok(undefined);
  }

  async closePane(paneId: string, options: MuxCallOptions): Promise<MuxOutcome<void>> {
    const call = this.call(options);
    const live = await this.livePane(paneId, call);
    if ('ok' in live) return live;
    await this.action(closePaneArgs(paneId), 'action close-pane', call);
    this.labels.forget(paneId);
    return ok(undefined);
  }

  async createTab(request: { spaceId: string; label?: string; cwd?: string }): Promise<MuxOutcome<MuxCreatedPane>> {
    if (request.spaceId !== zellijIds.SPACE) return refusal('gone', `zellij has one space, ${zellijIds.SPACE}; there is no space ${request.spaceId}`);
    const call = this.call();
    await this.currentRun(call);
    const printed = (await this.action(newTabArgs(request.label, request.cwd), 'action new-tab', call)).trim();
    if (!/^\d+$/.test(printed)) return refusal('refused', `zellij new-tab printed ${JSON.stringify(printed)} where a tab id was expected`);
    const tabNumber = Number(printed);
    const inTab = (await this.listPanes(call)).filter((pane) => pane.tabNumber === tabNumber);
    const pane = inTab.find((candidate) => candidate.focusedInTab) ?? inTab[0];
    if (pane === undefined) return refusal('refused', `zellij created tab ${tabNumber} but its listing shows no pane in it`);
    return ok({
      paneId: zellijIds.pane(pane.paneNumber),
      spaceId: zellijIds.SPACE,
      spaceLabel: await this.session(call),
      tabId: zellijIds.tab(tabNumber),
      cwd: pane.cwd || (request.cwd ?? ''),
    });
  }

  async renameTab(tabId: string, label: string): Promise<MuxOutcome<void>> {
    const call = this.call();
    const live = await this.liveTab(tabId, call);
    if (typeof live !== 'number') return live;
    await this.action(renameTabArgs(live, label), 'action rename-tab-by-id', call);
    return ok(undefined);
  }

  async closeTab(tabId: string): Promise<MuxOutcome<void>> {
    const call = this.call();
    const live = await this.liveTab(tabId, call);
    if (typeof live !== 'number') return live;
    await this.action(closeTabArgs(live), 'action close-tab-by-id', call);
    return ok(undefined);
  }

  async close(): Promise<void> {
    for (const watch of [...this.watches]) watch.close();
  }
}

/** A session that is not running: one zellij keeps as exited, or one it does not know. */
function sessionGoneMessage(session: string | undefined, exited: boolean): string {
  return exited
    ? `the zellij session ${JSON.stringify(session)} has exited; attach to it once to bring it back (drover does not resurrect sessions)`
    : `no running zellij session is called ${JSON.stringify(session)}`;
}

function noSessionMessage(session: string | undefined, stderr: string): string {
  if (/there is no active session/i.test(stderr)) return sessionGoneMessage(session, true);
  if (stderr.includes('No active zellij sessions')) return 'no zellij session is running on this machine';
  return sessionGoneMessage(session, false);
}
