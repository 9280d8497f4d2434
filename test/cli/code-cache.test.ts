import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cacheFileName, codeCacheDir, commandKey } from '../../src/cli/code-cache.js';
import { run } from '../../src/process/index.js';

const LOADER = new URL('../../src/cli/code-cache.js', import.meta.url).href;
const BIN = fileURLToPath(new URL('../../cli/drover.js', import.meta.url));

/** Loads `entry` from `chunks` in a fresh Node, as the bin would, and reports the chunk's exports and each cache's fate. */
async function loadInFreshNode(chunks: string, cacheDir: string, command: string, entry = 'main.cjs'): Promise<{ exports: Record<string, unknown>; outcomes: Record<string, string> }> {
  const script = `
    import { ChunkLoader } from ${JSON.stringify(LOADER)};
    const loader = new ChunkLoader(${JSON.stringify(chunks)}, ${JSON.stringify(cacheDir)}, ${JSON.stringify(command)});
    const exports = loader.load(${JSON.stringify(entry)});
    loader.save();
    process.stdout.write(JSON.stringify({ exports, outcomes: Object.fromEntries(loader.outcomes) }));`;
  const result = await run([process.execPath, '--input-type=module', '-e', script], { timeoutMs: 30_000 });
  assert.equal(result.exitCode, 0, result.stderrText());
  return JSON.parse(result.text()) as { exports: Record<string, unknown>; outcomes: Record<string, string> };
}

function headerOf(cacheFile: string): { source: [number, number]; commands: string[] } {
  const lines = readFileSync(cacheFile).subarray(0, 4096).toString('latin1').split('\n');
  assert.equal(lines[0], 'drover-code-cache 1');
  return JSON.parse(lines[1]!) as { source: [number, number]; commands: string[] };
}

