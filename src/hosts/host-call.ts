/**
 * One command on one host's pane, over its link: what `drover pane capture gpu::%3` and the MCP
 * pane tools both do with a pane on another machine. The host runs its own command (its tmux,
 * its lock, its evidence) and its reply is handed back as it is; what can go wrong on the way
 * (the link is not up, the host is too old to remember delivery ids, the answer never came) is a
 * HostCallError saying whether anything may have been sent.
 */
import { DroverError, TimeoutError, type Delivery } from '../process/index.js';
import { RpcLinkLostError } from './client.js';
import { HostUnreachableError, type HostLink } from './link.js';
import { RPC_DELIVERY_IDS, versionAtLeast, type RpcFeature, type RpcParams, type RpcReply } from './protocol.js';

export interface HostCall {
  /** The drover-rpc method: the command's path joined by dots (`pane.capture`). */
  readonly method: string;
  readonly params: RpcParams;
  /** How long the host itself may take to answer (its own deadlines); the hub adds the link's latency. */
  readonly hostBudgetMs: number;
  /** A delivery's id, and the command that resends it, for the answer when the link is cut mid-call. */
  readonly delivery?: { readonly id: string; readonly resend: string };
  /** What this call needs of the host beyond delivery ids (which a call with `delivery` needs): an older host gets nothing. */
  readonly needs?: RpcFeature;
}

/** The budget of one call: the host's own, the link's latency, and what the hub waited (their sum). */
export interface HostCallFigures {
  readonly host: string;
  readonly latencyMs: number;
  readonly hostBudgetMs: number;
  readonly hubBudgetMs: number;
}

export function hostCallFiguresJson(figures: HostCallFigures): Record<string, unknown> {
  return { host: figures.host, latency_ms: figures.latencyMs, host_budget_ms: figures.hostBudgetMs, hub_budget_ms: figures.hubBudgetMs };
}

export type HostCallFailure = 'host_unreachable' | 'host_incompatible' | 'possibly_sent' | 'interrupted';

/** A call that got no answer from the host; `details` are the JSON fields its error document adds. */
export class HostCallError extends DroverError {
  constructor(
    readonly code: HostCallFailure,
    readonly host: string,
    message: string,
    delivery: Delivery,
    readonly details: Readonly<Record<string, unknown>>,
  ) {
    super(message, { phase: 'link', delivery });
  }
}

export interface HostCallOptions {
  /** How long the link may take to come up (ssh login, the remote Node starting). */
  readonly linkDeadlineMs: number;
  readonly signal?: AbortSignal;
}

/** The host's reply (its result or its own error, with its exit status) and the call's figures. */
export interface HostCallAnswer {
  readonly reply: RpcReply;
  readonly figures: HostCallFigures;
}

/** Runs `call` on the host of `link` once its link is up; HostCallError when no answer came. */
export async function callOnHost(link: HostLink, call: HostCall, options: HostCallOptions): Promise<HostCallAnswer> {
  const host = link.host.name;
  let client;
  try {
    client = await link.whenUp({ timeoutMs: options.linkDeadlineMs, signal: options.signal });
  } catch (error) {
    if (error instanceof HostUnreachableError) throw new HostCallError('host_unreachable', host, error.message, 'not_sent', { link_state: error.linkState, delivery: 'not_sent' });
    throw error;
  }
  // A host older than what the call needs would do something else with it (type a resend again): nothing is sent to it.
  const needed = [...(call.delivery === undefined ? [] : [RPC_DELIVERY_IDS]), ...(call.needs === undefined ? [] : [call.needs])];
  const lacking = needed.find((feature) => !versionAtLeast(client.handshake.version, feature.version));
  if (lacking !== undefined) {
    throw new HostCallError(
      'host_incompatible',
      host,
      `host ${host} runs drover ${client.handshake.drover_version} (drover-rpc ${client.handshake.version}), which ${lacking.lacking}; nothing was sent: ${link.installHint()}`,
      'not_sent',
      { delivery: 'not_sent', ...(call.delivery === undefined ? {} : { delivery_id: call.delivery.id }) },
    );
  }
  const latencyMs = link.health.latencyMs ?? 0;
  const figures: HostCallFigures = { host, latencyMs, hostBudgetMs: call.hostBudgetMs, hubBudgetMs: Math.ceil(call.hostBudgetMs + latencyMs) };
  try {
    return { reply: await client.request(call.method, call.params, { timeoutMs: figures.hubBudgetMs, signal: options.signal }), figures };
  } catch (error) {
    const interrupted = options.signal?.aborted === true;
    if (!(error instanceof RpcLinkLostError || error instanceof TimeoutError || interrupted)) throw error;
    // Sent, and no answer: it may have run there. Never reported as done, never as not done.
    // A delivery is asked for again by its id: the host answers from its record, never typing twice.
    const { delivery } = call;
    const resend = delivery === undefined ? '' : `; resend it with its delivery id (the host types it at most once): ${delivery.resend}`;
    throw new HostCallError(interrupted ? 'interrupted' : 'possibly_sent', host, `${call.method} on ${host}: ${(error as Error).message}${resend}`, 'possibly_sent', {
      delivery: 'possibly_sent',
      ...(delivery === undefined ? {} : { delivery_id: delivery.id, resend: delivery.resend }),
      link: hostCallFiguresJson(figures),
    });
  }
}
