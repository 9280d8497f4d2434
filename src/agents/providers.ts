import { ArgumentError, shellQuote } from '../process/index.js';
import { isShellCommand, userShell } from './shells.js';
import { isAssignmentWord, splitShellWords, unquoteWord } from './shell-words.js';

/** The values a role fills into a provider's `{model}` and `{effort}` placeholders. */
export interface ProviderFill {
  model?: string;
  effort?: string;
}

/**
 * How to start an agent in a pane. `interactiveCommand` is launch syntax only (a shell
 * command line); a prompt is never appended to it, delivery types it afterwards.
 */
export interface Provider {
  name: string;
  interactiveCommand?: string;
  /** Fills per role; a role without an entry (or a field) falls back to `default`. */
  profiles: Readonly<Record<string, ProviderFill>>;
  /** The agent's own flag that turns its permission checks off, if it has one. */
  bypassFlag?: string;
  /** Opt-in (`bypass_permissions: true` in drover.yaml): launch with `bypassFlag`. Off by default. */
  bypassPermissions?: boolean;
}

export const DEFAULT_ROLE = 'default';

/**
 * Model names are aliases the CLIs resolve themselves where one exists, so the table does
 * not go stale with each release. codex and opencode ship no model: their own configuration
 * picks it, and an empty fill drops the flag. Every agent starts with its own permission
 * checks on; `bypassFlag` is added only when a project opts in.
 */
export const BUILTIN_PROVIDERS: Readonly<Record<string, Provider>> = Object.freeze({
  claude: {
    name: 'claude',
    interactiveCommand: 'claude --model {model} --effort {effort}',
    bypassFlag: '--dangerously-skip-permissions',
    profiles: {
      default: { model: 'opus', effort: 'high' },
      operator: { model: 'sonnet', effort: 'medium' },
      doing: { model: 'opus', effort: 'high' },
      review: { model: 'opus', effort: 'high' },
      hydrate: { model: 'opus', effort: 'high' },
      fast: { model: 'sonnet', effort: 'low' },
    },
  },
  codex: {
    name: 'codex',
    // Without --no-daemon, codex runs turns in one background server shared by every pane, and
    // its hooks report each pane's state on the pane that started that server.
    interactiveCommand: 'codex --no-daemon -m {model} -c model_reasoning_effort={effort}',
    bypassFlag: '--dangerously-bypass-approvals-and-sandbox',
    profiles: {
      default: { effort: 'high' },
      operator: { effort: 'medium' },
      doing: { effort: 'xhigh' },
      review: { effort: 'xhigh' },
      fast: { effort: 'low' },
    },
  },
  gemini: {
    name: 'gemini',
    interactiveCommand: 'gemini --model {model}',
    bypassFlag: '--yolo',
    profiles: {
      default: { model: 'gemini-2.5-pro' },
      fast: { model: 'gemini-2.5-flash' },
    },
  },
  opencode: {
    name: 'opencode',
    interactiveCommand: 'opencode --model {model}',
    bypassFlag: '--auto',
    profiles: {},
  },
});

/** Characters a fill may contain, so it can be inserted into a command line unquoted. */
export const FILL_VALUE = /^[A-Za-z0-9._:/@+-]*$/;

const PLACEHOLDER = /\{(model|effort)\}/g;

/** The fills for a role: each field from the role's entry, else the `default` entry, else empty. */
export function fillForRole(provider: Provider, role: string = DEFAULT_ROLE): Required<ProviderFill> {
  const own = provider.profiles[role] ?? {};
  const fallback = provider.profiles[DEFAULT_ROLE] ?? {};
  return { model: own.model ?? fallback.model ?? '', effort: own.effort ?? fallback.effort ?? '' };
}

/**
 * Substitutes `{model}` and `{effort}`. A word whose placeholder fills empty is dropped,
 * together with the option it is the argument of (`--model {model}` disappears as a pair),
 * so the CLI falls back to its own default instead of receiving an empty argument.
 */
