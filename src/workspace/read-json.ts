import { WorkspaceError } from './errors.js';
import { TreeBudget, indexPath, keyPath, type TreeMap, type TreeValue, type WorkspaceLimits } from './tree.js';

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['"', '"'],
  ['\\', '\\'],
  ['/', '/'],
  ['b', '\b'],
  ['f', '\f'],
  ['n', '\n'],
  ['r', '\r'],
  ['t', '\t'],
]);

/**
 * Strict RFC 8259 JSON into the workspace tree. Written out rather than JSON.parse so that
 * duplicate keys are caught (JSON.parse keeps the last) and every error names its path.
 */
export function readJson(text: string, limits: WorkspaceLimits): TreeValue {
  return new JsonReader(text, new TreeBudget(limits)).document();
}

class JsonReader {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly budget: TreeBudget,
  ) {}

  document(): TreeValue {
    if (this.text.charCodeAt(0) === 0xfeff) this.pos = 1;
    const value = this.value('$', 1);
    this.skipSpace();
    if (this.pos < this.text.length) this.fail('$', 'unexpected text after the document');
    return value;
  }

  private value(path: string, depth: number): TreeValue {
    this.budget.enter(path, depth);
    this.skipSpace();
    const c = this.text[this.pos];
    if (c === '{') return this.object(path, depth);
    if (c === '[') return this.array(path, depth);
    if (c === '"') return this.budget.string(path, this.string(path));
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return this.number(path);
    for (const [word, literal] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return literal;
      }
    }
    return this.fail(path, c === undefined ? 'the document ends where a value was expected' : 'expected a value');
  }

  private object(path: string, depth: number): TreeMap {
    const map: TreeMap = new Map();
    this.pos += 1;
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos += 1;
      return map;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.pos] !== '"') this.fail(path, 'expected a quoted key');
      this.budget.enter(path, depth + 1);
      const key = this.budget.string(path, this.string(path));
      const entryPath = keyPath(path, key, map.size + 1);
      if (map.has(key)) throw new WorkspaceError('this key appears more than once', { path: entryPath, code: 'duplicate_key' });
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail(entryPath, "expected ':' after the key");
      this.pos += 1;
      map.set(key, this.value(entryPath, depth + 1));
      this.skipSpace();
      const next = this.text[this.pos];
      this.pos += 1;
      if (next === '}') return map;
      if (next !== ',') this.fail(path, "expected ',' or '}'");
    }
  }

  private array(path: string, depth: number): TreeValue[] {
    const items: TreeValue[] = [];
    this.pos += 1;
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos += 1;
      return items;
    }
    for (;;) {
      items.push(this.value(indexPath(path, items.length), depth + 1));
      this.skipSpace();
      const next = this.text[this.pos];
      this.pos += 1;
      if (next === ']') return items;
      if (next !== ',') this.fail(path, "expected ',' or ']'");
    }
  }

  private string(path: string): string {
    let out = '';
    let run = this.pos + 1;
    for (let i = run; i < this.text.length; i++) {
      const code = this.text.charCodeAt(i);
      if (code === 0x22) {
        this.pos = i + 1;
        return out + this.text.slice(run, i);
      }
      if (code < 0x20) break;
      if (code !== 0x5c) continue;
      out += this.text.slice(run, i);
      const escape = this.text[i + 1] ?? '';
      if (escape === 'u') {
        const hex = this.text.slice(i + 2, i + 6);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) break;
        out += String.fromCharCode(parseInt(hex, 16));
        i += 5;
      } else {
        const char = ESCAPES.get(escape);
        if (char === undefined) break;
        out += char;
        i += 1;
      }
      run = i + 1;
    }
    return this.fail(path, 'a string is not closed or contains an invalid character or escape');
  }

  private number(path: string): number {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.fail(path, 'expected a number');
    this.pos += match[0].length;
    const value = Number(match[0]);
    if (!Number.isFinite(value)) throw new WorkspaceError('a number is out of range', { path, code: 'type' });
    return value;
  }

  private skipSpace(): void {
    while (this.pos < this.text.length) {
      const c = this.text.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return;
      this.pos += 1;
    }
  }

  private fail(path: string, message: string): never {
    const before = this.text.slice(0, this.pos);
    const line = before.split('\n').length;
    const column = this.pos - before.lastIndexOf('\n');
    throw new WorkspaceError(`invalid JSON: ${message} (line ${line}, column ${column})`, { path, code: 'syntax', line, column });
  }
}
