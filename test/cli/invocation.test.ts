import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { shellQuote } from '../../src/process/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';

/** The command a hint tells the user to run next: `drover snapshot` with no server says how to start one. */
async function hintedCommand(sandbox: ReturnType<typeof cliSandbox>, env: NodeJS.ProcessEnv): Promise<string> {
  const result = await sandbox.drover(['snapshot'], { env });
  assert.equal(result.exitCode, 1, result.stderrText());
  const hint = /start one with `(.+) up` or name one with -L\/-S\n$/.exec(result.stderrText());
  assert.ok(hint, result.stderrText());
  return hint[1]!;
}

describe('the drover command hints print', () => {
  const sandbox = cliSandbox();
  // node first on PATH, as the one running the tests, and nothing called drover.
  const bare = { PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'), npm_command: '' };

  it('is node and the script when drover is not on PATH and npx did not start it', async () => {
    assert.equal(await hintedCommand(sandbox, bare), `node ${shellQuote(CLI_PATH)}`);
  });

  it('is drover when that name on PATH is this drover', async () => {
    const bin = join(sandbox.dir, 'bin');
    mkdirSync(bin);
    symlinkSync(CLI_PATH, join(bin, 'drover'));
    assert.equal(await hintedCommand(sandbox, { ...bare, PATH: `${bin}:${bare.PATH}` }), 'drover');
  });

  it('is npx drover when npx started it, as the set-up does, though npx put drover on the PATH it passed', async () => {
    assert.equal(await hintedCommand(sandbox, { ...bare, npm_command: 'exec' }), 'npx drover');
    // npx runs the project's bin with node_modules/.bin first on PATH; the user's shell has no such entry.
    const npxBin = join(sandbox.dir, 'npx-bin');
    mkdirSync(npxBin);
    symlinkSync(CLI_PATH, join(npxBin, 'drover'));
    assert.equal(await hintedCommand(sandbox, { ...bare, PATH: `${npxBin}:${bare.PATH}`, npm_command: 'exec' }), 'npx drover');
  });
});
