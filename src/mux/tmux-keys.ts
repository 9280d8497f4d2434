/**
 * Pane keys for rows read through the tmux library rather than the port (`drover snapshot`,
 * MCP's tmux tools): the same keys the port gives, on the run of the server the binding answers for.
 */
import { incarnationKey, type OperationOptions, type Server } from '../tmux/index.js';
import { formatPaneKey, LOCAL_HOST } from './identity.js';

/**
 * The key of each pane of the server's current run. The run is read once: a binding runs every
 * command behind a guard on the run it learnt first, so rows it read belong to that run.
 */
export async function tmuxPaneKeys(server: Server, options: OperationOptions = {}): Promise<(paneId: string) => string> {
  const incarnation = incarnationKey(await server.incarnation(options));
  return (paneId) => formatPaneKey({ host: LOCAL_HOST, mux: 'tmux', incarnation, paneId });
}

/** Pane rows as the tmux library prints them, each with its `pane_key` after its `pane_id`. */
export function withPaneKeys<R extends { pane_id: string }>(rows: readonly R[], keyOf: (paneId: string) => string): (R & { pane_key: string })[] {
  return rows.map(({ pane_id, ...rest }) => ({ pane_id, pane_key: keyOf(pane_id), ...rest }) as R & { pane_key: string });
}
