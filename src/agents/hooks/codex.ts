import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'smol-toml';
import { ArgumentError } from '../../process/index.js';
import type { AgentState } from '../state.js';
import { AGENT_HOOK_MARKER, agentHookCommand } from './command.js';
import { HOOK_REPORTS } from './reports.js';
import type { AgentHookInstaller } from './types.js';

/**
 * Which Codex hook event reports which state. `label` is the event's name in Codex's
 * hook-trust keys. No event follows an approval (the next is PostToolUse, once the approved
 * command has finished), an interrupt or a failed turn. SessionStart is left out: Codex
 * starts its session with the first prompt, not when the composer appears.
 */
export const CODEX_HOOK_EVENTS: readonly { event: string; label: string; state: AgentState }[] = Object.freeze([
  { event: 'UserPromptSubmit', label: 'user_prompt_submit', state: 'active' },
  { event: 'PermissionRequest', label: 'permission_request', state: 'waiting' },
  { event: 'PostToolUse', label: 'post_tool_use', state: 'active' },
  { event: 'Stop', label: 'stop', state: 'idle' },
]);

/** Seconds Codex gives each hook; a hook holds the turn while it runs. */
const HOOK_TIMEOUT_SECONDS = 10;
const BLOCK_START = '# >>> drover agent state: written by `drover agent setup`, replaced on every run';
const BLOCK_END = '# <<< drover agent state';

type Toml = Record<string, unknown>;
/** One command hook as Codex's config holds it. */
export interface CodexHandler {
  type: 'command';
  command: string;
  timeout: number;
}

