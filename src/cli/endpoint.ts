import { Endpoint, Server, ServerUnreachableError } from '../tmux/index.js';
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

/** Opens (borrows) the resolved server, explaining which one was meant when none runs. */
export async function openServer(flags: SocketFlags, io: CliIO): Promise<Server> {
  const { endpoint, source } = resolveEndpoint(flags, io);
  try {
    return await Server.open(endpoint, { env: io.env });
  } catch (error) {
    if (error instanceof ServerUnreachableError && source === 'tmux-default') {
      throw new ServerUnreachableError(`no tmux server is running on the default socket (${endpoint.socketPath}); start one with \`drover up\` or name one with -L/-S`);
    }
    throw error;
  }
}
