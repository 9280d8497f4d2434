import { MuxError, refusalDelivery, type MuxRefusal } from '../mux/index.js';
import { DroverError, type Delivery } from '../process/index.js';
import type { ApiErrorCode } from './protocol.js';

const STATUS_OF: Readonly<Record<ApiErrorCode, number>> = {
  bad_request: 400,
  unsupported_media_type: 415,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden_host: 403,
  forbidden_origin: 403,
  read_only: 403,
  rate_limited: 429,
  not_found: 404,
  method_not_allowed: 405,
  pairing_required: 403,
  no_pairing_code: 403,
  pairing_invalid: 403,
  pairing_expired: 403,
  pairing_locked: 429,
  unsupported: 501,
  refused: 422,
  gone: 404,
  unreachable: 503,
  server_replaced: 409,
  host_unreachable: 503,
  possibly_sent: 504,
  key_refused: 422,
  question_changed: 409,
  pane_busy: 409,
  multiline_unsupported: 422,
  fleet_unavailable: 503,
  fleet_refused: 422,
  internal: 500,
};

/** A failure `drover web` answers with a stable code, an HTTP status and extra JSON fields. */
export class BridgeError extends DroverError {
  readonly code: ApiErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>>;
  /** Response headers the refusal needs (Retry-After). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ApiErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; headers?: Record<string, string>; delivery?: Delivery; cause?: unknown } = {},
  ) {
    super(message, { phase: 'web', delivery: options.delivery ?? 'not_sent', cause: options.cause });
    this.code = code;
    this.status = STATUS_OF[code];
    this.details = Object.freeze({ ...(options.details ?? {}) });
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
  }
}

/**
 * The refusal of a pane of a multiplexer run that is no longer the one served: the port never
 * sends to another run, so nothing was sent.
 */
export function replacedError(detail: string): BridgeError {
  return new BridgeError('server_replaced', detail, { delivery: 'not_sent' });
}

/** A multiplexer's refusal as the API answers it: unsupported names the capability and its note. */
export function refusalError(refusal: MuxRefusal): BridgeError {
  if (refusal.replaced === true) return replacedError(refusal.detail);
  const details = refusal.capability === undefined ? {} : { capability: refusal.capability };
  return new BridgeError(refusal.reason, refusal.detail, { details, delivery: refusalDelivery(refusal) });
}

/** A MuxError (a snapshot that failed, a pane channel's refusal) as the API answers it; undefined for anything else. */
export function muxFailure(error: unknown): BridgeError | undefined {
  if (!(error instanceof MuxError)) return undefined;
  if (error.replaced) return replacedError(error.message);
  return new BridgeError(error.reason, error.message, { details: { delivery: error.delivery }, delivery: error.delivery, cause: error });
}
