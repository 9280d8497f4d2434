/**
 * The neutral key spelling every caller of the port uses, and each multiplexer's translation.
 *
 * Grammar: zero or more lower-case modifiers in the canonical order ctrl, alt, shift, meta, each
 * followed by "+", then exactly one key: a single printable character (`a`, `A`, `;`, `+`) or one
 * CapitalCase name from the closed alphabet below. `ctrl+c`, `shift+Tab`, `ctrl++` and `F5` are
 * keys; `C-c`, `Ctrl+c`, `enter` and `shift+ctrl+a` are not. Parsing is strict so that a typo is
 * refused before anything is sent, never typed into an agent's pane as literal text.
 *
 * The translation tables are closed on purpose: tmux types an unknown key name as literal text,
 * so a pass-through translation would turn a typo into keystrokes.
 */
import { ArgumentError } from '../process/index.js';
import type { KeyTranslation } from './types.js';

export const MUX_MODIFIERS = ['ctrl', 'alt', 'shift', 'meta'] as const;
export type MuxModifier = (typeof MUX_MODIFIERS)[number];

export const MUX_NAMED_KEYS = [
  'Up',
  'Down',
  'Left',
  'Right',
  'Tab',
  'Enter',
  'Escape',
  'Space',
  'Backspace',
  'Delete',
  'Insert',
  'Home',
  'End',
  'PageUp',
  'PageDown',
  'F1',
  'F2',
  'F3',
  'F4',
  'F5',
  'F6',
  'F7',
  'F8',
  'F9',
  'F10',
  'F11',
  'F12',
] as const;
export type MuxNamedKey = (typeof MUX_NAMED_KEYS)[number];

export interface MuxKey {
  readonly modifiers: readonly MuxModifier[];
  /** A named key from MUX_NAMED_KEYS, or one literal character. */
  readonly key: string;
  readonly named: boolean;
}

/** A key spelling that is not in the neutral grammar. */
export class KeySpellingError extends ArgumentError {
  readonly spelling: string;
  constructor(spelling: string, reason: string) {
    super(`key ${JSON.stringify(spelling)} is not a valid key: ${reason}`);
    this.spelling = spelling;
  }
}

const NAMED = new Set<string>(MUX_NAMED_KEYS);
const NAME_BY_LOWER = new Map<string, MuxNamedKey>(MUX_NAMED_KEYS.map((name) => [name.toLowerCase(), name]));
const NAME_ALIASES = new Map<string, string>([
  ['esc', 'Escape'],
  ['return', 'Enter'],
  ['cr', 'Enter'],
  ['bs', 'Backspace'],
  ['bspace', 'Backspace'],
  ['del', 'Delete'],
  ['dc', 'Delete'],
  ['ins', 'Insert'],
  ['ic', 'Insert'],
  ['pgup', 'PageUp'],
  ['ppage', 'PageUp'],
  ['pgdn', 'PageDown'],
  ['npage', 'PageDown'],
  ['btab', 'shift+Tab'],
]);
const MODIFIER_ALIASES = new Map<string, MuxModifier>([
  ['ctrl', 'ctrl'],
  ['control', 'ctrl'],
  ['c', 'ctrl'],
  ['alt', 'alt'],
  ['m', 'alt'],
  ['opt', 'alt'],
  ['option', 'alt'],
  ['shift', 'shift'],
  ['s', 'shift'],
  ['meta', 'meta'],
  ['super', 'meta'],
  ['cmd', 'meta'],
  ['command', 'meta'],
  ['win', 'meta'],
]);

function isPrintableCharacter(char: string): boolean {
  return !/[\p{Cc}\p{Cf}\p{Z}\s]/u.test(char);
}

