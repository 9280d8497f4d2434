import type { AgentStatus as MuxAgentStatus } from '../mux/index.js';
import { ArgumentError, isProcessAlive } from '../process/index.js';

/** The pane user option agent hooks write: `<state>:<epoch seconds>[:<agent pid>]`. */
export const AGENT_STATE_OPTION = '@rk_pane_agent_state';
/** Its older name, read only when the current one is unset. */
export const LEGACY_AGENT_STATE_OPTION = '@rk_agent_state';

export const AGENT_STATES = Object.freeze(['active', 'waiting', 'idle'] as const);
/** active: a turn is running; waiting: blocked on a person; idle: the turn is over. */
export type AgentState = (typeof AGENT_STATES)[number];

export function isAgentState(value: string): value is AgentState {
  return (AGENT_STATES as readonly string[]).includes(value);
}

export interface AgentStateValue {
  state: AgentState;
  epochSeconds: number;
  pid?: number;
}

const DIGITS = /^\d+$/;
const POSITIVE = /^[1-9]\d*$/;

/**
 * Parses an option value. Anything malformed (empty, wrong number of segments, unknown
 * state, non-integer epoch, a pid that is not a positive integer) is wholly unknown.
 */
export function parseAgentStateValue(raw: string): AgentStateValue | undefined {
  const parts = raw.trim().split(':');
  if (parts.length < 2 || parts.length > 3) return undefined;
  const [state, epoch, pid] = parts as [string, string, string | undefined];
  if (!isAgentState(state) || !DIGITS.test(epoch)) return undefined;
  if (pid !== undefined && !POSITIVE.test(pid)) return undefined;
  const value: AgentStateValue = { state, epochSeconds: Number(epoch) };
  if (pid !== undefined) value.pid = Number(pid);
  return value;
}

/** The option value a hook writes. */
export function formatAgentStateValue(value: AgentStateValue): string {
  if (!isAgentState(value.state)) throw new ArgumentError(`unknown agent state ${JSON.stringify(value.state)}; use active, waiting or idle`);
  if (!Number.isSafeInteger(value.epochSeconds) || value.epochSeconds < 0) {
    throw new ArgumentError(`the epoch must be a non-negative whole number of seconds, got ${value.epochSeconds}`);
  }
  if (value.pid !== undefined && (!Number.isSafeInteger(value.pid) || value.pid < 1)) {
    throw new ArgumentError(`the pid must be a positive whole number, got ${value.pid}`);
  }
  const base = `${value.state}:${value.epochSeconds}`;
  return value.pid === undefined ? base : `${base}:${value.pid}`;
}

/** The raw value to interpret: the current option, else the legacy one when the current is unset. */
export function pickAgentStateOption(current: string | undefined, legacy: string | undefined): string {
  const primary = current?.trim() ?? '';
  return primary !== '' ? primary : (legacy?.trim() ?? '');
}

/** Floor of the elapsed time as `Ns`, `Nm` or `Nh`. */
export function formatIdleDuration(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m`;
  return `${Math.floor(whole / 3600)}h`;
}

/** What map, capture and questions report: a state (null = unknown) and, for idle only, how long. */
export interface AgentStatus {
  state: AgentState | null;
  idleDuration: string | null;
}

export const UNKNOWN_AGENT_STATUS: Readonly<AgentStatus> = Object.freeze({ state: null, idleDuration: null });

export interface AgentStatusContext {
  nowSeconds: number;
  pidAlive: (pid: number) => boolean;
}

export function defaultAgentStatusContext(): AgentStatusContext {
  return { nowSeconds: Math.floor(Date.now() / 1000), pidAlive: isProcessAlive };
}

/**
 * Interprets a raw option value. A value that names its agent's pid is trusted only while
 * that process exists: a state left behind by an agent that is gone is unknown, not stale.
 */
export function resolveAgentStatus(raw: string, context: AgentStatusContext): AgentStatus {
  const value = parseAgentStateValue(raw);
  if (value === undefined) return UNKNOWN_AGENT_STATUS;
  if (value.pid !== undefined && !context.pidAlive(value.pid)) return UNKNOWN_AGENT_STATUS;
  if (value.state !== 'idle') return { state: value.state, idleDuration: null };
  return { state: 'idle', idleDuration: formatIdleDuration(context.nowSeconds - value.epochSeconds) };
}

/**
 * The state a multiplexer that detects agents itself (herdr) reports for a pane, in drover's
 * words: working is active, blocked is waiting, idle and done are idle (since when, it does not
 * say); unknown is unknown.
 */
export function agentStateOfMux(status: MuxAgentStatus): AgentStatus {
  switch (status) {
    case 'working':
      return { state: 'active', idleDuration: null };
    case 'blocked':
      return { state: 'waiting', idleDuration: null };
    case 'idle':
    case 'done':
      return { state: 'idle', idleDuration: null };
    case 'unknown':
      return UNKNOWN_AGENT_STATUS;
  }
}

/** The Agent column: `idle (2m)`, `active`, `waiting`, or an em dash when unknown. */
export function agentStatusLabel(status: AgentStatus): string {
  if (status.state === null) return '—';
  return status.idleDuration === null ? status.state : `${status.state} (${status.idleDuration})`;
}
