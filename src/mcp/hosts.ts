/**
 * The pane tools on other machines. A pane named `HOST::PANE` or by a full pane key of another
 * host (`gpu::tmux::…::%3`, as the merged map prints it) is acted on by that host's own drover,
 * over its link (callOnHost: the host's tmux, its lock, its evidence), and the tool answers with
 * the host's result and `host`; `all_hosts` merges this machine's view with every host's, as
 * `--all-hosts` does on the command line (viewAcrossHosts).
 */
import { z } from 'zod';
import {
  callOnHost,
  keyOnHost,
  mergedViewJson,
  parseHostTarget,
  viewAcrossHosts,
  type HostCall,
  type Hosts,
  type RememberedRowsStore,
  type RpcErrorBody,
  type RpcParams,
} from '../hosts/index.js';
import { LOCAL_HOST } from '../mux/index.js';
import { ArgumentError, DroverError, type Delivery } from '../process/index.js';
import type { ToolContext } from './tool.js';

/** How the tools reach other machines: the hosts of drover's config file, and where their last rows are kept. */
export interface HostAccess {
  /** The hosts, opened (their links started) on first use and kept for the server's life. */
  hosts(): Hosts;
  readonly remembered: RememberedRowsStore;
}

/** For an application given no hosts: every call naming one is refused, saying so. */
export const NO_HOSTS: HostAccess = {
  hosts() {
    throw new ArgumentError('this MCP server reaches no other machine: it was started without hosts');
  },
  get remembered(): RememberedRowsStore {
    throw new ArgumentError('this MCP server reaches no other machine: it was started without hosts');
  },
};

/** The host a tool's pane is on, when that is another machine: `HOST::PANE` or a full pane key; ArgumentError when malformed. */
export function paneOnHost(pane: string | undefined): ReturnType<typeof parseHostTarget> {
  if (pane === undefined) return undefined;
  const target = parseHostTarget(pane);
  return target === undefined || target.host === LOCAL_HOST ? undefined : target;
}

const DELIVERIES: readonly Delivery[] = ['not_sent', 'possibly_sent', 'observed'];

/** The host ran the command and it failed there: the host's own error, as its command reported it. */
export class HostAnsweredError extends DroverError {
  constructor(
    readonly host: string,
    readonly body: RpcErrorBody,
  ) {
    // What the host said of its delivery, when it said something drover knows.
    const delivery = DELIVERIES.find((value) => value === (body as { delivery?: unknown }).delivery);
    super(`on ${host}: ${body.message}`, { phase: 'host', ...(delivery === undefined ? {} : { delivery }) });
  }
}

/**
 * Runs a pane command on the pane's host and answers the host's document with `host` added and
 * its `pane_key` naming that host (the host's own keys say `local`, which here means this
 * machine). The call's budget is what is left of the tool's deadline.
 */
export async function onHost(context: ToolContext, host: string, method: string, params: RpcParams, delivery?: HostCall['delivery']): Promise<Record<string, unknown>> {
  const link = context.hosts.hosts().link(host);
  const call: HostCall = { method, params, hostBudgetMs: context.deadlineMs, ...(delivery === undefined ? {} : { delivery }) };
  const { reply } = await callOnHost(link, call, { linkDeadlineMs: context.deadlineMs, signal: context.signal });
  if ('error' in reply) throw new HostAnsweredError(host, reply.error);
  const document = reply.result;
  if (document === null || typeof document !== 'object' || Array.isArray(document)) throw new DroverError(`${method} on ${host} answered something other than a JSON object`, { phase: 'host', delivery: 'observed' });
  return { ...keyOnHost(document as Record<string, unknown>, host), host };
}

/** The members of `document` that `schema` names: a host's command document as a tool's result. */
export function shapedAs(schema: z.ZodObject, document: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(schema.shape).flatMap((key) => (key in document ? [[key, document[key]]] : [])));
}

/** The machine a result came from, on results of a pane on another host. */
export const hostField = { host: z.string().optional().describe('the host the pane is on, when it is not this machine') };

/** What `all_hosts` adds to each row. */
export const mergedRowFields = {
  host: z.string().optional().describe('with all_hosts: the machine the row is from (local for this one)'),
  stale: z.boolean().optional().describe("with all_hosts: the row is the host's last known one, since the host did not answer now"),
  stale_age_ms: z.number().nullable().optional().describe('with all_hosts: how old a stale row is'),
  seen_at: z.string().optional().describe('with all_hosts: when the row was read on its host'),
};

/** One machine of a merged view, as mergedHostStatusJson prints it. */
const hostStatusJsonSchema = z.strictObject({
  name: z.string(),
  reachable: z.boolean(),
  link_state: z.string().nullable(),
  last_seen_at: z.string().nullable(),
  latency_ms: z.number().nullable(),
  answered: z.boolean(),
  stale: z.boolean(),
  stale_age_ms: z.number().nullable(),
  error: z.string().nullable(),
});
export type HostStatusJson = z.infer<typeof hostStatusJsonSchema>;

/** With all_hosts: each machine's health and whether it answered. */
export const mergedHostsField = {
  hosts: z.array(hostStatusJsonSchema).optional().describe('with all_hosts: each machine (local first), its link health and whether it answered'),
};

/** How long a host may take over a sweep of its panes (it reads every one). */
const HOST_SWEEP_BUDGET_MS = 60_000;

/**
 * This machine's view (`local`: its document as the command prints it with --json) merged with
 * every host's answer to `method`, as one JSON document: each list, then `hosts`. A host that
 * cannot be reached keeps its last rows, marked stale; one that answers within the tool's
 * deadline is live.
 */
export async function acrossHosts(context: ToolContext, method: string, params: RpcParams, listNames: readonly string[], local: () => Promise<unknown>): Promise<Record<string, unknown>> {
  const request = { method, params, hostBudgetMs: Math.min(HOST_SWEEP_BUDGET_MS, context.deadlineMs), listNames };
  return mergedViewJson(await viewAcrossHosts(context.hosts.hosts(), request, context.hosts.remembered, local, { signal: context.signal }));
}
