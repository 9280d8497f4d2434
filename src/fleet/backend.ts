import { performance } from 'node:perf_hooks';
import { isValidMuxId, MuxError, paneChannel, unsupportedDetail, unwrapOutcome, type MuxCapability, type MuxDeclaration, type MuxName, type MuxOutcome, type MuxPort, type MuxSnapshot } from '../mux/index.js';
import { tailLines } from '../panes/index.js';
import { DroverError, messageOf, type ErrorContext } from '../process/index.js';
import { systemClock, type Clock } from './clock.js';
import type { PaneInput } from './dispatch.js';
import { columnHeightPlan, directorRestorePlan, memberColumn, type PaneBox } from './layout.js';

/** One spawn has one deadline for every split, layout and start step it runs. */
export const SPAWN_DEADLINE_MS = 30_000;
/** Creation compensation (closing the owned pane, deregistering) has its own budget. */
export const COMPENSATION_BUDGET_MS = 5000;

/**
 * What a fleet needs its multiplexer to declare: a member's pane split off beside the
 * Director's and closed again, the member column found by where panes sit and kept at equal
 * heights, lines typed and keys pressed, a coding agent's screen read before and after a line
 * goes in, and a member's recent lines captured.
 */
export const FLEET_CAPABILITIES: readonly MuxCapability[] = Object.freeze([
  'splitPane',
  'closePane',
  'paneGeometry',
  'resizePane',
  'typeText',
  'sendKeys',
  'paneScreen',
  'paneGrid',
  'gridScrollback',
]);

/** Why a multiplexer cannot hold a fleet, naming each capability it lacks and why; undefined when it can. */
export function fleetUnsupported(mux: MuxName, declaration: MuxDeclaration): string | undefined {
  const missing = FLEET_CAPABILITIES.filter((capability) => !declaration.supports[capability]);
  if (missing.length === 0) return undefined;
  return `drover fleets cannot run on ${mux}: ${missing.map((capability) => unsupportedDetail(mux, capability, declaration)).join('; ')}`;
}

/** Refuses, as unsupported, a multiplexer that cannot hold a fleet; it is asked nothing. */
export function requireFleetSupport(mux: MuxName, declaration: MuxDeclaration): void {
  const problem = fleetUnsupported(mux, declaration);
  if (problem !== undefined) throw new MuxError(mux, problem, { reason: 'unsupported', phase: 'select', delivery: 'not_sent' });
}

/** Where a pane lives in its multiplexer: its space (tmux session, herdr workspace) and tab. */
export interface PaneLocation {
  session: string;
  window: string;
  pane: string;
}

export interface SpawnRequest {
  /** The Director's pane: the first member splits it, later ones split the member column. */
  directorPane: string;
  /** The program the member pane starts (the coding agent). */
  command: readonly string[];
  /** Absolute, existing directory the member starts in. */
  cwd: string;
  /** Extra environment for the member pane. */
  env: Readonly<Record<string, string>>;
  /** Monotonic deadline, in the backend's clock time. */
  deadline: number;
}

export interface SpawnedPane {
  pane: string;
  /** Best-effort steps that failed without failing the spawn (layout equalization). */
  warnings: string[];
}

/**
 * What a failed spawn leaves of the pane it may have created:
 * - `none`: the split was refused, so there is nothing for the fleet to close (a pane the port
 *   could not finish it closed itself, and its refusal says if that close failed);
 * - `unknown`: the split went unanswered, so no pane id is confirmed; nothing was closed and
 *   nothing may be guessed.
 */
export type PaneCleanup = { kind: 'none' } | { kind: 'unknown'; detail: string };

/** A spawn that failed, with what it did about its pane. */
export class PaneSpawnError extends DroverError {
  readonly cleanup: PaneCleanup;
  constructor(message: string, cleanup: PaneCleanup, context: ErrorContext = {}) {
    super(message, { phase: 'spawn', delivery: cleanup.kind === 'none' ? 'not_sent' : 'possibly_sent', ...context });
    this.cleanup = cleanup;
  }
}

/** What closing a member pane learnt, for the layout tidy that follows deregistration. */
export interface ClosedPane {
  pane: string;
  /** The tab the pane was in before it closed; null when it was already gone. */
  tab: string | null;
}

export interface CaptureRequest {
  lines: number;
  /** Monotonic deadline, in the backend's clock time. */
  deadline: number;
}

