import { realpathSync } from 'node:fs';
import { findExecutable, shellQuote } from '../process/index.js';

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * How the user runs this very drover, for the commands drover's hints print (`drover down`,
 * `drover up`): `npx drover` when npx started it (the project's own bin, as the README's
 * set-up runs it), `drover` when that name on PATH is this drover, else node and the script's
 * path. npx comes first because it puts the project's bin directory on the PATH drover sees,
 * not on the PATH of the shell the user types the hint into.
 */
export function droverCommand(env: NodeJS.ProcessEnv): string {
  if (env.npm_command === 'exec') return 'npx drover';
  const script = process.argv[1] === undefined ? undefined : realPath(process.argv[1]);
  const onPath = findExecutable('drover', env);
  if (script !== undefined && onPath !== undefined && realPath(onPath) === script) return 'drover';
  const node = findExecutable('node', env);
  const runtime = node !== undefined && realPath(node) === realPath(process.execPath) ? 'node' : process.execPath;
  return [runtime, script ?? 'drover'].map(shellQuote).join(' ');
}

/**
 * The argv that runs this very drover, for the hooks it installs in agents, which must not
 * depend on PATH. The script node was started with is the CLI entry, bundled or not; its real
 * path survives the bin symlinks npm makes.
 */
export function droverArgv(): string[] {
  return [process.execPath, realpathSync(process.argv[1] ?? '')];
}
