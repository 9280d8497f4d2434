import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { isAgentKind, rulesFor, SUBMIT_TIMEOUT_MS, type AgentScreenRules } from '../agents/index.js';
import { AbortedError, messageOf, terminationSpans, type TerminationSpans } from '../process/index.js';
import type { BroadcastInput, Broker, ClaimRequest, DeliverySnapshot, SendInput } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import {
  ENTER_MS,
  INPUT_RESERVATION_MS,
  MIN_LITERAL_MS,
  TRANSPORT_BUDGET_MS,
  INSUFFICIENT_BUDGET_MESSAGE,
  leadFor,
  leadReservation,
  provablyNotStarted,
  resumeLine,
  submitAgentLine,
  submitLine,
  type Lead,
  type PaneInput,
} from './dispatch.js';
import { isPaneGone, isServerReplaced, PaneLockError, PlacementStaleError, StoreUnavailableError } from './errors.js';
import { placementLockKey, type PaneLocks } from './lock.js';
import { hostPaneTarget, noRemotePanes, REMOTE_DELIVERY_BUDGET_MS, remoteDeliveryId, remoteReceiptReason, remoteRefusal, type RemotePanes } from './remote.js';
import { isRemote, samePlacement, type BroadcastResult, type CodingAgent, type ConcretePlacement, type Message } from './model.js';
import { formatNotificationLine, shellPromptLine } from './notification.js';

/** Finalization (the last stamp) may run this long past the start of finalization. */
export const FINALIZATION_GRACE_MS = 1000;
export const LOCK_BUSY_REASON = 'pane input remained busy';
export const CLAIMED_ELSEWHERE_REASON = 'another dispatcher holds its delivery claim';
/**
 * How long a delivery claim stands unless stamped or released: one hold's whole budget, the
 * watch after Enter and the stamp's grace. A dispatcher that died leaves its claim to run out.
 */
export const CLAIM_LEASE_MS = TRANSPORT_BUDGET_MS + SUBMIT_TIMEOUT_MS + ENTER_MS + FINALIZATION_GRACE_MS;

/** A claim on a message for a pane on another host stands through the host's whole answer. */
const REMOTE_CLAIM_LEASE_MS = REMOTE_DELIVERY_BUDGET_MS + FINALIZATION_GRACE_MS;

/** This machine's prefix of a claimant: claims made here were made under this machine's pane locks. */
const CLAIM_HOST = `${hostname()}/`;
/** This process as a claimant. */
const CLAIMANT = `${CLAIM_HOST}${process.pid}/${randomUUID().slice(0, 8)}`;

function claimRequest(exclude: ReadonlySet<number>, leaseMs: number): ClaimRequest {
  return { exclude, claimant: CLAIMANT, voids: CLAIM_HOST, leaseMs };
}

/**
 * Opens a placement's pane for input through its multiplexer's port, once that multiplexer is
 * proven to be the server the pane was placed on, asking it by `deadline` (clock.now() units).
 */
export type PortOpener = (placement: ConcretePlacement, deadline: number) => Promise<PaneInput>;

export interface DeliveryOptions {
  broker: Broker;
  locks: PaneLocks;
  recipientId: number;
  /** The fleet the invocation acts in; a recipient elsewhere gets nothing. */
  fleetId: number;
  openPort: PortOpener;
  /** Reaches panes on other hosts; without it a member placed on another host is not notified. */
  remote?: RemotePanes;
  clock?: Clock;
  spans?: TerminationSpans;
  /**
   * Messages this invocation has already attempted. Pass the same set to every attempt of
   * one invocation so that each pending message is attempted at most once.
   */
  attempted?: Set<number>;
  /** Told about a draft that sat in a member's composer and was cleared before a line was typed. */
  onDraftCleared?: (memberId: number, draft: string) => void;
  /** The screen rules of a member's coding agent (default: drover's own; undefined for a plain shell). */
  agentRules?: (agent: CodingAgent) => AgentScreenRules | undefined;
  /** An interrupt before the first keystroke leaves the message pending, untyped. Once typing began, the span defers it. */
  signal?: AbortSignal;
}