export function fillCommand(template: string, fill: Required<ProviderFill>): string {
  for (const [field, value] of Object.entries(fill)) {
    if (!FILL_VALUE.test(value)) throw new ArgumentError(`the ${field} fill ${JSON.stringify(value)} may only contain letters, digits and . _ : / @ + -`);
  }
  const words = splitShellWords(template);
  const dropped = new Set<number>();
  const replaced = new Map<number, string>();
  words.forEach((word, index) => {
    const names = [...word.raw.matchAll(PLACEHOLDER)].map((match) => match[1] as keyof ProviderFill);
    if (names.length === 0) return;
    if (names.every((name) => fill[name] !== '')) {
      replaced.set(index, word.raw.replace(PLACEHOLDER, (_, name: keyof ProviderFill) => fill[name]));
      return;
    }
    dropped.add(index);
    // A word that is itself an option (`--model={model}`, `-m{model}`) stands alone; any
    // other word is the argument of the option before it (`--model {model}`, `-c k={effort}`).
    if (index > 0 && !word.raw.startsWith('-') && /^-[^={}]*$/.test(words[index - 1]!.raw)) dropped.add(index - 1);
  });
  let out = '';
  words.forEach((word, index) => {
    if (dropped.has(index)) return;
    // Keep the original separator (a blank, or a newline that ends a command) before each word.
    if (out !== '') out += template.slice(words[index - 1]!.end, word.start);
    out += replaced.get(index) ?? word.raw;
  });
  return out;
}

export interface ResolvedLaunch {
  provider: string;
  role: string;
  command: string;
  fill: Required<ProviderFill>;
  /** The command runs with the agent's permission checks turned off (the project opted in). */
  bypassesPermissions: boolean;
}

/** The command line with `flag` inserted right after the command word (after any NAME=value prefixes). */
function withFlag(command: string, flag: string): string {
  const word = splitShellWords(command).find((candidate) => !isAssignmentWord(candidate.raw));
  if (word === undefined) return command;
  return `${command.slice(0, word.end)} ${flag}${command.slice(word.end)}`;
}

/**
 * A plain shell, the one program every agent list offers beside the agents (a fleet member
 * runs it too). It is no provider: it has no fills and no permission checks, and a process
 * named like a shell never counts as an agent.
 */
export const SHELL_PROVIDER = 'shell';

/** The command that starts `name` for `role`, with its fills applied; `env` names the user's shell. */
export function resolveLaunchCommand(providers: Readonly<Record<string, Provider>>, name: string, role: string = DEFAULT_ROLE, env: NodeJS.ProcessEnv = process.env): ResolvedLaunch {
  const provider = Object.hasOwn(providers, name) ? providers[name] : undefined;
  if (provider === undefined && name === SHELL_PROVIDER) {
    return { provider: name, role, command: shellQuote(userShell(env)), fill: { model: '', effort: '' }, bypassesPermissions: false };
  }
  if (provider === undefined) {
    throw new ArgumentError(`unknown provider ${JSON.stringify(name)}; available: ${[...Object.keys(providers), SHELL_PROVIDER].sort().join(', ')}`);
  }
  if (provider.interactiveCommand === undefined || provider.interactiveCommand.trim() === '') {
    throw new ArgumentError(`provider ${name} has no interactive command; configure providers.${name}.interactive_command`);
  }
  const fill = fillForRole(provider, role);
  let command = fillCommand(provider.interactiveCommand, fill);
  if (provider.bypassPermissions) {
    if (provider.bypassFlag === undefined) {
      throw new ArgumentError(`provider ${name} has no flag that turns its permission checks off; remove bypass_permissions or put the flag in its interactive_command`);
    }
    command = withFlag(command, provider.bypassFlag);
  }
  return { provider: name, role, command, fill, bypassesPermissions: provider.bypassPermissions === true };
}

/**
 * The executable names that identify a running agent: claude and claude-code, plus the
 * command word of every provider's interactive command (after `NAME=value` prefixes,
 * unquoted, as a basename). Shells are left out: `sh -c '…'` names no agent.
 */
export function agentNames(providers: Readonly<Record<string, Provider>>): Set<string> {
  const names = new Set(['claude', 'claude-code']);
  for (const provider of Object.values(providers)) {
    if (provider.interactiveCommand === undefined) continue;
    const command = splitShellWords(provider.interactiveCommand).find((word) => !isAssignmentWord(word.raw));
    if (command === undefined) continue;
    const base = unquoteWord(command.raw).split('/').pop() ?? '';
    if (base !== '' && !isShellCommand(base)) names.add(base);
  }
  return names;
}
