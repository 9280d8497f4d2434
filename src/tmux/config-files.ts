import { existsSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TimeoutError } from '../process/index.js';
import { CommandError } from './errors.js';
import type { Server } from './server.js';

/**
 * The files tmux itself loads when it starts without -f, in its order, keeping those that
 * exist, each once (XDG_CONFIG_HOME is often ~/.config). An unset XDG_CONFIG_HOME drops that
 * entry, as tmux does.
 */
export function defaultConfigFiles(env: NodeJS.ProcessEnv): string[] {
  const home = env.HOME || homedir();
  const candidates = ['/etc/tmux.conf', join(home, '.tmux.conf')];
  if (env.XDG_CONFIG_HOME) candidates.push(join(env.XDG_CONFIG_HOME, 'tmux', 'tmux.conf'));
  candidates.push(join(home, '.config', 'tmux', 'tmux.conf'));
  const seen = new Set<string>();
  return candidates.filter((file) => {
    if (!existsSync(file) || statSync(file).isDirectory()) return false;
    const real = realpathSync(file);
    if (seen.has(real)) return false;
    seen.add(real);
    return true;
  });
}

export interface ConfigLoad {
  /** The files given, in the order they ran. */
  readonly files: readonly string[];
  /** What tmux reported while running them, one line each: its own words, `FILE:LINE: …` where it gives a place. */
  readonly errors: readonly string[];
}

/**
 * Runs configuration files on a server that has no session yet, in order, as tmux runs its own
 * at start. What tmux reports, a syntax error (the file then runs not at all) or an error while
 * it runs (an unknown option), is collected, never thrown, whether or not the command failed:
 * tmux too keeps a server whose configuration has errors. A file that outruns `timeoutMs` (a
 * plugin manager's `run-shell`, say) is reported and the next one runs.
 */
export async function loadConfigFiles(server: Server, files: readonly string[], options: { timeoutMs: number; signal?: AbortSignal }): Promise<ConfigLoad> {
  const errors: string[] = [];
  for (const file of files) {
    // An error while running has no place in tmux's words: name the file so the user knows where to look.
    const report = (text: string): void => {
      for (const line of text.split('\n').map((each) => each.trim())) if (line !== '') errors.push(line.startsWith(`${file}:`) ? line : `${file}: ${line}`);
    };
    try {
      report((await server.sourceFile(file, options)).stderrText());
    } catch (error) {
      if (error instanceof TimeoutError) {
        report(`tmux had not finished it after ${options.timeoutMs < 1000 ? `${options.timeoutMs} ms` : `${Math.round(options.timeoutMs / 1000)} s`}; drover went on, and what tmux had not reached yet may not have run`);
      } else if (error instanceof CommandError && error.result !== undefined) {
        // tmux prints a syntax error, which stops the file before anything in it runs, on stdout.
        report(`${error.result.stderr.toString('utf8')}\n${error.result.stdout.toString('utf8')}`);
      } else {
        throw error;
      }
    }
  }
  return Object.freeze({ files: Object.freeze([...files]), errors: Object.freeze(errors) });
}
