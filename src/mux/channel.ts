/**
 * One pane through the port, as every layer above it (pane verbs, the fleet, drover web, MCP)
 * uses a pane: its screen, its process, typing, keys, a paste, a split beside it and closing it.
 * A channel carries one operation's budget: every call it makes gets what is left of that one
 * deadline, so an operation of many calls (a delivery, a fleet submission) ends when its budget
 * does, not when the last call's own budget would. Refusals are thrown as MuxErrors carrying the
 * refusal's reason (and `replaced`), so a caller handles one failure family.
 */
import { performance } from 'node:perf_hooks';
import { AbortedError, TimeoutError } from '../process/index.js';
import { MuxError } from './errors.js';
import { refusalDelivery, type MuxCreatedPane, type MuxGrid, type MuxGridRequest, type MuxOutcome, type MuxPaneProcess, type MuxPort, type MuxScreen, type MuxSplitRequest } from './types.js';

/** A call's own budget when the operation sets none. */
export const DEFAULT_CALL_MS = 5000;

export interface ChannelBudget {
  /** Monotonic deadline (performance.now() ms) of the whole operation; absent: each call gets DEFAULT_CALL_MS. */
  readonly deadline?: number;
  readonly signal?: AbortSignal;
}

export interface PaneChannel {
  readonly port: MuxPort;
  readonly paneId: string;
  /** The visible screen with size and cursor. */
  read(): Promise<MuxScreen>;
  process(): Promise<MuxPaneProcess>;
  grid(request: MuxGridRequest): Promise<MuxGrid>;
  /** Literal text, never submitted. */
  type(text: string): Promise<void>;
  /** One bracketed paste, never submitted (refused as unsupported where the multiplexer cannot paste). */
  paste(text: string): Promise<void>;
  /** Neutral key spellings (`Enter`, `ctrl+u`, `Escape`). */
  keys(keys: readonly string[]): Promise<void>;
  split(request: Omit<MuxSplitRequest, 'besidePaneId'>): Promise<MuxCreatedPane>;
  close(): Promise<void>;
}

/** The value of an outcome, or its refusal thrown as a MuxError with the same reason. */
export function unwrapOutcome<T>(port: MuxPort, outcome: MuxOutcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw new MuxError(port.mux, outcome.detail, {
    reason: outcome.reason,
    replaced: outcome.replaced === true,
    delivery: refusalDelivery(outcome),
  });
}

/**
 * What is left of a budget for the next call; throws once it is spent or aborted. The throw
 * says the next call sent nothing; what earlier calls of the operation did is the caller's to say.
 */
export function remainingMs(budget: ChannelBudget): number {
  if (budget.signal?.aborted) throw new AbortedError('the operation was interrupted', { phase: 'admit', delivery: 'not_sent' });
  if (budget.deadline === undefined) return DEFAULT_CALL_MS;
  const left = Math.floor(budget.deadline - performance.now());
  if (left <= 0) throw new TimeoutError('the operation used up its time budget', 0, { phase: 'admit', delivery: 'not_sent' });
  return left;
}

export function paneChannel(port: MuxPort, paneId: string, budget: ChannelBudget = {}): PaneChannel {
  const options = (): { timeoutMs: number; signal?: AbortSignal } => ({ timeoutMs: remainingMs(budget), signal: budget.signal });
  const call = async <T>(outcome: () => Promise<MuxOutcome<T>>): Promise<T> => unwrapOutcome(port, await outcome());
  return {
    port,
    paneId,
    read: () => call(() => port.readScreen(paneId, options())),
    process: () => call(() => port.readProcess(paneId, options())),
    grid: (request) => call(() => port.readGrid(paneId, request, options())),
    type: (text) => call(() => port.typeText(paneId, text, options())),
    paste: (text) => call(() => port.pasteText(paneId, text, options())),
    keys: (keys) => call(() => port.sendKeys(paneId, keys, options())),
    split: (request) => call(() => port.splitPane({ ...request, besidePaneId: paneId }, options())),
    close: () => call(() => port.closePane(paneId, options())),
  };
}
