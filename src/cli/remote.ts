/**
 * A pane verb on another machine: `drover pane capture gpu::%3` runs `pane capture %3 --json` on
 * gpu's own drover over its link (its tmux, its lock, its evidence; see callOnHost) and prints
 * that host's document, with the host and the link's figures added. Only JSON comes back: the
 * host's receipt is passed on as it is, never re-rendered from a guess.
 */
import { callOnHost, hostCallFiguresJson, HostCallError, Hosts, keyOnHost, UnknownHostError, type HostCall, type HostTarget, type RpcParams } from '../hosts/index.js';
import { EXIT, ExitError, writeError, writeJson, type CliIO } from './io.js';
import { droverCommand } from './invocation.js';
import type { SocketFlags } from './endpoint.js';

/** How long the link may take to come up (ssh login, the remote Node starting). */
const LINK_DEADLINE_MS = 30_000;

export interface RemoteVerb extends HostCall {
  readonly json: boolean;
}

/** The server flags, passed on: -L/-S name a server on that host. */
function serverParams(flags: SocketFlags): RpcParams {
  return { ...(flags.socketName === undefined ? {} : { socket_name: flags.socketName }), ...(flags.socketPath === undefined ? {} : { socket_path: flags.socketPath }) };
}

/** The exit status of a call that got no answer (see EXIT). */
const FAILURE_EXIT: Record<HostCallError['code'], number> = {
  host_unreachable: EXIT.failure,
  host_incompatible: EXIT.failure,
  possibly_sent: EXIT.unconfirmed,
  interrupted: EXIT.interrupted,
};

export async function runOnHost(target: HostTarget, verb: RemoteVerb, flags: SocketFlags, io: CliIO): Promise<number> {
  let hosts: Hosts;
  try {
    hosts = Hosts.open({ names: [target.host], env: io.env, droverCommand: droverCommand(io.env), timings: { downAfterFailures: 1 } });
  } catch (error) {
    if (error instanceof UnknownHostError) throw new ExitError(error.message, EXIT.notFound, { code: 'not_found', host: target.host });
    throw error;
  }
  try {
    let answer;
    try {
      answer = await callOnHost(hosts.link(target.host), { ...verb, params: { ...serverParams(flags), ...verb.params, pane: target.pane } }, { linkDeadlineMs: LINK_DEADLINE_MS, signal: io.signal });
    } catch (error) {
      if (error instanceof HostCallError) throw new ExitError(error.message, FAILURE_EXIT[error.code], { code: error.code, host: error.host, ...error.details });
      throw error;
    }
    const { reply, figures } = answer;
    if ('error' in reply) {
      if (verb.json) writeJson(io, { error: { ...reply.error, host: target.host } });
      writeError(io, `on ${target.host}: ${reply.error.message}`);
      return reply.exit_status;
    }
    const document: Record<string, unknown> = reply.result !== null && typeof reply.result === 'object' && !Array.isArray(reply.result) ? { ...reply.result } : { result: reply.result };
    writeJson(io, { ...keyOnHost(document, target.host), host: target.host, link: hostCallFiguresJson(figures) });
    return reply.exit_status;
  } finally {
    await hosts.close();
  }
}