/** A pane the snapshot places, as a box. */
interface PlacedTab {
  director: PaneBox;
  panes: PaneBox[];
  width: number;
}

/**
 * The fleet on any multiplexer whose declaration has what a fleet needs (FLEET_CAPABILITIES),
 * through the mux port alone: members split off the Director (first, to its right) or the
 * bottom of the member column (later, below it) with their program started by the split, the
 * column re-equalized by pane heights, and after a close the column (or the Director's width)
 * restored. Every call takes what is left of its operation's one deadline, and every failure
 * is a MuxError, the one multiplexer error family.
 */
export class FleetBackend {
  readonly name: MuxName;

  constructor(
    readonly port: MuxPort,
    private readonly clock: Clock = systemClock,
    /** Where the port's server is reached (its socket path), as placements record it; null when the caller did not say. */
    readonly endpoint: string | null = null,
  ) {
    requireFleetSupport(port.mux, port.declaration);
    this.name = port.mux;
  }

  /** A call's share of its operation: what is left until `deadline`; a spent one asks the multiplexer nothing. */
  private budget(deadline: number, what: string): { timeoutMs: number } {
    const left = Math.floor(deadline - this.clock.now());
    if (left <= 0) throw new MuxError(this.name, `the time for ${what} ran out before ${this.name} was asked`, { reason: 'unreachable', phase: 'admit', delivery: 'not_sent' });
    return { timeoutMs: left };
  }

  private async value<T>(outcome: Promise<MuxOutcome<T>>): Promise<T> {
    return unwrapOutcome(this.port, await outcome);
  }

  private snapshot(deadline: number, what: string): Promise<MuxSnapshot> {
    return this.port.snapshot(this.budget(deadline, what));
  }

  /** A member's pane as a submission types into it: each step a pane channel bounded by the step's deadline. */
  input(pane: string): PaneInput {
    return {
      pane,
      pastes: this.port.declaration.supports.pasteText,
      // The channel keeps the monotonic clock; the fleet's may be another (a test's).
      channel: (deadline) => paneChannel(this.port, pane, { deadline: performance.now() + (deadline - this.clock.now()) }),
    };
  }

  /** Which run of the multiplexer the port is bound to (learnt now on first contact). */
  serverIncarnation(deadline: number): Promise<string> {
    return this.port.serverIncarnation(this.budget(deadline, 'asking which server answers'));
  }

  /** Where a pane lives (the invoking pane, for the Director). */
  async locate(pane: string, deadline: number): Promise<PaneLocation> {
    const location = isValidMuxId(pane) ? (await this.port.locatePane(pane, this.budget(deadline, `finding pane ${pane}`))).location : undefined;
    if (location === undefined) throw new MuxError(this.name, `${this.name} has no pane ${pane}`, { reason: 'gone', delivery: 'not_sent' });
    return { session: location.spaceId, window: location.tabId, pane };
  }

  /** The Director's tab as boxes, or undefined when the Director is not in `tabId` (given) or not there at all. */
  private placed(snapshot: MuxSnapshot, directorPane: string, tabId?: string): PlacedTab | undefined {
    const director = snapshot.panes.find((pane) => pane.paneId === directorPane);
    if (director === undefined || (tabId !== undefined && director.tabId !== tabId)) return undefined;
    const width = snapshot.tabs.find((tab) => tab.tabId === director.tabId)?.size?.width;
    const panes: PaneBox[] = [];
    for (const pane of snapshot.panes.filter((candidate) => candidate.tabId === director.tabId)) {
      if (pane.geometry === undefined || width === undefined) throw new MuxError(this.name, `${this.name} did not say where pane ${pane.paneId} sits in its tab`, { reason: 'refused', delivery: 'not_sent' });
      panes.push({ id: pane.paneId, ...pane.geometry });
    }
    return { director: panes.find((box) => box.id === directorPane)!, panes, width: width! };
  }

  private async resize(plan: readonly ({ id: string } & ({ height: number } | { width: number }))[], deadline: number): Promise<void> {
    for (const { id, ...size } of plan) await this.value(this.port.resizePane(id, size, this.budget(deadline, 'the layout')));
  }

