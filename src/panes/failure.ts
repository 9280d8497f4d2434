import { MuxError, tmuxFailureCode } from '../mux/index.js';
import { AbortedError, ArgumentError, LimitError, NotFoundError, SpawnError, TimeoutError } from '../process/index.js';
import { ApplyError, WorkspaceError } from '../workspace/index.js';
import { AgentExitedError, NotInTmuxError, PaneKeyRefusedError, PaneNotFoundError } from './errors.js';

/**
 * The stable codes failures are reported under, in `--json` error documents and MCP error
 * results: snake_case words a script can branch on, where the message is for people.
 */
export type FailureCode =
  | 'usage'
  | 'invalid_workspace'
  | 'pane_not_found'
  | 'not_found'
  | 'not_inside_tmux'
  | 'server_replaced'
  | 'unreachable'
  | 'unsupported'
  | 'refused'
  | 'gone'
  | 'timed_out'
  | 'interrupted'
  | 'too_large'
  | 'incomplete_snapshot'
  | 'agent_exited'
  | 'load_failed'
  | 'tmux_failed'
  | 'failed';

/** The code a failure is reported under; anything drover did not classify is `failed`. */
export function failureCode(error: unknown): FailureCode {
  if (error instanceof WorkspaceError) return 'invalid_workspace';
  if (error instanceof ArgumentError) return 'usage';
  if (error instanceof PaneNotFoundError) return 'pane_not_found';
  if (error instanceof NotInTmuxError) return 'not_inside_tmux';
  if (error instanceof PaneKeyRefusedError) return 'server_replaced';
  if (error instanceof MuxError) return error.replaced ? 'server_replaced' : error.reason;
  const tmux = tmuxFailureCode(error);
  if (tmux !== undefined) return tmux;
  if (error instanceof TimeoutError) return 'timed_out';
  if (error instanceof AbortedError) return 'interrupted';
  if (error instanceof LimitError) return 'too_large';
  if (error instanceof AgentExitedError) return 'agent_exited';
  if (error instanceof ApplyError) return 'load_failed';
  if (error instanceof NotFoundError) return 'not_found';
  if (error instanceof SpawnError) return 'tmux_failed';
  return 'failed';
}
