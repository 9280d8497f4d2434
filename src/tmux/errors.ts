import { DroverError, type ErrorContext } from '../process/errors.js';
import type { RunResult } from '../process/run.js';

export { DroverError, ArgumentError, TimeoutError, AbortedError, LimitError, SpawnError, DecodeError } from '../process/errors.js';
export type { Delivery, ErrorContext } from '../process/errors.js';

export interface TmuxErrorContext extends ErrorContext {
  result?: RunResult | CommandEvidence;
}

/** What a failed tmux command left behind: its argv and raw output. May contain caller data. */
export interface CommandEvidence {
  readonly argv: readonly string[];
  readonly stdout: Buffer;
  readonly stderr: Buffer;
  readonly exitCode: number | null;
}

/** A tmux command ran and reported failure. `result` keeps its raw evidence. */
export class CommandError extends DroverError {
  readonly result: CommandEvidence | undefined;
  constructor(message: string, context: TmuxErrorContext = {}) {
    super(message, { phase: 'command', delivery: 'observed', ...context });
    this.result = context.result;
  }
}

/** The target session/window/pane no longer exists (or never did). */
export class TargetNotFoundError extends CommandError {
  readonly target: string;
  constructor(target: string, context: TmuxErrorContext = {}) {
    super(`tmux target ${target} not found`, context);
    this.target = target;
  }
}

/** No tmux server answers on the endpoint's socket, or it went away mid-call. */
export class ServerUnreachableError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'connect', delivery: 'not_sent', ...context });
  }
}

/** The socket this binding was opened on was replaced; drover will not follow a new server. */
export class ServerReplacedError extends ServerUnreachableError {}

/** Captured field bytes did not decode as their catalog type, or framing was malformed. */
export class FieldDecodeError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'decode', delivery: 'observed', ...context });
  }
}

/** The request needs a tmux feature or a capability this server or adapter does not have. */
export class UnsupportedFeatureError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'validate', delivery: 'not_sent', ...context });
  }
}

/**
 * A snapshot cannot answer what was asked, because it did not capture it (clients left out, a
 * record outside it) or because the capture reached one of its bounds (`limit` names it:
 * snapshot_rows, snapshot_bytes, field_bytes) and would have held less than the server has.
 */
export class IncompleteSnapshotError extends DroverError {
  readonly limit: string | undefined;
  constructor(message: string, context: ErrorContext & { limit?: string } = {}) {
    super(message, { phase: 'evaluate', delivery: 'not_sent', ...context });
    this.limit = context.limit;
  }
}

export class NoMatchError extends DroverError {
  constructor(message = 'no record matched') {
    super(message, { phase: 'evaluate', delivery: 'not_sent' });
  }
}

export class MultipleMatchesError extends DroverError {
  readonly count: number;
  constructor(count: number, message = `${count} records matched where exactly one was expected`) {
    super(message, { phase: 'evaluate', delivery: 'not_sent' });
    this.count = count;
  }
}

/** The binding (or a control connection) was closed; no further requests are admitted. */
export class ClosedError extends DroverError {
  constructor(message = 'the binding is closed') {
    super(message, { phase: 'admit', delivery: 'not_sent' });
  }
}

/**
 * close() was called from code running on behalf of one of the binding's own requests (a
 * map() item, a transport's command): it would wait for the very request that called it. It
 * is refused at once and the binding stays open; close it once that request has ended.
 */
export class ReentrantCloseError extends DroverError {
  constructor() {
    super("close() was called from inside one of this binding's own running requests, which it would wait for; close the binding once that request has ended", {
      phase: 'close',
      delivery: 'not_sent',
    });
  }
}

/** Admission or byte capacity is exhausted; the request was not sent. */
export class CapacityError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'admit', delivery: 'not_sent' });
  }
}

/**
 * tmux would run a command after the capture drover is about to make (an `after-capture-pane`
 * hook is set where the capture would find it), so reading the screen is refused: a capture
 * must have no side effects. Nothing was sent.
 */
export class CaptureHookError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'preflight', delivery: 'not_sent' });
  }
}
