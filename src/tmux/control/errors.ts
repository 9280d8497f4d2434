import { DroverError, type Delivery } from '../errors.js';

/** Why a control connection stopped carrying traffic. */
export type LossReason = 'exit' | 'eof' | 'protocol' | 'closed' | 'retired' | 'reconnected';

/**
 * The control connection ended (the server died, the client was detached, tmux sent
 * %exit, or drover closed or retired it) before this request or wait finished.
 */
export class ConnectionLostError extends DroverError {
  readonly reason: LossReason;
  /** The reason tmux gave on its %exit line, if any. */
  readonly exitReason: string | undefined;

  constructor(message: string, reason: LossReason, delivery: Delivery, exitReason?: string, cause?: unknown) {
    super(message, { phase: 'control', delivery, cause });
    this.reason = reason;
    this.exitReason = exitReason;
  }
}

/** The control stream broke its framing (an overlong line, an unmatched terminator). */
export class ControlProtocolError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'decode', delivery: 'possibly_sent' });
  }
}

/**
 * A reliable subscription could not keep every event within its bounds. The events
 * queued before the overflow were still readable; nothing after them was kept.
 */
export class SubscriptionOverflowError extends DroverError {
  /** Events that arrived after the subscription was full and were not kept. */
  readonly lostEvents: number;

  constructor(message: string, lostEvents: number) {
    super(message, { phase: 'subscribe', delivery: 'observed' });
    this.lostEvents = lostEvents;
  }
}
