import { performance } from 'node:perf_hooks';
import { HerdrClient, HerdrError, screenOfRows, toHerdrKey, translateKeys } from '../mux/index.js';
import type { AgentScreen } from '../agents/index.js';
import { tailLines } from '../panes/index.js';
import { DroverError } from '../process/index.js';
import { shellCommandLine } from './agents.js';
import {
  COMPENSATION_BUDGET_MS,
  PaneSpawnError,
  inputFailure,
  type CaptureRequest,
  type ClosedPane,
  type FleetBackend,
  type PaneCleanup,
  type PaneLocation,
  type SpawnRequest,
  type SpawnedPane,
} from './backend.js';
import type { PaneInputPort } from './dispatch.js';
import { PaneGoneError, errorMessage } from './errors.js';
import { columnRatioPlan, directorRestorePlan, ratioColumn, type RatioResize } from './layout.js';

/** A herdr client whose every request is bounded by `timeoutMs`. Injectable for tests. */
export type HerdrConnector = (timeoutMs: number) => HerdrClient;

function isGone(error: unknown): boolean {
  return error instanceof HerdrError && error.reason === 'gone';
}

/** herdr answered the split with an error, or it was never sent: no pane exists. */
function splitRefused(error: unknown): boolean {
  return error instanceof DroverError && (error.delivery === 'not_sent' || (error.delivery === 'observed' && error.phase === 'request'));
}

function bounded(ms: number): number {
  return Math.max(1, Math.floor(ms));
}

/**
 * The fleet on herdr, over its socket: keystrokes with pane.send_keys/send_text, members
 * split off the Director (`right`) or the column's bottom pane (`down`) with an explicit
 * cwd, the column equalized by ratio, then the program typed with pane run. A pane whose
 * program could not be started is closed again before the error is reported.
 */
export class HerdrFleetBackend implements FleetBackend {
  readonly name = 'herdr' as const;
  readonly input: PaneInputPort;
  private readonly connect: HerdrConnector;

  constructor(
    readonly socketPath: string,
    connect?: HerdrConnector,
  ) {
    this.connect = connect ?? ((timeoutMs) => new HerdrClient({ socketPath, timeoutMs: bounded(timeoutMs) }));
    const keystroke = async (send: (client: HerdrClient) => Promise<void>, timeoutMs: number): Promise<void> => {
      try {
        await send(this.connect(timeoutMs));
      } catch (error) {
        throw inputFailure(error, isGone(error) || (error instanceof DroverError && error.delivery === 'not_sent'));
      }
    };
    const reading = async (pane: string, timeoutMs: number): Promise<AgentScreen> => {
      try {
        const read = await this.connect(timeoutMs).paneRead(pane, { source: 'visible', format: 'ansi' });
        // herdr reports neither the size nor the cursor: the visible rows are the screen.
        return screenOfRows(read.text);
      } catch (error) {
        if (isGone(error)) throw new PaneGoneError(pane, { cause: error });
        throw error;
      }
    };
    this.input = {
      sendEscape: (pane, timeoutMs) => keystroke((client) => client.paneSendKeys(pane, ['escape']), timeoutMs),
      sendLiteral: (pane, text, timeoutMs) => keystroke((client) => client.paneSendText(pane, text), timeoutMs),
      sendEnter: (pane, timeoutMs) => keystroke((client) => client.paneSendKeys(pane, ['enter']), timeoutMs),
      readScreen: reading,
      // herdr types text as it arrives; a notification line has no line breaks, so typing is a paste.
      paste: (pane, text, timeoutMs) => keystroke((client) => client.paneSendText(pane, text), timeoutMs),
      sendKeys: (pane, keys, timeoutMs) => keystroke((client) => client.paneSendKeys(pane, translateKeys(keys, toHerdrKey)), timeoutMs),
    };
  }

  async locate(pane: string, timeoutMs: number): Promise<PaneLocation> {
    const info = await this.connect(timeoutMs).paneGet(pane);
    return { session: info.workspace_id, window: info.tab_id, pane: info.pane_id };
  }

