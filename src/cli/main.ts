// The CLI proper, loaded by the bin (drover.ts) once it has checked the Node version.
import { terminationSpans } from '../process/index.js';
import { EXIT, type CliIO } from './io.js';
import { runCli } from './program.js';

const controller = new AbortController();
let interrupts = 0;
process.on('SIGINT', () => {
  interrupts += 1;
  // The first interrupt lets the running command stop and clean up; a second one leaves now,
  // unless drover is typing into a pane (or in another span): the span ends first and
  // raises the signal again, which lands here with no span open.
  if (interrupts > 1 && terminationSpans.depth === 0) process.exit(EXIT.interrupted);
  controller.abort();
});

// A reader that stops early (`drover pane map | head`) closes our stdout: stop quietly, as other tools do.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok);
  throw error;
});

let outputAbandoned = false;
const io: CliIO = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
  stdinIsTTY: process.stdin.isTTY === true,
  ...(process.stdout.isTTY ? { terminalSize: { columns: process.stdout.columns, rows: process.stdout.rows } } : {}),
  ...(process.stderr.isTTY ? { stderrTerminal: { columns: process.stderr.columns } } : {}),
  signal: controller.signal,
  abandonOutput: () => {
    outputAbandoned = true;
  },
};

// No top-level await: the bundle runs this module as a CommonJS script (see code-cache.ts). A
// command whose work ran out without its promise settling (a wait on nothing left to happen) is
// a failure, as an unsettled top-level await would be, never a silent success.
let settled = false;
process.once('beforeExit', () => {
  if (settled) return;
  process.exitCode = EXIT.failure;
  process.stderr.write('drover: error: the command stopped before it finished, with nothing left to wait for\n');
});
void runCli(process.argv.slice(2), io).then((status) => {
  settled = true;
  process.exitCode = controller.signal.aborted && status === EXIT.ok ? EXIT.interrupted : status;
  // Output nobody will read would hold the process open for good.
  if (outputAbandoned) process.exit();
});
