import { WorkspaceError } from './errors.js';

/**
 * The format-neutral tree both readers produce. Maps are `Map`s so that keys such as
 * `__proto__` stay plain data, and insertion order is the authored order.
 */
export type TreeValue = null | string | number | boolean | TreeMap | TreeValue[];
export type TreeMap = Map<string, TreeValue>;

export interface WorkspaceLimits {
  /** Source text and canonical document, in UTF-8 bytes. */
  readonly maxBytes: number;
  readonly maxDepth: number;
  readonly maxNodes: number;
  /** Any single string (keys included), in UTF-8 bytes. */
  readonly maxStringBytes: number;
  readonly maxWindows: number;
  /** Panes across all windows. */
  readonly maxPanes: number;
}

export const DEFAULT_WORKSPACE_LIMITS: WorkspaceLimits = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxNodes: 10_000,
  maxStringBytes: 64 * 1024,
  maxWindows: 128,
  maxPanes: 1024,
});

/** Path of a list item: `windows[2]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent === '$' ? '' : parent}[${index}]`;
}

/**
 * Path of a mapping entry: `windows[2].panes`. Keys that do not look like identifiers are
 * shown by position (`<key 3>`, 1-based) so that text which landed in a key never leaks.
 */
export function keyPath(parent: string, key: string, ordinal: number): string {
  const segment = /^[A-Za-z_@][A-Za-z0-9_.:@-]{0,63}$/.test(key) ? key : `<key ${ordinal}>`;
  return parent === '$' ? segment : `${parent}.${segment}`;
}

/** Enforces node, depth and string bounds while a reader builds the tree. */
export class TreeBudget {
  private nodes = 0;

  constructor(private readonly limits: WorkspaceLimits) {}

  enter(path: string, depth: number): void {
    this.nodes += 1;
    if (this.nodes > this.limits.maxNodes) {
      throw new WorkspaceError(`the document has more than ${this.limits.maxNodes} nodes`, { path, code: 'bounds' });
    }
    if (depth > this.limits.maxDepth) {
      throw new WorkspaceError(`nesting is deeper than ${this.limits.maxDepth} levels`, { path, code: 'bounds' });
    }
  }

  string(path: string, value: string): string {
    // UTF-8 is at most 3 bytes per UTF-16 unit, so short strings skip the exact count.
    if (value.length * 3 > this.limits.maxStringBytes && Buffer.byteLength(value) > this.limits.maxStringBytes) {
      throw new WorkspaceError(`a string is longer than ${this.limits.maxStringBytes} bytes`, { path, code: 'bounds' });
    }
    return value;
  }
}

export function describeType(value: TreeValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (value instanceof Map) return 'a mapping';
  return `a ${typeof value}`;
}
