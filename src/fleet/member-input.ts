import { randomUUID } from 'node:crypto';
import { AbortedError, terminationSpans, type TerminationSpans } from '../process/index.js';
import type { Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import { INPUT_RESERVATION_MS, TRANSPORT_BUDGET_MS, leadFor, submitAgentLine, submitLine } from './dispatch.js';
import { codingAgentRules, paneGoneReason, type PortOpener } from './delivery.js';
import { isPaneGone, isServerReplaced, PaneGoneError, PaneInputBusyError, PaneInputError, PlacementError, PlacementStaleError } from './errors.js';
import { placementLockKey, type PaneLocks } from './lock.js';
import { isConcrete, isRemote, samePlacement, type ConcretePlacement } from './model.js';
import { validateLiteralLine } from './notification.js';
import { hostPaneTarget, noRemotePanes, REMOTE_DELIVERY_BUDGET_MS, remoteReceiptReason, remoteRefusal, type RemotePanes } from './remote.js';

export interface MemberInputOptions {
  broker: Broker;
  locks: PaneLocks;
  memberId: number;
  openPort: PortOpener;
  clock?: Clock;
  spans?: TerminationSpans;
  /** An interrupt before the first keystroke stops the dispatch (AbortedError): nothing is typed. Once typing began, the span defers it. */
  signal?: AbortSignal;
  /** Reaches a member placed on another host; without it such a member is refused. */
  remote?: RemotePanes;
}

export interface MemberDispatch {
  memberId: number;
  placement: ConcretePlacement;
  /** Exactly what was typed before Enter. */
  line: string;
}

/**
 * Submits a prompt to a member as a user turn: to a coding agent on its screen's evidence
 * (never into a busy turn or a dialog), to any other program as a line after Escape (a shell
 * at its prompt without it: see leadFor).
 */
export async function promptMember(options: MemberInputOptions & { text: string }): Promise<MemberDispatch> {
  validateLiteralLine(options.text, 'text');
  return dispatchLine(options, options.text, 'prompt');
}

/**
 * Types `! COMMAND` as keys (so the agent's `!` shell mode catches it) and Enter, only once the
 * agent's screen shows its composer; any other program gets the line as a prompt does.
 */
export async function execInMember(options: MemberInputOptions & { command: string }): Promise<MemberDispatch> {
  validateLiteralLine(options.command, 'command');
  const { placement } = await options.broker.getMember(options.memberId);
  // Shell mode is entered by typing `!` at an empty composer; a host's delivery pastes a whole line instead.
  if (placement !== null && isRemote(placement)) {
    throw new PlacementError(`member ${options.memberId}'s pane is on host ${placement.host}: exec types \`! COMMAND\` as keys at an empty composer, which only works on this machine; send it as a prompt (\`member prompt\`) or run the command on that host`);
  }
  return dispatchLine(options, `! ${options.command}`, 'native command');
}

async function dispatchLine(options: MemberInputOptions, line: string, what: 'prompt' | 'native command'): Promise<MemberDispatch> {
  const { broker, locks, memberId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  const verb = what === 'prompt' ? 'prompt' : 'exec';

  const member = await broker.getMember(memberId);
  const placement = member.placement;
  const rules = codingAgentRules(member.codingAgent);
  if (placement === null) throw new PlacementError(`member ${memberId} has no placement row; it was not spawned via \`drover member create\`.`);
  if (!isConcrete(placement)) throw new PlacementError(`member ${memberId} has no pane yet (pending placement) — nothing to ${verb}.`);

  const guard = await locks.acquire(placementLockKey(placement), { deadline: deadline - INPUT_RESERVATION_MS, clock, signal: options.signal });
  if (!guard) throw new PaneInputBusyError(`member ${memberId}'s pane input remained busy; ${what} was not dispatched.`);
  spans.enter();
  try {
    // An interrupt that came as the lock was taken still stops everything: nothing is typed yet.
    if (options.signal?.aborted) throw new AbortedError(`interrupted before the ${what} was typed; it was not dispatched`, { phase: 'input', delivery: 'not_sent' });
    const current = (await broker.within(deadline - clock.now()).getMember(memberId)).placement;
    if (!samePlacement(current, placement)) {
      throw new PlacementError(`member ${memberId}'s placement changed while waiting for its pane input; ${what} was not dispatched.`);
    }
    if (placement.goneAt !== null) throw new PaneGoneError(placement.pane, { cause: new Error(paneGoneReason(placement.pane)) });
    if (isRemote(placement)) {
      await promptOnHost(options, placement, line, what, rules === undefined);
      return { memberId, placement, line };
    }
    // openPort refuses a stale placement, or one whose server turns out replaced now.
    const input = await options.openPort(placement, deadline);
    try {
      if (rules === undefined) {
        await submitLine({ input, line, lead: await leadFor(input, deadline), deadline, clock });
      } else if (what === 'prompt') {
        const outcome = await submitAgentLine({ input, line, rules, deadline, clock });
        if (outcome.status !== 'submitted') {
          throw new PaneInputError(`the ${what} to member ${memberId} was ${outcome.status.replace('_', ' ')}: ${outcome.reason}`, 'enter', {
            delivery: outcome.stage === 'not_typed' ? 'not_sent' : 'possibly_sent',
          });
        }
      } else {
        const reading = rules.read(await input.channel(deadline).read());
        if (reading.phase !== 'composer' || reading.composer?.text !== '') {
          throw new PaneInputError(`member ${memberId}'s agent is not at an empty composer (${reading.detail}); the ${what} was not typed`, 'literal', { delivery: 'not_sent' });
        }
        await submitLine({ input, line, lead: 'direct', deadline, clock });
      }
    } catch (error) {
      if (isPaneGone(error)) await broker.markPaneGone(memberId, placement.pane);
      if (isServerReplaced(error)) {
        await broker.markServerReplaced(memberId, placement.pane);
        throw new PlacementStaleError(memberId, placement.pane, placement.backend);
      }
      throw error;
    }
    return { memberId, placement, line };
  } finally {
    guard.release();
    spans.exit();
  }
}

/**
 * A prompt to a member on another host, typed by that host's drover on its own evidence and
 * under its own pane lock (the caller holds this machine's lock for the member). Anything but a
 * `submitted` receipt is a failure that says what the host saw.
 */
async function promptOnHost(options: MemberInputOptions, placement: ConcretePlacement & { host: string }, line: string, what: 'prompt' | 'native command', toShell: boolean): Promise<void> {
  const { broker, memberId } = options;
  if (options.remote === undefined) throw noRemotePanes(memberId, placement.host);
  if (placement.staleAt !== null) throw new PlacementStaleError(memberId, placement.pane, placement.backend);
  let receipt;
  try {
    receipt = await options.remote.deliver({ host: placement.host, pane: hostPaneTarget(placement), line, toShell, deliveryId: `prompt-${randomUUID()}`, budgetMs: REMOTE_DELIVERY_BUDGET_MS });
  } catch (error) {
    throw await remoteRefusal(broker, memberId, placement, error);
  }
  if (receipt.status !== 'submitted') {
    throw new PaneInputError(`the ${what} to member ${memberId} was not submitted: ${remoteReceiptReason(placement.host, receipt)}`, 'enter', { delivery: receipt.typed ? 'possibly_sent' : 'not_sent' });
  }
}
