import { MuxError } from '../mux/index.js';
import { DroverError, NotFoundError, type ErrorContext } from '../process/index.js';

/** A fleet, member or message that does not exist, is not active, or lies outside the caller's fleet. */
export class RegistryNotFoundError extends NotFoundError {
  readonly kind: 'fleet' | 'member' | 'message';
  readonly id: number;
  constructor(kind: 'fleet' | 'member' | 'message', id: number, message: string) {
    super(message, { phase: 'lookup', delivery: 'not_sent' });
    this.kind = kind;
    this.id = id;
  }
}

/** A fleet that does not exist, or was deleted. */
export function fleetNotFound(fleetId: number): RegistryNotFoundError {
  return new RegistryNotFoundError('fleet', fleetId, `fleet '${fleetId}' not found.`);
}

/** The registry refuses a change in its current state (ACK twice, deregister the root director, …). */
export class RegistryStateError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'registry', delivery: 'not_sent', ...context });
  }
}

/** The database cannot be used by this drover: unversioned, newer than known, or unopenable. */
export class StoreError extends DroverError {
  constructor(message: string, context: ErrorContext = {}) {
    super(message, { phase: 'store', delivery: 'not_sent', ...context });
  }
}

/**
 * The store could not be used just now: it stayed busy past the wait, or could not be
 * reached. Nothing of the call was stored; the same call may succeed later.
 */
export class StoreUnavailableError extends StoreError {}

/** A pane's input lock stayed busy until the writer's wait ended. Nothing was typed. */
export class PaneInputBusyError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'lock', delivery: 'not_sent' });
  }
}

/** Taking a pane's input lock failed for a reason other than contention. */
export class PaneLockError extends DroverError {
  readonly path: string;
  constructor(message: string, path: string, context: ErrorContext = {}) {
    super(message, { phase: 'lock', delivery: 'not_sent', ...context });
    this.path = path;
  }
}

/**
 * One submission failed. `delivery` is `not_sent` when provably no text was typed
 * (no dispatch) and `possibly_sent` when the pane may hold part or all of the input
 * (uncertain: inspect the pane before any retry).
 */
export class PaneInputError extends DroverError {
  readonly step: 'budget' | 'escape' | 'literal' | 'enter';
  constructor(message: string, step: PaneInputError['step'], context: ErrorContext = {}) {
    super(message, { phase: 'input', ...context });
    this.step = step;
  }

  get dispatched(): 'none' | 'uncertain' {
    return this.delivery === 'not_sent' ? 'none' : 'uncertain';
  }
}

/** A member's placement is missing, pending or changed, so its pane cannot receive input. */
export class PlacementError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'placement', delivery: 'not_sent' });
  }
}

/** A member's pane no longer exists in its multiplexer: nothing was typed. */
export class PaneGoneError extends DroverError {
  readonly pane: string;
  constructor(pane: string, context: ErrorContext = {}) {
    super(`pane ${pane} no longer exists`, { phase: 'input', delivery: 'not_sent', ...context });
    this.pane = pane;
  }
}

/**
 * A member's pane lived on a multiplexer server that is gone, and another server now answers
 * in its place (a tmux server restarted at the same socket hands the same pane ids to
 * unrelated panes). Nothing was typed, read or killed; the member is marked stale.
 */
export class PlacementStaleError extends DroverError {
  readonly memberId: number;
  readonly pane: string;
  constructor(memberId: number, pane: string, mux: string) {
    super(
      `member ${memberId}'s pane ${pane} lived on a ${mux} server that is gone (another server now answers at its socket and may have a pane ${pane} of its own); the member is marked stale and drover will not act on ${pane}`,
      { phase: 'placement', delivery: 'not_sent' },
    );
    this.memberId = memberId;
    this.pane = pane;
  }
}

/**
 * A member's pane lives on another multiplexer server than the one this command reached, and
 * its placement does not say where that server is reached (it was recorded before drover kept
 * it), so the server reached cannot be told from one that replaced the pane's. Nothing was
 * typed, read, killed or recorded.
 */
export class PlacementElsewhereError extends PlacementError {
  readonly memberId: number;
  readonly pane: string;
  constructor(memberId: number, pane: string, mux: string, placedOn: string, reached: { incarnation: string; endpoint: string | null }) {
    const at = reached.endpoint === null ? '' : ` at ${reached.endpoint}`;
    super(
      `member ${memberId}'s pane ${pane} lives on ${mux} server ${placedOn}, not on the ${mux} server this command reached (${reached.incarnation}${at}), and its placement does not say where that server is; nothing was done to ${pane} and nothing was recorded: run the command from that server's panes, or name its socket (-S/-L)`,
    );
    this.memberId = memberId;
    this.pane = pane;
  }
}

/** The failures a cause chain carries, outermost first. */
function causes(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) chain.push(cause);
  return chain;
}

/** Whether a failure (through any wrapping) says the pane no longer exists in its multiplexer. */
export function isPaneGone(error: unknown): boolean {
  return causes(error).some((cause) => cause instanceof PaneGoneError || (cause instanceof MuxError && cause.reason === 'gone'));
}

/** Whether a failure (through any wrapping) says the multiplexer server was replaced by another run. */
export function isServerReplaced(error: unknown): boolean {
  return causes(error).some((cause) => cause instanceof MuxError && cause.replaced);
}
