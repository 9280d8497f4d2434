/**
 * The one place a selection becomes an adapter behind the gate. Only the adapter the selection
 * names is built, so a drover pointed at zellij never dials herdr's socket.
 */
import { Endpoint, type Server } from '../tmux/index.js';
import { HerdrAdapter } from './adapters/herdr/adapter.js';
import { TmuxAdapter } from './adapters/tmux/adapter.js';
import { ZellijAdapter } from './adapters/zellij/adapter.js';
import { muxBinary } from './executables.js';
import { createMuxPort } from './port.js';
import type { MuxSelection, TmuxEndpointSpec } from './select.js';
import type { MuxPort } from './types.js';

export interface OpenMuxOptions {
  /** Per-call deadline for the multiplexer's transport. */
  readonly timeoutMs?: number;
  /** The environment child processes run with, and where the tmux endpoint is discovered. */
  readonly env?: NodeJS.ProcessEnv;
  /** A tmux server the caller already resolved (a CLI's -L/-S); used instead of the selection's endpoint. */
  readonly tmuxEndpoint?: Endpoint;
  /** A tmux binding the caller opened (and closes), shared with its other reads: used instead of either endpoint. */
  readonly tmuxServer?: Server;
  /** How a tmux port opened on an endpoint reaches its server (see TmuxAdapterOptions.transport). */
  readonly tmuxTransport?: 'spawn' | 'control';
}

/** The tmux server a tmux endpoint spec names, through the tmux binary muxBinary chooses. */
export function tmuxEndpointOf(spec: TmuxEndpointSpec, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const options = { env, executable: muxBinary('tmux', env) };
  switch (spec.kind) {
    case 'socketName':
      return Endpoint.fromSocketName(spec.socketName, options);
    case 'socketPath':
      return Endpoint.fromSocketPath(spec.socketPath, options);
    case 'environment':
      return Endpoint.fromEnv(options);
  }
}

/** A port on the selection's endpoint (only the endpoint is read: a caller may name one backend's endpoint directly). */
export function openMux(selection: Pick<MuxSelection, 'endpoint'>, options: OpenMuxOptions = {}): MuxPort {
  const endpoint = selection.endpoint;
  switch (endpoint.mux) {
    case 'herdr':
      return createMuxPort(new HerdrAdapter({ socketPath: endpoint.socketPath, timeoutMs: options.timeoutMs }));
    case 'zellij':
      return createMuxPort(new ZellijAdapter({ session: endpoint.session, executable: muxBinary('zellij', options.env), env: options.env, timeoutMs: options.timeoutMs }));
    case 'tmux': {
      if (options.tmuxServer !== undefined) return createMuxPort(new TmuxAdapter({ server: options.tmuxServer, timeoutMs: options.timeoutMs }));
      const tmux = options.tmuxEndpoint ?? tmuxEndpointOf(endpoint, options.env ?? process.env);
      return createMuxPort(new TmuxAdapter({ endpoint: tmux, env: options.env, timeoutMs: options.timeoutMs, transport: options.tmuxTransport }));
    }
  }
}
