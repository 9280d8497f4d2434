import { setTimeout as delay } from 'node:timers/promises';

/**
 * Polls until `check` gives something other than undefined or false, and returns it; fails
 * naming `what` after the deadline. Pane programs and tmux events arrive asynchronously.
 */
export async function eventually<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await delay(25);
  }
}
