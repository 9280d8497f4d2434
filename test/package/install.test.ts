import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { before, describe, it } from 'node:test';
import { LongLivedChild, findExecutable, run, type RunResult } from '../../src/process/index.js';
import { request } from '../bridge/support.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp } from '../support/mcp.js';
import { eventually } from '../support/wait.js';
import { testEnvironment } from '../support/tmux.js';

const REPOSITORY = dirname(fileURLToPath(new URL('../../../package.json', import.meta.url)));
const manifest = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

/** What `npm pack --json` reports of one tarball. */
interface Packed {
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string; size: number; mode: number }[];
}

function json<T>(result: RunResult): T {
  assert.equal(result.exitCode, 0, `${result.argv.join(' ')}: exit ${result.exitCode}\n${result.stderrText()}${result.text()}`);
  return JSON.parse(result.text()) as T;
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1));
}

describe('the package npm packs, installed into an empty global prefix', { timeout: 10 * 60_000 }, () => {
  const sandbox = cliSandbox();
  const prefix = join(sandbox.dir, 'prefix');
  const installed = join(prefix, 'lib', 'node_modules', manifest.name);
  const bin = join(prefix, 'bin', 'drover');
  // npm, and the installed bin through its `#!/usr/bin/env node`, run on the Node running this test.
  const path = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  const npmEnv = testEnvironment({ ...process.env, PATH: path });
  // As from a user's shell: no npm_* variables of the npm that may be running this suite.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries({ ...sandbox.env, PATH: [join(prefix, 'bin'), path].join(delimiter) }).filter(([name]) => !name.startsWith('npm_')));
  const drover = (args: readonly string[], extra: NodeJS.ProcessEnv = {}) => run([bin, ...args], { env: { ...env, ...extra }, cwd: sandbox.dir, timeoutMs: 20_000 });
  let packed: Packed;

  before(async () => {
    const npm = findExecutable('npm', npmEnv);
    assert.ok(npm, 'npm is on PATH');
    // The suite has built dist already; npm's own build (prepare) would rewrite the tree the
    // other test files are running from.
    const pack = await run([npm, 'pack', '--json', '--ignore-scripts', '--pack-destination', sandbox.dir], { cwd: REPOSITORY, env: npmEnv, timeoutMs: 60_000 });
    [packed] = json<Packed[]>(pack) as [Packed];
    // Dependencies come from the registry, or from npm's cache when `npm ci` already put them there.
    const install = await run([npm, 'install', '--global', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', join(sandbox.dir, packed.filename)], {
      cwd: sandbox.dir,
      env: npmEnv,
      timeoutMs: 5 * 60_000,
    });
    assert.equal(install.exitCode, 0, `npm install --global failed:\n${install.stderrText()}`);
  });

  it('holds the built library, the bin and the page, and no tests, benches or source maps', (t) => {
    t.diagnostic(`${packed.filename}: ${(packed.size / 1024).toFixed(0)} KiB packed, ${(packed.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${packed.entryCount} files`);
    const paths = packed.files.map((file) => file.path).sort();
    assert.deepEqual(
      paths.filter((path) => !/^dist\/(src|cli)\//.test(path)),
      ['README.md', 'package.json'],
    );
    for (const needed of ['dist/cli/drover.js', 'dist/cli/web/page.js', 'dist/cli/web/page.css', 'dist/src/index.js', 'dist/src/index.d.ts']) {
      assert.ok(paths.includes(needed), `${needed} is packed`);
    }
    assert.deepEqual(
      paths.filter((path) => /(^|\/)(test|bench)\/|\.test\.|\.map$/.test(path)),
      [],
    );
    const entry = packed.files.find((file) => file.path === 'dist/cli/drover.js')!;
    assert.equal(entry.mode & 0o111, 0o111, 'the bin is packed executable');
    const readme = readFileSync(join(REPOSITORY, 'README.md'), 'utf8');
    assert.ok(readme.includes(`npm install -g ./${packed.filename}`), `the README's install line names ${packed.filename}`);
  });

  it('names no path of the machine that packed it', () => {
    // Whole paths only: a longer name a path begins is no match (MCP has a `notifications/roots/…`).
    const machinePaths = [REPOSITORY, homedir()].filter((path) => path.length > 1).map((path) => new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w.-])`));
    const files = filesUnder(installed).filter((file) => !file.startsWith('node_modules/'));
    assert.equal(files.length, packed.entryCount);
    for (const file of files) {
      const text = readFileSync(join(installed, file), 'utf8');
      for (const machinePath of machinePaths) assert.doesNotMatch(text, machinePath, `${file} names a path of this machine`);
      // tsc's trailing comment names the map beside the file (not packed); nothing else.
      for (const [, target] of text.matchAll(/sourceMappingURL=(\S*)/g)) assert.match(target!, /^[\w.-]+\.js\.map$/, `${file} points at a map elsewhere`);
    }
  });

  it('installs its runtime dependencies and none of its development ones, and builds nothing', () => {
    for (const name of Object.keys(manifest.dependencies)) assert.ok(existsSync(join(installed, 'node_modules', name, 'package.json')), `${name} is installed`);
    for (const name of Object.keys(manifest.devDependencies)) assert.ok(!existsSync(join(installed, 'node_modules', name)), `${name} is only for development`);
    assert.equal(existsSync(join(installed, 'node_modules', 'better-sqlite3', 'build')), false, 'the prebuilt SQLite addon serves; nothing compiled');
  });

  it('runs from the prefix bin: --version', async () => {
    const version = await drover(['--version']);
    assert.equal(version.exitCode, 0, version.stderrText());
    assert.equal(version.text(), `${manifest.version}\n`);
  });

  it('serves its library by name, with only its runtime dependencies', async () => {
    const script = "const drover = await import('drover'); process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(drover).map(([name, value]) => [name, typeof value]))));";
    const loaded = json<Record<string, string>>(await run([process.execPath, '--input-type=module', '-e', script], { cwd: join(prefix, 'lib'), env, timeoutMs: 20_000 }));
    for (const namespace of ['mux', 'panes', 'workspace', 'fleet', 'mcp', 'bridge']) assert.equal(loaded[namespace], 'object', `drover.${namespace}`);
    assert.equal(loaded.run, 'function');
  });

  it('starts a private server, keeps a fleet in SQLite, reports doctor, serves MCP and the web page, and stops', async (t) => {
    const up = await drover(['up']);
    assert.equal(up.exitCode, 0, up.stderrText());
    assert.match(up.text(), /^drover: started a private tmux server \(pid \d+\)\n/);
    assert.match(up.text(), /\nstop: {3}drover down\n/, 'drover on PATH is the installed one, so that is what it tells you to run');
    t.after(() => drover(['down']).then(() => undefined));

    // The pane `up` opened stands in for the terminal drover runs in: its Director's pane.
    const fleet = json<{ fleet: { name: string }; director: { placement: { pane_id: string } } }>(await drover(['fleet', 'create', 'packed', '--agent', 'shell', '--json'], { TMUX_PANE: '%0' }));
    assert.equal(fleet.fleet.name, 'packed');
    assert.equal(fleet.director.placement.pane_id, '%0');

    const doctor = json<{ ok: boolean; issues: string[]; fleet: { store: { kind: string; reachable: boolean; schema_version: number; latest_schema_version: number } } }>(await drover(['doctor', '--json']));
    assert.deepEqual(doctor.issues, []);
    assert.equal(doctor.ok, true);
    assert.deepEqual([doctor.fleet.store.kind, doctor.fleet.store.reachable], ['sqlite', true]);
    assert.equal(doctor.fleet.store.schema_version, doctor.fleet.store.latest_schema_version);

    const mcp = await connectMcp(['--tier', 'readonly'], env, [bin]);
    try {
      const tools = (await mcp.client.listTools()).tools.map((tool) => tool.name);
      for (const name of ['snapshot', 'pane_map', 'capture', 'workspace_plan', 'message_poll']) assert.ok(tools.includes(name), `drover mcp lists ${name}: ${tools.join(', ')}`);
      const snapshot = await mcp.client.callTool({ name: 'snapshot', arguments: {} });
      assert.notEqual(snapshot.isError, true, JSON.stringify(snapshot.content));
      assert.deepEqual((snapshot.structuredContent as { sessions: { session_name: string }[] }).sessions.map((session) => session.session_name), ['drover']);
    } finally {
      await mcp.close();
    }

    const web = await LongLivedChild.start([bin, 'web', '--port', '0', '--json'], { env, cwd: sandbox.dir });
    t.after(() => web.stop(2000, 'SIGKILL').then(() => undefined));
    let out = '';
    web.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const started = await eventually('drover web to print its address', () => {
      try {
        return JSON.parse(out) as { url: string };
      } catch {
        return undefined;
      }
    });
    assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await request(started.url);
    assert.equal(page.status, 200);
    assert.match(page.text, /<script type="module" src="\/assets\/page.js"><\/script>/);
    assert.equal((await request(new URL('assets/page.js', started.url).href)).status, 200, 'the page is packed beside the bin');
    assert.equal((await request(new URL('api/snapshot', started.url).href)).json.error?.code, 'unauthorized', 'unpaired, the API answers nothing');
    assert.equal((await web.stop(10_000, 'SIGINT')).exitCode, 130);

    const down = await drover(['down']);
    assert.equal(down.exitCode, 0, down.stderrText());
    assert.match(down.text() + down.stderrText(), /stopped the private tmux server/);
  });
});
