import { findExecutable, LongLivedChild } from '../../src/process/index.js';
import { eventually } from './wait.js';

/**
 * Opens a pseudo-terminal pair, prints the terminal's path, then copies everything written to
 * the terminal to stdout. A line on stdin asks for the terminal's modes (tcgetattr), answered
 * on stderr as `modes <that line> <modes>`. It ends when stdin closes.
 */
const PTY_HOLDER = `
import fcntl, os, pty, select, struct, termios
master, terminal = pty.openpty()
fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack('HHHH', 30, 100, 0, 0))
os.write(1, (os.ttyname(terminal) + '\\n').encode())
while True:
    ready, _, _ = select.select([master, 0], [], [])
    if 0 in ready:
        request = os.read(0, 64)
        if not request:
            break
        os.write(2, ('modes ' + request.decode().strip() + ' ' + repr(termios.tcgetattr(terminal)) + '\\n').encode())
    if master in ready:
        os.write(1, os.read(master, 65536))
`;

/** python3's pty module gives tests a real terminal without a native dependency; undefined when python3 is missing. */
export const PYTHON3 = findExecutable('python3', process.env);

/** A real pseudo-terminal held open by a python3 child: its path, what was written to it, and its modes. */
export class PseudoTerminal {
  private output = Buffer.alloc(0);
  private requests = 0;

  private constructor(
    private readonly holder: LongLivedChild,
    readonly path: string,
  ) {}

  static async open(): Promise<PseudoTerminal> {
    if (PYTHON3 === undefined) throw new Error('python3 is needed to open a pseudo-terminal');
    const holder = await LongLivedChild.start([PYTHON3, '-c', PTY_HOLDER], { stdin: 'pipe', stdout: 'pipe' });
    let received = Buffer.alloc(0);
    holder.stdout.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
    });
    const newline = await eventually('the pseudo-terminal to open', () => (received.includes(0x0a) ? received.indexOf(0x0a) : false), 10_000);
    const terminal = new PseudoTerminal(holder, received.subarray(0, newline).toString('utf8'));
    terminal.output = received.subarray(newline + 1);
    holder.stdout.removeAllListeners('data');
    holder.stdout.on('data', (chunk: Buffer) => {
      terminal.output = Buffer.concat([terminal.output, chunk]);
    });
    return terminal;
  }

  /** Everything programs wrote to the terminal so far. */
  written(): string {
    return this.output.toString('utf8');
  }

  /** The terminal's current modes (termios flags, speeds and control characters), as text to compare. */
  async modes(): Promise<string> {
    this.requests += 1;
    const tag = `modes ${this.requests} `;
    this.holder.stdin.write(`${this.requests}\n`);
    return eventually('the terminal modes', () => {
      const line = this.holder.stderr().tail.toString('utf8').split('\n').find((l) => l.startsWith(tag));
      return line?.slice(tag.length);
    }, 10_000);
  }

  async close(): Promise<void> {
    this.holder.stdin.end();
    await this.holder.stop(1000);
  }
}
