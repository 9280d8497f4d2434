import { homedir } from 'node:os';
import { join } from 'node:path';
import { describeHookEvents, mergeEventHooks, planSettingsHooks, type HookEvent } from './json-settings.js';
import { HOOK_REPORTS } from './reports.js';
import type { AgentHookInstaller } from './types.js';

/** Gemini CLI's user settings: `$GEMINI_CLI_HOME/.gemini/settings.json`, HOME when that is unset. */
export function geminiSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.GEMINI_CLI_HOME || env.HOME || homedir(), '.gemini', 'settings.json');
}

/**
 * Which Gemini CLI 0.61 hook event (and matcher) reports which state. BeforeAgent fires once
 * per prompt (not again for the tool loop's follow-up requests); Notification's only type,
 * ToolPermission, as the approval box opens; AfterTool once an approved tool has run and the
 * turn goes on; AfterAgent when the turn's last reply is in. Nothing fires when the person
 * cancels a turn or rejects a tool with Escape. Gemini CLI runs no hooks at all in a folder
 * it does not trust.
 */
export const GEMINI_HOOK_EVENTS: readonly HookEvent[] = Object.freeze([
  { event: 'SessionStart', state: 'idle' },
  { event: 'BeforeAgent', state: 'active' },
  { event: 'Notification', matcher: 'ToolPermission', state: 'waiting' },
  { event: 'AfterTool', state: 'active' },
  { event: 'AfterAgent', state: 'idle' },
]);

/** What Gemini CLI's status row shows while a hook runs ("Executing Hook: …"), instead of the whole command. */
const HOOK_NAME = 'drover agent state';

/** Gemini CLI's settings with drover's hooks merged in (see mergeEventHooks); `hooksConfig.enabled` is left as the person set it. */
export function mergeGeminiHooks(settings: Record<string, unknown>, drover: readonly string[], path = 'settings.json'): Record<string, unknown> {
  return mergeEventHooks(settings, GEMINI_HOOK_EVENTS, drover, path, { name: HOOK_NAME });
}

/** Gemini CLI's hooks in its user settings.json (GEMINI_CLI_HOME honoured). */
export const geminiHookInstaller: AgentHookInstaller = {
  agent: 'gemini',
  reports: HOOK_REPORTS.gemini,
  configPath: geminiSettingsPath,
  plan: (current, drover, path) => planSettingsHooks(current, drover, path, GEMINI_HOOK_EVENTS, { name: HOOK_NAME }),
  describe: () => describeHookEvents(GEMINI_HOOK_EVENTS),
};
