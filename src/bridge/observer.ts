/**
 * The bridge's view of the panes, kept current by the multiplexer's own watch: a topology
 * change re-reads the listing, a pane change re-reads that pane's screen, and nothing is polled
 * where the multiplexer pushes. Each change that matters becomes an event (pane revision,
 * agent state, question); a snapshot is always taken fresh from the multiplexer, with what the
 * screens said merged in.
 */
import { basename } from 'node:path';
import { formatPaneKey, LOCAL_HOST, MuxError, screenOfRows, type AgentStatus, type MuxPane, type MuxPort, type MuxSnapshot, type MuxWatch } from '../mux/index.js';
import { WorktreeResolver, currentBranch, type WorktreeInfo } from '../panes/index.js';
import { isAgentKind, isShellCommand, rulesFor, type AgentScreenRules, type AgentState, type ScreenPhase } from '../agents/index.js';
import { readViewport } from './agent-input.js';
import { BridgeError } from './errors.js';
import type { EventHub } from './events.js';
import type { PaneView, QuestionView, ServerView, SnapshotView } from './protocol.js';
import { readAgentScreen, scanProgramScreen, type ScreenVerdict } from './questions.js';
import { lastMeaningfulLine } from '../panes/index.js';
import { isStaleTitle, witnessTitle, type TitleFacts, type TitleWitness } from './titles.js';
import { finishedTurn, resolveState, triageCounts, triageGroup, triageOrder } from './triage.js';

/** What drover knows of a pane's agent beyond the multiplexer: from its process tree and its hooks. */
export interface PaneAgentFacts {
  readonly agent: string | null;
  readonly hook: AgentState | null;
}

/** Reads those facts for every pane at once, keyed by mux pane id. */
export interface AgentCensus {
  read(): Promise<ReadonlyMap<string, PaneAgentFacts>>;
}

export interface ObserverOptions {
  readonly census?: AgentCensus;
  /** Screen reads running at once. */
  readonly concurrency?: number;
  /** How long after the watch went down it is opened again. */
  readonly rewatchMs?: number;
  readonly log?: (line: string) => void;
  /** The multiplexer was replaced by another run: this observer's port will answer nothing again. */
  readonly onReplaced?: () => void;
  /** Numbers the questions; shared by the observers of successive runs, so a question id is never reused. */
  readonly questionNumbers?: () => number;
}

interface PaneRecord {
  revision: string | null;
  phase: ScreenPhase | null;
  question: QuestionView | null;
  fingerprint: string | null;
  state: AgentStatus | undefined;
  finishedUnseen: boolean;
  title: TitleWitness | undefined;
  /** When the revision last changed after the first read. */
  changedAt: string | null;
  lastLine: string | null;
}

const TOPOLOGY_SETTLE_MS = 30;
const WATCH_UP_TIMEOUT_MS = 10_000;
/** At most one re-read of the listing (foreground programs, agents' status, the hooks) per this interval while panes change. */
const STATUS_SETTLE_MS = 250;

/** At most `limit` tasks at once, the rest queued in order. */
class Limiter {
  private running = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.queue.shift()?.();
    }
  }
}

export class PaneObserver {
  /** Nothing read yet: no run of the multiplexer is known. */
  private layout: MuxSnapshot = { incarnation: '', spaces: [], tabs: [], panes: [] };
  private readonly panes = new Map<string, MuxPane>();
  private readonly records = new Map<string, PaneRecord>();
  private facts: ReadonlyMap<string, PaneAgentFacts> = new Map();
  /** Where each pane's cwd sits in git, by cwd; a cwd is resolved once for the observer's life. */
  private readonly worktrees = new WorktreeResolver();
  private gitOf: ReadonlyMap<string, WorktreeInfo> = new Map();
  private watch: MuxWatch | undefined;
  private watchedKey: string | undefined;
  private watched = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly dirty = new Set<string>();
  private readonly limiter: Limiter;
  private refreshing: Promise<void> | undefined;
  private topologyTimer: NodeJS.Timeout | undefined;
  private statusTimer: NodeJS.Timeout | undefined;
  private rewatchTimer: NodeJS.Timeout | undefined;
  private questions = 0;
  private readonly nextQuestion: () => number;
  private closed = false;
  /** Settles when the current watch is up (true) or went down first (false). */
  private listening: Promise<boolean> = Promise.resolve(false);

