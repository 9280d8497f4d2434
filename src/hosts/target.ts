/**
 * A pane on a named machine: `HOST::PANE` (`gpu::%3`, `local::%0`), or a full pane key
 * `HOST::MUX::INCARNATION::PANE` as `pane map --all-hosts --json` prints it in `pane_key`. tmux
 * targets use `:` and `.` (`session:window.pane`) and tmux forbids `:` in a session name, so
 * `::` never starts a tmux target.
 */
import { ArgumentError } from '../process/index.js';
import { formatPaneKey, LOCAL_HOST, isHostName, parsePaneKey } from '../mux/index.js';

const SEPARATOR = '::';

export interface HostTarget {
  /** `local` for this machine. */
  readonly host: string;
  /**
   * The pane as that host's own drover takes it: `%3`, a tmux target there, or its own pane key
   * (which says `local` in the host field, since that is what the host calls itself), so the
   * host checks the key's server run against its own.
   */
  readonly pane: string;
}

function hostOf(name: string): string {
  return name.toLowerCase() === LOCAL_HOST ? LOCAL_HOST : name;
}

/** The host and pane `text` names, or undefined when it names no host (no `::`); ArgumentError when it is malformed. */
export function parseHostTarget(text: string): HostTarget | undefined {
  const parts = text.split(SEPARATOR);
  if (parts.length === 1) return undefined;
  if (parts.length >= 4) {
    const parsed = parsePaneKey(text);
    if (!parsed.ok) throw new ArgumentError(`${parsed.problem}; a pane key is HOST::MUX::INCARNATION::PANE, as --json prints it in pane_key`);
    return { host: hostOf(parsed.key.host), pane: formatPaneKey({ ...parsed.key, host: LOCAL_HOST }) };
  }
  if (parts.length === 3) {
    throw new ArgumentError(`${JSON.stringify(text)} is neither HOST::PANE (gpu::%3) nor a pane key HOST::MUX::INCARNATION::PANE (gpu::tmux::28114-1764844800::%3): it has two ::, not one or three`);
  }
  const [host, pane] = parts as [string, string];
  if (!isHostName(host)) throw new ArgumentError(`${JSON.stringify(text)}: ${JSON.stringify(host)} is not a host name (letters, digits, . _ -); a pane on a host is HOST::PANE`);
  if (pane === '') throw new ArgumentError(`${JSON.stringify(text)} names no pane after ::; a pane on a host is HOST::PANE, e.g. ${host}::%3`);
  return { host: hostOf(host), pane };
}
