import { looksLikePaneKey, parsePaneKey, type MuxPort } from '../mux/index.js';
import { systemClock } from './clock.js';
import { TRANSPORT_BUDGET_MS } from './dispatch.js';
import { PaneInputBusyError } from './errors.js';
import { PaneLocks, currentPaneLockKey } from './lock.js';
import { paneLockDirectory, resolveDatabasePath } from './sqlite-store.js';

export interface PaneInputHold {
  /** Where this machine's drover keeps its database (and, beside it, the pane input locks). */
  readonly env: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
}

/** A fleet dispatcher holds a pane's input for one transport budget at most; a little more outlasts any one hold. */
export const PANE_INPUT_WAIT_MS = TRANSPORT_BUDGET_MS + 1000;

/**
 * Runs `body` holding the input lock the fleet takes to type into `pane` (an id or a pane key)
 * on this machine, so a line typed from outside the fleet (`pane deliver`, or a host typing a
 * hub's fleet message) never interleaves with one a dispatcher here is typing. A pane the
 * multiplexer does not list has nothing to share: `body` runs and reports it missing. When the
 * lock stays busy for PANE_INPUT_WAIT_MS, PaneInputBusyError and nothing is typed.
 */
export async function holdingPaneInput<T>(port: MuxPort, pane: string, hold: PaneInputHold, body: () => Promise<T>): Promise<T> {
  // A pane key (what a hub hands a host) locks the pane it names; `body` checks its run.
  const parsed = looksLikePaneKey(pane) ? parsePaneKey(pane) : undefined;
  const paneId = parsed?.ok ? parsed.key.paneId : pane;
  const found = (await port.snapshot({ signal: hold.signal })).panes.find((candidate) => candidate.paneId === paneId);
  if (found === undefined) return body();
  const locks = new PaneLocks(paneLockDirectory(resolveDatabasePath(hold.env)));
  const key = currentPaneLockKey(port.mux, found.spaceId, paneId);
  const guard = await locks.acquire(key, { deadline: systemClock.now() + PANE_INPUT_WAIT_MS, signal: hold.signal });
  if (guard === null) throw new PaneInputBusyError(`pane ${paneId}'s input stayed busy for ${PANE_INPUT_WAIT_MS} ms (another drover process, a fleet dispatcher most likely, was typing into it); nothing was typed`);
  try {
    return await body();
  } finally {
    guard.release();
  }
}
