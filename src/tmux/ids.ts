import { ArgumentError } from './errors.js';

export type SessionId = `$${number}`;
export type WindowId = `@${number}`;
export type PaneId = `%${number}`;
export type EntityKind = 'session' | 'window' | 'pane';
/** The id type of an entity kind. */
export type IdOf<K extends EntityKind> = K extends 'session' ? SessionId : K extends 'window' ? WindowId : PaneId;

const PATTERNS: Record<EntityKind, RegExp> = {
  session: /^\$\d+$/,
  window: /^@\d+$/,
  pane: /^%\d+$/,
};

export function isSessionId(value: string): value is SessionId {
  return PATTERNS.session.test(value);
}

export function isWindowId(value: string): value is WindowId {
  return PATTERNS.window.test(value);
}

export function isPaneId(value: string): value is PaneId {
  return PATTERNS.pane.test(value);
}

export function checkId<K extends EntityKind>(kind: K, value: unknown): IdOf<K> {
  if (typeof value !== 'string' || !PATTERNS[kind].test(value)) {
    const example = kind === 'session' ? '$3' : kind === 'window' ? '@4' : '%5';
    throw new ArgumentError(`${JSON.stringify(value)} is not a tmux ${kind} id (like ${example})`);
  }
  return value as never;
}
