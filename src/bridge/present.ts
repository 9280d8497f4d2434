/**
 * The words the page puts on a pane, a restart and the layout. Pure and free of the DOM, so the
 * page bundles it and the tests check it directly.
 */
import type { ConfigView, HostView, PaneView, RestartView, SessionsView } from './protocol.js';

/** What names a pane: a name given through drover, else its program's title unless that outlived it, else what runs. */
export function paneName(pane: PaneView): string {
  return pane.label ?? (pane.title_stale ? null : pane.title) ?? pane.foreground ?? pane.pane_id;
}

/** The note beside a title its program left behind; null for a title still current. */
export function staleTitleNote(pane: PaneView): string | null {
  return pane.title !== null && pane.title_stale ? `title “${pane.title}” left by a program that has exited` : null;
}

/** Where the pane works: `repo · branch`, the branch alone, or null outside git. */
export function paneRepo(pane: Pick<PaneView, 'repo' | 'branch'>): string | null {
  if (pane.repo === null) return pane.branch;
  return pane.branch === null ? pane.repo : `${pane.repo} · ${pane.branch}`;
}

/** How long ago an instant was, in the largest whole unit: "just now", "4 min ago", "2 h ago", "3 d ago". */
export function ago(at: string, now: number = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(at)) / 1000));
  if (seconds < 10) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** Whether the page walks spaces at all: a multiplexer with one space shows its tabs alone. */
export function showsSpaces(config: Pick<ConfigView, 'spaces'> | null): boolean {
  return config?.spaces !== 'one';
}

/** Where a pane sits: space › tab, or the tab alone where there is one space. */
export function paneWhere(pane: PaneView, config: Pick<ConfigView, 'spaces'> | null): string {
  const tab = pane.tab_label ?? pane.tab_id;
  return showsSpaces(config) ? `${pane.space_label} › ${tab}` : tab;
}

/**
 * A triage card's second line: the host (when the page shows several), what runs, where, and
 * the pane's id, which tells apart two panes of one tab running the same program.
 */
export function paneCardLine(pane: PaneView, config: Pick<ConfigView, 'spaces'> | null, showHost: boolean): string {
  return `${showHost ? `${pane.host} · ` : ''}${pane.agent ?? pane.foreground ?? 'shell'} · ${paneWhere(pane, config)} · ${pane.pane_id}`;
}

/** The banner over a restarted multiplexer's panes. */
export function restartBanner(mux: string, restart: RestartView, locale?: string): string {
  const at = new Date(restart.at);
  const when = `${at.toLocaleDateString(locale)} ${at.toLocaleTimeString(locale)}`;
  return `The ${mux} server was restarted (${when}). These are the new server's panes: replies, answers and keys meant for a pane of the old one are refused, and nothing is sent.`;
}

/** Whether a session list is worth showing: the multiplexer keeps several sessions. */
export function showsSessions(view: SessionsView | null): boolean {
  return view !== null && view.available && view.sessions.length > 1;
}

/** The banner over the panes of a host that cannot be reached: since when, and what that means for its panes. */
export function hostBanner(host: HostView, now: number = Date.now()): string {
  const state = host.link_state.replace('_', ' ');
  if (host.link_state === 'connecting') {
    return `Host ${host.name} is not connected yet (connecting): ${host.stale ? 'its panes below are the last ones known, marked stale' : 'its panes appear once it answers'}.`;
  }
  const seen = host.last_seen_at === null ? 'it has not been reached since drover web started' : `last seen ${ago(host.last_seen_at, now)}`;
  const panes = host.stale ? 'its panes below are as they were then, marked stale' : 'none of its panes are known';
  return `Host ${host.name} cannot be reached (${state}): ${seen}; ${panes}. Nothing can be sent to it until it is back.`;
}

/** A pane's freshness as its card says it: null for a live pane. */
export function staleNote(pane: Pick<PaneView, 'stale' | 'stale_age_ms'>): string | null {
  if (!pane.stale) return null;
  return `stale: as seen ${ago(new Date(Date.now() - (pane.stale_age_ms ?? 0)).toISOString())}`;
}
