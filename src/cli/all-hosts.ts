/**
 * `--all-hosts`: a view of this machine and every configured host at once. This machine runs the
 * command itself; each host runs the same drover-rpc method over its link, all at once; the
 * answers are merged by viewAcrossHosts (src/hosts), which keeps a host that cannot be reached
 * as its last rows, marked stale.
 *
 * Exit status: 0 when this machine and every host that could be reached answered; 1 when this
 * machine's command failed, or a host was reached and its command failed or did not answer in
 * time. A host that cannot be reached is reported (its health, its stale rows), not a failure:
 * one machine being off must not fail every view of the others.
 */
import { join } from 'node:path';
import { formatIdleDuration } from '../agents/index.js';
import { Hosts, mergedViewJson, RememberedRowsStore, viewAcrossHosts, type HostRow, type HostViewRequest, type MergedHostStatus, type MergedRow, type MergedView, type RpcParams } from '../hosts/index.js';
import { LOCAL_HOST } from '../mux/index.js';
import { foldBody, renderTable } from '../panes/index.js';
import { wallMicros } from '../process/index.js';
import { droverCommand } from './invocation.js';
import { EXIT, writeJson, writeLine, type CliIO } from './io.js';
import { stateDirectory } from './state.js';

/** One column of a list's human table: the row's fields (as its host printed them in JSON), joined. */
export interface AllHostsColumn {
  readonly header: string;
  readonly fields: readonly string[];
  /** Between the fields' texts; a space by default. */
  readonly join?: string;
}

export interface AllHostsView {
  /** The drover-rpc method each host runs (`pane.map`), with its params. */
  readonly method: string;
  readonly params: RpcParams;
  /** Params only hosts of a drover-rpc version at least this one take (see HostViewRequest). */
  readonly paramsSince?: HostViewRequest['paramsSince'];
  /** How long a host may take to answer by its own deadlines; the link's latency is added. */
  readonly hostBudgetMs: number;
  /**
   * The view's lists, each with its human table, in this order (a list without rows is not
   * printed). A document that is one JSON array (a pane map) is the view's only list.
   */
  readonly tables: readonly { readonly list: string; readonly title: string; readonly columns: readonly AllHostsColumn[] }[];
  /** This machine's document, exactly as the same command prints it with --json. */
  local(): Promise<unknown>;
}

/** Where each host's last rows are kept. */
export function rememberedRows(env: NodeJS.ProcessEnv): RememberedRowsStore {
  return new RememberedRowsStore(join(stateDirectory(env), 'hosts'));
}

function requestOf(view: AllHostsView): HostViewRequest {
  return { method: view.method, params: view.params, paramsSince: view.paramsSince, hostBudgetMs: view.hostBudgetMs, listNames: view.tables.map((table) => table.list) };
}

function ago(ms: number): string {
  return `${formatIdleDuration(ms / 1000)} ago`;
}

/** A column's cell: its fields that are known (strings as they are, others as JSON), else an em dash. */
function columnText(column: AllHostsColumn, row: HostRow): string {
  const known = column.fields.map((field) => row[field]).filter((value) => value !== null && value !== undefined);
  return known.length === 0 ? '—' : known.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(column.join ?? ' ');
}

function hostCell(row: MergedRow): string {
  return row.stale ? `${row.host} (stale, ${ago(row.staleAgeMs ?? 0)})` : row.host;
}

/** The line for a machine that did not answer: how long ago it was seen, and why not now. */
function statusLine(status: MergedHostStatus, nowMicros: number): string {
  if (status.name === LOCAL_HOST) return `${LOCAL_HOST}: failed: ${status.error ?? ''}`;
  const link = (status.linkState ?? 'no link').replace('_', ' ');
  const state = status.reachable ? `failed (link ${link})` : `unreachable (${link})`;
  const lastSeen = status.lastSeenAt === undefined ? 'never seen' : `last seen ${ago(nowMicros / 1000 - Date.parse(status.lastSeenAt))}`;
  const rows = status.stale ? `; its rows are from ${ago(status.staleAgeMs ?? 0)}` : '; no rows known';
  return `${status.name}: ${state}, ${lastSeen}${rows}: ${status.error ?? ''}`;
}

function render(view: AllHostsView, merged: MergedView, io: CliIO): void {
  let printed = 0;
  for (const table of view.tables) {
    const rows = merged.lists[table.list] ?? [];
    if (rows.length === 0) continue;
    if (printed > 0) writeLine(io.stdout);
    if (view.tables.length > 1) writeLine(io.stdout, table.title);
    const cells = rows.map((row) => [hostCell(row), ...table.columns.map((column) => columnText(column, row.row))].map(foldBody));
    io.stdout.write(renderTable(['Host', ...table.columns.map((column) => column.header)], cells));
    printed += 1;
  }
  if (printed === 0) writeLine(io.stdout, 'No rows on any host.');
  const nowMicros = wallMicros();
  for (const status of merged.hosts) if (!status.answered) writeLine(io.stdout, statusLine(status, nowMicros));
}

/** Runs `view` here and on every configured host, prints the merged rows, and answers the exit status. */
export async function runAcrossHosts(view: AllHostsView, io: CliIO, json: boolean): Promise<number> {
  const hosts = Hosts.open({ env: io.env, droverCommand: droverCommand(io.env), timings: { downAfterFailures: 1 } });
  try {
    const merged = await viewAcrossHosts(hosts, requestOf(view), rememberedRows(io.env), () => view.local(), { signal: io.signal });
    if (json) writeJson(io, mergedViewJson(merged));
    else render(view, merged, io);
    return merged.complete ? EXIT.ok : EXIT.failure;
  } finally {
    await hosts.close();
  }
}

