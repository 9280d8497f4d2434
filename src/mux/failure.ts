/**
 * The stable code a failure of the tmux library stands for, in `--json` error documents and MCP
 * error results. Layers above the port never import the tmux library, so its error classes are
 * told apart here, beside the adapter that raises them.
 */
import {
  CaptureHookError,
  CommandError,
  FieldDecodeError,
  IncompleteSnapshotError,
  NoMatchError,
  ServerReplacedError,
  ServerUnreachableError,
  TargetNotFoundError,
  UnsupportedFeatureError,
} from '../tmux/index.js';

export type TmuxFailureCode = 'not_found' | 'server_replaced' | 'unreachable' | 'refused' | 'unsupported' | 'incomplete_snapshot' | 'tmux_failed';

/** The code of an error the tmux library raised; undefined for any other error. */
export function tmuxFailureCode(error: unknown): TmuxFailureCode | undefined {
  if (error instanceof TargetNotFoundError || error instanceof NoMatchError) return 'not_found';
  if (error instanceof ServerReplacedError) return 'server_replaced';
  if (error instanceof ServerUnreachableError) return 'unreachable';
  if (error instanceof CaptureHookError) return 'refused';
  if (error instanceof UnsupportedFeatureError) return 'unsupported';
  if (error instanceof IncompleteSnapshotError) return 'incomplete_snapshot';
  if (error instanceof CommandError || error instanceof FieldDecodeError) return 'tmux_failed';
  return undefined;
}
