import { homedir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { ArgumentError } from '../../tmux/index.js';
import type { AgentState } from '../agent-state.js';
import { AGENT_HOOK_MARKER, agentHookCommand } from './command.js';
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
export const CLAUDE_HOOK_EVENTS: readonly { event: string; matcher?: string; state: AgentState }[] = Object.freeze([
  { event: 'UserPromptSubmit', state: 'active' },
  { event: 'PreToolUse', state: 'active' },
  { event: 'PermissionRequest', state: 'waiting' },
  { event: 'PostToolUse', state: 'active' },
  { event: 'Notification', matcher: 'permission_prompt|elicitation_dialog|agent_needs_input', state: 'waiting' },
  { event: 'Notification', matcher: 'idle_prompt', state: 'idle' },
  { event: 'Stop', state: 'idle' },
]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookEntry = { type?: string; command?: string; [key: string]: Json | undefined };
type MatcherGroup = { matcher?: string; hooks?: HookEntry[]; [key: string]: Json | HookEntry[] | undefined };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOurs(hook: unknown): boolean {
  return isRecord(hook) && typeof hook.command === 'string' && hook.command.endsWith(AGENT_HOOK_MARKER);
}

/**
 * Settings with drover's hooks merged in: hooks drover installed before are replaced, every
 * other setting and every other hook is kept as it was. Applying it twice changes nothing.
 */
export function mergeClaudeHooks(settings: Record<string, unknown>, drover: readonly string[], path = 'settings.json'): Record<string, unknown> {
  const merged = structuredClone(settings);
  if (merged.hooks !== undefined && !isRecord(merged.hooks)) throw new ArgumentError(`${path}: "hooks" is not an object; fix it by hand first`);
  const hooks = (merged.hooks ?? {}) as Record<string, unknown>;
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) throw new ArgumentError(`${path}: hooks.${event} is not a list; fix it by hand first`);
    const kept = (groups as unknown[])
      .map((group) => (isRecord(group) && Array.isArray(group.hooks) ? { ...group, hooks: group.hooks.filter((hook) => !isOurs(hook)) } : group))
      .filter((group) => !(isRecord(group) && Array.isArray(group.hooks) && group.hooks.length === 0));
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  for (const { event, matcher, state } of CLAUDE_HOOK_EVENTS) {
    const group: MatcherGroup = { ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: 'command', command: agentHookCommand(drover, state) }] };
    hooks[event] = [...((hooks[event] as unknown[] | undefined) ?? []), group];
  }
  merged.hooks = hooks;
  return merged;
}

/** The settings file's JSON object; an absent or blank file is an empty one. */
export function parseClaudeSettings(text: string | undefined, path: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new ArgumentError(`${path} is not valid JSON (${(cause as Error).message}); fix it by hand first`, { cause });
  }
  if (!isRecord(parsed)) throw new ArgumentError(`${path} does not hold a JSON object; fix it by hand first`);
  return parsed;
}

/** The settings text with drover's hooks; a file that already has them comes back unchanged. */
function planClaudeSettings(current: string | undefined, drover: readonly string[], path: string): string {
  const settings = parseClaudeSettings(current, path);
  const merged = mergeClaudeHooks(settings, drover, path);
  if (current !== undefined && isDeepStrictEqual(merged, settings)) return current;
  return `${JSON.stringify(merged, null, 2)}\n`;
}

/** Claude Code's hooks in its global settings.json (CLAUDE_CONFIG_DIR honoured). */
export const claudeHookInstaller: AgentHookInstaller = {
  agent: 'claude',
  reports: ['active', 'waiting', 'idle'],
  configPath: claudeSettingsPath,
  plan: planClaudeSettings,
  describe: () => CLAUDE_HOOK_EVENTS.map(({ event, matcher, state }) => `${event}${matcher === undefined ? '' : ` (${matcher})`} → ${state}`),
};
