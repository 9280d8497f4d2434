import { isDeepStrictEqual } from 'node:util';
import { ArgumentError } from '../../process/index.js';
import type { AgentState } from '../state.js';
import { AGENT_HOOK_MARKER, agentHookCommand } from './command.js';
import { JsonNumber, cloneJson, parseJsonExact, stringifyJsonExact } from './json-text.js';

/** One hook event (and matcher) of an agent, and the state drover records when it fires. */
export interface HookEvent {
  event: string;
  matcher?: string;
  state: AgentState;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof JsonNumber);
}

function isOurs(hook: unknown): boolean {
  return isRecord(hook) && typeof hook.command === 'string' && hook.command.endsWith(AGENT_HOOK_MARKER);
}

/**
 * A settings file's JSON object; an absent or blank file is an empty one. Numbers are kept as
 * written and a key named twice is refused (see parseJsonExact).
 */
export function parseSettingsObject(text: string | undefined, path: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  const parsed = parseJsonExact(text, path);
  if (!isRecord(parsed)) throw new ArgumentError(`${path} does not hold a JSON object; fix it by hand first`);
  return parsed;
}

/**
 * Settings with drover's hooks merged into `hooks.<Event>: [{matcher?, hooks: [{…command}]}]`,
 * the shape Claude Code and Gemini CLI share: hooks drover installed before are replaced,
 * every other setting and every other hook is kept. Applying it twice changes nothing.
 * `extra` adds fields to each hook entry (Gemini CLI shows a hook's `name` while it runs).
 */
export function mergeEventHooks(
  settings: Record<string, unknown>,
  events: readonly HookEvent[],
  drover: readonly string[],
  path: string,
  extra: Readonly<Record<string, Json>> = {},
): Record<string, unknown> {
  const merged = cloneJson(settings);
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
  for (const { event, matcher, state } of events) {
    const group = { ...(matcher === undefined ? {} : { matcher }), hooks: [{ ...extra, type: 'command', command: agentHookCommand(drover, state) }] };
    hooks[event] = [...((hooks[event] as unknown[] | undefined) ?? []), group];
  }
  merged.hooks = hooks;
  return merged;
}

/** The settings text with drover's hooks; a file that already has them comes back unchanged. */
export function planSettingsHooks(current: string | undefined, drover: readonly string[], path: string, events: readonly HookEvent[], extra?: Readonly<Record<string, Json>>): string {
  const settings = parseSettingsObject(current, path);
  const merged = mergeEventHooks(settings, events, drover, path, extra);
  if (current !== undefined && isDeepStrictEqual(merged, settings)) return current;
  return `${stringifyJsonExact(merged)}\n`;
}

/** `Event (matcher) → state`, one line per hook. */
export function describeHookEvents(events: readonly HookEvent[]): string[] {
  return events.map(({ event, matcher, state }) => `${event}${matcher === undefined ? '' : ` (${matcher})`} → ${state}`);
}
