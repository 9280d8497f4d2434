import type { MuxRefusal } from '../mux/index.js';
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

  constructor(code: ApiErrorCode, message: string, options: { details?: Record<string, unknown>; delivery?: Delivery; cause?: unknown } = {}) {
    super(message, { phase: 'web', delivery: options.delivery ?? 'not_sent', cause: options.cause });
    this.code = code;
    this.status = STATUS_OF[code];
    this.details = Object.freeze({ ...(options.details ?? {}) });
  }
}

/** A multiplexer's refusal as the API answers it: unsupported names the capability and its note. */
export function refusalError(refusal: MuxRefusal): BridgeError {
  const details = refusal.capability === undefined ? {} : { capability: refusal.capability };
  return new BridgeError(refusal.reason, refusal.detail, { details, delivery: refusal.reason === 'unreachable' ? 'possibly_sent' : 'not_sent' });
}
