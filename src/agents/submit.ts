import type { PaneChannel } from '../mux/index.js';
import { AbortedError } from '../process/index.js';
import type { AgentScreen, AgentScreenRules, ScreenReading } from './screens/types.js';

/**
 * What the choreography uses of one agent pane: the read, paste and keys of its pane channel
 * (src/mux paneChannel), whose keys are in the neutral spelling (`Enter`, `ctrl+u`, `Escape`).
 * A read may leave the pane id out, so a caller can hand over a channel or build the three.
 */
export type AgentInputPort = Pick<PaneChannel, 'paste' | 'keys'> & { read(): Promise<AgentScreen> };

/** Monotonic time and waiting; injectable so deadlines are testable without real time. */
export interface SubmitClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export type SubmitStatus = 'submitted' | 'staged_unconfirmed' | 'failed';

/**
 * The positive evidence that a prompt left the composer: the agent turned busy, it asks
 * permission for a tool its turn wants to run, or the composer emptied without a completion
 * menu having taken the Enter.
 */
export type SubmitEvidence = 'agent_busy' | 'agent_asking' | 'composer_cleared';

/** How far a submission got: nothing typed, text in the composer, or Enter pressed. */
export type SubmitStage = 'not_typed' | 'typed' | 'entered';

export interface SubmitOutcome {
  status: SubmitStatus;
  evidence: SubmitEvidence | null;
  /** One sentence: why this status. */
  reason: string;
  stage: SubmitStage;
  /** A draft that was in the composer and was cleared first (never lost silently). */
  draftCleared: string | null;
  /** The last reading, and the screen it came from. */
  reading: ScreenReading;
  screen: AgentScreen;
}

export interface SubmitOptions {
  rules: AgentScreenRules;
  /**
   * Monotonic deadline (clock units) for waiting for the composer, clearing a draft and the
   * paste's echo. The watch after Enter always gets SUBMIT_TIMEOUT_MS.
   */
  deadline: number;
  clock: SubmitClock;
  signal?: AbortSignal;
  /**
   * How long a busy or still-starting agent may take to show its composer before the
   * submission gives up without typing. 0: it must be at the composer now.
   */
  composerWaitMs?: number;
  /** Between two screen reads while waiting for something. */
  pollMs?: number;
}

/** How long a screen read takes to show a paste of this size: agents echo large pastes slowly. */
export function echoTimeoutMs(text: string): number {
  return 3000 + Math.ceil(text.length / 10);
}

/** How long after Enter the agent gets to show that it took the prompt. */
export const SUBMIT_TIMEOUT_MS = 8000;
/** How long clearing a draft may take to show. */
export const CLEAR_TIMEOUT_MS = 1500;
export const POLL_MS = 100;
/** Between the look that found the text in the composer and the confirming look before Enter. */
export const ENTER_SETTLE_MS = 150;
/** Completion menus closed before the text counts as not deliverable (a menu that keeps reopening). */
const MAX_DISMISSALS = 3;

/** The remaining budget of a whole `deliver`: waiting for the composer, echo, and the reaction to Enter. */
export function submissionBudgetMs(text: string, composerWaitMs: number): number {
  return composerWaitMs + CLEAR_TIMEOUT_MS + echoTimeoutMs(text) + SUBMIT_TIMEOUT_MS;
}

function why(reading: ScreenReading): string {
  switch (reading.phase) {
    case 'dialog':
      return `the agent shows a dialog (${reading.detail}); drover does not type into dialogs`;
    case 'permission':
      return `the agent is asking a question (${reading.question?.snippet ?? reading.detail}); answer it first`;
    case 'exited':
      return `the agent has exited (${reading.detail})`;
    case 'busy':
      return `the agent is busy with a turn (${reading.detail})`;
    case 'unknown':
      return `the agent's screen is not one drover recognises (${reading.detail})`;
    case 'composer':
      return 'the agent is at its composer';
  }
}

/**
 * Types `text` into an agent's composer and presses Enter, trusting nothing it has not seen:
 * it types only at the composer (never into a dialog, a question or a busy turn); clears a
 * draft first so the prompt is not glued to it; pastes (so line breaks stay line breaks and
 * nothing is read as a key binding); waits until the composer shows the text, as typed or as
 * the agent's paste placeholder; closes an `@`/`/` completion menu, which would otherwise take
 * the Enter; and after Enter reports `submitted` only on evidence that the prompt left the
 * composer. A composer still holding the text is `failed` (and the text is cleared again);
 * anything else it cannot tell is `staged_unconfirmed`.
 */
