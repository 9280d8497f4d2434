import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { isProcessAlive } from '../process/index.js';
import type { OwnedDaemonRecord } from '../tmux/index.js';

/** Where drover keeps small state files: $DROVER_STATE_DIR, $XDG_STATE_HOME/drover, ~/.local/state/drover. */
export function stateDirectory(env: NodeJS.ProcessEnv): string {
  if (env.DROVER_STATE_DIR) return env.DROVER_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'drover');
}

export interface UpState {
  readonly record: OwnedDaemonRecord;
  readonly session: string;
  readonly startedAt: string;
}

function upFile(env: NodeJS.ProcessEnv): string {
  return join(stateDirectory(env), 'up.json');
}


/** The server `drover up` started, if recorded; `alive` says whether its pid still runs. */
export function readUpState(env: NodeJS.ProcessEnv): (UpState & { alive: boolean }) | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(upFile(env), 'utf8'));
  } catch {
    return undefined;
  }
  const state = parsed as Partial<UpState>;
  const record = state.record;
  if (!record || typeof record.socketPath !== 'string' || typeof record.directory !== 'string' || typeof record.pid !== 'number' || typeof record.executable !== 'string') {
    return undefined;
  }
  return { record, session: String(state.session ?? ''), startedAt: String(state.startedAt ?? ''), alive: isProcessAlive(record.pid) };
}

export function writeUpState(env: NodeJS.ProcessEnv, state: UpState): void {
  const dir = stateDirectory(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${upFile(env)}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(temporary, upFile(env));
}

export function clearUpState(env: NodeJS.ProcessEnv): void {
  rmSync(upFile(env), { force: true });
}
