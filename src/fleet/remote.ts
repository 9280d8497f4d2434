/**
 * Panes on other hosts. The fleet knows no links: whoever opens a runtime may hand it a
 * RemotePanes that reaches a configured host's own drover (the CLI builds one over the host's
 * long-lived link). The host types with its own evidence; the hub only records what the host
 * answered, and stamps a message notified only on a receipt that says `submitted`.
 */
import { createHash } from 'node:crypto';
import { DroverError } from '../process/index.js';
import type { Broker } from './broker.js';
import { PaneGoneError, PlacementError, PlacementStaleError } from './errors.js';
import { placementPaneKey, type ConcretePlacement, type PlacementBackend } from './model.js';

/** What a host answered for one delivery (its `pane deliver` receipt, passed on). */
export interface RemoteReceipt {
  readonly status: 'submitted' | 'staged_unconfirmed' | 'failed';
  readonly reason: string;
  /** Whether anything was typed; a failure that typed nothing may be tried again under the same id. */
  readonly typed: boolean;
  /** The host answered from its record of this delivery id: nothing was typed this time. */
  readonly replayed: boolean;
}

export interface RemoteDelivery {
  readonly host: string;
  /** The pane as its host names it (hostPaneTarget). */
  readonly pane: string;
  readonly line: string;
  /** The line is for the shell at the pane's prompt (a plain-shell member): the host types it there too. */
  readonly toShell: boolean;
  /** The same id on every attempt of one message: the host types a line at most once per id. */
  readonly deliveryId: string;
  /** How long the answer may take, the link's round trips included. */
  readonly budgetMs: number;
}

export interface RemoteSpawn {
  readonly host: string;
  /** The pane on that host the member's pane is split off. */
  readonly beside: string;
  readonly command: readonly string[];
  /** The directory on that host the member starts in; omitted: where that host's drover runs. */
  readonly cwd?: string;
  readonly env: Readonly<Record<string, string>>;
  readonly budgetMs: number;
}

/** Where a remote spawn put the member's pane, as that host's multiplexer names it. */
export interface RemoteSpawned {
  /** The multiplexer there. */
  readonly backend: PlacementBackend;
  readonly pane: string;
  readonly session: string;
  readonly window: string;
  /** The run of that host's multiplexer (see Placement.server). */
  readonly server: string;
  readonly warnings: readonly string[];
}

/** What a host answered when it could not be reached or refused: the host, and its error code when it said one. */
export class RemotePaneError extends DroverError {
  constructor(
    readonly host: string,
    message: string,
    delivery: 'not_sent' | 'possibly_sent',
    /** The host's error code (`server_replaced`, `pane_not_found`, …), when the host answered one. */
    readonly code?: string,
  ) {
    super(`host ${host}: ${message}`, { phase: 'link', delivery });
  }
}

/**
 * Reaching panes on other hosts; a pane is named as its host names it (hostPaneTarget). Every
 * method throws RemotePaneError when the host cannot be reached or refuses.
 */
export interface RemotePanes {
  deliver(request: RemoteDelivery): Promise<RemoteReceipt>;
  spawn(request: RemoteSpawn): Promise<RemoteSpawned>;
  close(host: string, pane: string, budgetMs: number): Promise<void>;
  /** The pane's last `lines` lines as its host reads them (text, no escape sequences). */
  capture(host: string, pane: string, lines: number, budgetMs: number): Promise<string>;
  /**
   * Where `drover broker serve` here puts this machine's store on `host`: the entry's
   * forward_broker when the user set one (`configured`), else the path drover there names for
   * it; undefined when neither is known within `budgetMs` (a host too old to name one).
   */
  brokerPathOn(host: string, budgetMs: number): Promise<{ readonly path: string; readonly configured: boolean } | undefined>;
}

/**
 * A remote placement's pane as its host names it: the host's own pane key when the placement
 * knows which run of the host's multiplexer holds it, so the host refuses a pane of another
 * run (its server restarted, the id now someone else's) instead of typing into it.
 */
export function hostPaneTarget(placement: ConcretePlacement): string {
  // The key that host prints for its own pane: this placement's key, with the host's `local`.
  return placementPaneKey({ ...placement, host: null }) ?? placement.pane;
}

/**
 * What a host's refusal means here, with the member's placement marked as the host found it:
 * another run of the host's multiplexer makes it stale, a pane the host no longer has makes
 * it gone. Any other failure is returned as it was.
 */
export async function remoteRefusal(broker: Broker, memberId: number, placement: ConcretePlacement, error: unknown): Promise<unknown> {
  if (!(error instanceof RemotePaneError)) return error;
  // A command that only reads (member capture) leaves the marking to the next one that writes.
  const marks = !broker.store.readOnly;
  if (error.code === 'server_replaced') {
    if (marks) await broker.markServerReplaced(memberId, placement.pane);
    return new PlacementStaleError(memberId, placement.pane, placement.backend);
  }
  if (error.code === 'pane_not_found') {
    if (marks) await broker.markPaneGone(memberId, placement.pane);
    return new PaneGoneError(placement.pane, { cause: error });
  }
  return error;
}

/** How long one remote delivery may take: the host's own delivery budget, the link's round trips and a login when the link was down. */
export const REMOTE_DELIVERY_BUDGET_MS = 45_000;

/**
 * The delivery id of a message on a remote pane: the same for every attempt of that message
 * from this store (so a line typed before a cut is never typed again), and different for
 * another store's message of the same number (two hubs may share a host).
 */
export function remoteDeliveryId(storeLocation: string, messageId: number): string {
  const store = createHash('sha256').update(storeLocation).digest('hex').slice(0, 12);
  return `msg-${store}-${messageId}`;
}

/** What a receipt that is not `submitted` leaves the message as, for its diagnostic. */
export function remoteReceiptReason(host: string, receipt: RemoteReceipt): string {
  const status = receipt.status.replace('_', ' ');
  const retry = receipt.typed ? '; it is never typed again under its delivery id' : '';
  return `host ${host} answered ${status}: ${receipt.reason}${retry}`;
}

/** The refusal for a remote placement when no way to reach other hosts was given. */
export function noRemotePanes(memberId: number, host: string): PlacementError {
  return new PlacementError(`member ${memberId}'s pane is on host ${host}, and this command cannot reach other hosts`);
}