function describeBadKey(spelling: string, key: string): string {
  if (spelling === '') return 'a key cannot be empty';
  if (key === '') return 'nothing follows the last "+"; a key must come after the modifiers';
  const chars = [...key];
  if (chars.length === 1) {
    if (key === ' ') return 'a space is spelled Space';
    if (key === '\t') return 'a tab is spelled Tab';
    if (key === '\r' || key === '\n') return 'a newline is spelled Enter';
    return `U+${key.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')} is not a printable character`;
  }
  const lower = key.toLowerCase();
  const suggestion = NAME_BY_LOWER.get(lower) ?? NAME_ALIASES.get(lower);
  if (suggestion !== undefined) return `${JSON.stringify(key)} is not a key name; did you mean ${suggestion}?`;
  const dashed = /^([a-z]+)-(.+)$/i.exec(key);
  if (dashed !== null && MODIFIER_ALIASES.has(dashed[1]!.toLowerCase())) {
    return `modifiers are joined with "+", as in ${MODIFIER_ALIASES.get(dashed[1]!.toLowerCase())}+${dashed[2]}`;
  }
  const parts = key.split('+');
  const modifier = parts.length > 1 ? MODIFIER_ALIASES.get(parts[0]!.toLowerCase()) : undefined;
  if (modifier !== undefined) return `the modifier ${parts[0]} is spelled ${modifier} (lower-case; one of ${MUX_MODIFIERS.join(', ')})`;
  return `${JSON.stringify(key)} is neither one character nor a key name (${MUX_NAMED_KEYS.join(' ')})`;
}

/** Parses one neutral key spelling; anything outside the grammar throws KeySpellingError. */
export function parseMuxKey(spelling: string): MuxKey {
  if (typeof spelling !== 'string') throw new KeySpellingError(String(spelling), 'a key is a string');
  const modifiers: MuxModifier[] = [];
  let rest = spelling;
  for (;;) {
    const match = /^(ctrl|alt|shift|meta)\+/.exec(rest);
    if (match === null) break;
    const modifier = match[1] as MuxModifier;
    if (modifiers.includes(modifier)) throw new KeySpellingError(spelling, `${modifier} appears twice`);
    modifiers.push(modifier);
    rest = rest.slice(match[0].length);
  }
  const order = modifiers.map((modifier) => MUX_MODIFIERS.indexOf(modifier));
  if (order.some((position, i) => i > 0 && position < order[i - 1]!)) {
    const canonical = [...modifiers].sort((a, b) => MUX_MODIFIERS.indexOf(a) - MUX_MODIFIERS.indexOf(b));
    throw new KeySpellingError(spelling, `modifiers go in the order ${MUX_MODIFIERS.join(', ')}: write ${[...canonical, rest].join('+')}`);
  }
  if (NAMED.has(rest)) return Object.freeze({ modifiers: Object.freeze(modifiers), key: rest, named: true });
  if ([...rest].length === 1 && isPrintableCharacter(rest)) {
    return Object.freeze({ modifiers: Object.freeze(modifiers), key: rest, named: false });
  }
  throw new KeySpellingError(spelling, describeBadKey(spelling, rest));
}

/** The canonical spelling of a parsed key. */
export function formatMuxKey(key: MuxKey): string {
  return [...key.modifiers, key.key].join('+');
}

/**
 * Whether a declaration's unsupportedKeys refuses this key: an entry that is a bare key refuses
 * every chord on that key, an entry with modifiers refuses exactly that chord.
 */
export function isDeclaredUnsupported(key: MuxKey, unsupportedKeys: readonly string[]): boolean {
  return unsupportedKeys.includes(key.key) || unsupportedKeys.includes(formatMuxKey(key));
}

function refuse(detail: string): KeyTranslation {
  return { ok: false, detail };
}

// ---- tmux -------------------------------------------------------------------------------

const TMUX_NAMES: Readonly<Record<MuxNamedKey, string>> = {
  Up: 'Up',
  Down: 'Down',
  Left: 'Left',
  Right: 'Right',
  Tab: 'Tab',
  Enter: 'Enter',
  Escape: 'Escape',
  Space: 'Space',
  Backspace: 'BSpace',
  Delete: 'DC',
  Insert: 'IC',
  Home: 'Home',
  End: 'End',
  PageUp: 'PPage',
  PageDown: 'NPage',
  F1: 'F1',
  F2: 'F2',
  F3: 'F3',
  F4: 'F4',
  F5: 'F5',
  F6: 'F6',
  F7: 'F7',
  F8: 'F8',
  F9: 'F9',
  F10: 'F10',
  F11: 'F11',
  F12: 'F12',
};
const TMUX_PREFIXES: Readonly<Record<Exclude<MuxModifier, 'meta'>, string>> = { ctrl: 'C-', alt: 'M-', shift: 'S-' };

