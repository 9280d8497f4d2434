/**
 * Whether a pane's title still speaks for what runs in it. A program writes the terminal title
 * (Claude Code its task, an editor its file) and the multiplexer keeps it after the program
 * exits, so a pane back at its shell can still be titled by a program long gone. Nothing reports
 * who wrote a title, so drover credits a title to the program in the foreground when it first
 * sees that title, and the title is stale:
 *
 * - when the pane's program exited and the multiplexer kept the pane, or
 * - when the program credited with it is not a shell and is no longer in the foreground.
 *
 * A title first seen under a shell is the shell's (prompts set titles and keep them current),
 * and with no foreground command reported nothing is judged. A title that was already there
 * when drover first looked is credited to whatever ran then, so one left behind before drover
 * started is not caught. Pure, so the rule is tested without a multiplexer.
 */
import { isShellCommand } from '../agents/index.js';

/** A title as drover first saw it: the text and the foreground command then (null: none reported). */
export interface TitleWitness {
  readonly title: string;
  readonly writer: string | null;
}

export interface TitleFacts {
  readonly title: string | undefined;
  readonly foreground: string | undefined;
  readonly alive: boolean;
}

function known(command: string | undefined): string | null {
  return command === undefined || command === '' ? null : command;
}

/** The witness after one more look: the same title keeps its writer; a new one is credited to the foreground now. */
export function witnessTitle(previous: TitleWitness | undefined, pane: TitleFacts): TitleWitness | undefined {
  if (pane.title === undefined || pane.title === '') return undefined;
  if (previous?.title === pane.title) return previous;
  return { title: pane.title, writer: known(pane.foreground) };
}

export function isStaleTitle(witness: TitleWitness | undefined, pane: TitleFacts): boolean {
  if (witness === undefined) return false;
  if (!pane.alive) return true;
  const now = known(pane.foreground);
  if (witness.writer === null || now === null || isShellCommand(witness.writer)) return false;
  return now !== witness.writer;
}
