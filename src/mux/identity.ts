/**
 * Identity rules for every id the port publishes (spaces, tabs, panes):
 *
 * 1. Opaque above the adapter: callers compare ids, they never parse them.
 * 2. Stable across reconnect, multiplexer restart, rename and move.
 * 3. Unique within one drover mux instance.
 * 4. Never recycled: a pane id that went away never names another pane (tab ids may be, on
 *    zellij, which hands a new tab the lowest free number).
 * 5. One URL path segment once percent-encoded (encodeURIComponent): 1–128 characters from
 *    [A-Za-z0-9 . _ ~ - : @ $ %], so never a slash, a space or a control character.
 *
 * How each multiplexer's native ids map:
 *   tmux   session $3, window @7, pane %12 — carried unchanged, as tmux itself names them
 *   herdr  workspace w1, tab w1:t2, pane w1:p3 — carried unchanged
 *   zellij the one session → "session", tab id 3 → tab_3, terminal pane 7 → terminal_7
 */
import { MUX_NAMES, type MuxName, type MuxSnapshot } from './types.js';

const MUX_ID = /^[A-Za-z0-9._~:@$%-]{1,128}$/;

export function isValidMuxId(id: unknown): id is string {
  return typeof id === 'string' && MUX_ID.test(id);
}

function nativeNumber(id: string, prefix: string): number | undefined {
  if (!id.startsWith(prefix)) return undefined;
  const digits = id.slice(prefix.length);
  return /^(0|[1-9][0-9]{0,15})$/.test(digits) ? Number(digits) : undefined;
}

/**
 * tmux ids are published as tmux writes them. These check the shape, so that an id of the
 * wrong kind (a window id where a pane is meant) is refused before tmux is asked.
 */
export const tmuxIds = Object.freeze({
  space: (sessionId: string): string => checkedTmuxId(sessionId, '$'),
  tab: (windowId: string): string => checkedTmuxId(windowId, '@'),
  pane: (paneId: string): string => checkedTmuxId(paneId, '%'),
  /** The tmux session id behind a space id, or undefined when it is not one. */
  nativeSpace: (id: string): string | undefined => (nativeNumber(id, '$') === undefined ? undefined : id),
  nativeTab: (id: string): string | undefined => (nativeNumber(id, '@') === undefined ? undefined : id),
  nativePane: (id: string): string | undefined => (nativeNumber(id, '%') === undefined ? undefined : id),
});

function checkedTmuxId(native: string, sigil: string): string {
  if (nativeNumber(native, sigil) === undefined) throw new RangeError(`${JSON.stringify(native)} is not a tmux id of the form ${sigil}N`);
  return native;
}

/** zellij ids: one constant space, prefixed tab ids (tab and pane numbers are unrelated), terminal panes as zellij names them. */
export const zellijIds = Object.freeze({
  SPACE: 'session',
  tab: (tabNumber: number): string => `tab_${tabNumber}`,
  pane: (paneNumber: number): string => `terminal_${paneNumber}`,
  tabNumber: (id: string): number | undefined => nativeNumber(id, 'tab_'),
  paneNumber: (id: string): number | undefined => nativeNumber(id, 'terminal_'),
});

/** Problems with the ids of one snapshot: malformed, duplicated or dangling references. */
export function checkIdentitySet(snapshot: MuxSnapshot): string[] {
  const problems: string[] = [];
  const collect = (kind: string, ids: readonly string[]): Set<string> => {
    const seen = new Set<string>();
    for (const id of ids) {
      if (!isValidMuxId(id)) problems.push(`${kind} id ${JSON.stringify(id)} is not URL-segment safe (1–128 of [A-Za-z0-9._~:@$%-])`);
      if (seen.has(id)) problems.push(`${kind} id ${JSON.stringify(id)} appears more than once`);
      seen.add(id);
    }
    return seen;
  };
  const spaces = collect('space', snapshot.spaces.map((space) => space.spaceId));
  const tabs = collect('tab', snapshot.tabs.map((tab) => tab.tabId));
  collect('pane', snapshot.panes.map((pane) => pane.paneId));
  const tabSpace = new Map(snapshot.tabs.map((tab) => [tab.tabId, tab.spaceId]));
  for (const tab of snapshot.tabs) {
    if (!spaces.has(tab.spaceId)) problems.push(`tab ${tab.tabId} names space ${tab.spaceId}, which the snapshot does not carry`);
  }
  for (const space of snapshot.spaces) {
    if (space.activeTabId !== null && tabSpace.get(space.activeTabId) !== space.spaceId) {
      problems.push(`space ${space.spaceId} names active tab ${space.activeTabId}, which is not one of its tabs`);
    }
  }
  for (const pane of snapshot.panes) {
    if (!spaces.has(pane.spaceId)) problems.push(`pane ${pane.paneId} names space ${pane.spaceId}, which the snapshot does not carry`);
    if (!tabs.has(pane.tabId)) problems.push(`pane ${pane.paneId} names tab ${pane.tabId}, which the snapshot does not carry`);
    else if (tabSpace.get(pane.tabId) !== pane.spaceId) {
      problems.push(`pane ${pane.paneId} is in tab ${pane.tabId} of space ${tabSpace.get(pane.tabId)} but claims space ${pane.spaceId}`);
    }
  }
  return problems;
}

