import { performance } from 'node:perf_hooks';

/** Runs fn `samples` times and returns each duration in milliseconds. */
export async function sample(samples: number, fn: () => Promise<unknown>): Promise<number[]> {
  return (await sampleInTurns(samples, { fn })).fn;
}

/**
 * Times several commands in turns (a, b, c, a, b, c…) so that a machine that slows down or
 * speeds up mid-run weighs on each of them alike; returns each one's durations. `warmupTurns`
 * untimed turns run first, so that code in long-lived processes (this one, or a host's) is
 * timed after the same number of runs for every command, not cold for some and hot for others.
 */
export async function sampleInTurns<K extends string>(samples: number, fns: Record<K, () => Promise<unknown>>, { warmupTurns = 0 } = {}): Promise<Record<K, number[]>> {
  const keys = Object.keys(fns) as K[];
  for (let i = 0; i < warmupTurns; i += 1) for (const key of keys) await fns[key]();
  const times = Object.fromEntries(keys.map((key) => [key, [] as number[]])) as Record<K, number[]>;
  for (let i = 0; i < samples; i += 1) {
    for (const key of keys) {
      const started = performance.now();
      await fns[key]();
      times[key].push(performance.now() - started);
    }
  }
  return times;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Rounds for the JSON line: three significant decimals are plenty for timings. */
export function round(value: number, digits = 3): number {
  return Number(value.toFixed(digits));
}

export function log(line: string): void {
  process.stderr.write(`${line}\n`);
}
