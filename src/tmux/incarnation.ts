/**
 * Which tmux server process answers on a socket. A socket path (and even its inode, which
 * ext4 hands to the next socket made there) outlives the server: a server restarted at the
 * same path reuses pane ids `%0`, `%1`… for unrelated panes. Its pid and start time tell
 * the two apart.
 */
export interface ServerIncarnation {
  readonly pid: number;
  /** tmux's `#{start_time}`: seconds since the epoch when the server started. */
  readonly startTime: number;
}

/** What tmux prints for an incarnation; parseIncarnation reads it back. */
export const INCARNATION_FORMAT = '#{pid} #{start_time}';

/** Parses `pid start_time`; undefined when the text is not that. */
export function parseIncarnation(text: string): ServerIncarnation | undefined {
  const match = /^(\d+) (\d+)$/.exec(text.trim());
  if (!match) return undefined;
  const pid = Number(match[1]);
  const startTime = Number(match[2]);
  return Number.isSafeInteger(pid) && pid > 0 && Number.isSafeInteger(startTime) ? Object.freeze({ pid, startTime }) : undefined;
}

/** The incarnation as one string (`pid-start_time`), as fleet placements store it. */
export function incarnationKey(incarnation: ServerIncarnation): string {
  return `${incarnation.pid}-${incarnation.startTime}`;
}

export function sameIncarnation(a: ServerIncarnation, b: ServerIncarnation): boolean {
  return a.pid === b.pid && a.startTime === b.startTime;
}

/** The command the guard names on another server: tmux fails it as unknown, which ends the command sequence. */
const REPLACED_COMMAND = 'drover-server-replaced';

/**
 * A tmux command to run first in a `;`-joined sequence. On `incarnation` it does nothing; on
 * any other server it fails ("unknown command"), and tmux then skips the rest of the
 * sequence, so the commands after it can only ever run on the server the binding was opened on.
 */
export function incarnationGuard(incarnation: ServerIncarnation): string[] {
  return ['if-shell', '-F', `#{==:#{pid}-#{start_time},${incarnationKey(incarnation)}}`, '', REPLACED_COMMAND];
}

/** Whether tmux's error text is the guard's refusal. */
export function isGuardRefusal(stderr: string): boolean {
  return stderr.includes(`unknown command: ${REPLACED_COMMAND}`);
}
