/**
 * Panes on other hosts. The fleet knows no links: whoever opens a runtime may hand it a
 * RemotePanes that reaches a configured host's own drover (the CLI builds one over the host's
 * long-lived link). The host types with its own evidence; the hub only records what the host
 * answered, and stamps a message notified only on a receipt that says `submitted`.
 */
import { createHash } from 'node:crypto';
import { PlacementError } from './errors.js';
import type { PlacementBackend } from './model.js';

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
  readonly pane: string;
  readonly line: string;
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

/**
 * Reaching panes on other hosts. Every method throws when the host cannot be reached or
 * refuses; the error's message names the host.
 */
export interface RemotePanes {
  deliver(request: RemoteDelivery): Promise<RemoteReceipt>;
  spawn(request: RemoteSpawn): Promise<RemoteSpawned>;
  close(host: string, pane: string, budgetMs: number): Promise<void>;
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
