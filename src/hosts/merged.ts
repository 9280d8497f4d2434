/**
 * One view across machines: this machine's rows and every host's, merged. A decision only, no
 * I/O (gatherHostViews fetches, the CLI prints): what each host answered, or the rows it last
 * answered with, becomes rows that say which host they are from and whether they are live.
 *
 * A host that cannot be reached is never dropped and never shown as live: its last rows stay,
 * marked stale with their age, and its health says why. A host never reached has no rows, only
 * its health.
 */
import { formatPaneKey, LOCAL_HOST, parsePaneKey } from '../mux/index.js';
import { formatTimestamp } from '../process/index.js';
import type { HostHealth, LinkState } from './link.js';

/** One row as a host's drover printed it in JSON. */
export type HostRow = Readonly<Record<string, unknown>>;

/**
 * A view's rows, by list: `{rows}` for a pane map, `{matches, skipped}` for a question sweep,
 * `{spaces, tabs, panes}` for a multiplexer snapshot.
 */
export type RowLists = Readonly<Record<string, readonly HostRow[]>>;

/** What one fetch from one machine got. */
export type HostFetch =
  | { readonly kind: 'answered'; readonly lists: RowLists; readonly atMicros: number }
  /** Reached, and the command failed there, or its answer never came within the budget. */
  | { readonly kind: 'failed'; readonly error: string }
  /** Not reached: the link was not up, or was lost before the answer; nothing new is known. */
  | { readonly kind: 'unreachable'; readonly error: string };

/** Rows a host answered with at some time, kept for when it cannot be reached. */
export interface RememberedRows {
  readonly lists: RowLists;
  readonly atMicros: number;
}

export interface HostAnswer {
  /** The host's name; LOCAL_HOST for this machine. */
  readonly host: string;
  readonly fetched: HostFetch;
  /** The link's health after the fetch; undefined for this machine, which has no link. */
  readonly link?: Pick<HostHealth, 'reachable' | 'linkState' | 'lastSeenAt' | 'latencyMs'>;
  /** The rows of the last fetch that succeeded, when known (never for this machine). */
  readonly remembered?: RememberedRows;
}

export interface MergedRow {
  readonly host: string;
  /** From a host that did not answer now: its last known rows. */
  readonly stale: boolean;
  /** How old a stale row is; undefined for a live one. */
  readonly staleAgeMs: number | undefined;
  /** When the row was read on its host. */
  readonly seenAt: string;
  /** The row as the host printed it, its pane key naming that host. */
  readonly row: HostRow;
}

export interface MergedHostStatus {
  readonly name: string;
  readonly reachable: boolean;
  /** undefined for this machine: it has no link. */
  readonly linkState: LinkState | undefined;
  /** When the host last answered: over this link, or the fetch its remembered rows came from. */
  readonly lastSeenAt: string | undefined;
  readonly latencyMs: number | undefined;
  /** Its answer this time. */
  readonly answered: boolean;
  /** Its rows are the remembered ones (it did not answer now but had before). */
  readonly stale: boolean;
  readonly staleAgeMs: number | undefined;
  /** Why it did not answer. */
  readonly error: string | undefined;
}

export interface MergedView {
  /** Every list of the view, rows of this machine first, then each host's in the order given. */
  readonly lists: Readonly<Record<string, readonly MergedRow[]>>;
  readonly hosts: readonly MergedHostStatus[];
  /**
   * This machine and every host that could be reached answered. A host that could not be reached
   * does not make a view incomplete (its health says so); one that was reached and failed does.
   */
  readonly complete: boolean;
}

/** A pane key as seen from the hub: a host's own keys say `local`, which there means that host. */
export function paneKeyOnHost(paneKey: string, host: string): string {
  const parsed = parsePaneKey(paneKey);
  return parsed.ok ? formatPaneKey({ ...parsed.key, host }) : paneKey;
}

/** A row or document of a host's with its `pane_key` naming that host (the host's own keys say `local`). */
export function keyOnHost<R extends Readonly<Record<string, unknown>>>(row: R, host: string): R {
  return typeof row.pane_key === 'string' ? { ...row, pane_key: paneKeyOnHost(row.pane_key, host) } : row;
}

function ageMs(nowMicros: number, atMicros: number): number {
  return Math.max(0, Math.round((nowMicros - atMicros) / 1000));
}

function later(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}

/** Merges each machine's answer into one view, as of `nowMicros` (wall-clock microseconds). */
export function mergeHostViews(answers: readonly HostAnswer[], listNames: readonly string[], nowMicros: number): MergedView {
  const lists: Record<string, MergedRow[]> = Object.fromEntries(listNames.map((name) => [name, []]));
  const ordered = [...answers.filter((answer) => answer.host === LOCAL_HOST), ...answers.filter((answer) => answer.host !== LOCAL_HOST)];
  const hosts: MergedHostStatus[] = [];
  let complete = true;
  for (const answer of ordered) {
    const { fetched, remembered } = answer;
    const shown = fetched.kind === 'answered' ? { lists: fetched.lists, atMicros: fetched.atMicros, stale: false } : remembered === undefined ? undefined : { ...remembered, stale: true };
    if (shown !== undefined) {
      const seenAt = formatTimestamp(shown.atMicros);
      const staleAgeMs = shown.stale ? ageMs(nowMicros, shown.atMicros) : undefined;
      for (const name of listNames) {
        for (const row of shown.lists[name] ?? []) lists[name]!.push({ host: answer.host, stale: shown.stale, staleAgeMs, seenAt, row: keyOnHost(row, answer.host) });
      }
    }
    const local = answer.host === LOCAL_HOST;
    if (fetched.kind === 'failed' || (local && fetched.kind !== 'answered')) complete = false;
    hosts.push({
      name: answer.host,
      reachable: local || fetched.kind !== 'unreachable',
      linkState: answer.link?.linkState,
      lastSeenAt: later(answer.link?.lastSeenAt, shown === undefined ? undefined : formatTimestamp(shown.atMicros)),
      latencyMs: answer.link?.latencyMs,
      answered: fetched.kind === 'answered',
      stale: shown?.stale ?? false,
      staleAgeMs: shown?.stale ? ageMs(nowMicros, shown.atMicros) : undefined,
      error: fetched.kind === 'answered' ? undefined : fetched.error,
    });
  }
  return { lists, hosts, complete };
}

/** A merged row as drover prints it: the host's row with `host`, `stale`, `stale_age_ms` and `seen_at`. */
export function mergedRowJson(row: MergedRow): Record<string, unknown> {
  // `host` first for people reading it, and the hub's name for the host wins over anything the row held.
  return Object.assign({ host: row.host }, row.row, { host: row.host, stale: row.stale, stale_age_ms: row.staleAgeMs ?? null, seen_at: row.seenAt });
}

export function mergedHostStatusJson(status: MergedHostStatus): Record<string, unknown> {
  return {
    name: status.name,
    reachable: status.reachable,
    link_state: status.linkState ?? null,
    last_seen_at: status.lastSeenAt ?? null,
    latency_ms: status.latencyMs ?? null,
    answered: status.answered,
    stale: status.stale,
    stale_age_ms: status.staleAgeMs ?? null,
    error: status.error ?? null,
  };
}

/** The view as one JSON document: each list, then `hosts`. */
export function mergedViewJson(view: MergedView): Record<string, unknown> {
  return {
    ...Object.fromEntries(Object.entries(view.lists).map(([name, rows]) => [name, rows.map(mergedRowJson)])),
    hosts: view.hosts.map(mergedHostStatusJson),
  };
}
