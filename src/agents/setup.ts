import { chmodSync, copyFileSync, mkdirSync, readFileSync, readlinkSync, renameSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ArgumentError, writeFileBeside } from '../process/index.js';
import { hookInstallerFor } from './hooks/index.js';
import type { AgentHookInstaller } from './hooks/types.js';
import type { AgentKind } from './screens/types.js';

export { agentHookCommand } from './hooks/command.js';
export { CLAUDE_HOOK_EVENTS, claudeSettingsPath, mergeClaudeHooks } from './hooks/claude.js';

export interface AgentSetupPlan {
  agent: AgentKind;
  path: string;
  changed: boolean;
  /** The file's new text (what --dry-run shows). */
  text: string;
}

export function installerFor(agent: AgentKind): AgentHookInstaller {
  const installer = hookInstallerFor(agent);
  if (installer === undefined) throw new Error(`no hook installer for ${agent}`);
  return installer;
}

/** Reads the agent's config file (absent = empty) and works out what setup would write. */
export function planAgentSetup(drover: readonly string[], options: { agent?: AgentKind; path?: string; env?: NodeJS.ProcessEnv } = {}): AgentSetupPlan {
  const agent = options.agent ?? 'claude';
  const installer = installerFor(agent);
  const path = options.path ?? installer.configPath(options.env ?? process.env);
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const text = installer.plan(current, drover, path);
  return { agent, path, changed: text !== current, text };
}

/** Symbolic links a path may pass through before drover gives up on it (as the kernel does). */
const MAX_SYMLINKS = 40;

/**
 * The file a write to `path` must change: a symlink (or a chain of them) followed to the file
 * it names, which need not exist yet. Renaming over the link itself would turn a linked
 * settings file (dotfiles kept elsewhere) into a copy.
 */
function fileBehind(path: string): string {
  let target = resolve(path);
  for (let hops = 0; hops < MAX_SYMLINKS; hops += 1) {
    let link: string;
    try {
      link = readlinkSync(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // Not a link (EINVAL), or nothing there yet (ENOENT): this is the file.
      if (code === 'EINVAL' || code === 'ENOENT') return target;
      throw error;
    }
    target = resolve(dirname(target), link);
  }
  throw new ArgumentError(`${path} goes through more than ${MAX_SYMLINKS} symbolic links; fix it by hand first`);
}

/**
 * Writes a plan into the file behind any symlink, with that file's mode (0600 for a new one):
 * first a copy of the file as it was to `<file>.drover-backup`, then the new text to a file
 * beside it, renamed over it, so a crash leaves one or the other. Returns the backup's path.
 */
export function applyAgentSetup(plan: AgentSetupPlan): { backup: string | null } {
  if (!plan.changed) return { backup: null };
  const target = fileBehind(plan.path);
  mkdirSync(dirname(target), { recursive: true });
  const existing = statSync(target, { throwIfNoEntry: false });
  const mode = existing === undefined ? 0o600 : existing.mode & 0o7777;
  let backup: string | null = null;
  if (existing !== undefined) {
    backup = `${target}.drover-backup`;
    copyFileSync(target, backup);
    chmodSync(backup, mode);
  }
  const temporary = writeFileBeside(target, plan.text, mode);
  // A new file's mode passes through the umask; the file keeps exactly the mode it had.
  chmodSync(temporary, mode);
  renameSync(temporary, target);
  return { backup };
}
