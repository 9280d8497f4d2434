#!/usr/bin/env node
// The `drover` bin's first module. It imports nothing statically, so on a Node older than
// drover supports this check runs before any of drover's code is even loaded: that code
// relies on what newer Node offers, and the SQLite addon crashes the process on Node 20.
// Written plainly enough for any Node to parse, as an ES module (tsc's tree) or a script (the bundle).

/** The oldest Node major drover runs on; package.json's `engines` says the same. */
const OLDEST_NODE_MAJOR = 22;

const version = process.versions.node;
if (Number(version.split('.')[0]) < OLDEST_NODE_MAJOR) {
  const message = `drover needs Node.js ${OLDEST_NODE_MAJOR} or newer, and this is Node.js ${version} (${process.execPath})`;
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify({ error: { code: 'unsupported', message } }, null, 2)}\n`);
  process.stderr.write(`drover: error: ${message}\n  install a newer Node.js, or put one first on PATH\n`);
  process.exitCode = 1;
} else {
  void start();
}

/**
 * The bundle runs drover's code through a code cache of its own, saved after the command ran
 * (see code-cache.ts). tsc's unbundled tree has no bundle beside it and is imported as ES
 * modules, with Node's compile cache (under the temporary directory, or where NODE_COMPILE_CACHE
 * says; NODE_DISABLE_COMPILE_CACHE=1 turns both off). No top-level await: the bundle builds
 * this module as a CommonJS script, which Node starts without its ES module loader.
 */
async function start(): Promise<void> {
  const { runBundledCli } = await import('./code-cache.js');
  if (!runBundledCli(new URL(import.meta.url))) {
    const { enableCompileCache } = await import('node:module');
    enableCompileCache?.();
    await import('./main.js');
  }
}
