import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { WorkspaceError, checkDirectories, createDirectories, declaredDirectories } from '../../src/workspace/index.js';
import { parseYaml } from './helpers.js';

describe('start directories', () => {
  const root = mkdtempSync(join(tmpdir(), 'drover-dirs-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, 'there'));
  writeFileSync(join(root, 'file'), '');
  const doc = parseYaml(
    [
      `session_name: s`,
      `start_directory: ${root}/there`,
      'windows:',
      '  - panes: [a, {start_directory: ../gone/deep}]',
      `  - start_directory: ${root}/file`,
      `  - start_directory: ${root}/there`,
      '    panes: [{start_directory: ../gone/deep}]',
    ].join('\n'),
  );

  it('lists each distinct directory once, attributed to the key that sets it', () => {
    assert.deepEqual(declaredDirectories(doc), [
      { path: `${root}/there`, source: 'start_directory' },
      { path: `${root}/gone/deep`, source: 'windows[0].panes[1].start_directory' },
      { path: `${root}/file`, source: 'windows[1].start_directory' },
    ]);
  });

  it('refuses every missing directory (offering --create-dirs) and a file, before anything is created', async () => {
    const error = await checkDirectories(doc).then(
      () => assert.fail('expected a rejection'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof WorkspaceError);
    assert.deepEqual(
      error.problems.map((problem) => `${problem.path} ${problem.code}`),
      ['windows[0].panes[1].start_directory missing_directory', 'windows[1].start_directory value'],
    );
    assert.match(error.problems[0]?.message ?? '', /does not exist; pass --create-dirs/);
  });

  it('with createMissing, returns only the missing ones, which createDirectories makes', async () => {
    const fine = parseYaml(`session_name: s\nstart_directory: ${root}/there\nwindows: [{panes: [a, {start_directory: ../new/deeper}]}]\n`);
    const missing = await checkDirectories(fine, { createMissing: true });
    assert.deepEqual(missing, [{ path: `${root}/new/deeper`, source: 'windows[0].panes[1].start_directory' }]);
    await createDirectories(missing);
    assert.ok(statSync(`${root}/new/deeper`).isDirectory());
    assert.deepEqual(await checkDirectories(fine), []);
  });
});
