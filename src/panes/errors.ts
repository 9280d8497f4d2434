import { DroverError, TargetNotFoundError } from '../tmux/index.js';

/** The pane the user named does not exist on the server (the pane verbs' exit 2). */
export class PaneNotFoundError extends TargetNotFoundError {
  readonly pane: string;
  constructor(pane: string) {
    super(pane);
    this.message = `pane ${pane} not found`;
    this.pane = pane;
  }
}

/** Discovery of "the current session" needs the caller to run inside tmux. */
export class NotInTmuxError extends DroverError {
  constructor() {
    super('not inside a tmux session', { phase: 'validate', delivery: 'not_sent' });
  }
}