function isTable(value: unknown): value is Toml {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** A basic TOML string: JSON's escapes are TOML's, except that TOML also wants DEL escaped. */
function tomlString(text: string): string {
  return JSON.stringify(text).replace(/\x7f/g, '\\u007f');
}

/**
 * JSON with every object's keys sorted: what Codex's `version_for_toml` hashes, and a way to
 * compare parsed TOML (smol-toml's tables have no prototype, so deep equality would not do).
 */
function canonicalJson(value: unknown): string {
  // An integer past 2^53 is a BigInt here (parsed losslessly); its digits are its identity.
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isTable(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Codex runs a hook from the user's config only when `[hooks.state."<key>"].trusted_hash`
 * matches the hook: sha256 over the event label and the hook's matcher group, normalized
 * (the one handler, its timeout, `async`), as canonical JSON.
 */
export function codexHookTrustHash(label: string, handler: CodexHandler): string {
  const identity = { event_name: label, hooks: [{ ...handler, async: false }] };
  return `sha256:${createHash('sha256').update(canonicalJson(identity)).digest('hex')}`;
}

function parseToml(text: string, path: string, what: string): Toml {
  try {
    return parse(text, { integersAsBigInt: 'asNeeded' }) as Toml;
  } catch (cause) {
    throw new ArgumentError(`${path}: ${what} is not valid TOML (${(cause as Error).message.split('\n')[0]}); fix it by hand first`, { cause });
  }
}

/** drover's block as [start, end) offsets, its last line included; undefined when there is none. */
function findBlock(text: string, path: string): [number, number] | undefined {
  const start = text.indexOf(BLOCK_START);
  if (start === -1) return undefined;
  const end = text.indexOf(BLOCK_END, start);
  if (end === -1) throw new ArgumentError(`${path}: drover's block has a start line but no "${BLOCK_END}" line; remove the block by hand first`);
  const lineEnd = text.indexOf('\n', end);
  return [start, lineEnd === -1 ? text.length : lineEnd + 1];
}

/**
 * Whether a parsed block holds only what drover writes: hook groups whose handlers are
 * agentHookCommand's and trust entries. Codex appends the trust
 * entries it writes itself (a hook trusted in `/hooks`) at the end of the file, which can be
 * inside the block: those must not be dropped.
 */
function holdsOnlyDroversEntries(block: Toml): boolean {
  const { hooks, ...others } = block;
  if (Object.keys(others).length > 0 || !isTable(hooks)) return false;
  const isOurHandler = (handler: unknown): boolean => isTable(handler) && typeof handler.command === 'string' && handler.command.endsWith(AGENT_HOOK_MARKER);
  return Object.entries(hooks).every(([name, value]) =>
    name === 'state'
      ? isTable(value) && Object.values(value).every((entry) => isTable(entry) && Object.keys(entry).join() === 'trusted_hash')
      : Array.isArray(value) && value.every((group) => isTable(group) && Array.isArray(group.hooks) && group.hooks.every(isOurHandler)),
  );
}

function eventGroups(config: Toml, event: string, path: string): unknown[] {
  const hooks = config.hooks;
  if (hooks === undefined) return [];
  if (!isTable(hooks)) throw new ArgumentError(`${path}: "hooks" is not a table; fix it by hand first`);
  const groups = hooks[event];
  if (groups === undefined) return [];
  if (!Array.isArray(groups)) throw new ArgumentError(`${path}: hooks.${event} is not a list of tables; fix it by hand first`);
  return groups;
}

interface Entry {
  event: string;
  handler: CodexHandler;
  /** The `[hooks.state]` key: this file's path, the event label, the group's and the handler's index. */
  key: string;
  hash: string;
}

/** The parsed config with drover's entries added, for checking that the edit did exactly that. */
function withEntries(config: Toml, entries: readonly Entry[]): Toml {
  const hooks: Toml = { ...(config.hooks as Toml | undefined) };
  for (const { event, handler } of entries) hooks[event] = [...((hooks[event] as unknown[] | undefined) ?? []), { hooks: [handler] }];
  hooks.state = { ...(hooks.state as Toml | undefined), ...Object.fromEntries(entries.map(({ key, hash }) => [key, { trusted_hash: hash }])) };
  return { ...config, hooks };
}

function blockText(entries: readonly Entry[]): string {
  const lines = [BLOCK_START];
  for (const { event, handler } of entries) {
    lines.push(`[[hooks.${event}]]`, `[[hooks.${event}.hooks]]`, `type = ${tomlString(handler.type)}`, `command = ${tomlString(handler.command)}`, `timeout = ${handler.timeout}`, '');
  }
  for (const { key, hash } of entries) lines.push(`[hooks.state.${tomlString(key)}]`, `trusted_hash = ${tomlString(hash)}`, '');
  lines.push(BLOCK_END);
  return `${lines.join('\n')}\n`;
}

/**
 * Codex's `config.toml` with drover's hooks as one block at its end: inline `[[hooks.<Event>]]`
 * tables and their `[hooks.state]` trust entries, keyed by the group's position among the
 * event's groups in this file (hence last). The rest of the text is kept byte for byte, and
 * the result is parsed to check that the edit added drover's entries and changed nothing else.
 */
function planCodexConfig(current: string | undefined, drover: readonly string[], path: string): string {
  let kept = current ?? '';
  const block = findBlock(kept, path);
  if (block !== undefined) {
    if (!holdsOnlyDroversEntries(parseToml(kept.slice(...block), path, "drover's block"))) {
      throw new ArgumentError(`${path}: drover's block holds settings drover did not write; move them above the "${BLOCK_START}" line by hand first`);
    }
    kept = kept.slice(0, block[0]) + kept.slice(block[1]);
  }
  const before = parseToml(kept, path, 'the file');
  const entries = CODEX_HOOK_EVENTS.map(({ event, label, state }): Entry => {
    const handler: CodexHandler = { type: 'command', command: agentHookCommand(drover, state), timeout: HOOK_TIMEOUT_SECONDS };
    const group = eventGroups(before, event, path).length;
    return { event, handler, key: `${path}:${label}:${group}:0`, hash: codexHookTrustHash(label, handler) };
  });
  const head = kept.replace(/\s+$/, '');
  const text = `${head === '' ? '' : `${head}\n\n`}${blockText(entries)}`;
  if (canonicalJson(parseToml(text, path, 'the edited file')) !== canonicalJson(withEntries(before, entries))) {
    throw new ArgumentError(`${path}: drover's hooks at the end of the file would change other settings; fix the file by hand first`);
  }
  return text;
}

/**
 * Where Codex reads its user config: `$CODEX_HOME/config.toml` (Codex resolves CODEX_HOME's
 * symlinks, and the trust keys hold the path it sees), else `~/.codex/config.toml`.
 */
export function codexConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  if (!env.CODEX_HOME) return join(env.HOME || homedir(), '.codex', 'config.toml');
  const home = resolve(env.CODEX_HOME);
  try {
    return join(realpathSync(home), 'config.toml');
  } catch {
    return join(home, 'config.toml');
  }
}

/** Codex's lifecycle hooks (not the older `notify`, which only reports the end of a turn). */
export const codexHookInstaller: AgentHookInstaller = {
  agent: 'codex',
  reports: HOOK_REPORTS.codex,
  configPath: codexConfigPath,
  plan: planCodexConfig,
  describe: () => CODEX_HOOK_EVENTS.map(({ event, state }) => `${event} → ${state}`),
};
