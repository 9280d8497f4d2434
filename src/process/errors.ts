/**
 * The root of every error drover raises. `phase` says which step failed and `delivery`
 * says what is known about effects: `not_sent` (nothing was dispatched), `possibly_sent`
 * (something may have reached its target), `observed` (a reply was seen). A failure never
 * claims that an effect was rolled back.
 */
export type Delivery = 'not_sent' | 'possibly_sent' | 'observed';

export interface ErrorContext {
  phase?: string;
  delivery?: Delivery;
  cause?: unknown;
  cleanupErrors?: readonly Error[];
}

export class DroverError extends Error {
  readonly phase: string;
  readonly delivery: Delivery;
  readonly cleanupErrors: readonly Error[];

  constructor(message: string, context: ErrorContext = {}) {
    super(message, context.cause === undefined ? undefined : { cause: context.cause });
    this.name = new.target.name;
    this.phase = context.phase ?? 'unknown';
    this.delivery = context.delivery ?? 'not_sent';
    this.cleanupErrors = Object.freeze([...(context.cleanupErrors ?? [])]);
  }
}

/**
 * Attaches cleanup failures to the failure they happened after, keeping that failure itself:
 * a DroverError lists them in cleanupErrors; any other error is returned as it is.
 */
export function withCleanupErrors(error: unknown, cleanup: readonly Error[]): unknown {
  if (error instanceof DroverError && cleanup.length > 0) {
    Object.defineProperty(error, 'cleanupErrors', { value: Object.freeze([...error.cleanupErrors, ...cleanup]) });
  }
  return error;
}

/** Invalid arguments detected locally, before any I/O. */
export class ArgumentError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'validate', delivery: 'not_sent', ...context });
  }
}

/** Something the caller named by its id (a fleet, a member, a message) does not exist. Nothing was done. */
export class NotFoundError extends DroverError {}

/** The executable could not be started (missing, not executable). Nothing was dispatched. */
export class SpawnError extends DroverError {}

/** The deadline passed before the child finished; it was killed and reaped. */
export class TimeoutError extends DroverError {
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number, context: ErrorContext = {}) {
    super(message, { phase: 'run', delivery: 'possibly_sent', ...context });
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's AbortSignal fired; the child (if any) was killed and reaped. */
export class AbortedError extends DroverError {
  constructor(message = 'operation was aborted', context: ErrorContext = {}) {
    super(message, { phase: 'run', delivery: 'possibly_sent', ...context });
  }
}

/** An input or output bound was exceeded; nothing is silently truncated. */
export class LimitError extends DroverError {
  readonly limit: string;
  readonly maxBytes: number;
  constructor(message: string, limit: string, maxBytes: number, context: ErrorContext = {}) {
    super(message, context);
    this.limit = limit;
    this.maxBytes = maxBytes;
  }
}

/** Bytes that were asked to be decoded strictly as UTF-8 were not valid UTF-8. */
export class DecodeError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'decode', delivery: 'observed', ...context });
  }
}

/** Strict UTF-8 decoding; invalid input raises DecodeError instead of being replaced. */
export function decodeUtf8(bytes: Uint8Array, what = 'output'): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new DecodeError(`${what} is not valid UTF-8`, { cause });
  }
}

/** The message of anything thrown, for embedding in a diagnostic or an error document. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
