import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { claudeHookInstaller, claudeSettingsPath } from './agent-hooks/claude.js';

export { agentHookCommand } from './agent-hooks/command.js';
export { CLAUDE_HOOK_EVENTS, claudeSettingsPath, mergeClaudeHooks } from './agent-hooks/claude.js';

export interface AgentSetupPlan {
  path: string;
  changed: boolean;
  /** The file's new text (what --dry-run shows). */
  text: string;
}

/** Reads Claude Code's settings file (absent = empty) and works out what setup would write. */
export function planAgentSetup(drover: readonly string[], path: string = claudeSettingsPath()): AgentSetupPlan {
  let current: string | undefined;
  try {
    current = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const text = claudeHookInstaller.plan(current, drover, path);
  return { path, changed: text !== current, text };
}

/** Writes a plan: a new file beside the old one, then renamed over it, so a crash leaves one or the other. */
export function applyAgentSetup(plan: AgentSetupPlan): void {
  if (!plan.changed) return;
  mkdirSync(dirname(plan.path), { recursive: true });
  const temporary = `${plan.path}.drover-${process.pid}.tmp`;
  writeFileSync(temporary, plan.text, { mode: 0o600 });
  renameSync(temporary, plan.path);
}
