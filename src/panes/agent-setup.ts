import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { shellQuote } from '../process/index.js';
import { ArgumentError } from '../tmux/index.js';
import type { AgentState } from './agent-state.js';

/** Claude Code's global settings, where its hooks live. */
export function claudeSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude'), 'settings.json');
}

/** Which Claude Code event (and notification type) reports which agent state. */
export const CLAUDE_HOOK_EVENTS: readonly { event: string; matcher?: string; state: AgentState }[] = Object.freeze([
  { event: 'UserPromptSubmit', state: 'active' },
  { event: 'PreToolUse', state: 'active' },
  { event: 'Notification', matcher: 'permission_prompt|elicitation_dialog|agent_needs_input', state: 'waiting' },
  { event: 'Notification', matcher: 'idle_prompt', state: 'idle' },
  { event: 'Stop', state: 'idle' },
]);

/** Marks the hook commands drover installed, so setup can find and replace them. */
const MARKER = '# drover agent state';

/**
 * The hook command for one state: silent and successful outside tmux or when drover fails,
 * because a hook must never get in the agent's way. `drover` is the argv that runs drover.
 */
export function agentHookCommand(drover: readonly string[], state: AgentState): string {
  return `[ -n "$TMUX_PANE" ] || exit 0; ${[...drover, 'agent', 'hook', state].map(shellQuote).join(' ')} >/dev/null 2>&1 || true ${MARKER}`;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HookEntry = { type?: string; command?: string; [key: string]: Json | undefined };
type MatcherGroup = { matcher?: string; hooks?: HookEntry[]; [key: string]: Json | HookEntry[] | undefined };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isOurs(hook: unknown): boolean {
  return isRecord(hook) && typeof hook.command === 'string' && hook.command.endsWith(MARKER);
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

export interface AgentSetupPlan {
  path: string;
  changed: boolean;
  /** The file's new text (what --dry-run shows). */
  text: string;
}

/** Reads the settings file (absent = empty) and works out what setup would write. */
export function planAgentSetup(drover: readonly string[], path: string = claudeSettingsPath()): AgentSetupPlan {
  let current: Record<string, unknown> = {};
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (text !== undefined && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (cause) {
      throw new ArgumentError(`${path} is not valid JSON (${(cause as Error).message}); fix it by hand first`, { cause });
    }
    if (!isRecord(parsed)) throw new ArgumentError(`${path} does not hold a JSON object; fix it by hand first`);
    current = parsed;
  }
  const merged = mergeClaudeHooks(current, drover, path);
  return { path, changed: text === undefined || !isDeepStrictEqual(merged, current), text: `${JSON.stringify(merged, null, 2)}\n` };
}

/** Writes a plan: a new file beside the old one, then renamed over it, so a crash leaves one or the other. */
export function applyAgentSetup(plan: AgentSetupPlan): void {
  if (!plan.changed) return;
  mkdirSync(dirname(plan.path), { recursive: true });
  const temporary = `${plan.path}.drover-${process.pid}.tmp`;
  writeFileSync(temporary, plan.text, { mode: 0o600 });
  renameSync(temporary, plan.path);
}
