import { performance } from 'node:perf_hooks';
import type { AgentInputPort, AgentKind, AgentScreen } from '../agents/index.js';
import { toTmuxKey, translateKeys } from '../mux/index.js';
import { AbortedError } from '../process/index.js';

/** The agent a pane runs, from its process tree. */
export interface PaneAgent {
  /** The agent's name: one drover knows, or a configured provider's program; null when no agent runs. */
  name: string | null;
  /** Set when drover knows this agent's screens. */
  kind: AgentKind | null;
  pid: number | null;
}

export const NO_AGENT: Readonly<PaneAgent> = Object.freeze({ name: null, kind: null, pid: null });

/** What one look at a pane says before anything is typed. */
export interface PaneFacts {
  /** `#{pane_current_command}`: who owns the pane's terminal right now. */
  foreground: string;
  /** The pane's program exited and tmux kept the pane (remain-on-exit). */
  dead: boolean;
  agent: PaneAgent;
}

/**
 * What the readiness probe and the delivery choreography need from one pane. The tmux
 * handles (or a control connection) implement it; tests script it.
 */
export interface PaneIO {
  describe(): Promise<PaneFacts>;
  /** `capture-pane -p -S -<lines>`: at least the last `lines` lines plus the visible screen. */
  capture(lines: number): Promise<string>;
  /** The visible screen with its styling and the cursor. */
  screen(): Promise<AgentScreen>;
  /** `send-keys -l`: text typed literally, nothing submitted. */
  sendLiteral(text: string): Promise<void>;
  /** `send-keys` with tmux key names such as `C-u` or `Enter`. */
  sendKeys(keys: readonly string[]): Promise<void>;
  /** A bracketed paste through a buffer of its own, deleted afterwards. */
  paste(text: string): Promise<void>;
  /** `#{pane_in_mode}`: copy-mode or another tmux mode has the pane's input. */
  inMode(): Promise<boolean>;
  /** `send-keys -X cancel`: leave that mode. */
  cancelMode(): Promise<void>;
}

export const KEY_CLEAR_LINE = 'C-u';
export const KEY_ENTER = 'Enter';

/**
 * Keys sent to a pane in a tmux mode are eaten as mode bindings (send-keys still exits 0),
 * so every send first returns the pane to its live input. The probe runs before each send,
 * not once per choreography, because a person can enter copy-mode between keystrokes.
 * Captures need no guard: capture-pane reads the live grid even in copy-mode.
 */
async function leaveMode(io: PaneIO): Promise<void> {
  if (await io.inMode()) await io.cancelMode();
}

export async function sendLiteralGuarded(io: PaneIO, text: string): Promise<void> {
  await leaveMode(io);
  await io.sendLiteral(text);
}

export async function sendKeysGuarded(io: PaneIO, keys: readonly string[]): Promise<void> {
  await leaveMode(io);
  await io.sendKeys(keys);
}

/**
 * The pane as an agent input port: every keystroke and paste first leaves a tmux mode, and
 * the agent rules' neutral key names (`ctrl+u`, `Escape`) become tmux's (`C-u`, `Escape`).
 */
export function agentInputPort(io: PaneIO): AgentInputPort {
  return {
    read: () => io.screen(),
    paste: async (text) => {
      await leaveMode(io);
      await io.paste(text);
    },
    keys: (keys) => sendKeysGuarded(io, translateKeys(keys, toTmuxKey)),
  };
}

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** The waits between a keystroke and the capture that checks it. */
export interface Pacing {
  /** For a send to reach the screen before the verifying capture. */
  settleMs: number;
  /** Between the two captures whose difference separates booting from parked. */
  stabilityMs: number;
  /** Between two screen reads while waiting for the pane to show something. */
  pollMs: number;
  sleep: Sleep;
  /** Monotonic milliseconds. */
  now: () => number;
}

const sleepFor: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError());
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

export const DEFAULT_PACING: Readonly<Pacing> = Object.freeze({ settleMs: 300, stabilityMs: 500, pollMs: 100, sleep: sleepFor, now: () => performance.now() });
