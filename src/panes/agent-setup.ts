import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { hookInstallerFor } from './agent-hooks/index.js';
import type { AgentHookInstaller } from './agent-hooks/types.js';
import type { AgentKind } from './screens/types.js';

export { agentHookCommand } from './agent-hooks/command.js';
export { CLAUDE_HOOK_EVENTS, claudeSettingsPath, mergeClaudeHooks } from './agent-hooks/claude.js';

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

/** Writes a plan: a new file beside the old one, then renamed over it, so a crash leaves one or the other. */
export function applyAgentSetup(plan: AgentSetupPlan): void {
  if (!plan.changed) return;
  mkdirSync(dirname(plan.path), { recursive: true });
  const temporary = `${plan.path}.drover-${process.pid}.tmp`;
  writeFileSync(temporary, plan.text, { mode: 0o600 });
  renameSync(temporary, plan.path);
}
