import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/process/index.js';
import { loadWorkspaceFile, type WorkspaceError } from '../../src/workspace/index.js';
import { HOME } from './helpers.js';

const YAML = 'session_name: s\nstart_directory: ./app\nwindows: [{}]\n';

describe('loadWorkspaceFile', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-workspace-'));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (name: string, content: string | Buffer): string => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };
  const failure = async (path: string, options = {}): Promise<WorkspaceError> => {
    try {
      await loadWorkspaceFile(path, { homeDir: HOME, ...options });
    } catch (error) {
      return error as WorkspaceError;
    }
    return assert.fail('expected the load to fail');
  };

  it('infers the format from the extension and resolves paths against the file directory', async () => {
    for (const name of ['a.yaml', 'b.yml', 'c.JSON']) {
      const path = write(name, name.endsWith('JSON') ? JSON.stringify({ session_name: 's', start_directory: './app', windows: [{}] }) : YAML);
      const doc = await loadWorkspaceFile(path, { homeDir: HOME });
      assert.equal(doc.startDirectory, join(dir, 'app'), name);
    }
  });

  it('takes an explicit format over the extension', async () => {
    const path = write('workspace.txt', YAML);
    assert.equal((await failure(path)).code, 'io');
    assert.equal((await loadWorkspaceFile(path, { format: 'yaml', homeDir: HOME })).sessionName, 's');
    const error = await failure(write('yaml-in-json.json', YAML));
    assert.equal(error.code, 'syntax');
  });

  it('refuses what is not a regular file, without blocking on a FIFO', async () => {
    mkdirSync(join(dir, 'dir.yaml'));
    assert.equal((await failure(join(dir, 'dir.yaml'))).code, 'io');
    const fifo = join(dir, 'fifo.yaml');
    assert.ok((await run(['mkfifo', fifo])).ok);
    const error = await failure(fifo);
    assert.equal(error.code, 'io');
    assert.match(error.message, /not a regular file/);
  });

  it('reports a missing file by its error code, without the path', async () => {
    const error = await failure(join(dir, 'missing-secret-name.yaml'));
    assert.equal(error.code, 'io');
    assert.match(error.message, /ENOENT/);
    assert.ok(!error.message.includes('missing-secret-name'));
  });

  it('refuses files over the byte limit and invalid UTF-8', async () => {
    const big = write('big.yaml', `${YAML}#${'x'.repeat(1024 * 1024)}\n`);
    assert.equal((await failure(big)).code, 'bounds');
    assert.equal((await failure(write('small-limit.yaml', YAML), { limits: { maxBytes: 10 } })).code, 'bounds');
    const latin1 = write('latin1.yaml', Buffer.from('session_name: caf\xe9\nwindows: [{}]\n', 'latin1'));
    const error = await failure(latin1);
    assert.equal(error.code, 'syntax');
    assert.match(error.message, /UTF-8/);
  });
});