/** The warning for a cleared draft: the text is shown, so nothing a person typed is lost unseen. */
export function draftClearedWarning(memberId: number, draft: string): string {
  return `cleared a draft from member ${memberId}'s composer before typing the message: ${JSON.stringify(draft)}`;
}

/** One message left pending, and the diagnostic that says so. */
export interface NotNotified {
  messageId: number;
  memberId: number;
  reason: string;
  /** `message ID was not notified to member MEMBER: REASON; the next send … retries it.` */
  diagnostic: string;
}

export type HoldReason = 'pending_placement' | 'placement_changed';

export interface DeliveryAttempt {
  /** Messages this attempt established as notified, in delivery order. */
  notified: number[];
  /** Set when delivery waits for a placement; the messages stay pending without a diagnostic. */
  held: HoldReason | null;
  diagnostic: NotNotified | null;
}

/** The screen rules drover has for a coding agent; undefined for a plain shell. */
export function codingAgentRules(agent: CodingAgent): AgentScreenRules | undefined {
  return isAgentKind(agent) ? rulesFor(agent) : undefined;
}

export function paneGoneReason(pane: string): string {
  return `its pane ${pane} no longer exists (the member is marked gone; its messages stay stored)`;
}

export function notNotifiedDiagnostic(messageId: number, memberId: number, reason: string): string {
  return `message ${messageId} was not notified to member ${memberId}: ${reason}; the next send to member ${memberId} or the next message wait retries it.`;
}

type Budgeted<T> = { value: T } | { failure: string };

/**
 * A store step under the lock, bounded by the remaining budget. A store busy or unreachable,
 * or out of budget, is a notification failure; anything else (corruption, unreadable
 * storage) keeps its cause.
 */
async function budgeted<T>(broker: Broker, remainingMs: number, step: (bounded: Broker) => Promise<T>): Promise<Budgeted<T>> {
  if (remainingMs <= 0) return { failure: 'the pane input budget ran out' };
  try {
    return { value: await step(broker.within(remainingMs)) };
  } catch (error) {
    if (error instanceof StoreUnavailableError) return { failure: error.message };
    throw error;
  }
}

/** How a fresh snapshot compares with the placement the lock was taken for. */
function placementVerdict(snapshot: DeliverySnapshot, locked: ConcretePlacement): 'same' | 'changed' | 'gone' {
  if (snapshot.eligibility === 'pending_placement') return 'changed';
  if (snapshot.eligibility !== 'eligible') return 'gone';
  return samePlacement(snapshot.placement, locked) ? 'same' : 'changed';
}

/** A store served from another machine: its members' panes are not this machine's to type into. */
function panesElsewhere(broker: Broker): boolean {
  return broker.store.via !== undefined;
}

/**
 * Drains a recipient's messages awaiting notification into its pane, oldest first by
 * (created_at, message_id), under one pane input lock hold and one five-second budget.
 * The first line leads with Escape (a shell at its prompt gets ctrl+c instead: leadFor), later
 * lines are typed directly (each after ctrl+c, for a shell). notified_at is stamped only after a complete submission, so delivery is
 * at-least-once: any failure leaves the message pending with one not-notified diagnostic, for
 * the next send or `message wait`.
 * Store failures other than busy, unreachable or out of budget are thrown with their cause.
 */
