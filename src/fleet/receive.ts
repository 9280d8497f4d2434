import { setTimeout as delay } from 'node:timers/promises';
import { AbortedError, DroverError } from '../process/index.js';
import { systemClock } from './clock.js';
import { deliverPending, type NotNotified, type NotifyOptions } from './delivery.js';
import type { Message } from './model.js';

/** `message wait` attempts at most one member's held deliveries per interval. */
export const WAIT_ROTATION_INTERVAL_MS = 1000;
/** How often `message wait` and `message listen` look for new messages. */
export const RECEIVE_POLL_INTERVAL_MS = 250;

export interface WaitOptions extends NotifyOptions {
  /** The member waiting for messages (the wait's subject). */
  memberId: number;
  timeoutMs: number;
  rotationIntervalMs?: number;
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

async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  try {
    await delay(Math.max(0, ms), undefined, { signal });
  } catch {
    // Aborted: the caller's loop notices the signal.
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
 * WaitError carrying them.
 */
export async function waitForMessages(options: WaitOptions): Promise<WaitResult> {
  const { broker, memberId, signal } = options;
  const clock = options.clock ?? systemClock;
  const rotationInterval = options.rotationIntervalMs ?? WAIT_ROTATION_INTERVAL_MS;
  const pollInterval = options.pollIntervalMs ?? RECEIVE_POLL_INTERVAL_MS;
  const { fleetId } = broker.getMember(memberId);
  const deadline = clock.now() + options.timeoutMs;
  const attempted = new Set<number>();
  const result: WaitResult = { memberId, messages: [], timedOut: false, notified: [], diagnostics: [] };
  let lastAttempted = 0;
  let nextRotation = clock.now();
  try {
    for (;;) {
      if (signal?.aborted) throw new AbortedError('message wait was interrupted', { delivery: 'not_sent' });
      result.messages = broker.pollMessages(memberId).reverse();
      if (result.messages.length > 0) return result;
      if (clock.now() >= deadline) return { ...result, timedOut: true };
      if (clock.now() >= nextRotation) {
        nextRotation = clock.now() + rotationInterval;
        for (const candidate of rotate(broker.recipientsAwaitingNotification(fleetId, [memberId]), lastAttempted)) {
          const attempt = await deliverPending({ ...options, recipientId: candidate, fleetId, attempted });
          if (attempt.notified.length === 0 && attempt.diagnostic === null && attempt.held === null) continue;
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
      await pause(Math.min(pollInterval, deadline - clock.now(), nextRotation - clock.now()), signal);
    }
  } catch (error) {
    if (error instanceof AbortedError) throw error;
    throw new WaitError(error, result.diagnostics);
  }
}

export interface ListenOptions extends Pick<NotifyOptions, 'broker'> {
  memberId: number;
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
  const pollInterval = options.pollIntervalMs ?? RECEIVE_POLL_INTERVAL_MS;
  const backlog = broker.deliveriesAfter(memberId, 0);
  for (const message of backlog.messages) if (message.statusState === 'input_required') yield message;
  let cursor = backlog.latestMessageId;
  while (!signal?.aborted) {
    await pause(pollInterval, signal);
    if (signal?.aborted) return;
    const fresh = broker.deliveriesAfter(memberId, cursor);
    yield* fresh.messages;
    cursor = fresh.latestMessageId;
  }
}
