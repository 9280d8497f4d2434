import { createRequire } from 'node:module';
import type { RE2JS } from 're2js';
import { ArgumentError } from './errors.js';

/** A compiled pattern: whether it matches anywhere in the text. */
export type TextTest = (text: string) => boolean;

let engine: typeof RE2JS | undefined;

/**
 * The RE2 engine, loaded on the first pattern compiled: loading it takes longer than most
 * commands take to run, and most never compile one (`drover agent hook` runs on every tool call).
 */
function re2(): typeof RE2JS {
  engine ??= (createRequire(import.meta.url)('re2js') as typeof import('re2js')).RE2JS;
  return engine;
}

/**
 * Compiles a regular expression someone else wrote (criteria, an MCP client) for text a
 * program in a pane controls. It runs on RE2's linear-time engine: matching takes time in
 * proportion to the text, whatever the pattern, so no pattern can hang drover. RE2 syntax:
 * no backreferences and no lookaround, which are what make backtracking engines run away.
 */
export function compileTextPattern(source: string, options: { caseInsensitive?: boolean } = {}): TextTest {
  const RE2 = re2();
  let pattern: RE2JS;
  try {
    pattern = RE2.compile(source, options.caseInsensitive ? RE2.CASE_INSENSITIVE : 0);
  } catch (error) {
    // RE2's own message quotes the pattern, which may be someone's secret: only its description is kept.
    const problem = (error as { error?: unknown }).error;
    throw new ArgumentError(`not a valid regular expression (${typeof problem === 'string' ? problem : 'a syntax error'})`);
  }
  return (text) => pattern.test(text);
}
