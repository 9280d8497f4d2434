/**
 * An agent pane over the mux port, as drover's delivery choreography and screen rules need it.
 * The port's grid carries neither the pane's size nor its cursor, so the visible rows are the
 * screen (screenOfRows).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { screenOfRows, type MuxGrid, type MuxOutcome, type MuxPort } from '../mux/index.js';
import type { AgentInputPort } from '../agents/index.js';
import { refusalError } from './errors.js';

/** The value of an outcome, or its refusal as a BridgeError. */
export function unwrap<T>(outcome: MuxOutcome<T>): T {
  if (!outcome.ok) throw refusalError(outcome);
  return outcome.value;
}

/** What is on a pane's screen now, styling kept. */
export async function readViewport(port: MuxPort, paneId: string): Promise<MuxGrid> {
  return unwrap(await port.readGrid(paneId, { scope: 'viewport', styling: 'preserve' }));
}

/**
 * Keys in the neutral spelling; text as one bracketed paste where the multiplexer declares
 * pasteText (as `pane deliver` pastes, so line breaks stay in the composer), else typed with
 * typeText. Neither submits anything.
 */
export function muxAgentInput(port: MuxPort, paneId: string): AgentInputPort {
  return {
    read: async () => screenOfRows((await readViewport(port, paneId)).text),
    paste: async (text) => unwrap(await (port.declaration.supports.pasteText ? port.pasteText(paneId, text) : port.typeText(paneId, text))),
    keys: async (keys) => unwrap(await port.sendKeys(paneId, keys)),
  };
}

/** How long a key's effect may take to show before the next key goes anyway. */
const KEY_SETTLE_MS = 1000;
const KEY_POLL_MS = 50;

/**
 * Keys one at a time, each once the screen moved after the one before (or a second passed):
 * a TUI that reads a digit and an Enter arriving together as one input drops the Enter.
 */
export async function sendKeysInTurn(port: MuxPort, paneId: string, keys: readonly string[]): Promise<void> {
  const moved = async (from: string): Promise<string> => {
    const until = Date.now() + KEY_SETTLE_MS;
    while (Date.now() < until) {
      await delay(KEY_POLL_MS);
      const now = (await readViewport(port, paneId)).revision;
      if (now !== from) return now;
    }
    return from;
  };
  let revision = keys.length > 1 ? (await readViewport(port, paneId)).revision : '';
  for (const [index, key] of keys.entries()) {
    if (index > 0) revision = await moved(revision);
    unwrap(await port.sendKeys(paneId, [key]));
  }
}
