import { sameActivePlacements, type ActivePlacement, type Broker } from './broker.js';
import { systemClock, type Clock } from './clock.js';
import { TRANSPORT_BUDGET_MS } from './dispatch.js';
import { fleetNotFound, PaneInputBusyError, RegistryStateError } from './errors.js';
import { holdingKeys, placementLockKey, type PaneLocks } from './lock.js';
import { isConcrete, samePlacement, type ConcretePlacement, type Placement } from './model.js';
import { messageOf, terminationSpans, type TerminationSpans } from '../process/index.js';

export interface LifecycleOptions {
  broker: Broker;
  locks: PaneLocks;
  clock?: Clock;
  spans?: TerminationSpans;
}

/**
 * Tidies the layout once the registry is final (the member column re-equalized). It gets the
 * operation's deadline; a failure is reported as a diagnostic and never undoes the deletion.
 */
export type LayoutTidy = (deadline: number) => Promise<void>;

/** Closes the panes of a fleet's placements while their locks are held; returns the layout tidy. */
export type FleetPaneCloser = (placements: readonly ActivePlacement[], deadline: number) => Promise<LayoutTidy | void>;

export interface FleetDeleted {
  deregisteredCount: number;
  /** The placements that were active, and locked, when the fleet was deleted. */
  placements: ActivePlacement[];
  /** What went wrong after the deletion was final (layout restoration). */
  diagnostics: string[];
}

async function tidyAfter(tidy: LayoutTidy | void, deadline: number, what: string): Promise<string[]> {
  if (!tidy) return [];
  try {
    await tidy(deadline);
    return [];
  } catch (error) {
    return [`${what}: ${messageOf(error)}`];
  }
}

/**
 * Deletes a fleet while holding every active placement's pane input lock, taken in sorted
 * key order within one five-second deadline (retried every 50 ms). Under the locks the
 * placement set is re-read (a changed set releases every lock and starts over within the
 * same deadline), `closePanes` runs, and the transaction revalidates the set once more
 * before deleting. On timeout nothing has changed.
 */
export async function deleteFleetLocked(options: LifecycleOptions & { fleetId: number; closePanes?: FleetPaneCloser }): Promise<FleetDeleted> {
  const { broker, locks, fleetId } = options;
  const clock = options.clock ?? systemClock;
  const spans = options.spans ?? terminationSpans;
  const deadline = clock.now() + TRANSPORT_BUDGET_MS;
  // A deleted fleet is gone, as a deregistered member is: deleting it again finds nothing.
  if ((await broker.getFleet(fleetId)).deletedAt !== null) throw fleetNotFound(fleetId);
  for (let round = 0; ; round += 1) {
    const placements = await broker.activePlacements(fleetId);
    const memberByKey = new Map<string, number>();
    for (const { memberId, placement } of placements) {
      const key = placementLockKey(placement);
      if (!memberByKey.has(key)) memberByKey.set(key, memberId);
    }
    const busy = (key: string): PaneInputBusyError =>
      new PaneInputBusyError(`fleet ${fleetId} pane input remained busy for 5 seconds at member ${memberByKey.get(key)}; fleet was not deleted.`);
    // A placement set that keeps changing must not outlast the deadline either.
    if (round > 0 && clock.now() >= deadline && memberByKey.size > 0) throw busy([...memberByKey.keys()].sort()[0]!);
    const deleted = await holdingKeys(locks, memberByKey.keys(), { deadline, clock }, busy, async (): Promise<FleetDeleted | undefined> => {
      spans.enter();
      try {
        // Placements that changed while the locks were taken: look again, within the same deadline.
        if (!sameActivePlacements(await broker.activePlacements(fleetId), placements)) return undefined;
        const tidy = await options.closePanes?.(placements, deadline);
        const deletion = await broker.deleteFleet(fleetId, placements);
        if (deletion.status !== 'deleted') return undefined;
        const diagnostics = await tidyAfter(tidy, deadline, `restoring the layout after deleting fleet ${fleetId} failed`);
        return { deregisteredCount: deletion.deregisteredCount, placements, diagnostics };
      } finally {
        spans.exit();
      }
    });
    if (deleted !== undefined) return deleted;
  }
}

/** Closes a member's pane through its multiplexer; returns the layout tidy to run after deregistration. */
export type PaneCloser = (placement: ConcretePlacement, deadline: number) => Promise<LayoutTidy | void>;

export interface MemberDeleted {
  memberId: number;
  /** The placement the member had: null without one, pane null while it was pending. */
  placement: Placement | null;
  /** What went wrong after deregistration (layout rebalance). */
  diagnostics: string[];
}

/**
 * Deletes an ordinary member: with a concrete pane, its pane input lock is taken (within
 * a five-second deadline) and the placement revalidated before the pane is closed, the
 * member deregistered and the layout tidied; without one it is a registry change only.
 * The root director is refused.
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
    const member = await broker.getMember(memberId);
    if (member.kind === 'director') throw new RegistryStateError("cannot deregister the root Director; use 'drover fleet delete' instead");
    const placement = member.placement;
    if (!isConcrete(placement)) {
      const outcome = await spans.run(() => broker.deregisterMember(memberId, placement));
      if (outcome.status === 'deregistered') return { memberId, placement, diagnostics: [] };
      continue;
    }
    const guard = await locks.acquire(placementLockKey(placement), { deadline, clock });
    if (!guard) throw busy();
    spans.enter();
    try {
      if (!samePlacement((await broker.getMember(memberId)).placement, placement)) continue;
      const tidy = await options.closePane(placement, deadline);
      await broker.deregisterMember(memberId);
      const diagnostics = await tidyAfter(tidy, deadline, `rebalancing the layout after closing pane ${placement.pane} failed`);
      return { memberId, placement, diagnostics };
    } finally {
      guard.release();
      spans.exit();
    }
  }
}
