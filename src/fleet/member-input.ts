import type { Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import { INPUT_RESERVATION_MS, TRANSPORT_BUDGET_MS, submitLine } from './dispatch.js';
import type { PortOpener } from './delivery.js';
import { PaneInputBusyError, PlacementError } from './errors.js';
import { placementLockKey, type PaneLocks } from './lock.js';
import { isConcrete, samePlacement, type ConcretePlacement } from './model.js';
import { validateLiteralLine } from './notification.js';
import { terminationSpans, type TerminationSpans } from './signals.js';

export interface MemberInputOptions {
  broker: Broker;
  locks: PaneLocks;
  memberId: number;
  openPort: PortOpener;
  clock?: Clock;
  spans?: TerminationSpans;
}

export interface MemberDispatch {
  memberId: number;
  placement: ConcretePlacement;
  /** Exactly what was typed before Enter. */
  line: string;
}

/** Types a prompt into a member's pane as a submitted user turn (Escape lead). */
export async function promptMember(options: MemberInputOptions & { text: string }): Promise<MemberDispatch> {
  validateLiteralLine(options.text, 'text');
  return dispatchLine(options, options.text, 'prompt');
}

/** Types `! COMMAND` so the member's coding agent runs the command natively (Escape lead). */
export async function execInMember(options: MemberInputOptions & { command: string }): Promise<MemberDispatch> {
  validateLiteralLine(options.command, 'command');
  return dispatchLine(options, `! ${options.command}`, 'native command');
}

async function dispatchLine(options: MemberInputOptions, line: string, what: 'prompt' | 'native command'): Promise<MemberDispatch> {
  const { broker, locks, memberId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  const verb = what === 'prompt' ? 'prompt' : 'exec';

  const placement = broker.getMember(memberId).placement;
  if (placement === null) throw new PlacementError(`member ${memberId} has no placement row; it was not spawned via \`drover member create\`.`);
  if (!isConcrete(placement)) throw new PlacementError(`member ${memberId} has no pane yet (pending placement) — nothing to ${verb}.`);

  const guard = await locks.acquire(placementLockKey(placement), { deadline: deadline - INPUT_RESERVATION_MS, clock });
  if (!guard) throw new PaneInputBusyError(`member ${memberId}'s pane input remained busy; ${what} was not dispatched.`);
  spans.enter();
  try {
    const current = broker.store.withBusyTimeout(deadline - clock.now(), () => broker.getMember(memberId).placement);
    if (!samePlacement(current, placement)) {
      throw new PlacementError(`member ${memberId}'s placement changed while waiting for its pane input; ${what} was not dispatched.`);
    }
    const port = await options.openPort(placement);
    await submitLine({ port, pane: placement.pane, line, lead: 'escape', deadline, clock });
    return { memberId, placement, line };
  } finally {
    guard.release();
    spans.exit();
  }
}
