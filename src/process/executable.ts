import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

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
