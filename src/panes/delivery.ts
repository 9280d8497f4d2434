import { SUBMIT_TIMEOUT_MS, rulesFor, submissionBudgetMs, submitToAgent, type AgentScreen, type SubmitEvidence, type SubmitOutcome, type SubmitStatus } from '../agents/index.js';
import { ArgumentError } from '../process/index.js';
import { newlyEchoed, squeeze } from './echo.js';
import { DEFAULT_PACING, KEY_CANCEL_LINE, KEY_CLEAR_LINE, KEY_ENTER, watchUntil, type DrivenPane, type Pacing } from './choreography.js';
import { keyedSubmitVerdict, type KeyedSubmitVerdict } from './input-line.js';
import { captureScreen, probeReadiness, watchScreen, type ChoreographyOptions } from './readiness.js';
import { snippet } from './tail.js';

/** One try plus exactly one retry, and only when the first try provably submitted nothing. */
export const DELIVERY_ATTEMPTS = 2;

/** The longest a whole delivery may take: each attempt's submission budget, the watch after Enter included. */
export function deliveryBudgetMs(text: string, composerWaitMs: number): number {
  return DELIVERY_ATTEMPTS * submissionBudgetMs(text, composerWaitMs);
}

/** The line `--prompt-file` types: the agent reads the file itself, from its own cwd. */
export function pointerPrompt(path: string): string {
  return `Read ${path} and execute it.`;
}

/** Why multi-line text is refused where the multiplexer cannot paste. */
export const MULTI_LINE_NEEDS_PASTE = 'multi-line text needs a bracketed paste, which this multiplexer cannot send (pasteText): a typed line break would be read as Enter';

/** The longest line a terminal in line mode (Linux's N_TTY) keeps: typed keys past it are dropped. */
export const KEYED_LINE_MAX_BYTES = 4095;

/** Text larger than this is refused before anything is typed: agents need seconds per 100 KB of paste. */
export const MAX_DELIVERY_CHARS = 1_000_000;

/**
 * The text as it will be pasted, or an ArgumentError before anything is typed. Line breaks
 * (CRLF is read as LF) and tabs are text; any other control character would act as a key
 * (an ESC could even end the bracketed paste early), and text that is only whitespace or
 * frame runes cannot be seen on screen.
 */
export function checkDeliverableText(text: string): string {
  const normalised = text.replace(/\r\n/g, '\n');
  const control = /[\u0000-\u0008\u000b-\u001f\u007f]/u.exec(normalised);
  if (control) {
    const code = control[0].codePointAt(0)!.toString(16).padStart(2, '0');
    throw new ArgumentError(`the text contains the control character \\x${code} at offset ${control.index}; only line breaks and tabs may be delivered`);
  }
  if (squeeze(normalised) === '') throw new ArgumentError('the text is empty or only whitespace');
  if (normalised.length > MAX_DELIVERY_CHARS) throw new ArgumentError(`the text has ${normalised.length} characters; drover delivers at most ${MAX_DELIVERY_CHARS}`);
  return normalised;
}

/**
 * What a delivery saw, whatever happened. `submitted` only on evidence that the prompt left
 * the composer; `staged_unconfirmed` when the text was typed and Enter pressed but nothing
 * showed whether it was taken; `failed` with the reason otherwise.
 */
export interface DeliveryReceipt {
  status: SubmitStatus;
  reason: string;
  evidence: SubmitEvidence | null;
  /** The agent the pane runs, by its process tree; null for a program drover does not know. */
  agent: string | null;
  /** paste: bracketed paste, verified against the agent's composer; keys: typed, verified by echo. */
  method: 'paste' | 'keys';
  attempts: number;
  chars: number;
  /** A draft that was in the composer before and was cleared so the prompt is not glued to it. */
  draftCleared: string | null;
  /** Whether anything may have reached the pane's input. */
  typed: boolean;
  /** The last lines of the screen when not submitted; "" when submitted. */
  snippet: string;
}

