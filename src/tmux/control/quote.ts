import { MAX_LINE_BYTES } from './parser.js';

/**
 * Turns a tmux argv (what the spawn transport hands to a tmux client) into one control-mode
 * command line that tmux's command parser reads back as exactly the same commands and
 * arguments. Argv separators follow tmux's own rule: an argument ending in ";" ends its
 * command (the rest of it, if any, is the last argument), and "\;" at the end is a literal ";".
 */

export type CommandLinePlan =
  | { readonly ok: true; readonly line: string; readonly commands: readonly (readonly string[])[] }
  | { readonly ok: false; readonly reason: string };

/** Splits argv into commands the way tmux does for its own command-line arguments. */
export function splitCommands(args: readonly string[]): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  for (const arg of args) {
    if (arg.endsWith(';')) {
      const body = arg.slice(0, -1);
      if (body.endsWith('\\')) {
        current.push(`${body.slice(0, -1)};`);
        continue;
      }
      if (body !== '') current.push(body);
      if (current.length > 0) commands.push(current);
      current = [];
      continue;
    }
    current.push(arg);
  }
  if (current.length > 0) commands.push(current);
  return commands;
}

/** Words tmux reads literally without quotes: no quoting, expansion, comment or condition characters. */
const BARE = /^[A-Za-z0-9_./,:@+-]+$/;
const PANE_ID = /^%\d+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * One argument as a tmux parser token. Printable text goes inside single quotes, where tmux
 * expands nothing ($, ~, #, ;, braces and backslashes are literal); a single quote and
 * control characters (newline included, which would otherwise end the line) are written
 * between quoted runs as backslash escapes, which tmux decodes outside quotes.
 */
export function quoteArgument(arg: string): string {
  if (BARE.test(arg) || PANE_ID.test(arg)) return arg;
  let out = '';
  let quoted = false;
  for (let i = 0; i < arg.length; i += 1) {
    const code = arg.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0x27) {
      if (quoted) {
        out += "'";
        quoted = false;
      }
      out += code === 0x27 ? "\\'" : `\\${code.toString(8).padStart(3, '0')}`;
      continue;
    }
    if (!quoted) {
      out += "'";
      quoted = true;
    }
    out += arg[i];
  }
  if (quoted) out += "'";
  return out === '' ? "''" : out;
}

/**
 * The control-mode line for argv, or why there is none (the caller then uses a spawned
 * client): text that is not valid Unicode cannot be written as UTF-8 unchanged, and a line
 * longer than the control line bound is refused by drover's own parser limits.
 */
export function planCommandLine(args: readonly string[]): CommandLinePlan {
  return planCommands(splitCommands(args));
}

/** planCommandLine for commands already split (an argument ending in ";" stays an argument). */
export function planCommands(commands: readonly (readonly string[])[]): CommandLinePlan {
  let i = 0;
  for (const arg of commands.flat()) {
    if (typeof arg !== 'string') return { ok: false, reason: `argument ${i} is not a string` };
    if (arg.includes('\0')) return { ok: false, reason: `argument ${i} contains NUL` };
    if (LONE_SURROGATE.test(arg)) return { ok: false, reason: `argument ${i} is not valid Unicode (a lone surrogate)` };
    i += 1;
  }
  if (commands.length === 0) return { ok: false, reason: 'no command in the arguments' };
  const line = commands.map((command) => command.map(quoteArgument).join(' ')).join(' ; ');
  if (Buffer.byteLength(line) + 1 > MAX_LINE_BYTES) return { ok: false, reason: `the command line is over ${MAX_LINE_BYTES} bytes` };
  return { ok: true, line, commands };
}
