import { captureArgs, type CaptureSpec } from '../commands.js';
import { Deadline, type OperationOptions } from '../deadline.js';
import { ArgumentError, ClosedError, NoMatchError, TimeoutError } from '../errors.js';
import type { Pane } from '../handles.js';
import type { PaneId } from '../ids.js';
import type { Server } from '../server.js';
import type { Snapshot, SnapshotOptions } from '../snapshot.js';
import type { ControlConnection } from './connection.js';
import { ConnectionLostError } from './errors.js';
import { TOPOLOGY_KINDS } from './parser.js';
import type { ControlEvent, Subscription } from './subscription.js';

/** Text to find in the screen, a pattern, or a test of the whole captured text. */
export type OutputPredicate = string | RegExp | ((screen: string) => boolean);

export interface WaitForOutputOptions extends OperationOptions {
  /** What to capture and test; the visible screen by default. */
  capture?: CaptureSpec;
}

export interface WaitForTopologyOptions extends OperationOptions, SnapshotOptions {
  /**
   * tmux reports pane and layout changes only for the session a control client is attached
   * to, so the snapshot is also re-read this often. Default 250 ms.
   */
  pollMs?: number;
}

const DEFAULT_POLL_MS = 250;
/** Events a waiter only needs as wake-ups: a small tail is enough. */
const WAKE_UP_EVENTS = 64;

function matcherOf(predicate: OutputPredicate): (screen: string) => boolean {
  if (typeof predicate === 'string') {
    if (predicate === '') throw new ArgumentError('the text to wait for is empty');
    return (screen) => screen.includes(predicate);
  }
  if (predicate instanceof RegExp) {
    // A global or sticky pattern would carry lastIndex from one screen to the next.
    const pattern = new RegExp(predicate.source, predicate.flags.replace(/[gy]/g, ''));
    return (screen) => pattern.test(screen);
  }
  if (typeof predicate === 'function') return predicate;
  throw new ArgumentError('the output predicate must be a string, a RegExp or a function of the screen text');
}

/**
 * Waits until the pane's captured text satisfies the predicate and returns that text. The
 * output subscription starts before the first capture, so output written between the two
 * is never missed; after that each output event (or topology change) for the pane triggers
 * one fresh capture.
 */
export async function waitForOutput(server: Server, pane: Pane, predicate: OutputPredicate, options: WaitForOutputOptions = {}): Promise<string> {
  const deadline = Deadline.start(options);
  const matches = matcherOf(predicate);
  const capture = options.capture ?? {};
  const argv = captureArgs(pane.id, capture);
  if (pane.server !== server) throw new ArgumentError('the pane belongs to another binding');
  const sessionId = (await pane.display('#{session_id}', { timeoutMs: deadline.remaining(), signal: options.signal })).toString('latin1');
  const connection = await server.openControl({ session: server.session(sessionId), output: true, anchor: false, timeoutMs: deadline.remaining(), signal: options.signal });
  try {
    const events = connection.subscribe({ mode: 'tail', maxEvents: WAKE_UP_EVENTS });
    for (;;) {
      const screen = (await server.command(argv, { deadline, transport: connection })).stdout.toString('utf8');
      if (matches(screen)) return screen;
      await wakeUp(events, deadline, (event) => concernsPane(event, pane.id), () => `${pane.id} did not show the expected output within ${deadline.timeoutMs} ms`);
    }
  } finally {
    await connection.close();
  }
}

function concernsPane(event: ControlEvent, pane: PaneId): boolean {
  if (event.pane !== undefined) return event.pane === pane;
  return event.kind === 'gap' || event.kind === 'exit' || TOPOLOGY_KINDS.includes(event.kind);
}

/**
 * Waits until a fresh snapshot satisfies the predicate and returns it. Topology events
 * (subscribed before the first snapshot) trigger re-reads at once; the poll interval covers
 * changes tmux does not report to this client.
 */
export async function waitForTopology(server: Server, predicate: (snapshot: Snapshot) => boolean, options: WaitForTopologyOptions = {}): Promise<Snapshot> {
  if (typeof predicate !== 'function') throw new ArgumentError('the topology predicate must be a function of a snapshot');
  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  if (!Number.isFinite(pollMs) || pollMs <= 0) throw new ArgumentError('pollMs must be a positive number');
  const deadline = Deadline.start(options);
  const timeout = (): string => `the tmux topology did not reach the expected state within ${deadline.timeoutMs} ms`;
  let connection: ControlConnection | undefined;
  try {
    connection = await server.openControl({ output: false, anchor: false, timeoutMs: deadline.remaining(), signal: options.signal });
  } catch (error) {
    if (!(error instanceof NoMatchError)) throw error;
  }
  let events: Subscription | undefined = connection?.subscribe({ mode: 'tail', maxEvents: WAKE_UP_EVENTS, kinds: TOPOLOGY_KINDS });
  try {
    for (;;) {
      const snapshot = await server.snapshot({ ...options, timeoutMs: remainingOr(deadline, timeout), signal: options.signal });
      if (predicate(snapshot)) return snapshot;
      if (events) {
        try {
          await wakeUp(events, deadline, () => true, timeout, pollMs);
        } catch (error) {
          // The connection's session went away: keep going on polling alone.
          if (!(error instanceof ConnectionLostError)) throw error;
          events = undefined;
        }
      } else {
        await sleepWithin(deadline, pollMs, timeout);
      }
    }
  } finally {
    await connection?.close();
  }
}

/**
 * Waits for one relevant event (then takes whatever else is already queued), or until
 * `pollMs` passes. The deadline ends the wait with a TimeoutError carrying `message()`.
 */
async function wakeUp(events: Subscription, deadline: Deadline, relevant: (event: ControlEvent) => boolean, message: () => string, pollMs?: number): Promise<void> {
  for (;;) {
    const left = remainingOr(deadline, message);
    const wait = pollMs === undefined ? left : Math.min(left, pollMs);
    let result: IteratorResult<ControlEvent>;
    try {
      result = await events.next({ timeoutMs: wait, signal: deadline.signal });
    } catch (error) {
      if (error instanceof TimeoutError) {
        if (pollMs !== undefined && wait < left) return;
        throw new TimeoutError(message(), deadline.timeoutMs, { phase: 'wait', delivery: 'not_sent' });
      }
      throw error;
    }
    if (result.done) throw new ClosedError('the control connection closed while waiting');
    if (relevant(result.value)) {
      events.drain();
      return;
    }
  }
}

async function sleepWithin(deadline: Deadline, ms: number, message: () => string): Promise<void> {
  const left = remainingOr(deadline, message);
  await new Promise((resolve) => setTimeout(resolve, Math.min(ms, left)));
}

function remainingOr(deadline: Deadline, message: () => string): number {
  try {
    return deadline.remaining();
  } catch (error) {
    if (error instanceof TimeoutError) throw new TimeoutError(message(), deadline.timeoutMs, { phase: 'wait', delivery: 'not_sent' });
    throw error;
  }
}