/**
 * Remembers every pane id it was shown, to catch rule 4: an id that left a snapshot and later
 * names a pane again was recycled.
 */
export class PaneIdLedger {
  private readonly present = new Set<string>();
  private readonly departed = new Set<string>();

  /** Records one snapshot's panes; returns the recycled ids it found. */
  observe(snapshot: MuxSnapshot): string[] {
    const now = new Set(snapshot.panes.map((pane) => pane.paneId));
    const recycled = [...now].filter((id) => this.departed.has(id));
    for (const id of this.present) {
      if (!now.has(id)) this.departed.add(id);
    }
    this.present.clear();
    for (const id of now) this.present.add(id);
    return recycled;
  }
}

/**
 * A pane key names one pane for good: the host it lives on, its multiplexer, the run of that
 * multiplexer (its incarnation) and the pane id, as `HOST::MUX::INCARNATION::PANE`
 * (`local::tmux::28114-1764844800::%3`). A bare pane id such as `%3` means "that id on whatever
 * server answers now"; a key means "that pane, or nothing": a key whose incarnation is not the
 * server's is refused as replaced, never acted on. `::` cannot occur in a tmux target
 * (`session:window.pane`), so the two forms never mix.
 */
export interface PaneKey {
  readonly host: string;
  readonly mux: MuxName;
  readonly incarnation: string;
  readonly paneId: string;
}

/** This machine, in a pane key or a host-qualified target. */
export const LOCAL_HOST = 'local';

const KEY_SEPARATOR = '::';
const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const INCARNATION = /^[A-Za-z0-9._-]{1,128}$/;

export function isHostName(name: unknown): name is string {
  return typeof name === 'string' && HOST_NAME.test(name);
}

export function isIncarnation(value: unknown): value is string {
  return typeof value === 'string' && INCARNATION.test(value);
}

export function formatPaneKey(key: PaneKey): string {
  if (!isHostName(key.host)) throw new RangeError(`${JSON.stringify(key.host)} is not a host name (letters, digits, . _ -)`);
  if (!isIncarnation(key.incarnation)) throw new RangeError(`${JSON.stringify(key.incarnation)} is not an incarnation (letters, digits, . _ -)`);
  if (!isValidMuxId(key.paneId)) throw new RangeError(`${JSON.stringify(key.paneId)} is not a mux pane id`);
  return [key.host, key.mux, key.incarnation, key.paneId].join(KEY_SEPARATOR);
}

/** Whether the text is written in the key form (has `::`), valid or not: such text is never a tmux target. */
export function looksLikePaneKey(text: string): boolean {
  return text.includes(KEY_SEPARATOR);
}

/**
 * The key a text spells, or a sentence saying what is wrong with it. The pane id is the rest
 * after the third `::`, so ids that contain `:` (herdr's `w1:p3`) survive.
 */
export function parsePaneKey(text: string): { ok: true; key: PaneKey } | { ok: false; problem: string } {
  const parts = text.split(KEY_SEPARATOR);
  if (parts.length < 4) return { ok: false, problem: `${JSON.stringify(text)} is not a pane key: a key is HOST::MUX::INCARNATION::PANE` };
  const [host, mux, incarnation] = parts as [string, string, string];
  const paneId = parts.slice(3).join(KEY_SEPARATOR);
  if (!isHostName(host)) return { ok: false, problem: `pane key ${JSON.stringify(text)}: ${JSON.stringify(host)} is not a host name` };
  if (!(MUX_NAMES as readonly string[]).includes(mux)) return { ok: false, problem: `pane key ${JSON.stringify(text)}: ${JSON.stringify(mux)} is not a multiplexer drover drives (${MUX_NAMES.join(', ')})` };
  if (!isIncarnation(incarnation)) return { ok: false, problem: `pane key ${JSON.stringify(text)}: ${JSON.stringify(incarnation)} is not an incarnation` };
  if (!isValidMuxId(paneId)) return { ok: false, problem: `pane key ${JSON.stringify(text)}: ${JSON.stringify(paneId)} is not a pane id` };
  return { ok: true, key: Object.freeze({ host, mux: mux as MuxName, incarnation, paneId }) };
}
