/**
 * Which multiplexer drover drives, and where it lives. One resolver for every call site:
 *
 * 1. An explicit choice (a --mux flag, else DROVER_MUX) must name a supported backend; an unknown
 *    value fails loudly, listing the valid names.
 * 2. Otherwise the environment decides: HERDR_ENV truthy means herdr, TMUX set means tmux.
 * 3. Both or neither is a hard error that says how to fix it.
 *
 * The endpoint comes from DROVER_MUX_ENDPOINT_<NAME>: for tmux a name without "/" is a socket
 * name (-L) and one with "/" a socket path (-S), empty means the tmux session this process runs
 * in (Endpoint.fromEnv in src/tmux, the only reader of $TMUX's value) else tmux's default; for
 * herdr a socket path, else HERDR_SOCKET_PATH, HERDR_SESSION, herdr's default socket; for zellij a
 * session name, empty meaning the single running session. Nothing here touches a multiplexer.
 */
import { MuxSelectionError } from './errors.js';
import { herdrConfigRoot, herdrSessionSocket, HERDR_SOCKET_FILE, isHerdrSessionName } from './adapters/herdr/paths.js';
import { zellijIds } from './identity.js';
import { MUX_NAMES, type MuxName } from './types.js';
import { join } from 'node:path';

export type MuxChosenBy = 'flag' | 'DROVER_MUX' | 'HERDR_ENV' | 'TMUX';

export type TmuxEndpointSpec =
  | { readonly mux: 'tmux'; readonly kind: 'socketName'; readonly socketName: string }
  | { readonly mux: 'tmux'; readonly kind: 'socketPath'; readonly socketPath: string }
  /** The socket of the tmux session this process runs in, else tmux's default (Endpoint.fromEnv). */
  | { readonly mux: 'tmux'; readonly kind: 'environment' };

export interface HerdrEndpointSpec {
  readonly mux: 'herdr';
  readonly socketPath: string;
  readonly source: 'DROVER_MUX_ENDPOINT_HERDR' | 'HERDR_SOCKET_PATH' | 'HERDR_SESSION' | 'default';
}

export interface ZellijEndpointSpec {
  readonly mux: 'zellij';
  /** undefined: the single running session, found when the adapter starts. */
  readonly session: string | undefined;
}

export type MuxEndpointSpec = TmuxEndpointSpec | HerdrEndpointSpec | ZellijEndpointSpec;

export interface MuxSelection {
  readonly mux: MuxName;
  readonly chosenBy: MuxChosenBy;
  readonly endpoint: MuxEndpointSpec;
  /** One line for `drover doctor`: the backend, how it was chosen, and where it lives. */
  readonly summary: string;
}

export interface SelectOptions {
  /** A --mux flag; wins over DROVER_MUX. */
  readonly mux?: string;
  readonly env?: NodeJS.ProcessEnv;
}

export const DROVER_MUX = 'DROVER_MUX';

/** The variable each multiplexer sets in a pane's environment to name that pane. */
export const INVOKING_PANE_VARIABLE: Readonly<Record<MuxName, string>> = Object.freeze({ tmux: 'TMUX_PANE', herdr: 'HERDR_PANE_ID', zellij: 'ZELLIJ_PANE_ID' });

/**
 * The port's id of the pane this process runs in, from that variable; undefined when it is
 * unset. It does not say which server the pane is on: a caller that chose another server (a
 * tmux -S) checks that too.
 */
export function invokingPane(mux: MuxName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[INVOKING_PANE_VARIABLE[mux]];
  if (value === undefined || value === '') return undefined;
  // zellij names its pane by number; the port by its own id.
  return mux === 'zellij' && /^\d+$/.test(value) ? zellijIds.pane(Number(value)) : value;
}

export function endpointVariable(mux: MuxName): string {
  return `DROVER_MUX_ENDPOINT_${mux.toUpperCase()}`;
}

function isTruthy(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '' && !/^(0|false|no|off)$/i.test(value.trim());
}

function isMuxName(value: string): value is MuxName {
  return (MUX_NAMES as readonly string[]).includes(value);
}

