import assert from 'node:assert/strict';
import { readFileSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, it } from 'node:test';
import { findExecutable, run } from '../../src/process/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';

const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string; engines: { node: string } };
const oldest = Number(/^>=(\d+)$/.exec(manifest.engines.node)?.[1]);

/** Runs the bin on this Node made to report `version` as its own, set before the bin loads. */
function droverOnNodeReporting(version: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const pretend = `data:text/javascript,Object.defineProperty(process.versions, 'node', { value: '${version}' })`;
  return run([process.execPath, '--import', pretend, CLI_PATH, ...args], { env, timeoutMs: 20_000 });
}

/** A Node older than drover supports on PATH, other than the one running the tests. */
async function olderNodeOnPath(): Promise<{ path: string; version: string } | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = findExecutable(join(dir, 'node'));
    if (path === undefined || realpathSync(path) === realpathSync(process.execPath)) continue;
    const version = (await run([path, '--version'], { timeoutMs: 10_000 })).text().trim().replace(/^v/, '');
    if (Number(version.split('.')[0]) < oldest) return { path, version };
  }
  return undefined;
}

describe('the bin refuses a Node older than package.json engines allow', () => {
  const sandbox = cliSandbox();

  it('engines names a lowest major', () => {
    assert.ok(oldest >= 22, `engines.node is ${manifest.engines.node}`);
  });

  it('refuses the major below, before the CLI runs: the message on stderr, status 1, nothing on stdout', async () => {
    const refused = await droverOnNodeReporting(`${oldest - 1}.9.0`, ['--version'], sandbox.env);
    assert.equal(refused.exitCode, 1);
    assert.equal(refused.text(), '', 'the CLI never ran: --version printed nothing');
    assert.equal(refused.stderrText(), `drover: error: drover needs Node.js ${oldest} or newer, and this is Node.js ${oldest - 1}.9.0 (${process.execPath})\n  install a newer Node.js, or put one first on PATH\n`);
    const json = await droverOnNodeReporting(`${oldest - 1}.9.0`, ['doctor', '--json'], sandbox.env);
    assert.equal(json.exitCode, 1);
    assert.deepEqual(JSON.parse(json.text()), { error: { code: 'unsupported', message: `drover needs Node.js ${oldest} or newer, and this is Node.js ${oldest - 1}.9.0 (${process.execPath})` } });
  });

  it('runs on the lowest major engines allows', async () => {
    const accepted = await droverOnNodeReporting(`${oldest}.0.0`, ['--version'], sandbox.env);
    assert.equal(accepted.exitCode, 0, accepted.stderrText());
    assert.equal(accepted.text(), `${manifest.version}\n`);
  });

  it('refuses a real older Node found on PATH, whose parser and loader meet the bin first', async (t) => {
    const older = await olderNodeOnPath();
    if (older === undefined) return t.skip(`no Node older than ${oldest} on PATH`);
    const refused = await run([older.path, CLI_PATH, 'pane', 'map', '--json'], { env: sandbox.env, timeoutMs: 20_000 });
    assert.equal(refused.exitCode, 1, refused.stderrText());
    assert.match(refused.stderrText(), new RegExp(`^drover: error: drover needs Node\\.js ${oldest} or newer, and this is Node\\.js ${older.version.replaceAll('.', '\\.')} `));
    assert.equal(JSON.parse(refused.text()).error.code, 'unsupported');
  });
});