export async function deliverPending(options: DeliveryOptions): Promise<DeliveryAttempt> {
  const { broker, locks, recipientId, fleetId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const attempted = options.attempted ?? new Set<number>();
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  const result: DeliveryAttempt = { notified: [], held: null, diagnostic: null };
  const fail = (message: Pick<Message, 'messageId'>, reason: string): DeliveryAttempt => {
    attempted.add(message.messageId);
    result.diagnostic = { messageId: message.messageId, memberId: recipientId, reason, diagnostic: notNotifiedDiagnostic(message.messageId, recipientId, reason) };
    return result;
  };
  const hold = (reason: HoldReason): DeliveryAttempt => {
    result.held = reason;
    return result;
  };

  // A store served from another machine: its members' panes are that machine's, whose own
  // sends and `message wait` notify them.
  if (panesElsewhere(broker)) return result;
  // 1. The eligibility snapshot, before any lock or multiplexer.
  const initial = await broker.deliverySnapshot(recipientId, fleetId, attempted);
  if (initial.next === null) return result;
  if (initial.eligibility === 'pending_placement') return hold('pending_placement');
  if (initial.eligibility === 'pane_gone') return fail(initial.next, paneGoneReason(initial.placement!.pane));
  if (initial.eligibility === 'server_replaced') return fail(initial.next, new PlacementStaleError(recipientId, initial.placement!.pane, initial.placement!.backend).message);
  if (initial.eligibility !== 'eligible') return result;
  const placement = initial.placement!;

  // 2. The pane input lock, within the budget minus the input reservation.
  let guard;
  try {
    guard = await locks.acquire(placementLockKey(placement), { deadline: deadline - INPUT_RESERVATION_MS, clock, signal: options.signal });
  } catch (error) {
    if (error instanceof PaneLockError || error instanceof AbortedError) return fail(initial.next, error.message);
    throw error;
  }
  if (!guard) {
    const now = await broker.deliverySnapshot(recipientId, fleetId, attempted);
    return now.next ? fail(now.next, LOCK_BUSY_REASON) : result;
  }

  spans.enter();
  try {
    if (options.signal?.aborted) return fail(initial.next, 'interrupted before the line was typed; nothing was typed');
    // 3. Revalidate under the lock, then resolve the multiplexer.
    const revalidated = await budgeted(broker, deadline - clock.now(), (bounded) => bounded.deliverySnapshot(recipientId, fleetId, attempted));
    if ('failure' in revalidated) return fail(initial.next, revalidated.failure);
    const verdict = placementVerdict(revalidated.value, placement);
    if (verdict === 'gone' || revalidated.value.next === null) return result;
    if (verdict === 'changed') return hold('placement_changed');
    // A pane on another host is typed into by that host's drover; here only its receipt is read.
    const remote = isRemote(placement) ? { host: placement.host, panes: options.remote } : null;
    if (remote !== null && remote.panes === undefined) return fail(revalidated.value.next, noRemotePanes(recipientId, remote.host).message);
    // The host found its multiplexer restarted once: that placement's pane id names nothing of the member's now.
    if (remote !== null && placement.staleAt !== null) return fail(revalidated.value.next, new PlacementStaleError(recipientId, placement.pane, placement.backend).message);
    let input: PaneInput | null = null;
    if (remote === null) {
      try {
        input = await options.openPort(placement, deadline);
      } catch (error) {
        return fail(revalidated.value.next, messageOf(error));
      }
    }

    // The lead of the hold's first line (leadFor); every later line of the hold goes directly.
    let holdLead: Lead | undefined;
    for (;;) {
      // 4. The oldest message not yet attempted, claimed, with the recipient re-read.
      const read = await budgeted(broker, deadline - clock.now(), (bounded) => bounded.claimNext(recipientId, fleetId, claimRequest(attempted, remote === null ? CLAIM_LEASE_MS : REMOTE_CLAIM_LEASE_MS)));
      if ('failure' in read) return result.notified.length === 0 ? fail(initial.next, read.failure) : result;
      const message = read.value.next;
      // A claim is given back when its message is not stamped and nothing of its line may have
      // reached the pane; one that cannot be (the store is unreachable) runs out with its lease.
      // A claim kept after its line may have gone in tells whoever delivers next to look for it,
      // so one taken over from such an attempt is kept until the message is stamped.
      const giveBack = async (): Promise<void> => {
        if (message !== null && !read.value.earlierAttempt) await broker.within(FINALIZATION_GRACE_MS).releaseClaim(message.messageId, CLAIMANT).catch(() => undefined);
      };
      const failClaimed = async (reason: string): Promise<DeliveryAttempt> => {
        await giveBack();
        return fail(message!, reason);
      };
      const current = placementVerdict(read.value, placement);
      if (current !== 'same') await giveBack();
      if (current === 'gone') return result;
      if (current === 'changed') return hold('placement_changed');
      if (read.value.claimedElsewhere !== null) return result.notified.length === 0 ? fail(read.value.claimedElsewhere, CLAIMED_ELSEWHERE_REASON) : result;
      if (message === null) return result;

      const rules = read.value.codingAgent === null ? undefined : (options.agentRules ?? codingAgentRules)(read.value.codingAgent);
      if (remote !== null) {
        // A later line starts only within this hold's budget; each gets the remote budget.
        if (result.notified.length > 0 && clock.now() >= deadline) {
          await giveBack();
          return result;
        }
        attempted.add(message.messageId);
        let receipt;
        try {
          receipt = await remote.panes!.deliver({
            host: remote.host,
            pane: hostPaneTarget(placement),
            // A plain-shell member's line is inert there too (its pane may run a shell behind another program).
            line: rules === undefined ? shellPromptLine(message) : formatNotificationLine(message, { escapeLead: false }),
            toShell: rules === undefined,
            deliveryId: remoteDeliveryId(broker.store.location, message.messageId),
            budgetMs: REMOTE_DELIVERY_BUDGET_MS,
          });
        } catch (error) {
          return failClaimed(messageOf(await remoteRefusal(broker, recipientId, placement, error)));
        }
        if (receipt.status !== 'submitted') return failClaimed(remoteReceiptReason(remote.host, receipt));
      } else {
        const first = holdLead === undefined;
        // A shell's later lines are cancelled into as its first was: someone may have started typing there meanwhile.
        const lead: Lead = rules !== undefined ? 'direct' : first ? await leadFor(input!, deadline) : holdLead === 'cancel' ? 'cancel' : 'direct';
        // 5. Enough budget left for this lead's reservation plus a minimal literal?
        if (deadline - clock.now() < (rules === undefined ? leadReservation(lead) : 0) + MIN_LITERAL_MS) {
          if (result.notified.length === 0) return failClaimed(INSUFFICIENT_BUDGET_MESSAGE);
          await giveBack();
          return result;
        }
        attempted.add(message.messageId);

        // 6. Submit its line: to a coding agent on its screen's evidence, to a shell as keystrokes.
        try {
          if (rules === undefined) {
            holdLead ??= lead;
            // Inert whatever runs there (a shell may sit behind another program); the clause about
            // a dismissed prompt goes with every line of a hold that led with Escape.
            const line = shellPromptLine(message, { escapeLead: holdLead === 'escape' });
            const resumed = read.value.earlierAttempt ? await resumeLine({ input: input!, line, deadline }) : 'absent';
            if (resumed === 'absent') await submitLine({ input: input!, line, lead, deadline, clock });
          } else {
            const outcome = await submitAgentLine({ input: input!, line: formatNotificationLine(message, { escapeLead: false }), rules, deadline, clock });
            if (outcome.draftCleared !== null) options.onDraftCleared?.(recipientId, outcome.draftCleared);
            if (outcome.status !== 'submitted') {
              const failed = await failClaimed(`${outcome.status.replace('_', ' ')}: ${outcome.reason}`);
              // Found mid-turn with nothing typed (often the turn this same wait's previous line
              // started): not an attempt, so a later retry of the same `message wait` may deliver it.
              if (outcome.stage === 'not_typed' && outcome.reading.phase === 'busy') attempted.delete(message.messageId);
              return failed;
            }
          }
        } catch (error) {
          if (isPaneGone(error)) {
            await broker.markPaneGone(recipientId, placement.pane);
            return failClaimed(paneGoneReason(placement.pane));
          }
          if (isServerReplaced(error)) {
            await broker.markServerReplaced(recipientId, placement.pane);
            return failClaimed(new PlacementStaleError(recipientId, placement.pane, placement.backend).message);
          }
          // Typing or Enter may have gone through: the claim stays as the mark of it.
          return provablyNotStarted(error) ? failClaimed(messageOf(error)) : fail(message, messageOf(error));
        }
      }

      // 7. Stamp while still pending; an ACK or another invocation's stamp also counts.
      const finalDeadline = Math.max(deadline, clock.now() + FINALIZATION_GRACE_MS);
      const stamp = await budgeted(broker, finalDeadline - clock.now(), (bounded) => bounded.stampNotified(message.messageId));
      // The line went in: the claim stays as the mark of it, for whoever delivers it next.
      if ('failure' in stamp) return fail(message, stamp.failure);
      if (stamp.value !== 'missing') result.notified.push(message.messageId);
      // One line per hold for a coding agent: its turn on that line runs now, and between Enter
      // and the busy screen some agents briefly draw an idle composer that would take, and lose,
      // a second paste. The next line goes in the next hold, once the turn is over.
      if (rules !== undefined) return result;
    }
  } finally {
    guard.release();
    spans.exit();
  }
}

export type NotifyOptions = Omit<DeliveryOptions, 'recipientId' | 'fleetId'>;

/**
 * A failure other than a notification failure (corrupt or unreadable storage, …) after the
 * message was committed: the message stands, the cause is kept.
 */
export interface PersistedFailure {
  cause: unknown;
  /** `message ID was persisted, but notifying member MEMBER failed: CAUSE` */
  diagnostic: string;
}

function persistedFailure(message: Message, cause: unknown): PersistedFailure {
  return { cause, diagnostic: `message ${message.messageId} was persisted, but notifying member ${message.ownerMemberId} failed: ${messageOf(cause)}` };
}

export interface SendResult {
  message: Message;
  /** True exactly when this invocation delivered the newly committed message. */
  notificationSent: boolean;
  diagnostic: NotNotified | null;
  failure: PersistedFailure | null;
}

/**
 * `message send`: persists the message, then drains the recipient's pending messages into
 * its pane. A self-send, a director recipient or a recipient without a concrete pane gets
 * no pane input. No notification outcome undoes the committed message.
 */
export async function sendAndNotify(options: NotifyOptions & SendInput): Promise<SendResult> {
  const message = await options.broker.sendMessage({ from: options.from, to: options.to, text: options.text, idempotencyKey: options.idempotencyKey });
  const result: SendResult = { message, notificationSent: false, diagnostic: null, failure: null };
  if (message.fromMemberId === message.ownerMemberId) return result;
  try {
    const { fleetId } = await options.broker.getMember(message.ownerMemberId);
    const attempt = await deliverPending({ ...options, recipientId: message.ownerMemberId, fleetId });
    const notificationSent = attempt.notified.includes(message.messageId);
    // As stored after the delivery that stamped it, not as it was before.
    return { ...result, message: notificationSent ? await options.broker.showMessage(message.messageId) : message, notificationSent, diagnostic: attempt.diagnostic };
  } catch (cause) {
    return { ...result, failure: persistedFailure(message, cause) };
  }
}

export interface BroadcastNotifyResult extends BroadcastResult {
  /** Recipients whose new delivery this invocation notified. */
  delivered: number;
  diagnostics: NotNotified[];
  /** Set when draining stopped on a failure other than a notification failure. */
  failure: PersistedFailure | null;
}

/** `message broadcast`: persists the N+1 rows, then drains each recipient in turn. */
export async function broadcastAndNotify(options: NotifyOptions & BroadcastInput): Promise<BroadcastNotifyResult> {
  const result = await options.broker.broadcastMessage({ from: options.from, text: options.text, idempotencyKey: options.idempotencyKey });
  const { fleetId } = await options.broker.getMember(options.from);
  const attempted = options.attempted ?? new Set<number>();
  let delivered = 0;
  const diagnostics: NotNotified[] = [];
  for (const delivery of result.deliveries) {
    try {
      const attempt = await deliverPending({ ...options, attempted, recipientId: delivery.ownerMemberId, fleetId });
      if (attempt.notified.includes(delivery.messageId)) delivered += 1;
      if (attempt.diagnostic) diagnostics.push(attempt.diagnostic);
    } catch (cause) {
      return { ...result, delivered, diagnostics, failure: persistedFailure(delivery, cause) };
    }
  }
  // The deliveries as stored after the deliveries that stamped them, not as they were before.
  const deliveries = delivered === 0 ? result.deliveries : await Promise.all(result.deliveries.map((delivery) => options.broker.showMessage(delivery.messageId)));
  return { ...result, deliveries, delivered, diagnostics, failure: null };
}
