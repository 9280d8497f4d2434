import { Endpoint, type Server } from '../tmux/index.js';

/** Whether this process runs inside tmux at all. */
export function insideTmux(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.TMUX);
}

/** $TMUX_PANE when this process runs in a pane of `server`, else undefined. */
export function callerPane(server: Server, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const pane = env.TMUX_PANE;
  if (!insideTmux(env) || !pane) return undefined;
  return Endpoint.fromEnv({ env, executable: server.endpoint.executable }).equals(server.endpoint) ? pane : undefined;
}
