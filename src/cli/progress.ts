import type { Writable } from 'node:stream';
import type { CliIO } from './io.js';

/**
 * What a command doing long work tells a person while it works, on stderr: a status line
 * rewritten in place (`building window 3/12 …`) and lines that stay (`claude: hooks
 * installed`). It says nothing when stderr is not a terminal or the command prints JSON, so a
 * script or a log gets the result alone.
 */
export interface Progress {
  /** Shows `text` as the status line, in place of the one before. */
  status(text: string): void;
  /** Writes `text` as a line that stays. */
  note(text: string): void;
  /** Removes the status line: when the work ends, before the command writes anything else. */
  end(): void;
}

const SILENT: Progress = { status: () => undefined, note: () => undefined, end: () => undefined };

/** A terminal whose size is unknown is taken to be this wide. */
const DEFAULT_COLUMNS = 80;

/** The progress a command shows: on stderr when that is a terminal, and never with --json. */
export function progressOn(io: CliIO, flags: { json?: boolean }): Progress {
  const terminal = io.stderrTerminal;
  if (terminal === undefined || flags.json === true) return SILENT;
  return new TerminalProgress(io.stderr, terminal.columns > 0 ? terminal.columns : DEFAULT_COLUMNS);
}

class TerminalProgress implements Progress {
  /** The status line on the terminal now, as written ('' when there is none). */
  private shown: string[] = [];

  constructor(
    private readonly stream: Writable,
    private readonly columns: number,
  ) {}

  status(text: string): void {
    // Within one row: a wrapped line would leave its first rows behind when rewritten.
    const characters = [...text];
    const line = characters.length < this.columns ? characters : [...characters.slice(0, this.columns - 2), '…'];
    if (line.join('') === this.shown.join('')) return;
    // Spaces cover the rest of a longer line before: no escape sequences, so any terminal shows it.
    this.stream.write(`\r${line.join('')}${' '.repeat(Math.max(this.shown.length - line.length, 0))}`);
    this.shown = line;
  }

  note(text: string): void {
    this.end();
    this.stream.write(`${text}\n`);
  }

  end(): void {
    if (this.shown.length === 0) return;
    this.stream.write(`\r${' '.repeat(this.shown.length)}\r`);
    this.shown = [];
  }
}
