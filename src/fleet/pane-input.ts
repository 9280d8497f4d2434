import { isValidMuxId, looksLikePaneKey, parsePaneKey, type MuxPort } from '../mux/index.js';
import { systemClock } from './clock.js';
import { TRANSPORT_BUDGET_MS } from './dispatch.js';
import { PaneInputBusyError } from './errors.js';
import type { Broker } from './broker.js';
import { PaneLocks, currentPaneLockKey, holdingKeys, placementLockKey } from './lock.js';
import { placementHost } from './model.js';
import { fleetStoreExists, openBroker } from './stores.js';
import { paneLockDirectory, resolveDatabasePath } from './sqlite-store.js';

export interface PaneInputHold {
  /** Where this machine's drover keeps its database (and, beside it, the pane input locks). */
  readonly env: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

/** A fleet dispatcher holds a pane's input for one transport budget at most; a little more outlasts any one hold. */
export const PANE_INPUT_WAIT_MS = TRANSPORT_BUDGET_MS + 1000;

/** A pane of this machine about to be written to: its port, its id, the run it belongs to and the space it stands in now. */
export interface PaneWriteTarget {
  readonly port: MuxPort;
  readonly paneId: string;
  readonly incarnation: string;
  readonly spaceId: string | undefined;
}

/**
 * The input lock keys a write to a pane of this machine takes. Each fleet member placed there
 * gives the key its dispatcher takes, which names the space the member was placed in and so
 * still holds after the pane was moved to another; the space the pane stands in now gives the
 * key every write from outside the fleet takes, member or not. A member placed on another run of
 * the multiplexer is not in this pane; one placed before drover recorded the run is taken to be.
 */
export async function paneInputKeys(broker: Pick<Broker, 'placementsInPane'>, pane: PaneWriteTarget): Promise<string[]> {
  const keys = (await broker.placementsInPane(pane.port.mux, pane.paneId))
    .filter(({ placement }) => placementHost(placement.host) === null && (placement.server === null || pane.port.sameIncarnation(placement.server, pane.incarnation)))
    .map(({ placement }) => placementLockKey(placement));
  if (pane.spaceId !== undefined) keys.push(currentPaneLockKey(pane.port.mux, pane.spaceId, pane.paneId));
  return keys;
}

/**
 * The keys of `paneInputKeys`, read from the store this machine's fleet uses. Without a store, or
 * with one served from another machine (whose members' panes are not here), only the pane's own
 * key. A store that cannot be read gives only that key too: no dispatcher can start a delivery
 * without reading it.
 */
async function localPaneInputKeys(env: NodeJS.ProcessEnv, pane: PaneWriteTarget & { spaceId: string }): Promise<string[]> {
  const own = [currentPaneLockKey(pane.port.mux, pane.spaceId, pane.paneId)];
  if (!fleetStoreExists(env)) return own;
  let broker: Broker;
  try {
    broker = await openBroker({ env, readOnly: true });
  } catch {
    return own;
  }
  try {
    return broker.store.via === undefined ? await paneInputKeys(broker, pane) : own;
  } catch {
    return own;
  } finally {
    await broker.close();
  }
}

/**
 * Runs `body` holding the input locks the fleet takes to type into `pane` (an id or a pane key)
 * on this machine, so a line typed from outside the fleet (`pane deliver`, or a host typing a
 * hub's fleet message) never interleaves with one a dispatcher here is typing. A pane the
 * multiplexer does not list has nothing to share: `body` runs and reports it missing. When a
 * lock stays busy for PANE_INPUT_WAIT_MS, PaneInputBusyError and nothing is typed.
 */
export async function holdingPaneInput<T>(port: MuxPort, pane: string, hold: PaneInputHold, body: () => Promise<T>): Promise<T> {
  // A pane key (what a hub hands a host) locks the pane it names; `body` checks its run.
  const parsed = looksLikePaneKey(pane) ? parsePaneKey(pane) : undefined;
  const paneId = parsed?.ok ? parsed.key.paneId : pane;
  // An id no multiplexer could list names no pane to share: `body` reports it.
  if (!isValidMuxId(paneId)) return body();
  const { incarnation, location } = await port.locatePane(paneId, { signal: hold.signal });
  if (location === undefined) return body();
  const locks = new PaneLocks(paneLockDirectory(resolveDatabasePath(hold.env)));
  const keys = await localPaneInputKeys(hold.env, { port, paneId, incarnation, spaceId: location.spaceId });
  const busy = (): Error => new PaneInputBusyError(`pane ${paneId}'s input stayed busy for ${PANE_INPUT_WAIT_MS} ms (another drover process, a fleet dispatcher most likely, was typing into it); nothing was typed`);
  return holdingKeys(locks, keys, { deadline: systemClock.now() + PANE_INPUT_WAIT_MS, signal: hold.signal }, busy, body);
}
