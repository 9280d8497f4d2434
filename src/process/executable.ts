import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

/**
 * The executable a name would run: a path is checked as given, a bare name is looked up on
 * PATH. Undefined when there is none. Nothing is started.
 */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (name === '' || name.includes('\0')) return undefined;
  const candidates = name.includes('/') ? [resolve(name)] : (env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, name));
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/**
 * The executable an environment variable names (DROVER_TMUX_BIN, DROVER_SSH_BIN), for a binary
 * somewhere unusual: undefined when the variable is unset or blank, else the path or a sentence
 * saying why it cannot be used. Only an absolute path to an executable file is accepted, so the
 * choice never depends on the PATH or working directory of whoever starts drover.
 */
export function executableOverride(variable: string, what: string, env: NodeJS.ProcessEnv = process.env): { path: string } | { problem: string } | undefined {
  const value = env[variable]?.trim();
  if (!value) return undefined;
  if (!isAbsolute(value)) return { problem: `${variable}=${JSON.stringify(value)} is not an absolute path; name the ${what} binary by its full path` };
  if (findExecutable(value) === undefined) return { problem: `${variable}=${JSON.stringify(value)} is not an executable file` };
  return { path: value };
}