export interface DeliveryOptions extends ChoreographyOptions {
  /** Told about a failed first attempt before the retry, even when the retry succeeds. */
  onWarning?: (message: string) => void;
  /** How long a busy or starting agent may take to reach its composer (default: 0, it must be ready now). */
  composerWaitMs?: number;
  /**
   * The text is a command line for a shell: a pane whose shell holds the terminal (at its
   * prompt) takes it, typed after ctrl+c, then Enter. Without it a bare shell is refused, since
   * whatever is typed there runs. Any other pane is delivered to as without it.
   */
  toShell?: boolean;
}

function screenText(screen: AgentScreen): string {
  return snippet(screen.lines.join('\n'));
}

function receiptOf(outcome: SubmitOutcome, agent: string | null, attempts: number, chars: number): DeliveryReceipt {
  return {
    status: outcome.status,
    reason: outcome.reason,
    evidence: outcome.evidence,
    agent,
    method: 'paste',
    attempts,
    chars,
    draftCleared: outcome.draftCleared,
    typed: outcome.stage !== 'not_typed' || outcome.draftCleared !== null,
    snippet: outcome.status === 'submitted' ? '' : screenText(outcome.screen),
  };
}

/**
 * Delivers `text` to an agent pane and says what it saw. Agents drover knows get the screen
 * choreography (submitToAgent): paste, composer check, completion menus closed, Enter,
 * evidence. Any other program gets the probe, the text typed as keys, an echo check, Enter,
 * and the cursor line watched; multi-line text is refused there, because a program that
 * does not take bracketed paste would read each line break as Enter (and so is multi-line
 * text for a multiplexer that cannot paste). A first attempt that failed before Enter (the
 * text never showed) is cleared and retried once; multiplexer errors are not retried.
 */
export async function deliverText(pane: DrivenPane, text: string, options: DeliveryOptions = {}): Promise<DeliveryReceipt> {
  const prompt = checkDeliverableText(text);
  if (!pane.pastes && prompt.includes('\n')) throw new ArgumentError(MULTI_LINE_NEEDS_PASTE);
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  const { channel, facts } = pane;
  const rules = facts.agent.kind === null ? undefined : rulesFor(facts.agent.kind);
  if (rules === undefined) return deliverByKeys(pane, prompt, pacing, options);
  // A single line reads the same typed as pasted.
  const port = pane.pastes ? channel : { read: channel.read, keys: channel.keys, paste: channel.type };
  for (let attempt = 1; ; attempt += 1) {
    const composerWaitMs = options.composerWaitMs ?? 0;
    const outcome = await submitToAgent(port, prompt, {
      rules,
      clock: { now: pacing.now, sleep: pacing.sleep },
      deadline: pacing.now() + submissionBudgetMs(prompt, composerWaitMs),
      composerWaitMs,
      pollMs: pacing.pollMs,
      signal: options.signal,
    });
    if (outcome.status === 'failed' && outcome.stage === 'typed' && attempt < DELIVERY_ATTEMPTS) {
      options.onWarning?.(`delivery attempt ${attempt} failed (${outcome.reason}); retrying`);
      continue;
    }
    return receiptOf(outcome, facts.agent.name, attempt, Array.from(prompt).length);
  }
}

const UNSUBMITTED_REASONS: Readonly<Record<Exclude<KeyedSubmitVerdict, 'submitted'>, string>> = {
  unchanged: 'the pane did not react to Enter; the text may not have been submitted',
  still_typed: 'the screen changed after Enter but the text is still on the input line',
  unwatched: 'the screen changed after Enter, but the cursor did not stand after the typed text to tell whether it left its input line',
};

