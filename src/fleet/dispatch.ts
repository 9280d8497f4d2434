import { submitToAgent, type AgentScreen, type AgentScreenRules, type SubmitOutcome } from '../agents/index.js';
import { DroverError } from '../process/index.js';
import { systemClock, type Clock } from './clock.js';
import { errorMessage, PaneInputError } from './errors.js';
import { validateLiteralLine } from './notification.js';

/** Every submission's whole transport budget. */
export const TRANSPORT_BUDGET_MS = 5000;
export const ESCAPE_MAX_MS = 1000;
export const ESCAPE_SETTLE_MS = 500;
export const SUBMIT_SETTLE_MS = 1000;
export const ENTER_MS = 1000;
export const MIN_LITERAL_MS = 500;
export const REVALIDATION_MARGIN_MS = 500;
/** What a writer keeps back from its budget while it waits for the pane input lock. */
export const INPUT_RESERVATION_MS = REVALIDATION_MARGIN_MS + ESCAPE_SETTLE_MS + MIN_LITERAL_MS + SUBMIT_SETTLE_MS + ENTER_MS;
/** The longest a writer waits for the pane input lock: 1.5 s. */
export const LOCK_WAIT_MS = TRANSPORT_BUDGET_MS - INPUT_RESERVATION_MS;

export const INSUFFICIENT_BUDGET_MESSAGE = 'insufficient pane input budget for literal input, settle and Enter';

/**
 * Keystrokes into one multiplexer's panes. Each call finishes within `timeoutMs` or rejects.
 * A rejection whose error is a DroverError with `delivery: 'not_sent'` means the input
 * provably did not start (the client could not be launched, the pane is recognisably gone);
 * any other rejection means the input may have reached the pane.
 */
export interface PaneInputPort {
  sendEscape(pane: string, timeoutMs: number): Promise<void>;
  sendLiteral(pane: string, text: string, timeoutMs: number): Promise<void>;
  sendEnter(pane: string, timeoutMs: number): Promise<void>;
  /** The pane's visible screen; a pane that no longer exists is a PaneGoneError. */
  readScreen(pane: string, timeoutMs: number): Promise<AgentScreen>;
  /** The text into the pane's input as one paste (bracketed where the multiplexer can). */
  paste(pane: string, text: string, timeoutMs: number): Promise<void>;
  /** Keys in the neutral spelling (`ctrl+u`, `Escape`, `Enter`, `Backspace`…). */
  sendKeys(pane: string, keys: readonly string[], timeoutMs: number): Promise<void>;
}

/** Escape first (to interrupt a turn or close a prompt), or the line directly. */
export type Lead = 'escape' | 'direct';

/** Time held back for settle and Enter (and the Escape settle) before any literal time. */
export function leadReservation(lead: Lead): number {
  return SUBMIT_SETTLE_MS + ENTER_MS + (lead === 'escape' ? ESCAPE_SETTLE_MS : 0);
}

export interface SubmitOptions {
  port: PaneInputPort;
  pane: string;
  line: string;
  lead: Lead;
  /** Monotonic deadline (clock.now() units) of this submission's transport budget. */
  deadline: number;
  clock?: Clock;
}

function provablyNotStarted(error: unknown): boolean {
  return error instanceof DroverError && error.delivery === 'not_sent';
}

/**
 * Submits one literal line: [Escape, settle,] literal, settle, Enter, within the deadline.
 * The line is validated before anything is sent. Success establishes complete submission
 * only; failures are PaneInputErrors that say whether anything may have been typed.
 */
export async function submitLine(options: SubmitOptions): Promise<void> {
  const { port, pane, line, lead, deadline } = options;
  const clock = options.clock ?? systemClock;
  validateLiteralLine(line, 'the pane input line');
  const reservation = leadReservation(lead);
  const slack = deadline - clock.now() - reservation;
  if (slack <= 0) throw new PaneInputError(INSUFFICIENT_BUDGET_MESSAGE, 'budget', { delivery: 'not_sent' });

  if (lead === 'escape') {
    try {
      await port.sendEscape(pane, Math.min(ESCAPE_MAX_MS, slack));
    } catch (cause) {
      throw new PaneInputError(`Escape could not be sent to pane ${pane}; no text was typed: ${errorMessage(cause)}`, 'escape', { delivery: 'not_sent', cause });
    }
    await clock.sleep(ESCAPE_SETTLE_MS);
  }

  const literalBudget = deadline - clock.now() - SUBMIT_SETTLE_MS - ENTER_MS;
  if (literalBudget <= 0) throw new PaneInputError(INSUFFICIENT_BUDGET_MESSAGE, 'budget', { delivery: 'not_sent' });
  try {
    await port.sendLiteral(pane, line, literalBudget);
  } catch (cause) {
    if (provablyNotStarted(cause)) {
      throw new PaneInputError(`the line could not be typed into pane ${pane}; nothing was dispatched: ${errorMessage(cause)}`, 'literal', { delivery: 'not_sent', cause });
    }
    throw new PaneInputError(`typing into pane ${pane} may have been partial; inspect the pane before retrying: ${errorMessage(cause)}`, 'literal', {
      delivery: 'possibly_sent',
      cause,
    });
  }

  await clock.sleep(SUBMIT_SETTLE_MS);
  try {
    await port.sendEnter(pane, Math.max(1, deadline - clock.now()));
  } catch (cause) {
    throw new PaneInputError(`the line was typed into pane ${pane} but Enter failed; it may have been submitted, inspect the pane before retrying: ${errorMessage(cause)}`, 'enter', {
      delivery: 'possibly_sent',
      cause,
    });
  }
}

/** What an agent submission keeps back from the budget for the paste and its echo: the rest may wait for the composer. */
export const AGENT_INPUT_RESERVE_MS = 2000;

export interface AgentLineOptions {
  port: PaneInputPort;
  pane: string;
  line: string;
  rules: AgentScreenRules;
  /** Monotonic deadline of the transport budget: waiting for the composer, clearing and the paste end by then. */
  deadline: number;
  clock?: Clock;
}

/**
 * Submits one line to a coding agent on the screen's evidence (see submitToAgent): it waits
 * within the budget for a busy or starting agent to reach its composer and never types into
 * a dialog or question; after Enter it may watch past the budget for the evidence, because
 * stamping without it, or retyping a prompt the agent took, would both break the contract.
 */
export async function submitAgentLine(options: AgentLineOptions): Promise<SubmitOutcome> {
  const { port, pane, deadline } = options;
  const clock = options.clock ?? systemClock;
  validateLiteralLine(options.line, 'the pane input line');
  // Each call gets what is left of the budget, and at least the post-Enter watch's share.
  const timeout = (): number => Math.max(ENTER_MS, deadline - clock.now());
  return submitToAgent(
    {
      read: () => port.readScreen(pane, timeout()),
      paste: (text) => port.paste(pane, text, timeout()),
      keys: (keys) => port.sendKeys(pane, keys, timeout()),
    },
    options.line,
    { rules: options.rules, deadline, clock, composerWaitMs: Math.max(0, deadline - clock.now() - AGENT_INPUT_RESERVE_MS) },
  );
}