export async function submitToAgent(port: AgentInputPort, text: string, options: SubmitOptions): Promise<SubmitOutcome> {
  const { rules, clock, signal, deadline } = options;
  const pollMs = options.pollMs ?? POLL_MS;
  let draftCleared: string | null = null;
  let screen = await port.read();
  let reading = rules.read(screen);
  const outcome = (status: SubmitStatus, stage: SubmitStage, reason: string, evidence: SubmitEvidence | null = null): SubmitOutcome => ({
    status,
    evidence,
    reason,
    stage,
    draftCleared,
    reading,
    screen,
  });
  /** Reads until `done` holds or `until` passes; true when it held. */
  const poll = async (until: number, done: (reading: ScreenReading) => boolean): Promise<boolean> => {
    for (;;) {
      if (done(reading)) return true;
      if (signal?.aborted) throw new AbortedError();
      if (clock.now() >= until) return false;
      await clock.sleep(Math.max(1, Math.min(pollMs, until - clock.now())), signal);
      screen = await port.read();
      reading = rules.read(screen);
    }
  };

  const composerBy = Math.min(deadline, clock.now() + (options.composerWaitMs ?? 0));
  const waitable = (current: ScreenReading): boolean => current.phase === 'busy' || current.phase === 'unknown';
  await poll(composerBy, (current) => current.phase === 'composer' || !waitable(current));
  if (reading.phase !== 'composer') return outcome('failed', 'not_typed', why(reading));

  if (reading.composer !== null && reading.composer.text !== '') {
    const draft = reading.composer.text;
    await port.keys(rules.clearKeys);
    if (!(await poll(Math.min(deadline, clock.now() + CLEAR_TIMEOUT_MS), (current) => current.composer?.text === ''))) {
      return outcome('failed', 'not_typed', `a draft in the composer could not be cleared (${JSON.stringify(clip(draft))}); nothing was typed`);
    }
    draftCleared = draft;
  }

  await port.paste(text);
  const shown = (current: ScreenReading): boolean => current.phase === 'composer' && current.composer !== null && rules.composerShows(current.composer.text, text);
  const echoBy = Math.min(deadline, clock.now() + echoTimeoutMs(text));
  let fixed = false;
  for (let dismissals = 0; ; ) {
    await poll(echoBy, (current) => current.completion || shown(current));
    if (reading.completion && dismissals < MAX_DISMISSALS) {
      dismissals += 1;
      await port.keys(rules.dismissCompletionKeys);
      await poll(echoBy, (current) => !current.completion);
      continue;
    }
    if (!shown(reading) || reading.completion) {
      const seen = reading.composer?.text;
      // Clear only what landed: on an empty composer some agents' clear keys open a menu.
      if (seen !== undefined && seen !== '') await port.keys(rules.clearKeys);
      return outcome(
        'failed',
        'typed',
        seen === undefined
          ? `the composer was not on screen after the paste (${reading.detail})`
          : `the composer did not show the text after the paste (it showed ${JSON.stringify(clip(seen))})${seen === '' ? '' : '; what landed was cleared'}`,
      );
    }
    if (!fixed) {
      fixed = true;
      const fixups = rules.keysAfterPaste?.(text) ?? [];
      if (fixups.length > 0) {
        await port.keys(fixups);
        continue;
      }
    }
    // Agents take a paste in over several frames, and some open a completion menu a moment
    // after the text shows (or read an Enter right behind a paste as a line break): Enter
    // goes only after a second look a little later still shows the text and no menu.
    await clock.sleep(ENTER_SETTLE_MS, signal);
    screen = await port.read();
    reading = rules.read(screen);
    if (shown(reading) && !reading.completion) break;
  }

  await port.keys(['Enter']);
  const left = (current: ScreenReading): boolean =>
    current.phase === 'busy' || current.phase === 'permission' || (current.phase === 'composer' && !current.completion && current.composer?.text === '');
  const settled = (current: ScreenReading): boolean => left(current) || current.phase === 'dialog' || current.phase === 'exited';
  // Not capped by the deadline: once Enter went in, only evidence (or its absence) may decide.
  await poll(clock.now() + SUBMIT_TIMEOUT_MS, settled);
  // Read through a fresh binding: the poll above replaced `reading` behind the compiler's back.
  const after: ScreenReading = reading;
  if (after.phase === 'busy') return outcome('submitted', 'entered', 'the agent turned busy after Enter', 'agent_busy');
  if (after.phase === 'permission') return outcome('submitted', 'entered', 'the agent asks permission for a tool of the new turn', 'agent_asking');
  if (left(after)) return outcome('submitted', 'entered', 'the composer emptied after Enter', 'composer_cleared');
  if (shown(after)) {
    await port.keys(rules.clearKeys);
    return outcome('failed', 'entered', after.completion ? 'Enter went to a completion menu; the text was cleared' : 'the composer still held the text after Enter; the text was cleared');
  }
  return outcome('staged_unconfirmed', 'entered', `after Enter ${why(after)}; whether the prompt was submitted is not known`);
}

function clip(text: string, max = 80): string {
  const chars = Array.from(text);
  return chars.length <= max ? text : `${chars.slice(0, max).join('')}…`;
}