async function deliverByKeys(pane: DrivenPane, text: string, pacing: Pacing, options: DeliveryOptions): Promise<DeliveryReceipt> {
  const { channel, facts } = pane;
  const program = facts.agent.name ?? facts.foreground;
  if (text.includes('\n')) {
    throw new ArgumentError(`multi-line text can only be delivered to an agent drover knows (claude, codex, gemini, opencode); ${program} might read a line break as Enter`);
  }
  if (text.includes('\t')) {
    throw new ArgumentError(`a tab can only be delivered to an agent drover knows (pasted there); typed into ${program} it is the Tab key, which a line editor takes for completion`);
  }
  const bytes = Buffer.byteLength(text);
  if (bytes > KEYED_LINE_MAX_BYTES) {
    throw new ArgumentError(
      `the line is ${bytes} bytes; typed into ${program}, a terminal reading whole lines keeps only the first ${KEYED_LINE_MAX_BYTES}, so anything longer goes to an agent drover knows (pasted) or in a file (--prompt-file)`,
    );
  }
  const chars = Array.from(text).length;
  const base = { agent: facts.agent.name, method: 'keys' as const, chars, draftCleared: null };
  let typedAny = false;
  for (let attempt = 1; ; attempt += 1) {
    const readiness = await probeReadiness(pane, options);
    const atShellPrompt = options.toShell === true && readiness.state === 'shell';
    if (readiness.state !== 'ready' && !atShellPrompt) {
      return { ...base, status: 'failed', reason: `the pane is ${readiness.state}, not ready (${readiness.detail})`, evidence: null, attempts: attempt, typed: typedAny, snippet: readiness.snippet };
    }
    if (atShellPrompt) {
      // ctrl+c rather than ctrl+u: an unfinished quote survives ctrl+u, and the line would close it.
      // The shell shows a fresh prompt for it; the text goes in once it has (or the settle ran out).
      const before = await captureScreen(channel);
      await channel.keys([KEY_CANCEL_LINE]);
      await watchScreen(channel, (screen) => screen !== before, pacing.settleMs, pacing, options.signal);
    } else {
      await channel.keys([KEY_CLEAR_LINE]);
      // On a retry the baseline follows this attempt's own C-u: the previous attempt's text may
      // still sit in the input line, and counting it as "before" would fail a perfect retype. On
      // the first the probe's clear has just emptied the line, and nothing of the text was typed.
      if (attempt > 1) await pacing.sleep(pacing.settleMs, options.signal);
    }
    const cleared = await captureScreen(channel);
    await channel.type(text);
    typedAny = true;
    const { screen: echoed, seen } = await watchScreen(channel, (screen) => newlyEchoed(cleared, screen, text), pacing.settleMs, pacing, options.signal);
    if (!seen) {
      await channel.keys([KEY_CLEAR_LINE]);
      if (attempt < DELIVERY_ATTEMPTS) {
        options.onWarning?.(`delivery attempt ${attempt} failed (the text did not echo in the pane); retrying`);
        continue;
      }
      return { ...base, status: 'failed', reason: 'the text did not echo in the pane; it was cleared', evidence: null, attempts: attempt, typed: true, snippet: snippet(echoed) };
    }
    const typedScreen = await channel.read();
    await channel.keys([KEY_ENTER]);
    // The evidence a program of unknown shape gives: the cursor no longer stands right after
    // the typed text once Enter took the line (keyedSubmitVerdict).
    const judged = async (): Promise<{ screen: AgentScreen; verdict: KeyedSubmitVerdict }> => {
      const screen = await channel.read();
      return { screen, verdict: keyedSubmitVerdict(typedScreen, screen, text) };
    };
    const { reading: last } = await watchUntil(judged, ({ verdict }) => verdict === 'submitted', SUBMIT_TIMEOUT_MS, pacing, options.signal);
    if (last.verdict === 'submitted') {
      return { ...base, status: 'submitted', reason: 'the text left the input line after Enter', evidence: 'composer_cleared', attempts: attempt, typed: true, snippet: '' };
    }
    return { ...base, status: last.verdict === 'unchanged' ? 'failed' : 'staged_unconfirmed', reason: UNSUBMITTED_REASONS[last.verdict], evidence: null, attempts: attempt, typed: true, snippet: screenText(last.screen) };
  }
}
