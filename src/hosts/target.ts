/**
 * A pane on a named machine: `HOST::PANE` (`gpu::%3`, `local::%0`). tmux targets use `:` and
 * `.` (`session:window.pane`) and tmux forbids `:` in a session name, so `::` never starts a
 * tmux target; a full pane key (`HOST::MUX::INCARNATION::PANE`) has three separators and is
 * left to the pane resolver.
 */
import { ArgumentError } from '../process/index.js';
import { LOCAL_HOST, isHostName } from '../mux/index.js';

const SEPARATOR = '::';

export interface HostTarget {
  /** `local` for this machine. */
  readonly host: string;
  /** The pane as that host's own drover takes it (`%3`, or a tmux target there). */
  readonly pane: string;
}

/** The host and pane `text` names, or undefined when it names no host; ArgumentError when the host part is malformed. */
export function parseHostTarget(text: string): HostTarget | undefined {
  const parts = text.split(SEPARATOR);
  if (parts.length !== 2) return undefined;
  const [host, pane] = parts as [string, string];
  if (!isHostName(host)) throw new ArgumentError(`${JSON.stringify(text)}: ${JSON.stringify(host)} is not a host name (letters, digits, . _ -); a pane on a host is HOST::PANE`);
  if (pane === '') throw new ArgumentError(`${JSON.stringify(text)} names no pane after ::; a pane on a host is HOST::PANE, e.g. ${host}::%3`);
  return { host: host.toLowerCase() === LOCAL_HOST ? LOCAL_HOST : host, pane };
}
