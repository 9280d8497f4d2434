/**
 * `npm run bench NAME`: each benchmark is bench/NAME.ts exporting `run(args)`. It checks
 * correctness first, then times drover against the named peer in the same run, prints a
 * readable report and ends with one JSON line of its figures.
 */
import { readdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Benchmark {
  run(args: string[]): Promise<Record<string, number | string | boolean>>;
}

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith('.js') && !['main.js', 'support.js'].includes(f))
  .map((f) => f.slice(0, -3))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (!name || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench NAME [ARGS]\nbenchmarks: ${available.join(', ')}\n`);
  process.exit(2);
}
const module = (await import(`./${name}.js`)) as Benchmark;
try {
  const figures = await module.run(rest);
  process.stdout.write(`${JSON.stringify(figures)}\n`);
} catch (error) {
  // A missing peer or a failed correctness check is a message for the user, not a stack.
  process.stderr.write(`bench ${name}: ${(error as Error).message}\n`);
  process.exitCode = 1;
}
