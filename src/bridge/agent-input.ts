/**
 * A pane as the page's writes use it, over the port's pane channel: an agent's input for drover's
 * delivery choreography, and keys sent in turn for a menu's answer.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { MuxGrid, MuxOutcome, MuxPort, PaneChannel } from '../mux/index.js';
import type { AgentInputPort } from '../agents/index.js';
import { textBeforeCursor } from '../panes/index.js';
import { refusalError } from './errors.js';

/** The value of an outcome, or its refusal as a BridgeError. */
export function unwrap<T>(outcome: MuxOutcome<T>): T {
  if (!outcome.ok) throw refusalError(outcome);
  return outcome.value;
}

/** What is on a pane's screen now, styling kept, with the revision that tells a change. */
export async function readViewport(port: MuxPort, paneId: string): Promise<MuxGrid> {
  return unwrap(await port.readGrid(paneId, { scope: 'viewport', styling: 'preserve' }));
}

/**
 * The channel as an agent's input: its screen (size and cursor where the multiplexer reports
 * them), keys in the neutral spelling, and text as one bracketed paste where the multiplexer
 * declares pasteText (as `pane deliver` pastes, so line breaks stay in the composer), else typed.
 * Nothing here submits.
 */
export function agentInput(channel: PaneChannel): AgentInputPort {
  return { read: channel.read, paste: channel.port.declaration.supports.pasteText ? channel.paste : channel.type, keys: channel.keys };
}

/** How long a key's effect may take to show before the next key goes anyway. */
const KEY_SETTLE_MS = 1000;
const KEY_POLL_MS = 50;

/**
 * Keys one at a time, each once the screen moved after the one before (or a second passed):
 * a TUI that reads a digit and an Enter arriving together as one input drops the Enter.
 */
export async function sendKeysInTurn(channel: PaneChannel, keys: readonly string[]): Promise<void> {
  const revision = async (): Promise<string> => (await channel.grid({ scope: 'viewport', styling: 'preserve' })).revision;
  const moved = async (from: string): Promise<string> => {
    const until = Date.now() + KEY_SETTLE_MS;
    while (Date.now() < until) {
      await delay(KEY_POLL_MS);
      const now = await revision();
      if (now !== from) return now;
    }
    return from;
  };
  let seen = keys.length > 1 ? await revision() : '';
  for (const [index, key] of keys.entries()) {
    if (index > 0) seen = await moved(seen);
    await channel.keys([key]);
  }
}

/** How long a one-key answer may take to show on its asking line. */
const ANSWER_ECHO_MS = 500;

/**
 * Sends an answer's keys (sendKeysInTurn) and says which went. A one-key answer the line scan
 * offers (`y` to `[y/n]`, `2` to `1) … 2) …`) is typed into a program drover has no rules for:
 * one that reads a whole line (Python's input(), the shell's read, apt) shows the key after its
 * question and waits for Enter, which then goes too; one that took the key alone has moved on,
 * and gets nothing more.
 */
export async function sendAnswer(channel: PaneChannel, keys: readonly string[], asking: { snippet: string; lineScanned: boolean }): Promise<string[]> {
  await sendKeysInTurn(channel, keys);
  const [key] = keys;
  if (!asking.lineScanned || keys.length !== 1 || key === undefined || [...key].length !== 1) return [...keys];
  const waitsForEnter = (before: string | null): boolean => before !== null && before.trimEnd().endsWith(key) && before.includes(asking.snippet.trim());
  const until = Date.now() + ANSWER_ECHO_MS;
  for (;;) {
    if (waitsForEnter(textBeforeCursor(await channel.read()))) {
      await channel.keys(['Enter']);
      return [...keys, 'Enter'];
    }
    if (Date.now() >= until) return [...keys];
    await delay(KEY_POLL_MS);
  }
}
