import { DroverError, type Delivery, type ErrorContext } from '../process/index.js';
import type { ApplyResult } from './apply.js';

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
  | 'missing_directory'
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
  /** Every problem of the file when there are several (this error describes the first). */
  problems?: readonly WorkspaceError[];
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
  /** Every problem found in one reading (refused features first, then as they were read); at least this one. */
  readonly problems: readonly WorkspaceError[];
  /** The message without the path in front. */
  readonly reason: string;

  constructor(message: string, details: WorkspaceErrorDetails) {
    const { path, code, unsupportedFeature, line, column, problems, ...context } = details;
    // `$` is the document as a whole: a reader learns nothing from it, so only inner paths are shown.
    super(path === '$' ? message : `${path}: ${message}`, { phase: code === 'io' ? 'read' : 'validate', delivery: 'not_sent', ...context });
    this.path = path;
    this.reason = message;
    this.code = code;
    this.unsupportedFeature = unsupportedFeature;
    this.line = line;
    this.column = column;
    this.problems = problems ?? [this];
  }
}

/**
 * One error for every problem of a file: the first problem's path and code (so callers that
 * look at one see the first), a message listing them all, and each in `problems`.
 */
export function combineProblems(problems: readonly WorkspaceError[]): WorkspaceError {
  const [first, ...rest] = problems;
  if (first === undefined) throw new Error('combineProblems needs at least one problem');
  if (rest.length === 0) return first;
  const message = [first.reason, ...rest.map((problem) => problem.message)].join('; ');
  const { path, code, unsupportedFeature, line, column } = first;
  return new WorkspaceError(message, { path, code, unsupportedFeature, line, column, problems });
}

/** Shorthand for the most common rejection: a named feature drover does not support. */
export function unsupported(path: string, feature: string, message: string): WorkspaceError {
  return new WorkspaceError(message, { path, code: 'unsupported', unsupportedFeature: feature });
}

/** An apply that did not finish. `result` keeps the ledger; the cause is the wrapped error. */
export class ApplyError extends DroverError {
  readonly result: ApplyResult;

  constructor(result: ApplyResult, cause: unknown) {
    const where = result.failedStep === null ? 'before any step' : `at step ${result.failedStep} (${result.failedAction}, ${result.failedSource})`;
    const detail = result.failureClass === 'conflict' ? 'the plan conflicts with the server' : result.failureClass;
    super(`workspace apply failed ${where}: ${detail}; ${result.created.length} object(s) created, compensation ${result.compensation}`, {
      phase: 'apply',
      delivery: applyDelivery(result),
      cause,
      cleanupErrors: result.cleanupErrors,
    });
    this.result = result;
  }

  get failureClass(): string | null {
    return this.result.failureClass;
  }
}

function applyDelivery(result: ApplyResult): Delivery {
  if (result.uncertain) return 'possibly_sent';
  return result.completedSteps.length > 0 ? 'observed' : 'not_sent';
}
