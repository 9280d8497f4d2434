import { MuxError } from '../mux/index.js';
import {
  AbortedError,
  ArgumentError,
  CaptureHookError,
  CommandError,
  FieldDecodeError,
  IncompleteSnapshotError,
  LimitError,
  NoMatchError,
  ServerReplacedError,
  ServerUnreachableError,
  SpawnError,
  TargetNotFoundError,
  TimeoutError,
  UnsupportedFeatureError,
} from '../tmux/index.js';
import { ApplyError, WorkspaceError } from '../workspace/index.js';
import { NotInTmuxError, PaneNotFoundError } from './errors.js';
import { AgentExitedError } from './pane-open.js';

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
  if (error instanceof TargetNotFoundError || error instanceof NoMatchError) return 'not_found';
  if (error instanceof NotInTmuxError) return 'not_inside_tmux';
  if (error instanceof ServerReplacedError) return 'server_replaced';
  if (error instanceof ServerUnreachableError) return 'unreachable';
  if (error instanceof MuxError) return error.reason;
  if (error instanceof CaptureHookError) return 'refused';
  if (error instanceof UnsupportedFeatureError) return 'unsupported';
  if (error instanceof TimeoutError) return 'timed_out';
  if (error instanceof AbortedError) return 'interrupted';
  if (error instanceof LimitError) return 'too_large';
  if (error instanceof IncompleteSnapshotError) return 'incomplete_snapshot';
  if (error instanceof AgentExitedError) return 'agent_exited';
  if (error instanceof ApplyError) return 'load_failed';
  if (error instanceof CommandError || error instanceof SpawnError || error instanceof FieldDecodeError) return 'tmux_failed';
  return 'failed';
}
