/**
 * drover-rpc: how one drover talks to another over a byte stream (an ssh session's stdin and
 * stdout), one JSON document per line.
 *
 * - The server speaks first: one handshake line saying which protocol version it speaks, which
 *   drover it is, which multiplexers it can drive and which methods it answers.
 * - Then the client sends requests `{id, method, params}`; each gets exactly one reply,
 *   `{id, result, exit_status}` or `{id, error: {code, message, …}, exit_status}`, in any order.
 * - The methods are drover's own `--json` commands, named by their command path (`pane.map` is
 *   `drover pane map --json`), with their flags and arguments as params and their JSON document
 *   as the result: the same fields, the same error codes, the same exit statuses. The CLI is the
 *   API; nothing is answered here that the CLI would answer differently.
 * - `watch` opens a subscription that streams pane and topology events as `{event: {…}}` lines
 *   until `unwatch` or the end of the stream.
 *
 * Versions: a client accepts a server of the same major version, whatever its minor (a newer
 * minor only adds methods or fields), and refuses another major with the command that fixes it.
 */

export const RPC_PROTOCOL = 'drover-rpc';
/**
 * major.minor; see isCompatible. 1.1: pane.deliver takes delivery_id, and the server remembers
 * it. 1.2: pane.map takes glance (rows add branch, last_line, screen_digest), pane.questions
 * matches carry their answers, and the handshake may name a broker_socket. 1.3: pane.deliver
 * takes to_shell.
 */
export const RPC_VERSION = '1.3';

/** What a call needs of the host's drover-rpc: the first version that has it, and what an older host lacks, as an error says it. */
export interface RpcFeature {
  readonly version: string;
  readonly lacking: string;
}

/** The first version whose servers remember delivery ids (a resend is never typed twice). */
export const RPC_DELIVERY_IDS_SINCE = '1.1';

/** Delivery ids, which every call carrying one needs: an older host would type a resend again. */
export const RPC_DELIVERY_IDS: RpcFeature = Object.freeze({ version: RPC_DELIVERY_IDS_SINCE, lacking: 'does not remember delivery ids' });

/** pane.deliver's `to_shell` (a plain-shell member's line typed at its shell's prompt). */
export const RPC_TO_SHELL: RpcFeature = Object.freeze({ version: '1.3', lacking: "cannot type a line at a shell's prompt" });

/** The first version whose pane.map takes `glance`. */
export const RPC_GLANCE_SINCE = '1.2';

/** The longest line either side accepts; a longer one ends the stream (it cannot be resynchronised). */
export const RPC_MAX_LINE_BYTES = 8 * 1024 * 1024;

/** The server's first line. */
export interface RpcHandshake {
  readonly protocol: typeof RPC_PROTOCOL;
  readonly version: string;
  /** The drover release answering (package version). */
  readonly drover_version: string;
  /** The multiplexers this host can drive, the one its environment selects first. */
  readonly muxes: readonly RpcMuxAvailability[];
  /** Every method this server answers, `watch` and `unwatch` included. */
  readonly capabilities: readonly string[];
  /**
   * Since 1.2: the absolute path where this host takes a hub's forwarded broker socket when the
   * hub names none (its directory exists, private to the user); absent when it has none.
   */
  readonly broker_socket?: string;
}

export interface RpcMuxAvailability {
  readonly mux: string;
  /** What the host's environment selects when a request names none. */
  readonly selected: boolean;
}

export type RpcParams = Readonly<Record<string, unknown>>;

export interface RpcRequest {
  /** Chosen by the client, unique among its requests in flight; echoed in the reply. */
  readonly id: number | string;
  readonly method: string;
  readonly params?: RpcParams;
}

/** An error reply carries the CLI's error document (code, message, and phase/delivery where known). */
export interface RpcErrorBody {
  readonly code: string;
  readonly message: string;
  readonly phase?: string;
  readonly delivery?: string;
  /** A command's own document that came with the failure (a delivery receipt that was not `submitted`). */
  readonly document?: unknown;
}

export type RpcReply =
  | { readonly id: number | string; readonly result: unknown; readonly exit_status: number }
  | { readonly id: number | string; readonly error: RpcErrorBody; readonly exit_status: number };

/** One event of a `watch` subscription. */
export interface RpcEvent {
  readonly event: {
    /** The id of the `watch` request that opened the subscription. */
    readonly watch: number | string;
    /** topology: panes, tabs or spaces changed; pane: one pane's content changed; up/down: the watch's own state. */
    readonly kind: 'topology' | 'pane' | 'up' | 'down';
    readonly pane_id?: string;
    readonly detail?: string;
  };
}

/** Error codes of the protocol itself (a command's failures keep the CLI's codes). */
export const RPC_ERROR = Object.freeze({
  /** The line was not a request: not JSON, no id, no method. */
  badRequest: 'bad_request',
  /** No such method, or one the server does not offer over rpc. */
  unknownMethod: 'unknown_method',
  /** Params that cannot become the command's flags. */
  badParams: 'usage',
  /** Too many requests in flight. */
  busy: 'busy',
  /** The link ended before the reply came: whether the request ran is not known. */
  linkLost: 'link_lost',
});

/** `1.4` as [1, 4]; undefined when the text is not major.minor. */
export function parseVersion(version: unknown): [number, number] | undefined {
  if (typeof version !== 'string') return undefined;
  const match = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/.exec(version);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/**
 * Whether a client speaking `ours` can use a server speaking `theirs`: the same major. A newer
 * minor on the server is fine (it only adds); an older minor is fine too, as long as the methods
 * the client calls are in the server's capabilities.
 */
export function isCompatible(ours: string, theirs: string): boolean {
  const a = parseVersion(ours);
  const b = parseVersion(theirs);
  return a !== undefined && b !== undefined && a[0] === b[0];
}

/** Whether a server speaking `theirs` has what came with `since` (same major, minor at least). */
export function versionAtLeast(theirs: string, since: string): boolean {
  const a = parseVersion(theirs);
  const b = parseVersion(since);
  return a !== undefined && b !== undefined && a[0] === b[0] && a[1] >= b[1];
}

/** What is wrong with a handshake line, or undefined when it is one. */
export function handshakeProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the first line is not a JSON object';
  const handshake = value as Partial<RpcHandshake>;
  if (handshake.protocol !== RPC_PROTOCOL) return `the first line does not announce ${RPC_PROTOCOL} (protocol ${JSON.stringify(handshake.protocol)})`;
  if (parseVersion(handshake.version) === undefined) return `the protocol version ${JSON.stringify(handshake.version)} is not major.minor`;
  if (typeof handshake.drover_version !== 'string') return 'the handshake names no drover_version';
  if (!Array.isArray(handshake.muxes)) return 'the handshake lists no muxes';
  if (!Array.isArray(handshake.capabilities) || !handshake.capabilities.every((method) => typeof method === 'string')) return 'the handshake lists no capabilities';
  return undefined;
}

/** Methods of the protocol itself, beside the commands: a liveness check and the event subscription. */
export const RPC_PING = 'ping';
export const RPC_WATCH = 'watch';
export const RPC_UNWATCH = 'unwatch';
