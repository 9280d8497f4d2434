import { DroverError, type ErrorContext } from '../process/index.js';
import type { Clock } from './clock.js';
import type { PaneInputPort } from './dispatch.js';
import type { PlacementBackend } from './model.js';

/** One spawn has one deadline for every split, layout and start step it runs. */
export const SPAWN_DEADLINE_MS = 30_000;
/** Creation compensation (closing the owned pane, deregistering) has its own budget. */
export const COMPENSATION_BUDGET_MS = 5000;

/** Where a pane lives in its multiplexer: tmux session/window ids, herdr workspace/tab ids. */
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
  /** Monotonic deadline, in `clock` time. */
  deadline: number;
  clock: Clock;
}

export interface SpawnedPane {
  pane: string;
  /** Best-effort steps that failed without failing the spawn (layout equalization). */
  warnings: string[];
}

/**
 * What a failed spawn did about the pane it may have created:
 * - `none`: the multiplexer refused the split, so no pane exists;
 * - `attempted`: the pane id was known and the backend tried to close it (error: why that failed);
 * - `unknown`: no confirmed pane id; nothing was closed and nothing may be guessed.
 */
export type PaneCleanup = { kind: 'none' } | { kind: 'attempted'; pane: string; error: string | null } | { kind: 'unknown'; detail: string };

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
  /** The tab (herdr) the pane was in before it closed; null when unknown or not needed. */
  tab: string | null;
}

export interface CaptureRequest {
  lines: number;
  timeoutMs: number;
}

/**
 * What the fleet needs of a multiplexer: keystrokes, pane creation with the fleet layout,
 * closing with the layout tidy, and read-only capture. Every call is bounded.
 */
export interface FleetBackend {
  readonly name: PlacementBackend;
  readonly input: PaneInputPort;
  /** Where a pane lives (the invoking pane, for the Director). */
  locate(pane: string, timeoutMs: number): Promise<PaneLocation>;
  /** Creates a member pane in the Director's layout and starts its program; throws PaneSpawnError. */
  spawn(request: SpawnRequest): Promise<SpawnedPane>;
  /** Closes a pane; one that is already gone counts as closed. */
  closePane(pane: string, timeoutMs: number): Promise<ClosedPane>;
  /** Restores the fleet layout after panes closed (tmux reflows natively: nothing to do). */
  rebalance(closed: ClosedPane, directorPane: string, timeoutMs: number): Promise<void>;
  /** The pane's last `lines` lines with their escape sequences. */
  capture(pane: string, request: CaptureRequest): Promise<string>;
  /** Every pane in the window (tmux) or tab (herdr) holding `pane`; empty when it is gone. */
  neighbours(pane: string, timeoutMs: number): Promise<string[]>;
  /** The ids of every pane that exists now, in one request. */
  livePanes(timeoutMs: number): Promise<Set<string>>;
  /**
   * Which server process this backend talks to, as placements record it; null for a
   * multiplexer that has no such identity. Every later call goes to that same server.
   */
  serverIdentity(timeoutMs: number): Promise<string | null>;
  close(): Promise<void>;
}

/**
 * A keystroke failure as dispatch sees it: `not_sent` only when no input can have reached
 * the pane (the client could not start or connect, or the pane is recognisably missing);
 * anything else keeps `possibly_sent`.
 */
export function inputFailure(error: unknown, provablyNotSent: boolean): DroverError {
  const message = error instanceof Error ? error.message : String(error);
  return new DroverError(message, { phase: 'input', delivery: provablyNotSent ? 'not_sent' : 'possibly_sent', cause: error });
}
