import { Endpoint, Server, ServerUnreachableError } from '../tmux/index.js';
import { droverCommand } from './invocation.js';
import { UsageError, type CliIO } from './io.js';
import { readUpState } from './state.js';

/** The global socket flags every command shares. */
export interface SocketFlags {
  socketName?: string;
  socketPath?: string;
}

export type EndpointSource = 'flag' | 'tmux-env' | 'drover-up' | 'tmux-default';

/**
 * Which tmux server a command talks to: an explicit -L/-S always wins; then the server of
 * the tmux session this process runs in ($TMUX); then the private server `drover up`
 * started, if it is still running; then tmux's default socket.
 */
export function resolveEndpoint(flags: SocketFlags, io: CliIO): { endpoint: Endpoint; source: EndpointSource } {
  if (flags.socketName !== undefined && flags.socketPath !== undefined) throw new UsageError('give either -L/--socket-name or -S/--socket-path, not both');
  if (flags.socketPath !== undefined) return { endpoint: Endpoint.fromSocketPath(flags.socketPath, { env: io.env }), source: 'flag' };
  if (flags.socketName !== undefined) return { endpoint: Endpoint.fromSocketName(flags.socketName, { env: io.env }), source: 'flag' };
  if (io.env.TMUX) return { endpoint: Endpoint.fromEnv({ env: io.env }), source: 'tmux-env' };
  const up = readUpState(io.env);
  if (up && up.alive) return { endpoint: Endpoint.fromSocketPath(up.record.socketPath, { env: io.env, executable: up.record.executable }), source: 'drover-up' };
  return { endpoint: Endpoint.fromEnv({ env: io.env }), source: 'tmux-default' };
}

/**
 * No multiplexer is named and none is around this process: then every command drives tmux,
 * its server found by resolveEndpoint (the `drover up` server, else tmux's default).
 */
export function outsideAnySession(flags: SocketFlags, env: NodeJS.ProcessEnv): boolean {
  return flags.socketName === undefined && flags.socketPath === undefined && !env.DROVER_MUX && !env.HERDR_ENV && !env.TMUX;
}

/** The resolved server in a person's words, for messages and hints. */
export function serverDescription(flags: SocketFlags, io: CliIO): string {
  const { endpoint, source } = resolveEndpoint(flags, io);
  switch (source) {
    case 'flag':
      return `the tmux server at ${endpoint.socketPath}`;
    case 'tmux-env':
      return 'the tmux server this runs in';
    case 'drover-up':
      return `the server drover up started (${endpoint.socketPath})`;
    case 'tmux-default':
      return `tmux's default server (${endpoint.socketPath})`;
  }
}

/** What to do when tmux's default server, the last resort of the rule above, is not running. */
export function defaultServerRemedy(io: CliIO): string {
  return `start one with \`${droverCommand(io.env)} up\` or name one with -L/-S`;
}

/** What to do when the server $TMUX names is not running: a shell left over from a tmux session that has ended. */
export const STALE_TMUX_REMEDY = 'unset TMUX (this shell may be left from a tmux session that has ended), or name a server with -L/-S';

/**
 * Why no server answered, with what to do, where the rule above can tell: tmux's default
 * socket, or the one $TMUX names. Undefined for a server named with -L/-S or started by up.
 */
export function serverNotRunningMessage(source: EndpointSource, endpoint: Endpoint, io: CliIO): string | undefined {
  if (source === 'tmux-default') return `no tmux server is running on the default socket (${endpoint.socketPath}); ${defaultServerRemedy(io)}`;
  if (source === 'tmux-env') return `no tmux server is running at ${endpoint.socketPath}, the socket $TMUX names; ${STALE_TMUX_REMEDY}`;
  return undefined;
}

/** Why a command found no server, for reports made while it keeps running (`drover mcp`). */
export function serverNotRunning(flags: SocketFlags, io: CliIO): string {
  const { source } = resolveEndpoint(flags, io);
  const remedy = source === 'tmux-default' ? defaultServerRemedy(io) : source === 'tmux-env' ? STALE_TMUX_REMEDY : 'start it, or name another with -L/-S';
  return `no tmux server is running: drover looked for ${serverDescription(flags, io)}; ${remedy}`;
}

/** Opens (borrows) the resolved server, explaining which one was meant when none runs. */
export async function openServer(flags: SocketFlags, io: CliIO): Promise<Server> {
  const { endpoint, source } = resolveEndpoint(flags, io);
  try {
    return await Server.open(endpoint, { env: io.env });
  } catch (error) {
    const notRunning = error instanceof ServerUnreachableError ? serverNotRunningMessage(source, endpoint, io) : undefined;
    if (notRunning !== undefined) throw new ServerUnreachableError(notRunning);
    throw error;
  }
}
