import { ArgumentError } from '../../process/index.js';

/**
 * A number as the file wrote it. JSON.parse would round 12345678901234567890 and turn 1.0
 * into 1; drover edits other programs' settings, so every number goes back out as it came in.
 */
export class JsonNumber {
  constructor(readonly text: string) {
    Object.freeze(this);
  }
}

/** Deeper than any settings file: a file nested past it is refused rather than overflowing the stack. */
const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WHITESPACE = /[ \t\n\r]*/y;

/**
 * Parses JSON text strictly (RFC 8259), keeping numbers as JsonNumber and refusing an object
 * that names a key twice, which JSON.parse would quietly resolve to the last one. Errors name
 * `path` and say where in the text the problem is.
 */
export function parseJsonExact(text: string, path: string): unknown {
  let at = 0;
  const fail = (problem: string): never => {
    throw new ArgumentError(`${path} is not valid JSON (${problem} at position ${at}); fix it by hand first`);
  };
  const skipWhitespace = (): void => {
    WHITESPACE.lastIndex = at;
    WHITESPACE.exec(text);
    at = WHITESPACE.lastIndex;
  };
  const expect = (char: string): void => {
    if (text[at] !== char) fail(text[at] === undefined ? `unexpected end, expected "${char}"` : `unexpected ${JSON.stringify(text[at])}, expected "${char}"`);
    at += 1;
  };
  const string = (): string => {
    const start = at;
    expect('"');
    for (;;) {
      const char = text[at];
      if (char === undefined) fail('unterminated string');
      if (char === '"') break;
      at += char === '\\' ? 2 : 1;
    }
    at += 1;
    try {
      return JSON.parse(text.slice(start, at)) as string;
    } catch (error) {
      at = start;
      return fail(`a bad string (${(error as Error).message})`);
    }
  };
  const value = (depth: number, where: string): unknown => {
    if (depth > MAX_DEPTH) fail(`nested deeper than ${MAX_DEPTH}`);
    skipWhitespace();
    const char = text[at];
    if (char === '{') {
      at += 1;
      const object: Record<string, unknown> = {};
      skipWhitespace();
      if (text[at] === '}') {
        at += 1;
        return object;
      }
      for (;;) {
        skipWhitespace();
        const keyAt = at;
        const key = string();
        if (Object.hasOwn(object, key)) {
          at = keyAt;
          throw new ArgumentError(`${path}: duplicate key ${JSON.stringify(key)} in ${where} (position ${keyAt}); keep one of them by hand first`);
        }
        skipWhitespace();
        expect(':');
        // defineProperty: a key "__proto__" is data here, not the object's prototype.
        Object.defineProperty(object, key, { value: value(depth + 1, `${where}.${key}`), enumerable: true, writable: true, configurable: true });
        skipWhitespace();
        if (text[at] === ',') {
          at += 1;
          continue;
        }
        expect('}');
        return object;
      }
    }
    if (char === '[') {
      at += 1;
      const array: unknown[] = [];
      skipWhitespace();
      if (text[at] === ']') {
        at += 1;
        return array;
      }
      for (;;) {
        array.push(value(depth + 1, `${where}[${array.length}]`));
        skipWhitespace();
        if (text[at] === ',') {
          at += 1;
          continue;
        }
        expect(']');
        return array;
      }
    }
    if (char === '"') return string();
    for (const [word, literal] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return literal;
      }
    }
    NUMBER.lastIndex = at;
    const number = NUMBER.exec(text);
    if (number === null) return fail(char === undefined ? 'unexpected end' : `unexpected ${JSON.stringify(char)}`);
    at = NUMBER.lastIndex;
    return new JsonNumber(number[0]);
  };
  const parsed = value(0, 'the top level');
  skipWhitespace();
  if (at < text.length) fail(`unexpected ${JSON.stringify(text[at])} after the value`);
  return parsed;
}

/** A copy of a parsed tree whose arrays and objects can be changed; numbers (immutable) are shared. */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map(cloneJson) as T;
  if (typeof value === 'object' && value !== null && !(value instanceof JsonNumber)) {
    const copy: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) Object.defineProperty(copy, key, { value: cloneJson(inner), enumerable: true, writable: true, configurable: true });
    return copy as T;
  }
  return value;
}

/** JSON text laid out as JSON.stringify(value, null, 2) does, with every JsonNumber written as it was read. */
export function stringifyJsonExact(value: unknown, indent = ''): string {
  if (value instanceof JsonNumber) return value.text;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${stringifyJsonExact(item ?? null, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined);
    if (entries.length === 0) return '{}';
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${stringifyJsonExact(item, inner)}`).join(',\n')}\n${indent}}`;
  }
  return JSON.stringify(value);
}
