// Bundles the compiled CLI (dist/src/cli/main.js) into dist/cli/drover.js, the `drover` bin.
// Why: Node resolves, reads and links every ES module of an unbundled tree one by one, and a
// cold `drover pane map` spent a third of its time doing so; agents run `drover agent hook`
// on every tool call. Each top-level command stays its own chunk, loaded only when run.
import { build } from 'esbuild';
import { chmodSync, rmSync } from 'node:fs';

const outdir = 'dist/cli';
rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: { drover: 'dist/src/cli/main.js' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // A native addon cannot be bundled; it is resolved from node_modules at run time.
  external: ['better-sqlite3'],
  // CommonJS dependencies bundled into ES modules still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __droverRequire } from 'node:module'; const require = __droverRequire(import.meta.url);" },
  logLevel: 'warning',
});
chmodSync(`${outdir}/drover.js`, 0o755);
