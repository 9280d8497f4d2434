import { isShellCommand, rulesFor, type ScreenReading } from '../agents/index.js';
import { newlyEchoed } from './echo.js';
import { DEFAULT_PACING, KEY_CLEAR_LINE, watchUntil, KEY_ERASE, type ChoreographyChannel, type DrivenPane, type Pacing } from './choreography.js';
import type { PaneFacts } from './facts.js';
import { snippet, tailLines } from './tail.js';

/**
 * - ready: the agent's composer takes a prompt now;
 * - busy: a turn is running;
 * - booting: the program is still starting (or drawing something not recognised yet);
 * - parked: something other than the composer holds the input (a dialog, a key entry, a
 *   question, an editor or pager): typing there would not be a prompt;
 * - shell: a plain shell owns the pane, no agent runs;
 * - exited: the pane's program has exited.
 */
export const READINESS_STATES = Object.freeze(['ready', 'busy', 'booting', 'parked', 'shell', 'exited'] as const);
export type Readiness = (typeof READINESS_STATES)[number];

/**
 * Why a pane got its classification. For agents drover knows, the screen decides
 * (`agent_*`). An editor, pager or full-screen tool in the foreground is `key_driven_foreground`:
 * it takes typed keys as commands (vim's `D` deletes a line), so no probe is typed. A foreground
 * whose every program waits in a sleep or for a child is `foreground_waiting`: it reads nothing,
 * and the terminal would echo a probe all the same. For any other program the probe decides:
 * - probe_echoed: the probe text appeared; the pane takes typed input.
 * - blank_screen: no echo and nothing drawn yet.
 * - screen_changing: no echo and the screen moved between the two captures (still painting).
 * - input_held: no echo on a stable, non-blank screen (a dialog, login wall or stuck process).
 */
export type ReadinessReason =
  | 'shell_foreground'
  | 'key_driven_foreground'
  | 'foreground_waiting'
  | 'pane_dead'
  | 'agent_composer'
  | 'agent_busy'
  | 'agent_dialog'
  | 'agent_permission'
  | 'agent_exited'
  | 'agent_unrecognised'
  | 'probe_echoed'
  | 'blank_screen'
  | 'screen_changing'
  | 'input_held';

export interface ReadinessVerdict {
  state: Readiness;
  reason: ReadinessReason;
}

/**
 * Programs that read each key as a command, not as text for a line: editors, pagers and
 * full-screen tools. The probe typed into one would act (vim deletes a line and enters Replace
 * mode, less opens its Examine prompt), and ctrl+u would not clear it.
 */
const KEY_DRIVEN_PROGRAMS: ReadonlySet<string> = new Set([
  'vi', 'vim', 'nvim', 'view', 'vimdiff', 'gvim', 'nano', 'pico', 'emacs', 'micro', 'hx', 'helix', 'kak', 'joe', 'ne', 'mg',
  'less', 'more', 'most', 'man', 'pg',
  'top', 'htop', 'btop', 'atop', 'watch', 'tig', 'lazygit', 'mc', 'ranger', 'nnn', 'lf', 'mutt', 'neomutt', 'tmux',
]);

/** Whether a foreground command (a name or a path) is a program that takes typed keys as commands. */
export function isKeyDrivenProgram(command: string): boolean {
  return KEY_DRIVEN_PROGRAMS.has(command.trim().split('/').pop() ?? '');
}

/** Typed literally into the pane of an unknown program and never submitted; cleared afterwards. */
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
 * The probe's classification, for programs drover has no screen rules for. An echo is
 * `ready`; a blank screen is `booting` even when stable (two empty captures mean nothing was
 * drawn, the opposite of parked); a screen that moved is `booting`; what is left, a stable
 * drawn screen that swallowed the probe, is `parked`.
 */
