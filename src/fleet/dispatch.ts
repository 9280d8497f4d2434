import { isShellCommand, SUBMIT_TIMEOUT_MS, submitToAgent, systemProcessLookup, type AgentScreenRules, type SubmitOutcome } from '../agents/index.js';
import type { MuxScreen, PaneChannel } from '../mux/index.js';
import { countWrapped, cursorFollows, foregroundProgram, lineEndingAt, textBeforeCursor, watchUntil, WATCH_INTERVAL_MS } from '../panes/index.js';
import { DroverError, messageOf } from '../process/index.js';
import { systemClock, type Clock } from './clock.js';
import { PaneInputError } from './errors.js';
import { validateLiteralLine } from './notification.js';

/** Every submission's whole transport budget. */
export const TRANSPORT_BUDGET_MS = 5000;
export const ESCAPE_MAX_MS = 1000;
/** The longest wait after Escape: a line editor that shows nothing for it holds it this long as a key prefix (readline's keyseq-timeout). */
export const ESCAPE_SETTLE_MS = 500;
/** The longest wait for the typed line to show before Enter. */
export const SUBMIT_SETTLE_MS = 1000;
export const ENTER_MS = 1000;
export const MIN_LITERAL_MS = 500;
export const REVALIDATION_MARGIN_MS = 500;
/** What a writer keeps back from its budget while it waits for the pane input lock. */
export const INPUT_RESERVATION_MS = REVALIDATION_MARGIN_MS + ESCAPE_SETTLE_MS + MIN_LITERAL_MS + SUBMIT_SETTLE_MS + ENTER_MS;
/** The longest a writer waits for the pane input lock: 1.5 s. */
export const LOCK_WAIT_MS = TRANSPORT_BUDGET_MS - INPUT_RESERVATION_MS;

export const INSUFFICIENT_BUDGET_MESSAGE = 'insufficient pane input budget for literal input, settle and Enter';

/** What a submission does to a pane: read its screen and what runs there, type, paste, press keys (neutral spellings). */
export type InputChannel = Pick<PaneChannel, 'read' | 'grid' | 'process' | 'type' | 'paste' | 'keys'>;

/**
 * A member's pane as a submission reaches it, through the mux port. `channel(deadline)` is the
 * pane's channel for calls that must end by `deadline` (clock.now() units): a submission asks
 * for each step with that step's deadline, never later than its own, so every multiplexer
 * command of a submission runs under the submission's one deadline. A call's rejection with
 * `delivery: 'not_sent'` (the pane is gone, the multiplexer refused, the budget was spent
 * before it was asked) means nothing reached the pane; any other may have.
 */
export interface PaneInput {
  readonly pane: string;
  /** The multiplexer takes a bracketed paste; where it cannot, a line (which has no line breaks) is typed. */
  readonly pastes: boolean;
  channel(deadline: number): InputChannel;
}

/**
 * What goes before the line: Escape (to interrupt a turn or close a prompt), ctrl+c (`cancel`:
 * a shell at its prompt drops whatever stands on its input line, a half-typed command or an
 * unfinished quote waiting for its end, so the line never joins it), or nothing (`direct`).
 */
export type Lead = 'escape' | 'cancel' | 'direct';

/** Time held back for settle and Enter (and the settle after the lead's key) before any literal time. */
export function leadReservation(lead: Lead): number {
  return SUBMIT_SETTLE_MS + ENTER_MS + (lead === 'direct' ? 0 : ESCAPE_SETTLE_MS);
}

/**
 * The lead for a pane whose program drover has no screen rules for. Escape is there to close a
 * prompt such a program may be holding. A shell at its own prompt holds none, and its line
 * editor (bash's readline, zsh's) takes Escape as the start of a key sequence and swallows the
 * next characters typed with it: a pane whose foreground program is a shell gets ctrl+c
 * instead, which every shell takes at its prompt as "drop this line" (sent only when the shell
 * itself holds the terminal, so it never stops a program). A pane that cannot be asked in time
 * keeps the Escape lead. `deadline` is the submission's.
 */
export async function leadFor(input: PaneInput, deadline: number): Promise<Lead> {
  try {
    // Asked within what the Escape lead and a minimal literal leave of the submission's budget.
    const process = await input.channel(deadline - leadReservation('escape') - MIN_LITERAL_MS).process();
    // Only a shell needs its process group read: one that runs a program without handing it
    // the terminal (`sh -c cat`) is not at its prompt.
    return isShellCommand(process.foreground) && isShellCommand(foregroundProgram(process, await systemProcessLookup())) ? 'cancel' : 'escape';
  } catch {
    return 'escape';
  }
}

export interface SubmitOptions {
  input: PaneInput;
  line: string;
  lead: Lead;
  /** Monotonic deadline (clock.now() units) of this submission's transport budget. */
  deadline: number;
  clock?: Clock;
}

