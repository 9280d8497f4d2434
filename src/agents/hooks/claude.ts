import { homedir } from 'node:os';
import { join } from 'node:path';
import { describeHookEvents, mergeEventHooks, planSettingsHooks, type HookEvent } from './json-settings.js';
import { HOOK_REPORTS } from './reports.js';
import type { AgentHookInstaller } from './types.js';

/** Claude Code's global settings, where its hooks live. */
export function claudeSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'settings.json');
}

/**
 * Which Claude Code event (and matcher) reports which agent state, as Claude Code 2.1 fires
 * them: PermissionRequest as the permission prompt opens (its Notification comes about six
 * seconds later), PostToolUse once an approved tool has run and the turn goes on, Stop when
 * a turn ends, Notification idle_prompt a minute after that. Nothing fires when the person
 * interrupts a turn or rejects a tool with Escape.
 */
export const CLAUDE_HOOK_EVENTS: readonly HookEvent[] = Object.freeze([
  { event: 'UserPromptSubmit', state: 'active' },
  { event: 'PreToolUse', state: 'active' },
  { event: 'PermissionRequest', state: 'waiting' },
  { event: 'PostToolUse', state: 'active' },
  { event: 'Notification', matcher: 'permission_prompt|elicitation_dialog|agent_needs_input', state: 'waiting' },
  { event: 'Notification', matcher: 'idle_prompt', state: 'idle' },
  { event: 'Stop', state: 'idle' },
]);

/** Claude Code's settings with drover's hooks merged in (see mergeEventHooks). */
export function mergeClaudeHooks(settings: Record<string, unknown>, drover: readonly string[], path = 'settings.json'): Record<string, unknown> {
  return mergeEventHooks(settings, CLAUDE_HOOK_EVENTS, drover, path);
}

/** Claude Code's hooks in its global settings.json (CLAUDE_CONFIG_DIR honoured). */
export const claudeHookInstaller: AgentHookInstaller = {
  agent: 'claude',
  reports: HOOK_REPORTS.claude,
  configPath: claudeSettingsPath,
  plan: (current, drover, path) => planSettingsHooks(current, drover, path, CLAUDE_HOOK_EVENTS),
  describe: () => describeHookEvents(CLAUDE_HOOK_EVENTS),
};
