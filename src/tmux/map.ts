import { AbortedError, ArgumentError, LimitError } from './errors.js';
import { CommandResult } from './transport.js';

export interface MapOptions<R> {
  /** Items in flight at once. Default 4. */
  concurrency?: number;
  /** Most items accepted; more is refused before any work starts. Default 1 024. */
  maxItems?: number;
  /** Most result bytes kept before returning; past it the map fails and its work is cancelled. Default 1 MiB. */
  maxResultBytes?: number;
  /** How many bytes one result holds; by default a Buffer, a string or a CommandResult is measured and anything else counts 0. */
  resultBytes?: (result: R) => number;
  /** Cancels the map: running items see their signal abort, no new item starts. */
  signal?: AbortSignal;
}

export interface MapItemContext {
  readonly index: number;
  /** Aborted when a sibling failed, the caller cancelled or the binding closed: pass it to every operation. */
  readonly signal: AbortSignal;
}

export const MAP_DEFAULTS = Object.freeze({ concurrency: 4, maxItems: 1024, maxResultBytes: 1024 * 1024 });

function measuredBytes(result: unknown): number {
  if (result instanceof CommandResult) return result.stdout.length + result.stderr.length;
  if (result instanceof Uint8Array) return result.byteLength;
  if (typeof result === 'string') return Buffer.byteLength(result);
  return 0;
}

function positiveInteger(what: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new ArgumentError(`${what} must be a positive integer`);
  return value;
}

/**
 * Runs `work` over the items, at most `concurrency` at once, and returns the results in
 * input order. Input past maxItems is refused before anything starts (an endless iterable
 * included); results past maxResultBytes fail the map. The first failure cancels the
 * siblings through their signal, waits for them to end and is what the caller gets.
 */
export async function boundedMap<T, R>(
  items: Iterable<T>,
  work: (item: T, context: MapItemContext) => Promise<R>,
  options: MapOptions<R>,
  cancelled: AbortSignal,
): Promise<R[]> {
  const concurrency = positiveInteger('concurrency', options.concurrency ?? MAP_DEFAULTS.concurrency);
  const maxItems = positiveInteger('maxItems', options.maxItems ?? MAP_DEFAULTS.maxItems);
  const maxResultBytes = positiveInteger('maxResultBytes', options.maxResultBytes ?? MAP_DEFAULTS.maxResultBytes);
  const measure = options.resultBytes ?? measuredBytes;
  const inputs: T[] = [];
  for (const item of items) {
    if (inputs.length === maxItems) throw new LimitError(`map takes at most ${maxItems} items`, 'items', maxItems, { phase: 'validate', delivery: 'not_sent' });
    inputs.push(item);
  }
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, cancelled, ...(options.signal ? [options.signal] : [])]);
  if (signal.aborted) throw new AbortedError('the map was cancelled before it started', { phase: 'admit', delivery: 'not_sent' });
  const results: R[] = new Array<R>(inputs.length);
  let next = 0;
  let bytes = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < inputs.length && failure === undefined && !signal.aborted) {
      const index = next++;
      try {
        const result = await work(inputs[index]!, { index, signal });
        bytes += measure(result);
        if (bytes > maxResultBytes) throw new LimitError(`map results exceed ${maxResultBytes} bytes`, 'results', maxResultBytes, { phase: 'run', delivery: 'observed' });
        results[index] = result;
      } catch (error) {
        failure ??= { error };
        stop.abort();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, inputs.length) }, worker));
  if (failure !== undefined) throw failure.error;
  if (signal.aborted) throw new AbortedError('the map was cancelled', { phase: 'run', delivery: 'possibly_sent' });
  return results;
}
