import { DroverError, type ErrorContext } from '../process/index.js';

/** What kind of problem a workspace file has. */
export type WorkspaceErrorCode =
  | 'syntax'
  | 'bounds'
  | 'duplicate_key'
  | 'yaml_feature'
  | 'unknown_key'
  | 'type'
  | 'value'
  | 'unsupported'
  | 'missing'
  | 'expansion'
  | 'io';

export interface WorkspaceErrorDetails extends ErrorContext {
  /** Structural location, e.g. `windows[2].panes[0].shell_command`; `$` is the whole document. */
  path: string;
  code: WorkspaceErrorCode;
  /** Stable name of a feature drover refuses (e.g. `plugins`, `yaml_anchor`). */
  unsupportedFeature?: string;
  /** 1-based source position, when the problem was found before the structure existed. */
  line?: number;
  column?: number;
}

/**
 * A workspace file (or text) drover will not accept. Messages name the structural path and
 * the rule, never the offending value: values can be private (tokens in environments, paths).
 */
export class WorkspaceError extends DroverError {
  readonly path: string;
  readonly code: WorkspaceErrorCode;
  readonly unsupportedFeature: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(message: string, details: WorkspaceErrorDetails) {
    const { path, code, unsupportedFeature, line, column, ...context } = details;
    super(`${path}: ${message}`, { phase: code === 'io' ? 'read' : 'validate', delivery: 'not_sent', ...context });
    this.path = path;
    this.code = code;
    this.unsupportedFeature = unsupportedFeature;
    this.line = line;
    this.column = column;
  }
}

/** Shorthand for the most common rejection: a named feature drover does not support. */
export function unsupported(path: string, feature: string, message: string): WorkspaceError {
  return new WorkspaceError(message, { path, code: 'unsupported', unsupportedFeature: feature });
}