  constructor(
    private readonly mux: MuxPort,
    private readonly hub: EventHub,
    private readonly options: ObserverOptions = {},
  ) {
    this.limiter = new Limiter(options.concurrency ?? 4);
    this.nextQuestion = options.questionNumbers ?? (() => (this.questions += 1));
  }

  /** The run of the multiplexer this observer reads ('' before its first listing). */
  get incarnation(): string {
    return this.layout.incarnation;
  }

  get port(): MuxPort {
    return this.mux;
  }

  /** The pane's key: its id on this observer's run. */
  paneKey(paneId: string): string {
    return formatPaneKey({ host: LOCAL_HOST, mux: this.mux.mux, incarnation: this.layout.incarnation, paneId });
  }

  /** Reads the listing, opens the watch, reads every pane's screen once, and returns once the watch listens. */
  async start(): Promise<void> {
    await this.refresh();
    await Promise.all([...this.panes.keys()].map((paneId) => this.inspect(paneId)));
    // A change made before the watch listens would never be announced; a watch that never comes up is said in the log.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), WATCH_UP_TIMEOUT_MS)));
    const up = await Promise.race([this.listening, late]);
    clearTimeout(timer);
    if (!up) this.options.log?.(`the ${this.mux.mux} watch is not listening yet; changes before it is may be missed`);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.topologyTimer);
    clearTimeout(this.statusTimer);
    clearTimeout(this.rewatchTimer);
    this.watch?.close();
    this.watch = undefined;
  }

  /** A fresh snapshot with every pane's screen verdict merged in. */
  async snapshot(restarted: ServerView['restarted']): Promise<SnapshotView> {
    const eventId = this.hub.lastId();
    await this.refresh();
    const panes = this.layout.panes.map((pane) => this.view(pane));
    return {
      generated_at: new Date().toISOString(),
      server: { incarnation: this.layout.incarnation, restarted },
      event_id: eventId,
      spaces: this.layout.spaces.map((space) => ({
        space_id: space.spaceId,
        number: space.number,
        label: space.label,
        focused: space.focused,
        active_tab_id: space.activeTabId,
        tab_count: space.tabCount,
        pane_count: space.paneCount,
      })),
      tabs: this.layout.tabs.map((tab) => ({ tab_id: tab.tabId, space_id: tab.spaceId, number: tab.number, label: tab.label, focused: tab.focused, pane_count: tab.paneCount })),
      panes,
      triage: triageOrder(panes),
      triage_keys: triageOrder(panes, (pane) => pane.pane_key),
      counts: triageCounts(panes),
      hosts: [],
    };
  }

  /** The pane, from a fresh listing when the last one does not have it (a pane made a moment ago). */
  async find(paneId: string): Promise<MuxPane> {
    if (!this.panes.has(paneId)) await this.refresh();
    return this.pane(paneId);
  }

  /** The pane as the last listing showed it; a pane not in it is gone. */
  pane(paneId: string): MuxPane {
    const pane = this.listed(paneId);
    if (pane === undefined) throw new BridgeError('gone', `there is no pane ${paneId} (any more); re-read the snapshot`);
    return pane;
  }

  /** The pane as the last listing showed it, or undefined when that listing did not have it. */
  listed(paneId: string): MuxPane | undefined {
    return this.panes.get(paneId);
  }

  /** The agent in a pane: the multiplexer's word when it declares agent detection, else drover's census. */
  agentOf(pane: MuxPane): string | null {
    if (this.mux.declaration.supports.agentDetection && pane.agent !== 'shell' && pane.agent !== '') return pane.agent;
    return this.facts.get(pane.paneId)?.agent ?? null;
  }

  /** Screen rules for the pane's agent, when drover knows it. */
  rulesOf(pane: MuxPane): AgentScreenRules | undefined {
    const agent = this.agentOf(pane);
    return agent !== null && isAgentKind(agent) ? rulesFor(agent) : undefined;
  }

  /** Reads the pane now (after any read in flight) and returns its current question. */
  async currentQuestion(paneId: string): Promise<QuestionView | null> {
    this.pane(paneId);
    await this.inFlight.get(paneId);
    await this.inspectOnce(paneId);
    return this.records.get(paneId)?.question ?? null;
  }

  /** Someone looked at the pane: a finished turn is no longer news. */
  markSeen(paneId: string): void {
    const record = this.records.get(paneId);
    const pane = this.panes.get(paneId);
    if (record === undefined || pane === undefined || !record.finishedUnseen) return;
    record.finishedUnseen = false;
    this.hub.publish('agent', { pane_id: paneId, pane_key: this.paneKey(paneId), state: record.state ?? 'unknown', agent: this.agentOf(pane) });
  }

  /** "Look now": the multiplexer re-reads, and so does every pane. */
  async lookNow(): Promise<void> {
    await this.mux.refresh();
    await this.refresh();
    await Promise.all([...this.panes.keys()].map((paneId) => this.inspect(paneId)));
  }

  /** Reads a pane's screen, coalescing: a change that arrives during a read causes one more read after it. */
  inspect(paneId: string): Promise<void> {
    const running = this.inFlight.get(paneId);
    if (running !== undefined) {
      this.dirty.add(paneId);
      return running;
    }
    const reading = (async () => {
      try {
        do {
          this.dirty.delete(paneId);
          await this.inspectOnce(paneId);
        } while (this.dirty.has(paneId) && !this.closed);
      } finally {
        this.inFlight.delete(paneId);
      }
    })();
    this.inFlight.set(paneId, reading);
    return reading;
  }

  private async inspectOnce(paneId: string): Promise<void> {
    const pane = this.panes.get(paneId);
    if (pane === undefined || this.closed) return;
    let text: string;
    let revision: string;
    try {
      ({ text, revision } = await this.limiter.run(() => readViewport(this.mux, paneId)));
    } catch (error) {
      if (error instanceof BridgeError && error.code === 'gone') this.scheduleTopology();
      else if (error instanceof BridgeError && error.code === 'server_replaced') this.replaced();
      else if (!(error instanceof BridgeError)) this.options.log?.(`reading pane ${paneId}: ${(error as Error).message}`);
      return;
    }
    const record = this.record(paneId);
    if (revision !== record.revision) {
      if (record.revision !== null) record.changedAt = new Date().toISOString();
      record.revision = revision;
      record.lastLine = lastMeaningfulLine(text, { agent: this.rulesOf(pane) !== undefined, width: Math.max(0, ...text.split('\n').map((row) => Array.from(row).length)) });
      this.hub.publish('pane', { pane_id: paneId, pane_key: this.paneKey(paneId), revision });
    }
    this.applyVerdict(pane, record, this.verdict(pane, text));
    this.publishState(pane, record);
  }

  private verdict(pane: MuxPane, text: string): ScreenVerdict {
    if (!pane.alive) return { phase: null, rule: null, question: null };
    const screen = screenOfRows(pane.paneId, text);
    const rules = this.rulesOf(pane);
    if (rules !== undefined) return readAgentScreen(screen, rules);
    return scanProgramScreen(pane.paneId, screen, this.sweptState(pane));
  }

  /**
   * The state the line scan needs before it believes a program asks: its hooks' report, else
   * the multiplexer's detection, else "idle" for any program in the foreground but a shell.
   */
  private sweptState(pane: MuxPane): AgentState | null {
    const hook = this.facts.get(pane.paneId)?.hook ?? null;
    if (hook !== null) return hook;
    const status = this.muxStatus(pane);
    if (status === 'working') return 'active';
    if (status === 'blocked') return 'waiting';
    if (status === 'idle' || status === 'done') return 'idle';
    return pane.foregroundCommand !== undefined && pane.foregroundCommand !== '' && !isShellCommand(pane.foregroundCommand) ? 'idle' : null;
  }

  private muxStatus(pane: MuxPane): AgentStatus | null {
    return this.mux.declaration.supports.agentDetection ? pane.status : null;
  }

  private applyVerdict(pane: MuxPane, record: PaneRecord, verdict: ScreenVerdict): void {
    record.phase = verdict.phase;
    const fingerprint = verdict.question?.fingerprint ?? null;
    if (fingerprint === record.fingerprint) return;
    record.fingerprint = fingerprint;
    if (verdict.question === null) record.question = null;
    else {
      const { snippet, indicator, rule, options } = verdict.question;
      record.question = { id: `q${this.nextQuestion()}-${verdict.question.fingerprint.slice(0, 8)}`, snippet, indicator, rule, options };
    }
    this.hub.publish('question', { pane_id: pane.paneId, pane_key: this.paneKey(pane.paneId), question: record.question });
  }

  private stateOf(pane: MuxPane, record: PaneRecord): ReturnType<typeof resolveState> {
    return resolveState({ muxStatus: this.muxStatus(pane), phase: record.phase, hook: this.facts.get(pane.paneId)?.hook ?? null, asking: record.question !== null });
  }

  private publishState(pane: MuxPane, record: PaneRecord): void {
    const { state } = this.stateOf(pane, record);
    const before = record.state;
    record.state = state;
    if (before === undefined || before === state) return;
    if (finishedTurn(before, state)) record.finishedUnseen = true;
    else if (state === 'working' || state === 'blocked') record.finishedUnseen = false;
    this.hub.publish('agent', { pane_id: pane.paneId, pane_key: this.paneKey(pane.paneId), state, agent: this.agentOf(pane) });
  }

  private record(paneId: string): PaneRecord {
    let record = this.records.get(paneId);
    if (record === undefined) {
      record = { revision: null, phase: null, question: null, fingerprint: null, state: undefined, finishedUnseen: false, title: undefined, changedAt: null, lastLine: null };
      this.records.set(paneId, record);
    }
    return record;
  }

  private view(pane: MuxPane): PaneView {
    const record = this.record(pane.paneId);
    const { state, source } = this.stateOf(pane, record);
    const agent = this.agentOf(pane);
    const git = this.gitOf.get(pane.cwd);
    return {
      host: LOCAL_HOST,
      pane_id: pane.paneId,
      pane_key: this.paneKey(pane.paneId),
      stale: false,
      stale_age_ms: null,
      space_id: pane.spaceId,
      space_label: pane.spaceLabel,
      tab_id: pane.tabId,
      tab_label: pane.tabLabel ?? null,
      label: pane.paneLabel ?? null,
      title: pane.terminalTitle ?? null,
      title_stale: isStaleTitle(record.title, titleFacts(pane)),
      foreground: pane.foregroundCommand ?? null,
      cwd: pane.cwd,
      repo: git?.repo === null || git?.repo === undefined ? null : basename(git.repo),
      branch: git?.worktree === null || git?.worktree === undefined ? null : currentBranch(git.worktree),
      changed_at: record.changedAt,
      last_line: record.lastLine,
      focused: pane.focused,
      alive: pane.alive,
      agent,
      verifiable: this.rulesOf(pane) !== undefined,
      state,
      state_source: source,
      question: record.question,
      finished_unseen: record.finishedUnseen,
      revision: record.revision,
      group: triageGroup({ state, asking: record.question !== null, finishedUnseen: record.finishedUnseen }),
    };
  }

  /** One listing at a time; callers arriving meanwhile share it. */
  private refresh(): Promise<void> {
    this.refreshing ??= this.readLayout().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async readLayout(): Promise<void> {
    let layout: MuxSnapshot;
    let facts: ReadonlyMap<string, PaneAgentFacts> | undefined;
    try {
      [layout, facts] = await Promise.all([this.mux.snapshot(), this.readCensus()]);
      this.gitOf = await this.worktrees.resolveAll(layout.panes.map((pane) => pane.cwd));
    } catch (error) {
      if (error instanceof MuxError && error.replaced) this.replaced();
      throw error;
    }
    if (this.closed) return;
    if (facts !== undefined) this.facts = facts;
    const live = new Set(layout.panes.map((pane) => pane.paneId));
    for (const paneId of [...this.records.keys()]) if (!live.has(paneId)) this.records.delete(paneId);
    const fresh = layout.panes.filter((pane) => !this.panes.has(pane.paneId));
    // Whether a screen asks depends on what runs there: a program that took over from a shell
    // (a window whose command execs python3) is read again under its own name.
    const handedOver = layout.panes.filter((pane) => {
      const before = this.panes.get(pane.paneId);
      return before !== undefined && before.foregroundCommand !== pane.foregroundCommand;
    });
    this.layout = layout;
    this.panes.clear();
    for (const pane of layout.panes) this.panes.set(pane.paneId, pane);
    for (const pane of layout.panes) {
      const record = this.record(pane.paneId);
      record.title = witnessTitle(record.title, titleFacts(pane));
      if (record.state !== undefined) this.publishState(pane, record);
    }
    this.ensureWatch(live);
    for (const pane of [...fresh, ...handedOver]) void this.inspect(pane.paneId);
  }

  /** drover's census of agents, or undefined (the last one stays) when there is none or it failed. */
  private async readCensus(): Promise<ReadonlyMap<string, PaneAgentFacts> | undefined> {
    try {
      return await this.options.census?.read();
    } catch (error) {
      this.options.log?.(`reading the panes' agents: ${(error as Error).message}`);
      return undefined;
    }
  }

  /** One watch over exactly the panes of the last listing; a changed set of panes gets a new one. */
  private ensureWatch(live: ReadonlySet<string>): void {
    const key = [...live].sort().join(' ');
    if (this.watch !== undefined && key === this.watchedKey) return;
    this.watch?.close();
    this.watchedKey = key;
    // Changes made while no watch listened (a replaced or a lost one) were heard by nobody.
    let sweepWhenUp = this.watched;
    this.watched = true;
    let settle: (up: boolean) => void = () => undefined;
    this.listening = new Promise((resolve) => (settle = resolve));
    this.watch = this.mux.watch({
      panes: [...live],
      onTopologyChange: () => this.scheduleTopology(),
      onPaneChange: (paneId) => {
        void this.inspect(paneId);
        // The listing again, soon: agents' status, and who runs in the pane now.
        this.scheduleStatus();
      },
      onUp: () => {
        settle(true);
        if (!sweepWhenUp) return;
        sweepWhenUp = false;
        for (const paneId of live) void this.inspect(paneId);
      },
      onDown: (reason) => {
        settle(false);
        this.options.log?.(`the ${this.mux.mux} watch went down (${reason}); trying again`);
        this.watch = undefined;
        this.hub.publish('topology', {});
        this.scheduleRewatch();
      },
    });
  }

  /** Says once that the port's multiplexer was replaced, and stops: nothing this observer reads can come back. */
  private replaced(): void {
    if (this.closed) return;
    this.close();
    this.options.onReplaced?.();
  }

  private scheduleRewatch(): void {
    if (this.closed) return;
    clearTimeout(this.rewatchTimer);
    this.rewatchTimer = setTimeout(() => void this.refresh().catch(() => this.scheduleRewatch()), this.options.rewatchMs ?? 2000);
    this.rewatchTimer.unref();
  }

  private scheduleTopology(): void {
    if (this.closed || this.topologyTimer !== undefined) return;
    this.topologyTimer = setTimeout(() => {
      this.topologyTimer = undefined;
      this.hub.publish('topology', {});
      void this.refresh().catch((error: Error) => this.options.log?.(`reading the ${this.mux.mux} listing: ${error.message}`));
    }, TOPOLOGY_SETTLE_MS);
  }

  /** Agents' status travels with the listing (the multiplexer's detection, drover's census of hooks): read it again soon after a pane changed. */
  private scheduleStatus(): void {
    if (this.closed || this.statusTimer !== undefined) return;
    this.statusTimer = setTimeout(() => {
      this.statusTimer = undefined;
      void this.refresh().catch(() => undefined);
    }, STATUS_SETTLE_MS);
  }
}

function titleFacts(pane: MuxPane): TitleFacts {
  return { title: pane.terminalTitle, foreground: pane.foregroundCommand, alive: pane.alive };
}
