import { ArgumentError } from '../process/index.js';

/** One word of a shell command line: its raw text and where it sits in the line. */
export interface ShellWord {
  raw: string;
  start: number;
  end: number;
}

const BLANK = /[ \t\n]/;

/**
 * Splits a POSIX shell command line into words without expanding anything, so a word can be
 * inspected or replaced in place. Quotes, backslashes, `$(…)` and backticks (with nesting)
 * keep their blanks inside one word. An unterminated construct is an error naming where it
 * starts.
 */
export function splitShellWords(line: string): ShellWord[] {
  const words: ShellWord[] = [];
  let i = 0;

  const fail = (what: string, at: number): never => {
    throw new ArgumentError(`unterminated ${what} at offset ${at} in ${JSON.stringify(line)}`);
  };

  // Returns the index just past the construct that starts at `at`.
  const skipSingleQuoted = (at: number): number => {
    const close = line.indexOf("'", at + 1);
    return close === -1 ? fail('single quote', at) : close + 1;
  };
  const skipBackquoted = (at: number): number => {
    for (let j = at + 1; j < line.length; j += 1) {
      if (line[j] === '\\') j += 1;
      else if (line[j] === '`') return j + 1;
    }
    return fail('backquote', at);
  };
  const skipDoubleQuoted = (at: number): number => {
    for (let j = at + 1; j < line.length; ) {
      const c = line[j];
      if (c === '\\') j += 2;
      else if (c === '"') return j + 1;
      else if (c === '$' && line[j + 1] === '(') j = skipSubstitution(j);
      else if (c === '`') j = skipBackquoted(j);
      else j += 1;
    }
    return fail('double quote', at);
  };
  const skipSubstitution = (at: number): number => {
    let depth = 0;
    for (let j = at + 1; j < line.length; ) {
      const c = line[j];
      if (c === '\\') j += 2;
      else if (c === "'") j = skipSingleQuoted(j);
      else if (c === '"') j = skipDoubleQuoted(j);
      else if (c === '`') j = skipBackquoted(j);
      else {
        if (c === '(') depth += 1;
        else if (c === ')' && --depth === 0) return j + 1;
        j += 1;
      }
    }
    return fail('$( substitution', at);
  };

  while (i < line.length) {
    if (BLANK.test(line[i]!)) {
      i += 1;
      continue;
    }
    const start = i;
    while (i < line.length && !BLANK.test(line[i]!)) {
      const c = line[i];
      if (c === '\\') i += 2;
      else if (c === "'") i = skipSingleQuoted(i);
      else if (c === '"') i = skipDoubleQuoted(i);
      else if (c === '`') i = skipBackquoted(i);
      else if (c === '$' && line[i + 1] === '(') i = skipSubstitution(i);
      else i += 1;
    }
    i = Math.min(i, line.length);
    words.push({ raw: line.slice(start, i), start, end: i });
  }
  return words;
}

/** A word with its quotes and backslashes removed (substitutions are left as written). */
export function unquoteWord(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i];
    if (c === "'") {
      const close = raw.indexOf("'", i + 1);
      out += raw.slice(i + 1, close === -1 ? raw.length : close);
      i = close === -1 ? raw.length : close;
    } else if (c === '\\') {
      out += raw[i + 1] ?? '';
      i += 1;
    } else if (c !== '"') {
      out += c;
    }
  }
  return out;
}

/** `NAME=value` before a command: an environment assignment, not the command itself. */
export function isAssignmentWord(word: string): boolean {
  return /^[A-Za-z_][A-Za-z0-9_]*=/.test(word);
}
