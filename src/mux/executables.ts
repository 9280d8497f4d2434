/**
 * Which tmux and zellij binary the mux port runs. DROVER_TMUX_BIN / DROVER_ZELLIJ_BIN name one
 * by absolute path, for a binary somewhere unusual; a value that is not an absolute path to an
 * executable file is refused before anything runs. Without one:
 * - zellij is probed at fixed paths, ~/.local/bin first (where zellij's own installer puts it),
 *   because a service manager or another program's action starts drover without the operator's
 *   PATH; PATH is the last resort.
 * - tmux is the one on PATH, as for every other drover command, because a tmux binary of another
 *   version cannot talk to the server the operator's tmux started; the fixed paths are the
 *   fallback when PATH has none.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { executableOverride, findExecutable } from '../process/index.js';
import { Endpoint } from '../tmux/index.js';
import { MuxSelectionError } from './errors.js';

export type MuxBinary = 'tmux' | 'zellij';

export function binaryVariable(name: MuxBinary): string {
  return `DROVER_${name.toUpperCase()}_BIN`;
}

/** The fixed places a binary is probed, in order. */
export function fixedBinaryPaths(name: MuxBinary, env: NodeJS.ProcessEnv = process.env): string[] {
  const home = env.HOME || homedir();
  const system = ['/usr/local/bin', '/opt/homebrew/bin', '/usr/bin', '/bin'].map((dir) => join(dir, name));
  return name === 'zellij' ? [join(home, '.local/bin/zellij'), ...system] : system;
}

function firstExecutable(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    const found = findExecutable(path);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The binary DROVER_<NAME>_BIN names, checked; undefined when it is unset or blank. */
export function binaryOverride(name: MuxBinary, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const override = executableOverride(binaryVariable(name), name, env);
  if (override !== undefined && 'problem' in override) throw new MuxSelectionError(override.problem);
  return override?.path;
}

/**
 * The binary to run: the override, else the probe described above, else the bare name (which
 * then fails to start with the runner's own message). Throws MuxSelectionError for a bad override.
 */
export function muxBinary(name: MuxBinary, env: NodeJS.ProcessEnv = process.env): string {
  const override = binaryOverride(name, env);
  if (override !== undefined) return override;
  const fixed = fixedBinaryPaths(name, env);
  const found = name === 'zellij' ? (firstExecutable(fixed) ?? findExecutable(name, env)) : (findExecutable(name, env) ?? firstExecutable(fixed));
  return found ?? name;
}

/**
 * The same tmux server, talked to through DROVER_TMUX_BIN when it is set. Without it the
 * endpoint keeps the binary it was resolved with (the `drover up` server's own, for one).
 */
export function withTmuxBinary(endpoint: Endpoint, env: NodeJS.ProcessEnv = process.env): Endpoint {
  const executable = binaryOverride('tmux', env);
  if (executable === undefined || executable === endpoint.executable) return endpoint;
  return endpoint.socketName !== undefined
    ? Endpoint.fromSocketName(endpoint.socketName, { env, executable })
    : Endpoint.fromSocketPath(endpoint.socketPath, { env, executable });
}
