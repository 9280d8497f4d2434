/**
 * What the probes (test/agents/<agent>.probe.ts, run by hand to re-record an agent's screens)
 * share: plain screen reads and waits (never the rules under test, so a broken rule cannot
 * shape the fixtures), the pane of a bed, and a bed that is always closed.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { pasteFromBuffer, type Pane } from '../../src/tmux/index.js';
import { findAgentBinary, startAgentBed, type AgentBed, type AgentName } from './bed.js';
import { captureAgentScreen } from './record.js';

/** A bracketed paste, as drover delivers a prompt. */
export function paste(pane: Pane, text: string): Promise<void> {
  return pasteFromBuffer(pane, text, { bracketed: true });
}

/** The lines of the pane's visible screen. */
export async function screenLines(pane: Pane): Promise<readonly string[]> {
  return (await captureAgentScreen(pane)).screen.lines;
}

/** Polls the screen until `done`; fails with `what` and the last screen. */
export async function waitFor(pane: Pane, what: string, done: (lines: readonly string[]) => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = await screenLines(pane);
    if (done(lines)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${lines.join('\n')}`);
    await delay(150);
  }
}

export const has = (pattern: RegExp) => (lines: readonly string[]) => lines.some((line) => pattern.test(line));
export const lacks = (pattern: RegExp) => (lines: readonly string[]) => !lines.some((line) => pattern.test(line));
export const count = (pattern: RegExp) => (lines: readonly string[]) => lines.filter((line) => pattern.test(line)).length;

/** The bed's first pane: its shell. */
export async function firstPane(bed: AgentBed): Promise<Pane> {
  const [session] = await bed.server.listSessions();
  const [pane] = await session!.listPanes();
  return pane!;
}

/**
 * Starts the agent from the bed's shell (not exec'd, so the shell prompt stays for `exited`).
 * Bash's login profile resets PATH, so the agent is named by its full path.
 */
export async function startFromShell(bed: AgentBed, shellPrompt: RegExp, prefix = '', args = ''): Promise<Pane> {
  const pane = await firstPane(bed);
  await waitFor(pane, 'the shell prompt', has(shellPrompt));
  await pane.sendText(`clear; ${prefix}${findAgentBinary(bed.profile)!}${args}`);
  await pane.sendKeys(['Enter']);
  return pane;
}

/** Runs `body` in a fresh bed of `agent`, closed whatever happens. */
export async function withBed(agent: AgentName, trusted: boolean, body: (bed: AgentBed) => Promise<void>): Promise<void> {
  const bed = await startAgentBed(agent, { trusted });
  try {
    await body(bed);
  } finally {
    await bed.close();
  }
}