/** A failure that proves nothing reached the pane. */
export function provablyNotStarted(error: unknown): boolean {
  return error instanceof DroverError && error.delivery === 'not_sent';
}

/** What a pane's screen shows, compared: its rows and its cursor. */
function screenKey(screen: MuxScreen): string {
  return `${screen.cursor === null ? '' : `${screen.cursor.x},${screen.cursor.y}`}\n${screen.lines.join('\n')}`;
}

/**
 * When the pane may take the next key after Escape (or a shell's ctrl+c): at once when the
 * screen changed from `before` (the program took Escape as a key of its own, as `cat -v` echoes
 * ^[; the shell drew its fresh prompt), or after the whole settle when nothing showed (a line editor may be holding it as the start of a key
 * sequence, and a key typed within its timeout would join it).
 */
export function escapeTaken(before: MuxScreen | undefined, after: MuxScreen): boolean {
  return before !== undefined && screenKey(before) !== screenKey(after);
}

/** Whether the typed line shows: the cursor stands right after it on its input line. */
export function lineShown(screen: MuxScreen, line: string): boolean {
  return cursorFollows(screen, line) === true;
}

/**
 * Where a line an earlier delivery left stands on the screen: `typed` when the input line ends
 * with all of it at the cursor (typed, never entered), `submitted` when a line above the
 * cursor holds all of it (the terminal moved past it: Enter was taken), null when it shows
 * nowhere. A notification line names its message and the time it was stored, so only a
 * delivery of that same message can have left it.
 */
export function lineLeftOnScreen(screen: MuxScreen, line: string): 'typed' | 'submitted' | null {
  const before = textBeforeCursor(screen);
  if (before === null) return null;
  if (before.endsWith(line)) return 'typed';
  for (let y = 0; y < screen.cursor!.y; y += 1) if (lineEndingAt(screen, y).includes(line)) return 'submitted';
  return null;
}

/**
 * Waits until the pane shows `seen`, for at most `boundMs`: the settle ends on the evidence, the
 * bound only when it never shows. A read that fails counts as not seen, so an unreadable pane
 * waits out the whole bound, as a settle did before there was evidence to read.
 */
async function settleOnEvidence(input: PaneInput, clock: Clock, boundMs: number, seen: (screen: MuxScreen) => boolean): Promise<void> {
  const until = clock.now() + boundMs;
  const read = (): Promise<MuxScreen | undefined> => input.channel(until).read().catch(() => undefined);
  await watchUntil(read, (screen) => screen !== undefined && seen(screen), boundMs, { now: () => clock.now(), sleep: (ms) => clock.sleep(ms), watchMs: WATCH_INTERVAL_MS });
}

/** The screen before a key, when it can be read within the budget; undefined otherwise (the settle then runs its bound). */
async function screenBefore(input: PaneInput, deadline: number): Promise<MuxScreen | undefined> {
  try {
    return await input.channel(deadline).read();
  } catch {
    return undefined;
  }
}

/**
 * Submits one literal line: [Escape or ctrl+c, settle,] literal, settle, Enter, within the deadline.
 * Each settle ends as soon as the pane shows its evidence (the lead's key taken, the line typed);
 * ESCAPE_SETTLE_MS and SUBMIT_SETTLE_MS bound it when the evidence never shows. The line is
 * validated before anything is sent. Success establishes complete submission only; failures
 * are PaneInputErrors that say whether anything may have been typed.
 */
export async function submitLine(options: SubmitOptions): Promise<void> {
  const { input, line, lead, deadline } = options;
  const { pane } = input;
  const clock = options.clock ?? systemClock;
  validateLiteralLine(line, 'the pane input line');
  const reservation = leadReservation(lead);
  const slack = deadline - clock.now() - reservation;
  if (slack <= 0) throw new PaneInputError(INSUFFICIENT_BUDGET_MESSAGE, 'budget', { delivery: 'not_sent' });

  if (lead !== 'direct') {
    const key = lead === 'escape' ? 'Escape' : 'ctrl+c';
    const keyDeadline = clock.now() + Math.min(ESCAPE_MAX_MS, slack);
    const before = await screenBefore(input, keyDeadline);
    try {
      await input.channel(keyDeadline).keys([key]);
    } catch (cause) {
      throw new PaneInputError(`${key} could not be sent to pane ${pane}; no text was typed: ${messageOf(cause)}`, 'escape', { delivery: 'not_sent', cause });
    }
    await settleOnEvidence(input, clock, ESCAPE_SETTLE_MS, (screen) => escapeTaken(before, screen));
  }

  // The settle and Enter keep their reservation: the line is typed by then.
  const literalDeadline = deadline - SUBMIT_SETTLE_MS - ENTER_MS;
  if (literalDeadline <= clock.now()) throw new PaneInputError(INSUFFICIENT_BUDGET_MESSAGE, 'budget', { delivery: 'not_sent' });
  try {
    await input.channel(literalDeadline).type(line);
  } catch (cause) {
    if (provablyNotStarted(cause)) {
      throw new PaneInputError(`the line could not be typed into pane ${pane}; nothing was dispatched: ${messageOf(cause)}`, 'literal', { delivery: 'not_sent', cause });
    }
    throw new PaneInputError(`typing into pane ${pane} may have been partial; inspect the pane before retrying: ${messageOf(cause)}`, 'literal', {
      delivery: 'possibly_sent',
      cause,
    });
  }

  await settleOnEvidence(input, clock, SUBMIT_SETTLE_MS, (screen) => lineShown(screen, line));
  await pressEnter(input, deadline);
}

