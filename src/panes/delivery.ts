import { ArgumentError, DroverError } from '../process/index.js';
import { newlyEchoed, squeeze } from './echo.js';
import { DEFAULT_PACING, KEY_CLEAR_LINE, KEY_ENTER, sendKeysGuarded, sendLiteralGuarded, type Pacing, type PaneIO } from './pane-io.js';
import { captureScreen, probeReadiness, type ChoreographyOptions } from './readiness.js';
import { snippet } from './tail.js';

/** One try plus exactly one retry: a pane that fails verification twice needs eyes, not a loop. */
export const DELIVERY_ATTEMPTS = 2;

/** The line `--prompt-file` types: the agent reads the file itself, from its own cwd. */
export function pointerPrompt(path: string): string {
  return `Read ${path} and execute it.`;
}

/**
 * Rejects text the choreography cannot verify or would mangle, before anything is typed:
 * a line break or other control character would act as a key (Enter, Escape…) mid-text,
 * and text that is only whitespace or frame runes cannot be seen on screen.
 */
export function checkDeliverableText(text: string): void {
  const control = /[\u0000-\u001f\u007f]/u.exec(text);
  if (control) {
    const code = control[0].codePointAt(0)!.toString(16).padStart(2, '0');
    throw new ArgumentError(`the text contains the control character \\x${code} at offset ${control.index}; deliver a single line`);
  }
  if (squeeze(text) === '') throw new ArgumentError('the text is empty or only whitespace');
}

/** Verification failed on every attempt. `snippet` is the last screen seen. */
export class DeliveryError extends DroverError {
  readonly snippet: string;
  readonly attempts: number;
  constructor(message: string, snippet: string, attempts: number, typed: boolean) {
    super(message, { phase: 'verify', delivery: typed ? 'possibly_sent' : 'not_sent' });
    this.snippet = snippet;
    this.attempts = attempts;
  }
}

export interface DeliveryOptions extends ChoreographyOptions {
  /** Told about a failed first attempt before the retry, even when the retry succeeds. */
  onWarning?: (message: string) => void;
}

export interface DeliveryResult {
  attempts: number;
}

type AttemptOutcome = { delivered: true } | { delivered: false; problem: string; screen: string; typed: boolean };

async function attemptDelivery(io: PaneIO, text: string, pacing: Pacing, options: ChoreographyOptions): Promise<AttemptOutcome> {
  const readiness = await probeReadiness(io, options);
  if (readiness.state !== 'ready') {
    return { delivered: false, problem: `the pane is ${readiness.state}, not ready`, screen: readiness.snippet, typed: false };
  }
  await sendKeysGuarded(io, [KEY_CLEAR_LINE]);
  // The baseline follows this attempt's own C-u: on a retry the previous attempt's text may
  // still sit in the input line, and counting it as "before" would fail a perfect retype.
  await pacing.sleep(pacing.settleMs, options.signal);
  const cleared = await captureScreen(io);
  await sendLiteralGuarded(io, text);
  await pacing.sleep(pacing.settleMs, options.signal);
  const typed = await captureScreen(io);
  if (!newlyEchoed(cleared, typed, text)) {
    return { delivered: false, problem: 'the text did not echo in the pane', screen: typed, typed: true };
  }
  await sendKeysGuarded(io, [KEY_ENTER]);
  await pacing.sleep(pacing.busyMs, options.signal);
  // Every agent TUI repaints something on submit (the prompt moves to the transcript, a
  // spinner starts, the input clears); an unchanged screen means Enter did nothing.
  const submitted = await captureScreen(io);
  if (submitted === typed) {
    return { delivered: false, problem: 'the pane did not react to Enter; the text may not have been submitted', screen: submitted, typed: true };
  }
  return { delivered: true };
}

/**
 * Types `text` into an agent pane and verifies each step against the screen: readiness
 * probe, C-u, baseline capture, literal text, echo check (wrap- and frame-tolerant), Enter,
 * screen advanced. A failed verification is retried once; tmux errors are not retried.
 */
export async function deliverText(io: PaneIO, text: string, options: DeliveryOptions = {}): Promise<DeliveryResult> {
  checkDeliverableText(text);
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  let typedAny = false;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await attemptDelivery(io, text, pacing, options);
    if (outcome.delivered) return { attempts: attempt };
    typedAny ||= outcome.typed;
    if (attempt === DELIVERY_ATTEMPTS) {
      throw new DeliveryError(
        `could not deliver to the pane after ${attempt} attempts: ${outcome.problem}`,
        snippet(outcome.screen),
        attempt,
        typedAny,
      );
    }
    options.onWarning?.(`delivery attempt ${attempt} failed (${outcome.problem}); retrying`);
  }
}