  /** Creates a member pane in the Director's layout and starts its program; throws PaneSpawnError. */
  async spawn(request: SpawnRequest): Promise<SpawnedPane> {
    let target: string;
    let direction: 'right' | 'below';
    try {
      const tab = this.placed(await this.snapshot(request.deadline, "reading the Director's tab"), request.directorPane);
      if (tab === undefined) throw new MuxError(this.name, `${this.name} has no pane ${request.directorPane}`, { reason: 'gone', delivery: 'not_sent' });
      const column = memberColumn(tab.director, tab.panes);
      target = column.at(-1)?.id ?? tab.director.id;
      direction = column.length === 0 ? 'right' : 'below';
    } catch (error) {
      throw new PaneSpawnError(`cannot read the Director's tab (pane ${request.directorPane}): ${messageOf(error)}`, { kind: 'none' }, { cause: error });
    }
    let pane: string;
    try {
      const split = { besidePaneId: target, direction, cwd: request.cwd, env: request.env, command: request.command };
      pane = (await this.value(this.port.splitPane(split, this.budget(request.deadline, 'the split')))).paneId;
    } catch (error) {
      // Only a split that went unanswered may have left a pane; a refusal left none.
      const refused = error instanceof DroverError && (error.delivery === 'not_sent' || (error instanceof MuxError && error.reason !== 'unreachable'));
      const cleanup: PaneCleanup = refused ? { kind: 'none' } : { kind: 'unknown', detail: messageOf(error) };
      throw new PaneSpawnError(`${this.name} could not split pane ${target} for the member: ${messageOf(error)}`, cleanup, { cause: error });
    }
    const warnings: string[] = [];
    try {
      await this.equalize(request.directorPane, request.deadline);
    } catch (error) {
      warnings.push(`the member column was not re-equalized: ${messageOf(error)}`);
    }
    return { pane, warnings };
  }

  /** Gives every pane of the member column the same height (±1 row). */
  private async equalize(directorPane: string, deadline: number): Promise<void> {
    const tab = this.placed(await this.snapshot(deadline, 'the layout'), directorPane);
    if (tab !== undefined) await this.resize(columnHeightPlan(memberColumn(tab.director, tab.panes)), deadline);
  }

  /** Closes a pane, reading its tab first for the tidy; one that is already gone counts as closed. */
  async closePane(pane: string, deadline: number): Promise<ClosedPane> {
    const found = (await this.snapshot(deadline, `finding pane ${pane}`)).panes.find((candidate) => candidate.paneId === pane);
    if (found === undefined) return { pane, tab: null };
    const closed = await this.port.closePane(pane, this.budget(deadline, `closing pane ${pane}`));
    if (!closed.ok && closed.reason !== 'gone') unwrapOutcome(this.port, closed);
    return { pane, tab: found.tabId };
  }

  /**
   * Restores the fleet layout in the closed pane's tab, once panes closed: two or more members
   * left are re-equalized, and a Director left alone but narrower than its tab gets its width back.
   */
  async rebalance(closed: ClosedPane, directorPane: string, deadline: number): Promise<void> {
    if (closed.tab === null) return;
    const tab = this.placed(await this.snapshot(deadline, 'the layout'), directorPane, closed.tab);
    if (tab === undefined) return;
    await this.resize(columnHeightPlan(memberColumn(tab.director, tab.panes)), deadline);
    const restore = directorRestorePlan(tab.director, tab.panes, tab.width);
    if (restore !== null) await this.resize([restore], deadline);
  }

  /** The pane's last `lines` lines with their colours. */
  async capture(pane: string, request: CaptureRequest): Promise<string> {
    const grid = await this.value(this.port.readGrid(pane, { scope: 'recent', lines: request.lines, styling: 'preserve' }, this.budget(request.deadline, `capturing pane ${pane}`)));
    return tailLines(grid.text, request.lines);
  }

  /** Every pane in the tab holding `pane`; empty when it is gone. */
  async neighbours(pane: string, deadline: number): Promise<string[]> {
    const snapshot = await this.snapshot(deadline, `finding the panes beside ${pane}`);
    const tab = snapshot.panes.find((candidate) => candidate.paneId === pane)?.tabId;
    return tab === undefined ? [] : snapshot.panes.filter((candidate) => candidate.tabId === tab).map((candidate) => candidate.paneId);
  }

  /** The ids of every pane that exists now, in one read. */
  async livePanes(deadline: number): Promise<Set<string>> {
    return new Set((await this.snapshot(deadline, 'listing panes')).panes.map((pane) => pane.paneId));
  }

  close(): Promise<void> {
    return this.port.close();
  }
}
