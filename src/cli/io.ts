import type { Readable, Writable } from 'node:stream';
import { ArgumentError, DroverError, messageOf } from '../process/index.js';
import { failureCode } from '../panes/index.js';
import type { HeldTmuxBindings } from './held-bindings.js';

export { messageOf, shellQuote } from '../process/index.js';

/** What a command may touch of the outside world; tests pass their own. */
export interface CliIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdinIsTTY: boolean;
  /** The size of the terminal drover was started from, when it has one (layouts are built at it). */
  terminalSize?: { readonly columns: number; readonly rows: number };
  /** Set when standard error is a terminal: long work shows its progress there (see progress.ts). */
  stderrTerminal?: { readonly columns: number };
  /** Aborted when the user interrupts (SIGINT). */
  signal: AbortSignal;
  /**
   * Said when the reader of stdout stopped taking output for good: the process then ends
   * without waiting to flush what it still holds.
   */
  abandonOutput?: () => void;
  /**
   * tmux bindings lent by a long-lived caller (`drover rpc`) to each command it runs: a command
   * opening a tmux server borrows one from here and leaves it open (see releaseResolvedTmux).
   */
  tmuxBindings?: HeldTmuxBindings;
}

/**
 * Every exit status drover uses, one table for every command (the README has it too). 2 and 3
 * carry a second meaning only where nothing else could: a command aimed at one pane says
 * "pane not found" with 2 and "the multiplexer failed" with 3; a workspace load says "partial
 * effects" with 3. 6: a pane key named a pane of another server run, and nothing was done.
 */
export const EXIT = Object.freeze({ ok: 0, failure: 1, usage: 2, notFound: 2, muxFailure: 3, partial: 3, unconfirmed: 4, timedOut: 5, replaced: 6, interrupted: 130 });

/** A bad invocation: wrong flags, bad argument values. Exit status 2. */
export class UsageError extends ArgumentError {}

/** A failure with its own exit status (pane family: 2 not found, 3 tmux failure…) and JSON code. */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** The `code` of the JSON error document, and extra fields for it. */
    readonly details: { code: string } & Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ExitError';
  }
}

export function writeLine(stream: Writable, line = ''): void {
  stream.write(`${line}\n`);
}

export function writeJson(io: CliIO, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Maps any error to its exit status (see EXIT). */
export function exitCodeOf(error: unknown): number {
  if (error instanceof ExitError) return error.exitCode;
  const code = failureCode(error);
  if (code === 'interrupted') return EXIT.interrupted;
  if (code === 'usage' || code === 'invalid_workspace') return EXIT.usage;
  return EXIT.failure;
}

/**
 * A duration flag's value: every duration drover takes is a whole number of milliseconds,
 * spelled `--…-ms` (`--timeout-ms`, `--wait-ms`), so none is read in the wrong unit.
 */
export function parseMilliseconds(flag: string, value: string, minimum = 1): number {
  const ms = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(ms) || ms < minimum) {
    throw new UsageError(`${flag} takes a whole number of milliseconds, ${minimum} or more (got ${JSON.stringify(value)})`);
  }
  return ms;
}

/** The JSON error document printed on stdout in --json mode: a stable code and drover's message. */
export function errorDocument(error: unknown): { error: Record<string, unknown> } {
  if (error instanceof ExitError) {
    const { code, ...details } = error.details;
    return { error: { code, message: error.message, ...details } };
  }
  const document: Record<string, unknown> = { code: failureCode(error), message: messageOf(error) };
  if (error instanceof DroverError) Object.assign(document, { phase: error.phase, delivery: error.delivery });
  return { error: document };
}


/** Gathers a repeatable option's values (no default, so help shows none). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The one way a diagnostic reaches people: `drover: KIND: …` on stderr, later lines indented. */
function writeDiagnostic(io: CliIO, kind: 'error' | 'warning', message: string): void {
  const [first, ...rest] = message.split('\n');
  writeLine(io.stderr, `drover: ${kind}: ${first}`);
  for (const line of rest) writeLine(io.stderr, `  ${line}`);
}

export function writeError(io: CliIO, message: string): void {
  writeDiagnostic(io, 'error', message);
}

export function writeWarning(io: CliIO, message: string): void {
  writeDiagnostic(io, 'warning', message);
}

/** Reports a failure: the error line on stderr and, with --json, the error document on stdout. */
export function reportFailure(io: CliIO, error: unknown, json: boolean): void {
  if (json) writeJson(io, errorDocument(error));
  writeError(io, messageOf(error));
}
