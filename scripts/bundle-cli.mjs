// Bundles the compiled CLI (entry dist/src/cli/drover.js) into dist/cli/drover.js, the `drover` bin,
// and the `drover web` page (src/bridge/page) into dist/cli/web/page.{js,css} beside it.
// Why: Node resolves, reads and links every ES module of an unbundled tree one by one, and a
// cold `drover pane map` spent a third of its time doing so; agents run `drover agent hook`
// on every tool call. Each top-level command stays its own chunk, loaded only when run, and the
// bin itself holds only the Node version check: the CLI (main.cjs) is loaded after that check.
// A command's chunks hold only the modules its code imports (direct-imports.mjs): `drover pane
// map` starts without zod, yaml or the MCP SDK, which only the commands that use them load.
// The CLI's chunks are turned into CommonJS scripts (.cjs), which the bin runs through a code
// cache saved after the command ran (src/cli/code-cache.ts); the bin is a script too.
// An optional argument names another build root than dist (a build tree of one's own).
import { build, transform } from 'esbuild';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { argv } from 'node:process';
import { directImports } from './direct-imports.mjs';

const root = argv[2] ?? 'dist';
const outdir = `${root}/cli`;
rmSync(outdir, { recursive: true, force: true });
const shared = {
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  metafile: true,
  logLevel: 'warning',
};
// The bin and its loader, one CommonJS script: Node starts a script without its ES module loader
// (about 5 ms of every start). The loader is imported dynamically, so it runs only after the
// version check. The CLI proper is left out (it is built below, as scripts): the bin imports it
// only where no bundle lies beside it (tsc's unbundled tree). A package.json beside the bin
// makes Node read dist/cli's .js files as scripts in this ES module package.
const bin = await build({
  ...shared,
  splitting: false,
  format: 'cjs',
  entryPoints: { drover: `${root}/src/cli/drover.js` },
  define: { 'import.meta.url': '__droverBinUrl' },
  banner: { js: '"use strict";\nvar __droverBinUrl = require("node:url").pathToFileURL(__filename).href;' },
  plugins: [{ name: 'cli-apart', setup: (b) => b.onResolve({ filter: /^\.\/main\.js$/ }, () => ({ path: './main.js', external: true })) }],
});
writeFileSync(`${outdir}/package.json`, `${JSON.stringify({ type: 'commonjs' })}\n`);
chmodSync(`${outdir}/drover.js`, 0o755);
// The CLI proper, an entry of its own with a fixed name, which the bin finds beside itself.
const cli = await build({
  ...shared,
  entryPoints: { main: `${root}/src/cli/main.js` },
  entryNames: '[name]',
  // A native addon cannot be bundled, and node-postgres is loaded only when PostgreSQL is chosen
  // (its optional native binding is never required): both are resolved from node_modules at run time.
  external: ['better-sqlite3', 'pg'],
  plugins: [directImports(resolve(root, 'src'))],
});
// esbuild's account of each chunk (what it holds, what it imports), outside the package: the
// test of what each command loads at start reads it. It names the CLI's chunks as ES modules (.js).
const metafile = { inputs: { ...bin.metafile.inputs, ...cli.metafile.inputs }, outputs: { ...bin.metafile.outputs, ...cli.metafile.outputs } };
writeFileSync(`${root}/cli-bundle.json`, JSON.stringify(metafile));

/** Every output the CLI proper reaches, statically or dynamically: the chunks to turn into scripts. */
function reachedFrom(output, reached = new Set()) {
  if (reached.has(output)) return reached;
  reached.add(output);
  for (const imported of cli.metafile.outputs[output].imports) if (!imported.external) reachedFrom(imported.path, reached);
  return reached;
}

const RELATIVE_CHUNK = /require\("\.\/([\w-]+)\.js"\)/g;
// Output paths in the metafile are relative to the working directory, as readFileSync takes them.
const main = Object.keys(cli.metafile.outputs).find((output) => cli.metafile.outputs[output].entryPoint?.endsWith('src/cli/main.js'));
for (const output of reachedFrom(main)) {
  const { code } = await transform(readFileSync(output, 'utf8'), {
    format: 'cjs',
    loader: 'js',
    target: 'node22',
    // import() of a chunk becomes a require() the loader serves; import.meta.url, a wrapper argument.
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__droverImportMetaUrl' },
    logLevel: 'warning',
  });
  writeFileSync(output.replace(/\.js$/, '.cjs'), code.replace(RELATIVE_CHUNK, (_, name) => `require("./${name}.cjs")`));
  rmSync(output);
}

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
