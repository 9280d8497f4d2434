// Bundles the compiled CLI (entry dist/src/cli/drover.js) into dist/cli/drover.js, the `drover` bin,
// and the `drover web` page (src/bridge/page) into dist/cli/web/page.{js,css} beside it.
// Why: Node resolves, reads and links every ES module of an unbundled tree one by one, and a
// cold `drover pane map` spent a third of its time doing so; agents run `drover agent hook`
// on every tool call. Each top-level command stays its own chunk, loaded only when run, and the
// bin itself holds only the Node version check: the CLI is a chunk it loads after that check.
// A command's chunks hold only the modules its code imports (direct-imports.mjs): `drover pane
// map` starts without zod, yaml or the MCP SDK, which only the commands that use them load.
// An optional argument names another build root than dist (a build tree of one's own).
import { build } from 'esbuild';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { argv } from 'node:process';
import { directImports } from './direct-imports.mjs';

const root = argv[2] ?? 'dist';
const outdir = `${root}/cli`;
rmSync(outdir, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: { drover: `${root}/src/cli/drover.js` },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // A native addon cannot be bundled, and node-postgres is loaded only when PostgreSQL is chosen
  // (its optional native binding is never required): both are resolved from node_modules at run time.
  external: ['better-sqlite3', 'pg'],
  // CommonJS dependencies bundled into ES modules still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __droverRequire } from 'node:module'; const require = __droverRequire(import.meta.url);" },
  plugins: [directImports(resolve(root, 'src'))],
  metafile: true,
  logLevel: 'warning',
});
chmodSync(`${outdir}/drover.js`, 0o755);
// esbuild's account of each chunk (what it holds, what it imports), outside the package: the
// test of what each command loads at start reads it.
writeFileSync(`${root}/cli-bundle.json`, JSON.stringify(metafile));

// The page is built from its TypeScript source (tsc checks it with its own DOM-typed config);
// it bundles drover's SGR parser, so the mirror and the agent screen rules read text alike.
await build({
  entryPoints: [
    { in: 'src/bridge/page/main.ts', out: 'page' },
    { in: 'src/bridge/page/page.css', out: 'page' },
  ],
  outdir: `${outdir}/web`,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  minify: true,
  logLevel: 'warning',
});
