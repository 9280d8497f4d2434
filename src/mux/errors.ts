/**
 * Multiplexer failures share one base, MuxError, so a CLI boundary catches every backend's
 * failures uniformly while each backend keeps its own message text. Each error carries the
 * refusal reason it stands for, which is how a floor failure and a gated verb agree.
 */
import { DroverError, type ErrorContext } from '../process/index.js';
import type { MuxName, MuxRefusalReason } from './types.js';

export interface MuxErrorContext extends ErrorContext {
  /** What a gated verb answers for this failure; defaults to unreachable. */
  reason?: MuxRefusalReason;
  /** The multiplexer was replaced by another run at the same address (reason unreachable). */
  replaced?: boolean;
}

export class MuxError extends DroverError {
  /** The backend that failed; undefined when no backend was chosen yet (selection). */
  readonly mux: MuxName | undefined;
  readonly reason: MuxRefusalReason;
  /** Set when the port's multiplexer was replaced by another run: its pane ids are void for good. */
  readonly replaced: boolean;

  constructor(mux: MuxName | undefined, message: string, context: MuxErrorContext = {}) {
    super(message, context);
    this.mux = mux;
    this.replaced = context.replaced === true;
    this.reason = this.replaced ? 'unreachable' : (context.reason ?? 'unreachable');
  }
}

/** No backend could be chosen: DROVER_MUX names none drover knows, or the environment is ambiguous. */
export class MuxSelectionError extends MuxError {
  constructor(message: string) {
    super(undefined, message, { phase: 'select', delivery: 'not_sent', reason: 'refused' });
  }
}

export class TmuxMuxError extends MuxError {
  constructor(message: string, context: MuxErrorContext = {}) {
    super('tmux', message, context);
  }
}

export class HerdrError extends MuxError {
  /** herdr's own error code (pane_not_found, invalid_key, …) when herdr answered with one. */
  readonly code: string | undefined;
  constructor(message: string, context: MuxErrorContext & { code?: string } = {}) {
    super('herdr', message, context);
    this.code = context.code;
  }
}

export class ZellijError extends MuxError {
  constructor(message: string, context: MuxErrorContext = {}) {
    super('zellij', message, context);
  }
}