  async spawn(request: SpawnRequest): Promise<SpawnedPane> {
    const remaining = (): number => bounded(request.deadline - request.clock.now());
    let target: string;
    let direction: 'right' | 'down';
    try {
      const column = ratioColumn(await this.connect(remaining()).paneLayout(request.directorPane), request.directorPane);
      target = column.at(-1)?.id ?? request.directorPane;
      direction = column.length === 0 ? 'right' : 'down';
    } catch (error) {
      throw new PaneSpawnError(`cannot read the Director's tab (pane ${request.directorPane}): ${errorMessage(error)}`, { kind: 'none' }, { cause: error });
    }
    let pane: string;
    try {
      pane = (await this.connect(remaining()).paneSplit({ target_pane_id: target, direction, cwd: request.cwd, env: { ...request.env }, focus: false })).pane_id;
    } catch (error) {
      const cleanup: PaneCleanup = splitRefused(error) ? { kind: 'none' } : { kind: 'unknown', detail: errorMessage(error) };
      throw new PaneSpawnError(`herdr could not split pane ${target} for the member: ${errorMessage(error)}`, cleanup, { cause: error });
    }
    if (pane === '') throw new PaneSpawnError("herdr's split reply named no pane", { kind: 'unknown', detail: 'the split reply carried an empty pane id' });

    // From here this spawn owns `pane`: it either returns it or closes it.
    const warnings: string[] = [];
    try {
      await this.equalize(request.directorPane, remaining);
    } catch (error) {
      warnings.push(`the member column was not re-equalized: ${errorMessage(error)}`);
    }
    try {
      await this.connect(remaining()).paneRun(pane, shellCommandLine(request.command));
    } catch (error) {
      let cleanupError: string | null = null;
      try {
        await this.closePane(pane, COMPENSATION_BUDGET_MS);
      } catch (closeError) {
        cleanupError = errorMessage(closeError);
      }
      throw new PaneSpawnError(`herdr could not start the member's program in pane ${pane}: ${errorMessage(error)}`, { kind: 'attempted', pane, error: cleanupError }, { cause: error });
    }
    return { pane, warnings };
  }

  private async resize(steps: readonly RatioResize[], remaining: () => number): Promise<void> {
    for (const step of steps) await this.connect(remaining()).paneResize(step.pane, step.direction, step.amount);
  }

  private async equalize(directorPane: string, remaining: () => number): Promise<void> {
    const layout = await this.connect(remaining()).paneLayout(directorPane);
    await this.resize(columnRatioPlan(layout, directorPane), remaining);
  }

  /** Reads the pane's tab first, so the rebalance after deregistration knows where to look. */
  async closePane(pane: string, timeoutMs: number): Promise<ClosedPane> {
    const deadline = performance.now() + timeoutMs;
    let tab: string;
    try {
      tab = (await this.connect(timeoutMs).paneGet(pane)).tab_id;
    } catch (error) {
      if (isGone(error)) return { pane, tab: null };
      throw error;
    }
    try {
      await this.connect(bounded(deadline - performance.now())).paneClose(pane);
    } catch (error) {
      if (!isGone(error)) throw error;
    }
    return { pane, tab };
  }

  /**
   * Best effort, scoped to the closed pane's tab: anchored on a pane still open there, two or
   * more members are re-equalized, and with none left the Director gets the whole width back.
   */
  async rebalance(closed: ClosedPane, directorPane: string, timeoutMs: number): Promise<void> {
    if (closed.tab === null) return;
    const deadline = performance.now() + timeoutMs;
    const remaining = (): number => bounded(deadline - performance.now());
    const open = (await this.connect(remaining()).paneList()).filter((pane) => pane.tab_id === closed.tab);
    if (open.length === 0) return;
    const anchor = open.find((pane) => pane.pane_id === directorPane)?.pane_id ?? open[0]!.pane_id;
    const layout = await this.connect(remaining()).paneLayout(anchor);
    const column = ratioColumn(layout, directorPane);
    if (column.length >= 2) await this.resize(columnRatioPlan(layout, directorPane), remaining);
    if (column.length === 0) {
      const restore = directorRestorePlan(layout, directorPane);
      if (restore) await this.resize([restore], remaining);
    }
  }

  async capture(pane: string, request: CaptureRequest): Promise<string> {
    const read = await this.connect(request.timeoutMs).paneRead(pane, { source: 'recent', lines: request.lines, format: 'ansi' });
    return tailLines(read.text, request.lines);
  }

  async neighbours(pane: string, timeoutMs: number): Promise<string[]> {
    let tab: string;
    try {
      tab = (await this.connect(timeoutMs).paneGet(pane)).tab_id;
    } catch (error) {
      if (isGone(error)) return [];
      throw error;
    }
    return (await this.connect(timeoutMs).paneList()).filter((info) => info.tab_id === tab).map((info) => info.pane_id);
  }

  async livePanes(timeoutMs: number): Promise<Set<string>> {
    return new Set((await this.connect(timeoutMs).paneList()).map((info) => info.pane_id));
  }

  /** herdr names no server process a placement could be checked against. */
  async serverIdentity(): Promise<null> {
    return null;
  }

  async close(): Promise<void> {
    // One connection per request: nothing stays open.
  }
}
