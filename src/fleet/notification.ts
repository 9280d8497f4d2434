import { ArgumentError, shellQuote } from '../process/index.js';
import { foldBody, hexEscape } from '../panes/index.js';
import type { Message } from './model.js';

/** A folded body longer than this many Unicode scalar values is replaced by a pointer line. */
export const INLINE_BODY_LIMIT = 4000;
export const DEFAULT_MAX_TEXT_LENGTH = 200;

const RESUME_CLAUSE = '[drover] Resume your work if something was still running.';
const DISMISSED_PROMPT_CLAUSE =
  "[drover] If this delivery's Escape dismissed a pending prompt in your pane, that rejection did not come from the user; re-issue the tool call if you still need it.";

/** C0 controls and DEL: what a literal pane line may never contain. */
const CONTROL = /[\u0000-\u001f\u007f]/u;

function scalarLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/**
 * The one literal line a pane receives for a message: the `[drover msg …]` prefix, the folded
 * body (or a pointer when it is too long) and the trailing clauses. The clause about a
 * dismissed prompt goes only with deliveries that lead with Escape (a program drover has no
 * screen rules for); coding agents are never sent Escape.
 */
export function formatNotificationLine(message: Pick<Message, 'messageId' | 'fromMemberId' | 'createdAt' | 'text'>, options: { escapeLead?: boolean } = {}): string {
  const folded = foldBody(message.text);
  const body =
    scalarLength(folded) <= INLINE_BODY_LIMIT
      ? folded
      : `Body is ${scalarLength(message.text)} characters; run drover message show ${message.messageId} --json to read it.`;
  const clauses = options.escapeLead === false ? RESUME_CLAUSE : `${RESUME_CLAUSE} ${DISMISSED_PROMPT_CLAUSE}`;
  return `[drover msg ${message.messageId} from ${message.fromMemberId} ${message.createdAt}] ${body} ${clauses}`;
}

/**
 * The line for a member with no coding agent (a plain-shell member): the notification as the
 * single-quoted argument of `:`, so a shell runs a no-op and expands nothing in it. Typed bare,
 * a shell would run the line as a command, and a message's backquotes, `$(…)` or `; …` with it;
 * that holds as well for a shell behind another program (ssh, `script`, `docker exec`), which
 * drover cannot see. After Escape (`escapeLead`) the line starts with a space: a line editor
 * holding Escape as the start of a key sequence takes the space with it, not the `:`. The line
 * stays in the pane and in the shell's history for whoever works there.
 */
export function shellPromptLine(message: Pick<Message, 'messageId' | 'fromMemberId' | 'createdAt' | 'text'>, options: { escapeLead?: boolean } = {}): string {
  const escapeLead = options.escapeLead === true;
  return `${escapeLead ? ' ' : ''}: ${shellQuote(formatNotificationLine(message, { escapeLead }))}`;
}

/**
 * Refuses a line a pane must not receive: blank, or holding CR/LF or another C0 control or
 * DEL. Runs before any process starts, so a refused line types nothing.
 */
export function validateLiteralLine(text: string, what = 'text'): void {
  if (typeof text !== 'string') throw new ArgumentError(`${what} must be a string`);
  if (/[\r\n]/u.test(text)) throw new ArgumentError(`${what} may not contain newlines.`);
  if (text.trim() === '') throw new ArgumentError(`${what} may not be empty.`);
  const control = CONTROL.exec(text);
  if (control) {
    throw new ArgumentError(`${what} may not contain control characters (${hexEscape(control[0])} at offset ${control.index}).`);
  }
}

/** `DROVER_MAX_TEXT_LEN`, the text-mode body limit in code points (default 200). */
export function maxTextLength(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.DROVER_MAX_TEXT_LEN;
  if (raw === undefined || raw === '') return DEFAULT_MAX_TEXT_LENGTH;
  if (!/^\d+$/u.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw))) {
    throw new ArgumentError(`DROVER_MAX_TEXT_LEN must be a positive integer, got '${raw}'`);
  }
  return Number(raw);
}

/** A body for text output: its first `limit` code points plus `…` when longer. JSON output is never truncated. */
export function truncateForText(text: string, limit: number = DEFAULT_MAX_TEXT_LENGTH): string {
  const points = Array.from(text);
  return points.length <= limit ? text : `${points.slice(0, limit).join('')}…`;
}
