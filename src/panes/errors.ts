import { DroverError, TargetNotFoundError } from '../tmux/index.js';

/** The pane the user named does not exist on the server (the pane verbs' exit 2). */
export class PaneNotFoundError extends TargetNotFoundError {
  readonly pane: string;
  /** `hint`: what to say after "not found", e.g. which forms of target are accepted. */
  constructor(pane: string, hint?: string) {
    super(pane);
    this.message = `pane ${pane} not found${hint === undefined ? '' : ` (${hint})`}`;
    this.pane = pane;
  }
}

/** Discovery of "the current session" needs the caller to run inside tmux. */
export class NotInTmuxError extends DroverError {
  constructor(message = 'not inside a tmux session') {
    super(message, { phase: 'validate', delivery: 'not_sent' });
  }
}
