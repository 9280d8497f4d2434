/**
 * Rules the port owns outright, in one place, because adapters deciding them independently is
 * how the seam rots: pane labels versus program titles, a blank cwd, counts, focus per space,
 * and transport death.
 */
import { DroverError } from '../process/index.js';
import { MuxError } from './errors.js';
import type { MuxPane, MuxRefusal, MuxSnapshot, MuxSpace, MuxTab } from './types.js';
import { refusal, replacedRefusal } from './types.js';

/**
 * A blank cwd: an empty or whitespace cwd on a create request means no directory was asked
 * for, exactly as if it were omitted. It never becomes a flag, an argument or a path.
 */
export function requestedCwd(cwd: string | undefined | null): string | undefined {
  return typeof cwd === 'string' && cwd.trim() !== '' ? cwd : undefined;
}

/**
 * Pane naming on a multiplexer with one title slot (tmux, zellij): paneLabel is only a name
 * given through drover, so the adapter remembers the labels it set, in memory and keyed by pane
 * id, and reports anything else in the slot as terminalTitle. After a restart an earlier label
 * degrades to terminalTitle: still visible, never a lie.
 */
export class LabelMemory {
  private readonly labels = new Map<string, string>();

  remember(paneId: string, label: string): void {
    this.labels.set(paneId, label);
  }

  forget(paneId: string): void {
    this.labels.delete(paneId);
  }

  /**
   * Splits what the one slot holds. `isDefault` recognises the multiplexer's own filler (a host
   * name, "Pane #3"), which is neither a label nor a program's title.
   */
  split(paneId: string, slot: string, isDefault: (slot: string) => boolean = () => false): { paneLabel?: string; terminalTitle?: string } {
    const label = this.labels.get(paneId);
    if (label !== undefined && slot === label) return { paneLabel: label };
    // The program overwrote the label, so the slot no longer says what the operator said.
    if (label !== undefined) this.labels.delete(paneId);
    return slot === '' || isDefault(slot) ? {} : { terminalTitle: slot };
  }

  /** Forgets panes that left the listing, so a label never outlives its pane. */
  retain(livePaneIds: Iterable<string>): void {
    const live = new Set(livePaneIds);
    for (const paneId of [...this.labels.keys()]) {
      if (!live.has(paneId)) this.labels.delete(paneId);
    }
  }
}

export type UncountedSpace = Omit<MuxSpace, 'tabCount' | 'paneCount'>;
export type UncountedTab = Omit<MuxTab, 'paneCount'>;

/**
 * Counts: a space's tabCount/paneCount and a tab's paneCount count what this same snapshot
 * carries, never what the multiplexer's own listing says (which may include panes an adapter
 * drops, such as zellij's plugin panes). `incarnation` is the run the listing was read from.
 */
export function withPublishedCounts(incarnation: string, spaces: readonly UncountedSpace[], tabs: readonly UncountedTab[], panes: readonly MuxPane[]): MuxSnapshot {
  const panesPerTab = new Map<string, number>();
  const panesPerSpace = new Map<string, number>();
  const tabsPerSpace = new Map<string, number>();
  for (const pane of panes) {
    panesPerTab.set(pane.tabId, (panesPerTab.get(pane.tabId) ?? 0) + 1);
    panesPerSpace.set(pane.spaceId, (panesPerSpace.get(pane.spaceId) ?? 0) + 1);
  }
  for (const tab of tabs) tabsPerSpace.set(tab.spaceId, (tabsPerSpace.get(tab.spaceId) ?? 0) + 1);
  return {
    incarnation,
    spaces: spaces.map((space) => ({ ...space, tabCount: tabsPerSpace.get(space.spaceId) ?? 0, paneCount: panesPerSpace.get(space.spaceId) ?? 0 })),
    tabs: tabs.map((tab) => ({ ...tab, paneCount: panesPerTab.get(tab.tabId) ?? 0 })),
    panes,
  };
}

/**
 * Focus is per space: every space has an active tab with an active pane, so several panes can
 * be `focused` at once. The one on the operator's screen is the focused pane of the focused
 * space; undefined when no space is focused (no client attached).
 */
export function focusedPane(snapshot: MuxSnapshot): MuxPane | undefined {
  const space = snapshot.spaces.find((candidate) => candidate.focused);
  if (space === undefined) return undefined;
  return snapshot.panes.find((pane) => pane.spaceId === space.spaceId && pane.focused);
}

/**
 * Transport death: a failure of the transport itself (a dropped socket, a closed stream, a
 * process that ran out of budget, a multiplexer that is not running) answers `unreachable`,
 * never `refused`; `refused` means the multiplexer understood and said no. A MuxError carries
 * its own classification; any other drover failure below the adapter is the transport's. A
 * failure that knows nothing was sent (a tmux server that was not running) says so with it;
 * otherwise the refusal's reason decides (refusalDelivery).
 */
export function refusalFromError(error: unknown): MuxRefusal {
  const known = error instanceof DroverError && error.delivery === 'not_sent' ? { delivery: 'not_sent' as const } : {};
  if (error instanceof MuxError) return error.replaced ? replacedRefusal(error.message) : { ...refusal(error.reason, error.message), ...known };
  if (error instanceof DroverError) return { ...refusal('unreachable', error.message), ...known };
  throw error;
}