function explicitChoice(value: string, where: string): MuxName {
  if (isMuxName(value)) return value;
  throw new MuxSelectionError(`${where}=${JSON.stringify(value)} names no multiplexer drover supports; valid names: ${MUX_NAMES.join(', ')}`);
}

/** Resolves the backend and its endpoint; throws MuxSelectionError when it cannot decide. */
export function selectMux(options: SelectOptions = {}): MuxSelection {
  const env = options.env ?? process.env;
  let mux: MuxName;
  let chosenBy: MuxChosenBy;
  if (options.mux !== undefined && options.mux !== '') {
    mux = explicitChoice(options.mux, '--mux');
    chosenBy = 'flag';
  } else if (env[DROVER_MUX] !== undefined && env[DROVER_MUX] !== '') {
    mux = explicitChoice(env[DROVER_MUX], DROVER_MUX);
    chosenBy = 'DROVER_MUX';
  } else {
    const herdr = isTruthy(env.HERDR_ENV);
    const tmux = env.TMUX !== undefined && env.TMUX !== '';
    if (herdr && tmux) throw new MuxSelectionError(`both HERDR_ENV and TMUX are set; set ${DROVER_MUX} to disambiguate`);
    if (!herdr && !tmux) throw new MuxSelectionError(`run drover inside a tmux or herdr session, or set ${DROVER_MUX}`);
    mux = herdr ? 'herdr' : 'tmux';
    chosenBy = herdr ? 'HERDR_ENV' : 'TMUX';
  }
  const endpoint = resolveEndpoint(mux, env);
  return Object.freeze({ mux, chosenBy, endpoint, summary: `${mux} (chosen by ${chosenBy}) at ${describeEndpoint(endpoint)}` });
}

/** Where one backend's multiplexer lives, from DROVER_MUX_ENDPOINT_<NAME> and that backend's own variables. */
export function resolveEndpoint(mux: MuxName, env: NodeJS.ProcessEnv = process.env): MuxEndpointSpec {
  const configured = env[endpointVariable(mux)] ?? '';
  switch (mux) {
    case 'tmux':
      if (configured === '') return { mux, kind: 'environment' };
      return configured.includes('/') ? { mux, kind: 'socketPath', socketPath: configured } : { mux, kind: 'socketName', socketName: configured };
    case 'herdr':
      return herdrEndpoint(configured, env);
    case 'zellij':
      return { mux, session: configured.trim() === '' ? undefined : configured.trim() };
  }
}

function herdrEndpoint(configured: string, env: NodeJS.ProcessEnv): HerdrEndpointSpec {
  if (configured !== '') return { mux: 'herdr', socketPath: configured, source: 'DROVER_MUX_ENDPOINT_HERDR' };
  if (env.HERDR_SOCKET_PATH) return { mux: 'herdr', socketPath: env.HERDR_SOCKET_PATH, source: 'HERDR_SOCKET_PATH' };
  const root = herdrConfigRoot(env);
  const session = env.HERDR_SESSION;
  if (session) {
    if (!isHerdrSessionName(session)) throw new MuxSelectionError(`HERDR_SESSION=${JSON.stringify(session)} is not a herdr session name`);
    return { mux: 'herdr', socketPath: herdrSessionSocket(root, session), source: 'HERDR_SESSION' };
  }
  return { mux: 'herdr', socketPath: join(root, HERDR_SOCKET_FILE), source: 'default' };
}

export function describeEndpoint(endpoint: MuxEndpointSpec): string {
  switch (endpoint.mux) {
    case 'tmux':
      if (endpoint.kind === 'socketName') return `tmux -L ${endpoint.socketName}`;
      if (endpoint.kind === 'socketPath') return `tmux -S ${endpoint.socketPath}`;
      return "the socket of this tmux session ($TMUX), else tmux's default";
    case 'herdr':
      return `herdr socket ${endpoint.socketPath} (from ${endpoint.source})`;
    case 'zellij':
      return endpoint.session === undefined ? 'the single running zellij session' : `zellij session ${endpoint.session}`;
  }
}
