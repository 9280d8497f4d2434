/**
 * The I/O behind a merged view: asks every host the same drover-rpc method at once, each within
 * its own link's budget, and remembers each host's rows after every answer so a host that
 * cannot be reached later still shows its last rows (as stale; see mergeHostViews).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_HOST } from '../mux/index.js';
import { messageOf, TimeoutError, wallMicros, writeFileAtomic } from '../process/index.js';
import { RpcLinkLostError } from './client.js';
import { HostUnreachableError, type HostLink } from './link.js';
import { mergeHostViews, type HostAnswer, type HostFetch, type HostRow, type MergedView, type RememberedRows, type RowLists } from './merged.js';
import { versionAtLeast, type RpcParams } from './protocol.js';
import type { Hosts } from './registry.js';

export interface HostViewRequest {
  /** The drover-rpc method (`pane.map`) and its params, the same on every host. */
  readonly method: string;
  readonly params: RpcParams;
  /**
   * More params for hosts whose drover-rpc is at least `version` (an older one would refuse a
   * param it does not know): their rows carry more fields, the others' rows are as before.
   * Remembered rows are filed under `params` alone, so a host's rows are found across upgrades.
   */
  readonly paramsSince?: { readonly version: string; readonly params: RpcParams };
  /** How long a host may take to answer by its own deadlines; the hub adds the link's latency. */
  readonly hostBudgetMs: number;
  /**
   * The view's lists by name (`rows`; `matches` and `skipped`): the members of those names of
   * each machine's document, or the document itself when it is one JSON array (a pane map).
   */
  readonly listNames: readonly string[];
}

/** The view's lists in a document (see HostViewRequest.listNames); throws when the document is not one. */
export function rowListsOf(document: unknown, names: readonly string[]): RowLists {
  if (Array.isArray(document) && names.length === 1) return { [names[0]!]: document as HostRow[] };
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new TypeError('the document is not a JSON object');
  const lists: Record<string, HostRow[]> = {};
  for (const name of names) {
    const rows = (document as Record<string, unknown>)[name];
    if (!Array.isArray(rows)) throw new TypeError(`the document has no list ${JSON.stringify(name)}`);
    lists[name] = rows as HostRow[];
  }
  return lists;
}

/**
 * Each host's last rows for one view, one file per host and view under `directory`:
 * `HOST/METHOD-PARAMS.json`, where PARAMS is a digest of the params, so a map of one session
 * never stands in for a map of all of them.
 */
export class RememberedRowsStore {
  constructor(readonly directory: string) {}

  private path(host: string, method: string, params: RpcParams): string {
    const digest = createHash('sha256').update(JSON.stringify(params)).digest('hex').slice(0, 16);
    return join(this.directory, host, `${method}-${digest}.json`);
  }

  /** The rows remembered, or undefined when none are (or the file is not one this store wrote). */
  read(host: string, method: string, params: RpcParams): RememberedRows | undefined {
    let value: unknown;
    try {
      value = JSON.parse(readFileSync(this.path(host, method, params), 'utf8'));
    } catch {
      return undefined;
    }
    const saved = value as { seen_at_us?: unknown; lists?: unknown };
    if (!Number.isSafeInteger(saved?.seen_at_us) || saved.lists === null || typeof saved.lists !== 'object') return undefined;
    if (!Object.values(saved.lists).every((rows) => Array.isArray(rows))) return undefined;
    return { atMicros: saved.seen_at_us as number, lists: saved.lists as RowLists };
  }

  /** Not synced to disk: written after every answer of a polled view, and only a cache of what the host said. */
  write(host: string, method: string, params: RpcParams, rows: RememberedRows): void {
    writeFileAtomic(this.path(host, method, params), `${JSON.stringify({ host, method, params, seen_at_us: rows.atMicros, lists: rows.lists })}\n`, { durable: false });
  }
}

export interface GatherOptions {
  readonly signal?: AbortSignal;
  /**
   * Wait for a link that is coming up (the default, for a command asked once), or take a link
   * that is not up now as unreachable at once (for a view polled again and again, where one
   * host reconnecting must not hold up the others' rows).
   */
  readonly waitForLinks?: boolean;
}

