import type { ActivePlacement, Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import { TRANSPORT_BUDGET_MS } from './dispatch.js';
import { PaneInputBusyError, RegistryStateError } from './errors.js';
import { placementLockKey, releaseAll, type PaneLocks } from './lock.js';
import { isConcrete, samePlacement, type ConcretePlacement, type Placement } from './model.js';
import { terminationSpans, type TerminationSpans } from './signals.js';

export interface LifecycleOptions {
  broker: Broker;
  locks: PaneLocks;
  clock?: Clock;
  spans?: TerminationSpans;
}

export interface FleetDeleted {
  deregisteredCount: number;
  /** The placements that were active, and locked, when the fleet was deleted. */
  placements: ActivePlacement[];
}

/**
 * Deletes a fleet while holding every active placement's pane input lock, taken in sorted
 * key order within one five-second deadline (retried every 50 ms). The transaction
 * revalidates the placement set; a changed set releases every lock and starts over within
 * the same deadline. On timeout nothing has changed.
 */
export async function deleteFleetLocked(options: LifecycleOptions & { fleetId: number }): Promise<FleetDeleted> {
  const { broker, locks, fleetId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  broker.getFleet(fleetId);
  for (let round = 0; ; round += 1) {
    const placements = broker.activePlacements(fleetId);
    const memberByKey = new Map<string, number>();
    for (const { memberId, placement } of placements) {
      const key = placementLockKey(placement);
      if (!memberByKey.has(key)) memberByKey.set(key, memberId);
    }
    const busy = (key: string): PaneInputBusyError =>
      new PaneInputBusyError(`fleet ${fleetId} pane input remained busy for 5 seconds at member ${memberByKey.get(key)}; fleet was not deleted.`);
    // A placement set that keeps changing must not outlast the deadline either.
    if (round > 0 && clock.now() >= deadline && memberByKey.size > 0) throw busy([...memberByKey.keys()].sort()[0]!);
    const taken = await locks.acquireAll(memberByKey.keys(), { deadline, clock });
    if ('busyKey' in taken) throw busy(taken.busyKey);
    spans.enter();
    try {
      const deletion = broker.deleteFleet(fleetId, placements);
      if (deletion.status === 'deleted') return { deregisteredCount: deletion.deregisteredCount, placements };
    } finally {
      releaseAll(taken.guards);
      spans.exit();
    }
  }
}

/** Closes a member's pane through its multiplexer (and tidies that pane's layout). */
export type PaneCloser = (placement: ConcretePlacement) => Promise<void>;

export interface MemberDeleted {
  memberId: number;
  /** The placement the member had: null without one, pane null while it was pending. */
  placement: Placement | null;
}

/**
 * Deletes an ordinary member: with a concrete pane, its pane input lock is taken (within
 * a five-second deadline) and the placement revalidated before the pane is closed and the
 * member deregistered; without one it is a registry change only. The root director is refused.
 */
export async function deleteMemberLocked(options: LifecycleOptions & { memberId: number; closePane: PaneCloser }): Promise<MemberDeleted> {
  const { broker, locks, memberId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  const busy = (): PaneInputBusyError => new PaneInputBusyError(`member ${memberId}'s pane input remained busy for 5 seconds; member was not deleted.`);
  for (let round = 0; ; round += 1) {
    // A placement that keeps changing must not outlast the deadline.
    if (round > 0 && clock.now() >= deadline) throw busy();
    const member = broker.getMember(memberId);
    if (member.kind === 'director') throw new RegistryStateError("cannot deregister the root Director; use 'drover fleet delete' instead");
    const placement = member.placement;
    if (!isConcrete(placement)) {
      const outcome = await spans.run(() => broker.deregisterMember(memberId, placement));
      if (outcome.status === 'deregistered') return { memberId, placement };
      continue;
    }
    const guard = await locks.acquire(placementLockKey(placement), { deadline, clock });
    if (!guard) throw busy();
    spans.enter();
    try {
      if (!samePlacement(broker.getMember(memberId).placement, placement)) continue;
      await options.closePane(placement);
      broker.deregisterMember(memberId);
      return { memberId, placement };
    } finally {
      guard.release();
      spans.exit();
    }
  }
}
