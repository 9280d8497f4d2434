/**
 * One control client at a time starts or ends, per tmux server, in this process.
 *
 * tmux before 3.7 crashes (the whole server, every session in it) when an attached client goes
 * away while a control client is still identifying itself: the server writes
 * `%client-detached` to a client whose control state does not exist yet. drover ends a control
 * client every time a wait, a delivery or a command's connection closes, so several of them
 * opening and closing at once (a few waits through MCP, the page and the fleet) would meet that
 * window sooner or later. Each start (from the spawn until tmux has answered on the new client,
 * which it does only once the client is set up) and each end (from closing its input until the
 * client has exited) waits here for the one before it on the same server.
 */
import { AbortedError, TimeoutError } from '../../process/index.js';
import type { Deadline } from '../deadline.js';

const turns = new Map<string, Promise<void>>();

/**
 * Runs `work` once no other start or end of a control client on the server at `socketPath` is
 * under way in this process. Waiting counts against `deadline` when one is given (an end is
 * bounded by its own grace instead); a wait past it, or aborted, runs nothing.
 */
export async function controlClientTransition<T>(socketPath: string, deadline: Deadline | undefined, work: () => Promise<T>): Promise<T> {
  const before = turns.get(socketPath) ?? Promise.resolve();
  let finished!: () => void;
  const mine = new Promise<void>((resolve) => (finished = resolve));
  const queue = before.then(() => mine);
  turns.set(socketPath, queue);
  try {
    if (deadline !== undefined) await withinDeadline(before, deadline);
    else await before;
    return await work();
  } finally {
    finished();
    if (turns.get(socketPath) === queue) turns.delete(socketPath);
  }
}

async function withinDeadline(turn: Promise<void>, deadline: Deadline): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      turn,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(`another control client of this tmux server was still starting or ending after ${deadline.timeoutMs} ms`, deadline.timeoutMs, { phase: 'connect', delivery: 'not_sent' })), deadline.remaining());
        onAbort = () => reject(new AbortedError('opening the control connection was aborted', { delivery: 'not_sent' }));
        deadline.signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) deadline.signal?.removeEventListener('abort', onAbort);
  }
}
