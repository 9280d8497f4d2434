import { CommandResult } from '../transport.js';
import type { GuardedBlock } from './parser.js';
import { planCommandLine, planCommands } from './quote.js';

/**
 * Which tmux commands can ride a control connection, and how a guarded reply becomes the
 * same CommandResult a spawned client would have produced.
 *
 * A command qualifies when, run by a control client, it finishes within its own queue turn
 * and answers with exactly one block: it neither waits (wait-for, run-shell, if-shell on a
 * shell command), nor queues further commands (if-shell, source-file, set-hook -R), nor
 * reads or writes the client's stdin/stdout (load-buffer -, save-buffer -), nor acts on the
 * control client itself (attach, detach, switch-client, refresh-client). Counting blocks is
 * then exact, so replies are matched without boundary markers.
 *
 * The server's control transport additionally needs the command to mean the same thing from
 * any client: a command without an explicit target would act on the control client's own
 * session rather than the one tmux picks for a spawned client; a new pane without -c would
 * start in the control client's session directory rather than the caller's working
 * directory. Those go to a spawned client. list-clients is the same from either: the
 * connection is itself an attached client, listed as a spawned client would list it while
 * the connection is open (a spawned client, attached to nothing, never lists itself).
 * A new pane takes the PATH of the client that made it only when that client is not
 * attached (a spawned one, never a control client), so on a control connection the plan
 * hands it the PATH a spawned client would have (`-e PATH=…`), unless the command names one.
 */

interface Flags {
  has(letter: string): boolean;
}

interface Traits {
  /** Runs on a control client with one reply block. */
  oneBlock(flags: Flags): boolean;
  /** Means the same from any client (given the caller's PATH, where it starts a program). */
  clientIndependent(flags: Flags): boolean;
  /** Starts a program in a pane, which takes its PATH from a client that is not attached. */
  startsProgram?: boolean;
}

const always = (): boolean => true;
const targeted = (flags: Flags): boolean => flags.has('t');
const scoped = (flags: Flags): boolean => flags.has('g') || flags.has('s') || flags.has('t');

const TARGETED: Traits = { oneBlock: always, clientIndependent: targeted };
const SPAWNS_PANE: Traits = { oneBlock: always, clientIndependent: (f) => f.has('t') && f.has('c'), startsProgram: true };
const SCOPED: Traits = { oneBlock: always, clientIndependent: scoped };
const ANYWHERE: Traits = { oneBlock: always, clientIndependent: always };

const COMMANDS: ReadonlyMap<string, Traits> = new Map<string, Traits>([
  ['list-sessions', ANYWHERE],
  ['list-clients', ANYWHERE],
  ['list-buffers', ANYWHERE],
  ['delete-buffer', ANYWHERE],
  ['list-windows', { oneBlock: always, clientIndependent: (f) => f.has('a') || f.has('t') }],
  ['list-panes', { oneBlock: always, clientIndependent: (f) => f.has('a') || f.has('t') }],
  ['has-session', TARGETED],
  // -p prints instead of showing a status message; -I would read the client's stdin.
  ['display-message', { oneBlock: (f) => f.has('p') && !f.has('I'), clientIndependent: targeted }],
  ['capture-pane', TARGETED],
  ['send-keys', TARGETED],
  ['kill-pane', TARGETED],
  ['kill-window', TARGETED],
  ['kill-session', TARGETED],
  ['rename-session', TARGETED],
  ['rename-window', TARGETED],
  // -A would attach the caller to an existing session. Its first pane takes an unattached
  // client's PATH, and new-session -e would also store that PATH in the session's
  // environment, where a spawned client leaves none: it always goes to a spawned client.
  ['new-session', { oneBlock: (f) => f.has('d') && !f.has('A'), clientIndependent: () => false }],
  ['new-window', SPAWNS_PANE],
  ['split-window', SPAWNS_PANE],
  ['respawn-pane', SPAWNS_PANE],
  ['respawn-window', SPAWNS_PANE],
  ['select-window', TARGETED],
  ['select-pane', TARGETED],
  ['select-layout', TARGETED],
  ['resize-pane', TARGETED],
  ['resize-window', TARGETED],
  ['swap-pane', TARGETED],
  ['swap-window', TARGETED],
  ['move-window', TARGETED],
  ['link-window', TARGETED],
  ['unlink-window', TARGETED],
  ['join-pane', TARGETED],
  ['break-pane', TARGETED],
  ['rotate-window', TARGETED],
  ['copy-mode', TARGETED],
  ['clear-history', TARGETED],
  ['pipe-pane', TARGETED],
  ['paste-buffer', TARGETED],
  // -w would send the buffer to the client's terminal clipboard.
  ['set-buffer', { oneBlock: (f) => !f.has('w'), clientIndependent: (f) => !f.has('w') }],
  ['show-options', SCOPED],
  ['set-option', SCOPED],
  ['show-window-options', SCOPED],
  ['set-window-option', SCOPED],
  ['show-environment', SCOPED],
  ['set-environment', SCOPED],
  ['show-hooks', SCOPED],
  // -R runs the hook's commands now, queueing more blocks.
  ['set-hook', { oneBlock: (f) => !f.has('R'), clientIndependent: scoped }],
  // Signalling and unlocking return at once; waiting and locking would hold the queue.
  ['wait-for', { oneBlock: (f) => f.has('S') || f.has('U'), clientIndependent: always }],
]);