/** tmux's send-keys spelling: C-/M-/S- prefixes, its own names, BTab for a shifted Tab. */
export function toTmuxKey(key: MuxKey): KeyTranslation {
  if (key.modifiers.includes('meta')) return refuse('tmux has no Super/Command modifier (its M- is alt)');
  // Probed on tmux 3.3: C-Enter reaches a pane that did not ask for extended keys as nothing at all.
  if (key.named && key.key === 'Enter' && key.modifiers.includes('ctrl')) return refuse('tmux delivers nothing for ctrl+Enter to a pane that did not ask for extended keys');
  if (key.named && key.key === 'Tab' && key.modifiers.length === 1 && key.modifiers[0] === 'shift') return { ok: true, key: 'BTab' };
  const prefix = key.modifiers.map((modifier) => TMUX_PREFIXES[modifier as Exclude<MuxModifier, 'meta'>]).join('');
  // A ";" key is protected from tmux's command splitting where the argv is built (src/tmux).
  const base = key.named ? TMUX_NAMES[key.key as MuxNamedKey] : key.key;
  return { ok: true, key: prefix + base };
}

// ---- herdr ------------------------------------------------------------------------------

const HERDR_NAMES: Readonly<Partial<Record<MuxNamedKey, string>>> = {
  Up: 'up',
  Down: 'down',
  Left: 'left',
  Right: 'right',
  Tab: 'tab',
  Enter: 'enter',
  Escape: 'escape',
  Space: 'space',
  Backspace: 'backspace',
  F1: 'f1',
  F2: 'f2',
  F3: 'f3',
  F4: 'f4',
  F5: 'f5',
  F6: 'f6',
  F7: 'f7',
  F8: 'f8',
  F9: 'f9',
  F10: 'f10',
  F11: 'f11',
  F12: 'f12',
};
const HERDR_MODIFIERS: Readonly<Record<MuxModifier, string>> = { ctrl: 'ctrl', alt: 'alt', shift: 'shift', meta: 'cmd' };

/** herdr's key-combo spelling: "+"-joined, meta as cmd, a literal "+" as plus. */
export function toHerdrKey(key: MuxKey): KeyTranslation {
  let base: string | undefined;
  if (key.named) {
    base = HERDR_NAMES[key.key as MuxNamedKey];
    if (base === undefined) return refuse(`herdr has no key named ${key.key}`);
  } else {
    base = key.key === '+' ? 'plus' : key.key;
  }
  return { ok: true, key: [...key.modifiers.map((modifier) => HERDR_MODIFIERS[modifier]), base].join('+') };
}

// ---- zellij -----------------------------------------------------------------------------

const ZELLIJ_MODIFIERS: Readonly<Record<Exclude<MuxModifier, 'meta'>, string>> = { ctrl: 'Ctrl', alt: 'Alt', shift: 'Shift' };

/** zellij's send-keys spelling: space-joined capitalised parts, Escape as Esc. */
export function toZellijKey(key: MuxKey): KeyTranslation {
  // zellij accepts Super and then drops it, so the pane would receive a bare key.
  if (key.modifiers.includes('meta')) return refuse('zellij drops a Super/Command modifier and would send the bare key');
  const base = key.named && key.key === 'Escape' ? 'Esc' : key.key;
  return { ok: true, key: [...key.modifiers.map((modifier) => ZELLIJ_MODIFIERS[modifier as Exclude<MuxModifier, 'meta'>]), base].join(' ') };
}

/**
 * Neutral key spellings in one multiplexer's spelling, all checked before any is used: a
 * spelling outside the grammar or a key the multiplexer cannot send is an ArgumentError.
 */
export function translateKeys(spellings: readonly string[], translate: (key: MuxKey) => KeyTranslation): string[] {
  return spellings.map((spelling) => {
    const translation = translate(parseMuxKey(spelling));
    if (!translation.ok) throw new ArgumentError(`cannot send ${spelling}: ${translation.detail}`);
    return translation.key;
  });
}