export function classifyProbe(evidence: ProbeEvidence): ReadinessVerdict {
  if (newlyEchoed(evidence.before, evidence.after, READY_PROBE)) return { state: 'ready', reason: 'probe_echoed' };
  if (evidence.settled.trim() === '') return { state: 'booting', reason: 'blank_screen' };
  if (evidence.after !== evidence.settled) return { state: 'booting', reason: 'screen_changing' };
  return { state: 'parked', reason: 'input_held' };
}

/** What a known agent's screen means for readiness. */
export function readinessOfReading(reading: ScreenReading): ReadinessVerdict {
  switch (reading.phase) {
    case 'composer':
      return { state: 'ready', reason: 'agent_composer' };
    case 'busy':
      return { state: 'busy', reason: 'agent_busy' };
    case 'dialog':
      return { state: 'parked', reason: 'agent_dialog' };
    case 'permission':
      return { state: 'parked', reason: 'agent_permission' };
    case 'exited':
      return { state: 'exited', reason: 'agent_exited' };
    case 'unknown':
      return { state: 'booting', reason: 'agent_unrecognised' };
  }
}

export interface ReadinessReport extends ReadinessVerdict {
  /** The agent the pane runs (from its process tree), or null. */
  agent: string | null;
  /** The screen rule that decided, for agents drover knows (`claude.composer`…); null otherwise. */
  rule: string | null;
  /** One line: what decided. */
  detail: string;
  /** Text already in a ready agent's composer (a draft), else null. */
  draft: string | null;
  /** The last lines of the screen when not ready; "" when ready. */
  snippet: string;
}

export interface ChoreographyOptions {
  pacing?: Partial<Pacing>;
  signal?: AbortSignal;
}

/** The recent lines of a pane, tailed: every before/after comparison sees both sides through the same tail. */
export async function captureScreen(channel: Pick<ChoreographyChannel, 'grid'>): Promise<string> {
  return tailLines((await channel.grid({ scope: 'recent', lines: CAPTURE_LINES, styling: 'strip' })).text, CAPTURE_LINES);
}

const PROBE_DETAIL: Readonly<Record<string, string>> = {
  probe_echoed: 'the probe text echoed',
  blank_screen: 'nothing is drawn yet',
  screen_changing: 'the screen is still changing',
  input_held: 'the screen is stable and did not echo the probe',
};

/** Captures the screen until `seen` holds of it or `withinMs` has passed, and returns the last capture. */
export async function watchScreen(
  channel: Pick<ChoreographyChannel, 'grid'>,
  seen: (screen: string) => boolean,
  withinMs: number,
  pacing: Pick<Pacing, 'watchMs' | 'sleep' | 'now'>,
  signal: AbortSignal | undefined,
): Promise<{ screen: string; seen: boolean }> {
  const { reading, seen: shown } = await watchUntil(() => captureScreen(channel), seen, withinMs, pacing, signal);
  return { screen: reading, seen: shown };
}

/**
 * Readiness as far as it is known without typing: `exited` for a dead pane, the screen rules'
 * verdict for an agent drover knows (its `reading`), `shell` for a bare shell, `parked` for a
 * program that takes keys as commands, `busy` for a foreground that reads nothing; undefined
 * where only the typed probe can tell. `pane ready` and `pane explain` both decide by it.
 */
export function untypedReadiness(facts: Pick<PaneFacts, 'dead' | 'foreground' | 'foregroundWaits'>, reading: ScreenReading | undefined): (ReadinessVerdict & { detail: string }) | undefined {
  if (facts.dead) return { state: 'exited', reason: 'pane_dead', detail: 'the pane’s program has exited' };
  if (reading !== undefined) return { ...readinessOfReading(reading), detail: reading.detail };
  if (isShellCommand(facts.foreground)) return { state: 'shell', reason: 'shell_foreground', detail: `${facts.foreground} owns the pane; no agent runs` };
  if (isKeyDrivenProgram(facts.foreground)) {
    return { state: 'parked', reason: 'key_driven_foreground', detail: `${facts.foreground} owns the pane and takes typed keys as commands; nothing was typed` };
  }
  if (facts.foregroundWaits !== null) {
    const waits = facts.foregroundWaits.join(' and ');
    return { state: 'busy', reason: 'foreground_waiting', detail: `${facts.foreground} owns the pane and reads nothing: it waits in ${waits}; typed text would wait until it ends, nothing was typed` };
  }
  return undefined;
}

