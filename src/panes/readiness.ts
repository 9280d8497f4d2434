import { ArgumentError } from '../process/index.js';
import { newlyEchoed } from './echo.js';
import { DEFAULT_PACING, KEY_CLEAR_LINE, sendKeysGuarded, sendLiteralGuarded, type Pacing, type PaneIO } from './pane-io.js';
import { isShellCommand } from './shells.js';
import { snippet, tailLines } from './tail.js';

export type Readiness = 'ready' | 'booting' | 'parked';

/**
 * Why a pane got its classification:
 * - shell_foreground: a shell still owns the terminal; nothing was typed (a cooked-mode
 *   shell echoes keys by itself, so an echo would prove nothing).
 * - probe_echoed: the probe text appeared; the pane takes typed input.
 * - blank_screen: no echo and nothing drawn yet.
 * - screen_changing: no echo and the screen moved between the two captures (still painting).
 * - input_held: no echo on a stable, non-blank screen (a dialog, login wall or stuck process).
 */
export type ReadinessReason = 'shell_foreground' | 'probe_echoed' | 'blank_screen' | 'screen_changing' | 'input_held';

export interface ReadinessVerdict {
  state: Readiness;
  reason: ReadinessReason;
}

/** Typed literally into the pane and never submitted; cleared with C-u afterwards. */
export const READY_PROBE = 'DROVER-READY-PROBE';

/** Lines per capture: wider than a snippet so a probe typed low in a tall pane is still seen. */
export const CAPTURE_LINES = 50;

/** The screens around typing the probe: before it, after the settle, after the stability wait. */
export interface ProbeEvidence {
  before: string;
  after: string;
  settled: string;
}

/**
 * The readiness classification. A shell foreground is `booting` without any evidence. Past
 * that, an echo is `ready`; a blank screen is `booting` even when stable (two empty captures
 * mean nothing was drawn, the opposite of parked); a screen that moved is `booting`; what
 * is left, a stable drawn screen that swallowed the probe, is `parked`.
 */
export function classifyReadiness(foregroundCommand: string, evidence?: ProbeEvidence): ReadinessVerdict {
  if (isShellCommand(foregroundCommand)) return { state: 'booting', reason: 'shell_foreground' };
  if (evidence === undefined) {
    throw new ArgumentError(`the foreground command ${JSON.stringify(foregroundCommand)} is not a shell, so probe evidence is needed`);
  }
  if (newlyEchoed(evidence.before, evidence.after, READY_PROBE)) return { state: 'ready', reason: 'probe_echoed' };
  if (evidence.settled.trim() === '') return { state: 'booting', reason: 'blank_screen' };
  if (evidence.after !== evidence.settled) return { state: 'booting', reason: 'screen_changing' };
  return { state: 'parked', reason: 'input_held' };
}

export interface ReadinessReport extends ReadinessVerdict {
  /** The last lines of the screen for booting and parked; "" for ready. */
  snippet: string;
}

export interface ChoreographyOptions {
  pacing?: Partial<Pacing>;
  signal?: AbortSignal;
}

/** One capture, tailed: every before/after comparison sees both sides through the same tail. */
export async function captureScreen(io: PaneIO): Promise<string> {
  return tailLines(await io.capture(CAPTURE_LINES), CAPTURE_LINES);
}

/**
 * Classifies a pane by typing the probe (never submitted) and watching the screen. Both
 * stability captures are taken before the C-u that clears the probe: a TUI that repaints
 * on C-u would otherwise make every parked pane look like it is still moving. A shell
 * foreground is only read, never typed into.
 */
export async function probeReadiness(io: PaneIO, options: ChoreographyOptions = {}): Promise<ReadinessReport> {
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  const foreground = await io.foregroundCommand();
  if (isShellCommand(foreground)) {
    return { ...classifyReadiness(foreground), snippet: snippet(await captureScreen(io)) };
  }
  const before = await captureScreen(io);
  await sendLiteralGuarded(io, READY_PROBE);
  let evidence: ProbeEvidence;
  try {
    await pacing.sleep(pacing.settleMs, options.signal);
    const after = await captureScreen(io);
    let settled = after;
    if (!newlyEchoed(before, after, READY_PROBE)) {
      await pacing.sleep(pacing.stabilityMs, options.signal);
      settled = await captureScreen(io);
    }
    evidence = { before, after, settled };
  } catch (error) {
    // Best effort: the probe must not stay in the input line. A failed clear is dropped
    // because the original failure (usually the pane going away) is what the caller needs.
    await sendKeysGuarded(io, [KEY_CLEAR_LINE]).catch(() => undefined);
    throw error;
  }
  await sendKeysGuarded(io, [KEY_CLEAR_LINE]);
  const verdict = classifyReadiness(foreground, evidence);
  return { ...verdict, snippet: verdict.state === 'ready' ? '' : snippet(evidence.settled) };
}