async function fetchFrom(link: HostLink, request: HostViewRequest, options: GatherOptions): Promise<HostFetch> {
  // Coming up is bounded by the link's own deadlines (ssh's connect and the remote handshake, then the first ping).
  const upBudgetMs = (options.waitForLinks ?? true) ? link.timings.handshakeTimeoutMs + link.timings.pingTimeoutMs : 0;
  const { signal } = options;
  try {
    if (upBudgetMs > 0) await link.whenUp({ timeoutMs: upBudgetMs, signal });
  } catch (error) {
    if (error instanceof HostUnreachableError) return { kind: 'unreachable', error: error.message };
    throw error;
  }
  const budgetMs = Math.ceil(request.hostBudgetMs + (link.health.latencyMs ?? 0));
  const { paramsSince } = request;
  const version = link.remote?.version;
  const params = paramsSince !== undefined && version !== undefined && versionAtLeast(version, paramsSince.version) ? { ...request.params, ...paramsSince.params } : request.params;
  let reply;
  try {
    reply = await link.request(request.method, params, { timeoutMs: budgetMs, signal });
  } catch (error) {
    if (error instanceof HostUnreachableError || error instanceof RpcLinkLostError) return { kind: 'unreachable', error: error.message };
    if (error instanceof TimeoutError) return { kind: 'failed', error: `${request.method} on ${link.host.name}: ${error.message}` };
    throw error;
  }
  if ('error' in reply) return { kind: 'failed', error: `${request.method} on ${link.host.name} failed (${reply.error.code}): ${reply.error.message}` };
  try {
    return { kind: 'answered', lists: rowListsOf(reply.result, request.listNames), atMicros: wallMicros() };
  } catch (error) {
    return { kind: 'failed', error: `${request.method} on ${link.host.name} answered something else: ${messageOf(error)}` };
  }
}

/**
 * Asks every host of `hosts` at once and remembers each answer in `store`; one host failing or
 * hanging never holds up another beyond its own budget. The answers come in the hosts' order.
 */
export function gatherHostViews(hosts: Hosts, request: HostViewRequest, store: RememberedRowsStore, options: GatherOptions = {}): Promise<HostAnswer[]> {
  return Promise.all(
    hosts.names.map(async (name): Promise<HostAnswer> => {
      const link = hosts.link(name);
      const fetched = await fetchFrom(link, request, options);
      let remembered: RememberedRows | undefined;
      if (fetched.kind === 'answered') {
        remembered = { lists: fetched.lists, atMicros: fetched.atMicros };
        store.write(name, request.method, request.params, remembered);
      } else {
        remembered = store.read(name, request.method, request.params);
      }
      const { reachable, linkState, lastSeenAt, latencyMs } = link.health;
      return { host: name, fetched, link: { reachable, linkState, lastSeenAt, latencyMs }, remembered };
    }),
  );
}

async function localAnswer(request: HostViewRequest, local: () => Promise<unknown>): Promise<HostAnswer> {
  try {
    return { host: LOCAL_HOST, fetched: { kind: 'answered', lists: rowListsOf(await local(), request.listNames), atMicros: wallMicros() } };
  } catch (error) {
    return { host: LOCAL_HOST, fetched: { kind: 'failed', error: messageOf(error) } };
  }
}

/**
 * One view of this machine and every host of `hosts`: `local` answers for this machine (its
 * document as the command prints it with --json) while every host is asked at once
 * (gatherHostViews), and the answers are merged as of now (mergeHostViews).
 */
export async function viewAcrossHosts(
  hosts: Hosts,
  request: HostViewRequest,
  store: RememberedRowsStore,
  local: () => Promise<unknown>,
  options: { readonly signal?: AbortSignal } = {},
): Promise<MergedView> {
  const [here, remote] = await Promise.all([localAnswer(request, local), gatherHostViews(hosts, request, store, options)]);
  return mergeHostViews([here, ...remote], request.listNames, wallMicros());
}