/** Reads a known agent's screen: nothing is typed. */
export async function readAgentReadiness(channel: Pick<ChoreographyChannel, 'read'>, facts: PaneFacts): Promise<ReadinessReport & { reading: ScreenReading } | undefined> {
  const rules = facts.agent.kind === null ? undefined : rulesFor(facts.agent.kind);
  if (rules === undefined) return undefined;
  const screen = await channel.read();
  const reading = rules.read(screen);
  const verdict = readinessOfReading(reading);
  return {
    ...verdict,
    agent: facts.agent.name,
    rule: reading.rule,
    detail: reading.detail,
    draft: reading.phase === 'composer' && reading.composer !== null && reading.composer.text !== '' ? reading.composer.text : null,
    snippet: verdict.state === 'ready' ? '' : snippet(screen.lines.join('\n')),
    reading,
  };
}

/**
 * Classifies a pane. A dead pane is `exited`, a bare shell `shell` and an editor or pager
 * `parked`, without typing. An agent drover knows is judged by its screen alone. Any other
 * program gets the probe: typed
 * (never submitted), the screen watched, then cleared; both stability reads are taken before
 * the clear, because a program that repaints on ctrl+u would otherwise look busy. If the probe
 * is still on screen after ctrl+u it is erased key by key, so no text is left behind.
 */
export async function probeReadiness(pane: DrivenPane, options: ChoreographyOptions = {}): Promise<ReadinessReport> {
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  const { channel, facts } = pane;
  const report = (verdict: ReadinessVerdict, detail: string, screen: string): ReadinessReport => ({
    ...verdict,
    agent: facts.agent.name,
    rule: null,
    detail,
    draft: null,
    snippet: verdict.state === 'ready' ? '' : snippet(screen),
  });
  const known = facts.dead ? undefined : await readAgentReadiness(channel, facts);
  if (known !== undefined) {
    const { reading: _reading, ...rest } = known;
    return rest;
  }
  const untyped = untypedReadiness(facts, undefined);
  if (untyped !== undefined) {
    const { detail, ...verdict } = untyped;
    return report(verdict, detail, await captureScreen(channel));
  }
  const before = await captureScreen(channel);
  await channel.type(READY_PROBE);
  let evidence: ProbeEvidence;
  try {
    const { screen: after, seen: echoed } = await watchScreen(channel, (screen) => newlyEchoed(before, screen, READY_PROBE), pacing.settleMs, pacing, options.signal);
    let settled = after;
    if (!echoed) {
      await pacing.sleep(pacing.stabilityMs, options.signal);
      settled = await captureScreen(channel);
    }
    evidence = { before, after, settled };
  } catch (error) {
    // Best effort: the probe must not stay in the input line. A failed clear is dropped
    // because the original failure (usually the pane going away) is what the caller needs.
    await channel.keys([KEY_CLEAR_LINE]).catch(() => undefined);
    throw error;
  }
  await clearProbe(channel, before, pacing, options.signal);
  const verdict = classifyProbe(evidence);
  return report(verdict, PROBE_DETAIL[verdict.reason] ?? verdict.reason, evidence.settled);
}

/** ctrl+u, and when the probe still shows (a program without that binding), one Backspace per character. */
async function clearProbe(channel: ChoreographyChannel, before: string, pacing: Pacing, signal: AbortSignal | undefined): Promise<void> {
  await channel.keys([KEY_CLEAR_LINE]);
  if ((await watchScreen(channel, (screen) => !newlyEchoed(before, screen, READY_PROBE), pacing.settleMs, pacing, signal)).seen) return;
  await channel.keys(Array<string>(READY_PROBE.length).fill(KEY_ERASE));
}