describe('the code cache the bundled CLI runs through', () => {
  let dir: string;
  let chunks: string;
  let cacheDir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-code-cache-test-'));
    chunks = join(dir, 'chunks');
    cacheDir = join(dir, 'cache', 'v-test');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  /** A fresh chunk tree and no cache yet. */
  function writeChunks(): void {
    rmSync(chunks, { recursive: true, force: true });
    rmSync(join(dir, 'cache'), { recursive: true, force: true });
    mkdirSync(chunks);
    // A chunk tree as the bundle makes them: main requires another chunk (twice) and a Node module.
    const files: Record<string, string> = {
      'main.cjs': [
        'const lib = require("./lib.cjs");',
        'exports.same = lib === require("./lib.cjs");',
        'exports.sum = lib.add(2, 3);',
        'exports.sep = require("node:path").sep;',
        'exports.url = __droverImportMetaUrl;',
        'exports.libUrl = lib.url;',
        'exports.libLoads = globalThis.libLoads;',
      ].join('\n'),
      'lib.cjs': ['globalThis.libLoads = (globalThis.libLoads ?? 0) + 1;', 'exports.add = (a, b) => a + b;', 'exports.url = __droverImportMetaUrl;'].join('\n'),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(chunks, name), text);
  }

  /** A second install's chunk directory, fresh, holding `files`. */
  function otherInstall(files: Record<string, string>): string {
    const other = join(dir, 'other-install');
    rmSync(other, { recursive: true, force: true });
    mkdirSync(other);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(other, name), text);
    return other;
  }

  it('runs each chunk once, serves chunks and Node modules to require, and gives each chunk its own URL', async () => {
    writeChunks();
    const { exports } = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.deepEqual(exports, {
      same: true,
      sum: 5,
      sep: '/',
      url: pathToFileURL(join(chunks, 'main.cjs')).href,
      libUrl: pathToFileURL(join(chunks, 'lib.cjs')).href,
      libLoads: 1,
    });
  });

  it('saves each chunk after the run, uses the saves next time, and saves again for a command new to a chunk', async () => {
    writeChunks();
    const first = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.deepEqual(first.outcomes, { 'main.cjs': 'missing', 'lib.cjs': 'missing' });
    assert.deepEqual(readdirSync(cacheDir).sort(), [cacheFileName(chunks, 'lib.cjs'), cacheFileName(chunks, 'main.cjs')].sort());
    assert.deepEqual(headerOf(join(cacheDir, cacheFileName(chunks, 'main.cjs'))).commands, ['pane map']);
    const saved = readFileSync(join(cacheDir, cacheFileName(chunks, 'main.cjs')));

    const second = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.deepEqual(second.outcomes, { 'main.cjs': 'used', 'lib.cjs': 'used' });
    assert.equal(second.exports.sum, 5);
    assert.deepEqual(readFileSync(join(cacheDir, cacheFileName(chunks, 'main.cjs'))), saved, 'a cache that served this command is not written again');

    await loadInFreshNode(chunks, cacheDir, 'fleet list');
    assert.deepEqual(headerOf(join(cacheDir, cacheFileName(chunks, 'main.cjs'))).commands, ['pane map', 'fleet list']);
  });

  it('compiles a chunk changed since its cache was made afresh, and replaces that cache', async () => {
    writeChunks();
    await loadInFreshNode(chunks, cacheDir, 'pane map');
    const later = new Date((Math.floor(Date.now() / 1000) + 60) * 1000);
    utimesSync(join(chunks, 'lib.cjs'), later, later);
    const changed = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.deepEqual(changed.outcomes, { 'main.cjs': 'used', 'lib.cjs': 'stale' });
    assert.equal(headerOf(join(cacheDir, cacheFileName(chunks, 'lib.cjs'))).source[1], later.getTime());
    assert.deepEqual((await loadInFreshNode(chunks, cacheDir, 'pane map')).outcomes, { 'main.cjs': 'used', 'lib.cjs': 'used' });
  });

  it('runs a chunk whose cache V8 refuses (corrupt) and replaces the cache', async () => {
    writeChunks();
    await loadInFreshNode(chunks, cacheDir, 'pane map');
    const cacheFile = join(cacheDir, cacheFileName(chunks, 'main.cjs'));
    const bytes = readFileSync(cacheFile);
    const body = bytes.indexOf(0x0a, 'drover-code-cache 1\n'.length) + 1;
    writeFileSync(cacheFile, Buffer.concat([bytes.subarray(0, body), Buffer.alloc(bytes.length - body, 0x5a)]));
    const refused = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.equal(refused.outcomes['main.cjs'], 'rejected');
    assert.equal(refused.exports.sum, 5);
    assert.equal((await loadInFreshNode(chunks, cacheDir, 'pane map')).outcomes['main.cjs'], 'used');
  });

  it('keeps the caches of two installs apart', async () => {
    writeChunks();
    const other = otherInstall({ 'main.cjs': 'exports.sum = 7; exports.padding = "a longer chunk than the first install\'s";' });
    await loadInFreshNode(chunks, cacheDir, 'pane map');
    await loadInFreshNode(other, cacheDir, 'pane map');
    assert.equal((await loadInFreshNode(chunks, cacheDir, 'pane map')).outcomes['main.cjs'], 'used');
    const second = await loadInFreshNode(other, cacheDir, 'pane map');
    assert.deepEqual(second, { exports: { sum: 7, padding: "a longer chunk than the first install's" }, outcomes: { 'main.cjs': 'used' } });
    assert.notEqual(cacheFileName(chunks, 'main.cjs'), cacheFileName(other, 'main.cjs'));
  });

  it("removes an install's caches of chunks it no longer has when it saves, and no other install's", async () => {
    writeChunks();
    const other = otherInstall({ 'old.cjs': 'exports.sum = 7;' });
    await loadInFreshNode(other, cacheDir, 'pane map', 'old.cjs');
    writeFileSync(join(chunks, 'old.cjs'), 'exports.sum = 1;');
    await loadInFreshNode(chunks, cacheDir, 'pane map');
    await loadInFreshNode(chunks, cacheDir, 'pane map', 'old.cjs');
    assert.ok(existsSync(join(cacheDir, cacheFileName(chunks, 'old.cjs'))));
    rmSync(join(other, 'old.cjs'));
    // An upgrade in place: the chunk is gone, and the next save removes its cache.
    rmSync(join(chunks, 'old.cjs'));
    await loadInFreshNode(chunks, cacheDir, 'fleet list');
    assert.deepEqual(readdirSync(cacheDir).sort(), [cacheFileName(chunks, 'lib.cjs'), cacheFileName(chunks, 'main.cjs'), cacheFileName(other, 'old.cjs')].sort(), "another install's caches are its own to prune");
  });

  it('does not use a cache directory that others can write, and writes nothing into it', async () => {
    writeChunks();
    mkdirSync(join(dir, 'cache'), { recursive: true });
    chmodSync(join(dir, 'cache'), 0o777);
    const open = await loadInFreshNode(chunks, cacheDir, 'pane map');
    assert.deepEqual(open.outcomes, { 'main.cjs': 'off', 'lib.cjs': 'off' });
    assert.equal(existsSync(cacheDir), false);
  });

  it('is placed per user and Node version, moves with NODE_COMPILE_CACHE, and is off with NODE_DISABLE_COMPILE_CACHE', () => {
    assert.equal(codeCacheDir({ NODE_COMPILE_CACHE: '/var/cache/node' }), `/var/cache/node/drover-code-cache-${process.getuid!()}/${process.version}-${process.arch}`);
    assert.equal(codeCacheDir({}), join(tmpdir(), `drover-code-cache-${process.getuid!()}`, `${process.version}-${process.arch}`));
    assert.equal(codeCacheDir({ NODE_DISABLE_COMPILE_CACHE: '1' }), undefined);
  });

  it('keys a run by its command words', () => {
    assert.equal(commandKey(['pane', 'map', '--json', '-S', '/tmp/socket']), 'pane map');
    assert.equal(commandKey(['--version']), '(none)');
    assert.equal(commandKey(['fleet', 'member', 'create', 'x']), 'fleet member');
  });

  it('the bundled bin saves its chunks there and runs from them next time', async () => {
    const cacheRoot = join(dir, 'node-cache');
    const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: cacheRoot };
    delete env.NODE_DISABLE_COMPILE_CACHE;
    const first = await run([process.execPath, BIN, '--version'], { env, timeoutMs: 30_000 });
    assert.equal(first.exitCode, 0, first.stderrText());
    const versionDir = join(cacheRoot, `drover-code-cache-${process.getuid!()}`, `${process.version}-${process.arch}`);
    assert.ok(readdirSync(versionDir).includes(cacheFileName(dirname(BIN), 'main.cjs')), readdirSync(versionDir).join(', '));
    const second = await run([process.execPath, BIN, '--version'], { env, timeoutMs: 30_000 });
    assert.equal(second.text(), first.text());
    const usage = await run([process.execPath, BIN, 'no-such-command'], { env, timeoutMs: 30_000 });
    assert.equal(usage.exitCode, 2, 'a failing command keeps its exit status');
    const off = await run([process.execPath, BIN, '--version'], { env: { ...env, NODE_COMPILE_CACHE: join(dir, 'elsewhere'), NODE_DISABLE_COMPILE_CACHE: '1' }, timeoutMs: 30_000 });
    assert.equal(off.text(), first.text());
    assert.equal(existsSync(join(dir, 'elsewhere')), false);
  });
});
