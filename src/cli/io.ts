import type { Readable, Writable } from 'node:stream';
import { AbortedError, ArgumentError, DroverError } from '../process/index.js';

export { shellQuote } from '../process/index.js';

/** What a command may touch of the outside world; tests pass their own. */
export interface CliIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdinIsTTY: boolean;
  /** Aborted when the user interrupts (SIGINT). */
  signal: AbortSignal;
}

export const EXIT = Object.freeze({ ok: 0, failure: 1, usage: 2, interrupted: 130 });

/** A bad invocation: wrong flags, bad argument values. Exit status 2. */
export class UsageError extends ArgumentError {}

/** A failure with its own exit status and message (pane family: 2 not found, 3 tmux failure…). */
export class ExitError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** Extra JSON fields for --json error documents. */
    readonly details: Record<string, unknown> = {},
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

/** Maps any error to the exit status DESIGN.md gives it. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof ExitError) return error.exitCode;
  if (error instanceof AbortedError) return EXIT.interrupted;
  if (error instanceof ArgumentError) return EXIT.usage;
  return EXIT.failure;
}

/** The JSON error document printed on stdout in --json mode (nothing raw from tmux). */
export function errorDocument(error: unknown): Record<string, unknown> {
  const base: Record<string, unknown> = {
    type: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
  };
  if (error instanceof DroverError) {
    base.phase = error.phase;
    base.delivery = error.delivery;
  }
  if (error instanceof ExitError) Object.assign(base, error.details);
  return { error: base };
}
