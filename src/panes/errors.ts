import { DroverError } from '../process/index.js';

/** The pane the user named does not exist on the multiplexer (the pane verbs' exit 2). */
export class PaneNotFoundError extends DroverError {
  readonly pane: string;
  /** `hint`: what to say after "not found", e.g. which forms of target are accepted. */
  constructor(pane: string, hint?: string) {
    super(`pane ${pane} not found${hint === undefined ? '' : ` (${hint})`}`, { phase: 'resolve', delivery: 'not_sent' });
    this.pane = pane;
  }
}

/** Discovery of "the current session" needs the caller to run inside a multiplexer session. */
export class NotInTmuxError extends DroverError {
  constructor(message = 'not inside a tmux session') {
    super(message, { phase: 'validate', delivery: 'not_sent' });
  }
}

/**
 * A pane key that names a pane of another server run (or of another multiplexer than the one
 * chosen): the pane it meant is gone for good, and an id reused by the server answering now
 * names another pane, so nothing is done.
 */
export class PaneKeyRefusedError extends DroverError {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(message, { phase: 'resolve', delivery: 'not_sent' });
  }
}

/** The agent exited while drover watched it start; the pane is gone, its last lines (where the multiplexer kept them) are here. */
export class AgentExitedError extends DroverError {
  constructor(
    readonly command: string,
    readonly exitStatus: number | null,
    readonly lastLines: string,
  ) {
    super(`the agent exited right after it started${exitStatus === null ? '' : ` (status ${exitStatus})`}: ${command}`, { phase: 'start', delivery: 'observed' });
  }
}