/** The single-letter flags given before the first "--" (clusters such as -gv included). */
function flagsOf(args: readonly string[]): Flags {
  const letters = new Set<string>();
  for (const arg of args) {
    if (arg === '--') break;
    if (arg.length >= 2 && arg[0] === '-' && /^-[A-Za-z]+$/.test(arg)) for (const letter of arg.slice(1)) letters.add(letter);
  }
  return letters;
}

export interface ControlPlan {
  readonly line: string;
  /** How many reply blocks the line produces (an error block ends it early). */
  readonly commands: number;
}

/** How a control connection must send a command to mean what it would from a spawned client. */
export interface SameAsSpawn {
  /** The PATH a spawned client would hand a new pane; undefined when it would hand none. */
  readonly clientPath: string | undefined;
}

/**
 * The control-mode line for argv, when every command in it qualifies; `sameAsSpawn` also
 * requires each to mean what it would from a spawned client. undefined: use a spawned client.
 */
export function planControlCommand(args: readonly string[], sameAsSpawn: SameAsSpawn | undefined): ControlPlan | undefined {
  // Hot paths repeat the same few argv shapes (probes, listings); planning is pure, so it is remembered.
  const key = `${sameAsSpawn === undefined ? '-' : `+${sameAsSpawn.clientPath ?? ''}`}\0${JSON.stringify(args)}`;
  const known = recentPlans.get(key);
  if (known !== undefined) return known === null ? undefined : known;
  const plan = planUncached(args, sameAsSpawn);
  if (key.length <= MAX_REMEMBERED_KEY) {
    if (recentPlans.size >= MAX_REMEMBERED_PLANS) recentPlans.delete(recentPlans.keys().next().value!);
    recentPlans.set(key, plan ?? null);
  }
  return plan;
}

const recentPlans = new Map<string, ControlPlan | null>();
const MAX_REMEMBERED_PLANS = 256;
const MAX_REMEMBERED_KEY = 4096;

/** Whether a command's own -e flags set PATH (before any "--"). */
function setsPath(rest: readonly string[]): boolean {
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i]!;
    if (arg === '--') return false;
    if (arg === '-e' && rest[i + 1]?.startsWith('PATH=')) return true;
    if (arg.startsWith('-ePATH=')) return true;
  }
  return false;
}

function planUncached(args: readonly string[], sameAsSpawn: SameAsSpawn | undefined): ControlPlan | undefined {
  const plan = planCommandLine(args);
  if (!plan.ok) return undefined;
  let handsPath = false;
  const commands = plan.commands.map((command) => {
    const [name, ...rest] = command;
    const traits = COMMANDS.get(name!);
    if (!traits) return undefined;
    const flags = flagsOf(rest);
    if (!traits.oneBlock(flags)) return undefined;
    if (sameAsSpawn === undefined) return command;
    if (!traits.clientIndependent(flags)) return undefined;
    if (!traits.startsProgram || sameAsSpawn.clientPath === undefined || setsPath(rest)) return command;
    handsPath = true;
    return [name!, '-e', `PATH=${sameAsSpawn.clientPath}`, ...rest];
  });
  if (commands.some((command) => command === undefined)) return undefined;
  if (!handsPath) return Object.freeze({ line: plan.line, commands: plan.commands.length });
  const withPath = planCommands(commands as string[][]);
  return withPath.ok ? Object.freeze({ line: withPath.line, commands: withPath.commands.length }) : undefined;
}

const EMPTY: Buffer = Buffer.alloc(0);

/** The prefix tmux's line parser adds to errors a command-line client reports without it. */
const PARSE_ERROR_PREFIX = Buffer.from('parse error: ');

/**
 * A reply as a spawned client would have reported it: the output of the commands that ran,
 * in order, on stdout; the failing command's message on stderr and exit status 1.
 */
export function resultOfBlocks(args: readonly string[], blocks: readonly GuardedBlock[], elapsedMs: number, pid: number | undefined): CommandResult {
  const stdout: Buffer[] = [];
  let stderr = EMPTY;
  let exitCode = 0;
  for (const block of blocks) {
    if (!block.guardSuccess) {
      stderr = block.body.subarray(0, PARSE_ERROR_PREFIX.length).equals(PARSE_ERROR_PREFIX) ? block.body.subarray(PARSE_ERROR_PREFIX.length) : block.body;
      exitCode = 1;
      break;
    }
    stdout.push(block.body);
  }
  return new CommandResult(args, stdout.length === 1 ? stdout[0]! : Buffer.concat(stdout), stderr, exitCode, elapsedMs, 'control', pid, args);
}
