import { AbortedError, DroverError } from '../process/index.js';
import { systemClock } from './clock.js';
import { deliverPending, type NotNotified, type NotifyOptions } from './delivery.js';
import type { Message } from './model.js';

/** `message wait` attempts at most one member's held deliveries per interval. */
export const WAIT_ROTATION_INTERVAL_MS = 1000;
/** The longest `message listen` waits on a store that signals before it reads again anyway. */
const LISTEN_IDLE_MS = 60_000;

export interface WaitOptions extends NotifyOptions {
  /** The member waiting for messages (the wait's subject). */
  memberId: number;
  timeoutMs: number;
  rotationIntervalMs?: number;
  /** How often a store that cannot signal a change (SQLite) is read again (default 250 ms). */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

export interface WaitResult {
  memberId: number;
  /** The subject's unacknowledged messages, oldest first; empty when the wait timed out. */
  messages: Message[];
  timedOut: boolean;
  /** Messages the rotation notified meanwhile. */
  notified: number[];
  /** Every delivery the rotation could not make. */
  diagnostics: NotNotified[];
}

/** A `message wait` that failed for a reason other than a notification, with the diagnostics it gathered first. */
export class WaitError extends DroverError {
  readonly diagnostics: readonly NotNotified[];
  constructor(cause: unknown, diagnostics: readonly NotNotified[]) {
    super(`message wait failed: ${cause instanceof Error ? cause.message : String(cause)}`, {
      phase: cause instanceof DroverError ? cause.phase : 'wait',
      delivery: 'not_sent',
      cause,
    });
    this.diagnostics = Object.freeze([...diagnostics]);
  }
}

/** The candidates after the last attempted member first, so that every member gets its turn. */
function rotate(candidates: readonly number[], last: number): number[] {
  return [...candidates.filter((id) => id > last), ...candidates.filter((id) => id <= last)];
}

/**
 * `message wait`: returns the subject's unacknowledged messages as soon as it has any, or
 * after the timeout. Meanwhile it retries held and failed deliveries of the fleet's other
 * ordinary members (never the root Director, never the subject), one member per interval in
 * rotation, each pending message at most once per invocation — except that a coding agent
 * found busy with a turn, nothing typed, is retried at later rotations (one line per hold
 * means a member's second message usually meets the turn its first one started).
 * Notification failures are collected, one per message; anything else ends the wait with a
 * WaitError carrying them. Between looks it waits on the store's change signal: retries are
 * paced by the rotation interval, and with nothing left to retry only a change (or the
 * timeout) wakes it.
 */
export async function waitForMessages(options: WaitOptions): Promise<WaitResult> {
  const { broker, memberId, signal } = options;
  const clock = options.clock ?? systemClock;
  const rotationInterval = options.rotationIntervalMs ?? WAIT_ROTATION_INTERVAL_MS;
  const { fleetId } = await broker.getMember(memberId);
  const deadline = clock.now() + options.timeoutMs;
  const attempted = new Set<number>();
  const result: WaitResult = { memberId, messages: [], timedOut: false, notified: [], diagnostics: [] };
  let lastAttempted = 0;
  let nextRotation = clock.now();
  // Watching starts before the first look, so a change between a look and the wait is not missed.
  const watch = await broker.watch({ fleetId, pollMs: options.pollIntervalMs });
  try {
    for (;;) {
      if (signal?.aborted) throw new AbortedError('message wait was interrupted', { delivery: 'not_sent' });
      result.messages = (await broker.pollMessages(memberId)).reverse();
      if (result.messages.length > 0) return result;
      if (clock.now() >= deadline) return { ...result, timedOut: true };
      let retrying = true;
      if (clock.now() >= nextRotation) {
        nextRotation = clock.now() + rotationInterval;
        retrying = false;
        for (const candidate of rotate(await broker.recipientsAwaitingNotification(fleetId, [memberId]), lastAttempted)) {
          const attempt = await deliverPending({ ...options, recipientId: candidate, fleetId, attempted });
          if (attempt.notified.length === 0 && attempt.diagnostic === null && attempt.held === null) continue;
          retrying = true;
          lastAttempted = candidate;
          result.notified.push(...attempt.notified);
          // A message retried after a busy turn keeps one diagnostic, its latest, and none once notified.
          result.diagnostics = result.diagnostics.filter(
            (entry) => !attempt.notified.includes(entry.messageId) && entry.messageId !== attempt.diagnostic?.messageId,
          );
          if (attempt.diagnostic) result.diagnostics.push(attempt.diagnostic);
          break;
        }
      }
      await watch.next((retrying ? Math.min(deadline, nextRotation) : deadline) - clock.now(), signal);
    }
  } catch (error) {
    if (error instanceof AbortedError) throw error;
    throw new WaitError(error, result.diagnostics);
  } finally {
    await watch.close();
  }
}

export interface ListenOptions extends Pick<NotifyOptions, 'broker'> {
  memberId: number;
  /** How often a store that cannot signal a change (SQLite) is read again (default 250 ms). */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

/**
 * `message listen`: the member's unacknowledged messages, oldest first, then every new
 * message addressed to it as it is stored, each once, until the signal aborts. Reads the
 * database only; no pane input. Ends with an error when the member leaves its fleet.
 */
export async function* listenForMessages(options: ListenOptions): AsyncGenerator<Message> {
  const { broker, memberId, signal } = options;
  const { fleetId } = await broker.getMember(memberId);
  const watch = await broker.watch({ fleetId, pollMs: options.pollIntervalMs });
  try {
    const backlog = await broker.deliveriesAfter(memberId, 0);
    for (const message of backlog.messages) if (message.statusState === 'input_required') yield message;
    let cursor = backlog.latestMessageId;
    while (!signal?.aborted) {
      await watch.next(LISTEN_IDLE_MS, signal);
      if (signal?.aborted) return;
      const fresh = await broker.deliveriesAfter(memberId, cursor);
      yield* fresh.messages;
      cursor = fresh.latestMessageId;
    }
  } finally {
    await watch.close();
  }
}