async function pressEnter(input: PaneInput, deadline: number): Promise<void> {
  try {
    await input.channel(deadline).keys(['Enter']);
  } catch (cause) {
    throw new PaneInputError(`the line was typed into pane ${input.pane} but Enter failed; it may have been submitted, inspect the pane before retrying: ${messageOf(cause)}`, 'enter', {
      delivery: 'possibly_sent',
      cause,
    });
  }
}

/** How far back in a pane's scrollback a line an earlier delivery may have submitted is looked for. */
export const RESUME_HISTORY_LINES = 100_000;

/**
 * Finishes, on the pane's evidence, a line that an earlier delivery of the same message may
 * have left there (its process died between typing and Enter or between Enter and the stamp,
 * or its stamp failed): Enter alone for a line that stands typed at the cursor (`entered`),
 * nothing for one the pane shows submitted (`submitted`), on screen or scrolled off it since
 * into the scrollback. `absent` when the pane shows no trace of it: the line was never typed,
 * and goes in the ordinary way. A pane that cannot be read proves neither, so nothing is typed
 * and the message stays pending (PaneInputError, not_sent): typing it then could show it twice.
 */
export async function resumeLine(options: Pick<SubmitOptions, 'input' | 'line' | 'deadline'>): Promise<'entered' | 'submitted' | 'absent'> {
  const channel = (): InputChannel => options.input.channel(options.deadline);
  let left: 'typed' | 'submitted' | null;
  try {
    const screen = await channel().read();
    left = lineLeftOnScreen(screen, options.line);
    if (left === null) {
      // More copies in the scrollback and screen together than on the screen: one scrolled off.
      const history = await channel().grid({ scope: 'recent', lines: RESUME_HISTORY_LINES, styling: 'strip' });
      if (countWrapped(history.text, options.line) > countWrapped(screen.lines.join('\n'), options.line)) left = 'submitted';
    }
  } catch (cause) {
    throw new PaneInputError(
      `pane ${options.input.pane} could not be read to see whether an earlier delivery of this message left its line there, so nothing was typed; it stays pending: ${messageOf(cause)}`,
      'literal',
      { delivery: 'not_sent', cause },
    );
  }
  if (left === null) return 'absent';
  if (left === 'typed') await pressEnter(options.input, options.deadline);
  return left === 'typed' ? 'entered' : 'submitted';
}

/** What an agent submission keeps back from the budget for the paste and its echo: the rest may wait for the composer. */
export const AGENT_INPUT_RESERVE_MS = 2000;

export interface AgentLineOptions {
  input: PaneInput;
  line: string;
  rules: AgentScreenRules;
  /** Monotonic deadline of the transport budget: waiting for the composer, clearing and the paste end by then. */
  deadline: number;
  clock?: Clock;
}

/**
 * Submits one line to a coding agent on the screen's evidence (see submitToAgent): it waits
 * within the budget for a busy or starting agent to reach its composer and never types into
 * a dialog or question. Every command up to and including Enter runs under the transport
 * deadline, its last ENTER_MS kept for the look before Enter and Enter itself; after Enter the
 * watch for the evidence has its own window past the budget, because stamping without it, or
 * retyping a prompt the agent took, would both break the contract.
 */
export async function submitAgentLine(options: AgentLineOptions): Promise<SubmitOutcome> {
  const { input, deadline } = options;
  const clock = options.clock ?? systemClock;
  validateLiteralLine(options.line, 'the pane input line');
  let until = deadline;
  const step = (): InputChannel => input.channel(until);
  return submitToAgent(
    {
      read: () => step().read(),
      paste: (text) => (input.pastes ? step().paste(text) : step().type(text)),
      keys: async (keys) => {
        await step().keys(keys);
        // The watch after Enter, and one more read's share for the look that ends it.
        if (keys.includes('Enter')) until = clock.now() + SUBMIT_TIMEOUT_MS + ENTER_MS;
      },
    },
    options.line,
    { rules: options.rules, deadline: deadline - ENTER_MS, clock, composerWaitMs: Math.max(0, deadline - clock.now() - AGENT_INPUT_RESERVE_MS) },
  );
}
