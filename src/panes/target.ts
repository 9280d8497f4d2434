import { LOCAL_HOST, formatPaneKey, isValidMuxId, looksLikePaneKey, parsePaneKey, type MuxPort } from '../mux/index.js';
import { ArgumentError } from '../process/index.js';
import { PaneKeyRefusedError } from './errors.js';

/** The ways a pane may be named wherever drover takes one, as its errors list them. */
export const PANE_TARGET_FORMS =
  'a pane key such as local::tmux::28114-1764844800::%3 (what --json prints as pane_key), a pane id such as %3, or on tmux SESSION:WINDOW[.PANE] with the window by index or name (names matched exactly), such as work:0.1 or work:editor';

/** One pane as every row and receipt names it: its id, and its key (the id together with the server run it lives on). */
export interface PaneRef {
  readonly paneId: string;
  readonly paneKey: string;
}

/** Builds pane keys for the run of the multiplexer a port is bound to. */
export interface PaneKeys {
  readonly incarnation: string;
  keyOf(paneId: string): string;
  refOf(paneId: string): PaneRef;
}

export function paneKeys(port: MuxPort, incarnation: string): PaneKeys {
  const keyOf = (paneId: string): string => formatPaneKey({ host: LOCAL_HOST, mux: port.mux, incarnation, paneId });
  return { incarnation, keyOf, refOf: (paneId) => ({ paneId, paneKey: keyOf(paneId) }) };
}

/** The keys of the run the port answers for (learnt on first contact, so at most one call). */
export async function paneKeysOf(port: MuxPort): Promise<PaneKeys> {
  return paneKeys(port, await port.serverIncarnation());
}

/**
 * The pane a verb is aimed at, as a reference, before anything is done to it. A pane key must
 * name a pane of this machine, of the multiplexer the port drives and of the run the port is
 * bound to: a key of another run is refused (PaneKeyRefusedError), since the id it carries may
 * name another pane now. A bare id is taken as the id of that multiplexer's pane, whichever run
 * answers: how a person at a terminal names a pane, not how a script should.
 */
export async function resolvePane(port: MuxPort, pane: string): Promise<PaneRef> {
  if (!looksLikePaneKey(pane) && !isValidMuxId(pane)) throw new ArgumentError(`${JSON.stringify(pane)} does not name a pane: give ${PANE_TARGET_FORMS}`);
  const keys = await paneKeysOf(port);
  if (!looksLikePaneKey(pane)) return keys.refOf(pane);
  const parsed = parsePaneKey(pane);
  if (!parsed.ok) throw new ArgumentError(parsed.problem);
  const { key } = parsed;
  if (key.host !== LOCAL_HOST) throw new ArgumentError(`pane key ${pane} names a pane on host ${key.host}; drover reaches only this machine's panes (host ${LOCAL_HOST})`);
  if (key.mux !== port.mux) {
    throw new PaneKeyRefusedError(pane, `pane key ${pane} names a ${key.mux} pane, but drover is driving ${port.mux}; nothing was done (choose ${key.mux} with --mux ${key.mux})`);
  }
  if (!port.sameIncarnation(key.incarnation, keys.incarnation)) {
    throw new PaneKeyRefusedError(
      pane,
      `pane key ${pane} names a pane of another ${port.mux} server run (${key.incarnation}); the server answering now is ${keys.incarnation}, whose pane ${key.paneId} is not that pane, so nothing was done`,
    );
  }
  return keys.refOf(key.paneId);
}

export function paneRefJson(ref: PaneRef): { pane_id: string; pane_key: string } {
  return { pane_id: ref.paneId, pane_key: ref.paneKey };
}
