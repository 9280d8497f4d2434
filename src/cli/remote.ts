/**
 * A pane verb on another machine: `drover pane capture gpu::%3` runs `pane capture %3 --json` on
 * gpu's own drover over its link (its tmux, its lock, its evidence) and prints that host's
 * document, with the host and the link's figures added. Only JSON comes back: the host's
 * receipt is passed on as it is, never re-rendered from a guess.
 */
import { Hosts, HostUnreachableError, RPC_DELIVERY_IDS_SINCE, RpcLinkLostError, UnknownHostError, versionAtLeast, type HostTarget, type RpcParams } from '../hosts/index.js';
import { TimeoutError } from '../process/index.js';
import { EXIT, ExitError, writeError, writeJson, type CliIO } from './io.js';
import { droverCommand } from './invocation.js';
import type { SocketFlags } from './endpoint.js';

/** How long the link may take to come up (ssh login, the remote Node starting). */
const LINK_DEADLINE_MS = 30_000;

export interface RemoteVerb {
  /** The drover-rpc method: the command's path joined by dots. */
  readonly method: string;
  /** The command's params besides the pane and the server flags. */
  readonly params: RpcParams;
  /** How long the host itself may take to answer (its own deadlines); the hub adds the link's latency. */
  readonly hostBudgetMs: number;
  readonly json: boolean;
  /** A delivery's id and the command that resends it, for the answer when the link is cut mid-call. */
  readonly delivery?: { readonly id: string; readonly resend: string };
}

/** The server flags, passed on: -L/-S name a server on that host. */
function serverParams(flags: SocketFlags): RpcParams {
  return { ...(flags.socketName === undefined ? {} : { socket_name: flags.socketName }), ...(flags.socketPath === undefined ? {} : { socket_path: flags.socketPath }) };
}

export async function runOnHost(target: HostTarget, verb: RemoteVerb, flags: SocketFlags, io: CliIO): Promise<number> {
  let hosts: Hosts;
  try {
    hosts = Hosts.open({ names: [target.host], env: io.env, droverCommand: droverCommand(io.env), timings: { downAfterFailures: 1 } });
  } catch (error) {
    if (error instanceof UnknownHostError) throw new ExitError(error.message, EXIT.notFound, { code: 'not_found', host: target.host });
    throw error;
  }
  try {
    const link = hosts.link(target.host);
    let client;
    try {
      client = await link.whenUp({ timeoutMs: LINK_DEADLINE_MS, signal: io.signal });
    } catch (error) {
      if (error instanceof HostUnreachableError) throw new ExitError(error.message, EXIT.failure, { code: 'host_unreachable', host: target.host, link_state: error.linkState, delivery: 'not_sent' });
      throw error;
    }
    if (verb.delivery !== undefined && !versionAtLeast(client.handshake.version, RPC_DELIVERY_IDS_SINCE)) {
      // Such a host would type a resend again: nothing is sent to it.
      throw new ExitError(
        `host ${target.host} runs drover ${client.handshake.drover_version} (drover-rpc ${client.handshake.version}), which does not remember delivery ids; nothing was sent: install this release there with \`${droverCommand(io.env)} host add ${target.host} --install\``,
        EXIT.failure,
        { code: 'host_incompatible', host: target.host, delivery: 'not_sent', delivery_id: verb.delivery.id },
      );
    }
    const latencyMs = link.health.latencyMs ?? 0;
    const hubBudgetMs = Math.ceil(verb.hostBudgetMs + latencyMs);
    const linkFigures = { host: target.host, latency_ms: latencyMs, host_budget_ms: verb.hostBudgetMs, hub_budget_ms: hubBudgetMs };
    let reply;
    try {
      reply = await client.request(verb.method, { ...serverParams(flags), ...verb.params, pane: target.pane }, { timeoutMs: hubBudgetMs, signal: io.signal });
    } catch (error) {
      const interrupted = io.signal.aborted;
      if (error instanceof RpcLinkLostError || error instanceof TimeoutError || interrupted) {
        // Sent, and no answer: it may have run there. Never reported as done, never as not done.
        // A delivery is asked for again by its id: the host answers from its record, never typing twice.
        const resend = verb.delivery === undefined ? '' : `; resend it with its delivery id (the host types it at most once): ${verb.delivery.resend}`;
        const delivery = verb.delivery === undefined ? {} : { delivery_id: verb.delivery.id, resend: verb.delivery.resend };
        const message = `${verb.method} on ${target.host}: ${(error as Error).message}${resend}`;
        throw new ExitError(message, interrupted ? EXIT.interrupted : EXIT.unconfirmed, { code: interrupted ? 'interrupted' : 'possibly_sent', host: target.host, delivery: 'possibly_sent', ...delivery, link: linkFigures });
      }
      throw error;
    }
    if ('error' in reply) {
      if (verb.json) writeJson(io, { error: { ...reply.error, host: target.host } });
      writeError(io, `on ${target.host}: ${reply.error.message}`);
      return reply.exit_status;
    }
    const document = reply.result !== null && typeof reply.result === 'object' && !Array.isArray(reply.result) ? reply.result : { result: reply.result };
    writeJson(io, { ...document, host: target.host, link: linkFigures });
    return reply.exit_status;
  } finally {
    await hosts.close();
  }
}
