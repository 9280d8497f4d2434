/**
 * The published package as a consumer sees it: the consumer (test/fixtures/consumer) imports
 * "drover" by name, is type-checked against the emitted declarations, and then runs against
 * the emitted JavaScript, so a declaration that lies about a return value fails here.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { run } from '../../src/process/index.js';
import { testEnvironment } from '../support/tmux.js';

/** The repository, and the compiled tree this test runs from (dist/, or a build directory). */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const built = fileURLToPath(new URL('../../', import.meta.url));

/**
 * A package directory named drover whose files are the compiled tree's src/. It sits inside the
 * compiled tree, so that the consumer finds @types/node and drover's own dependencies in the
 * repository's node_modules, as a consumer finds them in its own.
 */
function installedPackage(dir: string): void {
  const packageDir = join(dir, 'node_modules', 'drover');
  mkdirSync(packageDir, { recursive: true });
  writeFileSync(
    join(packageDir, 'package.json'),
    JSON.stringify({ name: 'drover', type: 'module', exports: { '.': { types: './src/index.d.ts', default: './src/index.js' } } }),
  );
  symlinkSync(join(built, 'src'), join(packageDir, 'src'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
}

describe('the published package', () => {
  const dir = mkdtempSync(join(built, 'consumer-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('type-checks a consumer, rejecting each wrong use, and runs it with the values the types promise', async () => {
    installedPackage(dir);
    copyFileSync(join(root, 'test/fixtures/consumer/consumer.ts'), join(dir, 'consumer.ts'));
    const fixture = join(root, 'test/fixtures/consumer/tsconfig.json');
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: fixture, compilerOptions: { noEmit: false, outDir: 'out' }, files: ['consumer.ts'] }));
    const compiled = await run([process.execPath, join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: dir, timeoutMs: 120_000 });
    // Each @ts-expect-error in the consumer must be an error, or tsc reports the unused directive.
    assert.equal(compiled.exitCode, 0, compiled.lossyText());

    const env = testEnvironment();
    const script = `import { consume } from ${JSON.stringify(join(dir, 'out/consumer.js'))}; process.stdout.write(JSON.stringify(await consume()));`;
    const ran = await run([process.execPath, '--input-type=module', '-e', script], { cwd: dir, env, timeoutMs: 60_000 });
    assert.equal(ran.exitCode, 0, ran.stderrText());
    const consumed = JSON.parse(ran.text()) as Record<string, unknown>;
    assert.match(String(consumed.paneId), /^%\d+$/);
    assert.equal(consumed.killedTwice, consumed.paneId, 'a second kill raises TargetNotFoundError naming the pane');
    assert.equal(typeof consumed.paneWidth, 'number');
    assert.ok(Number(consumed.paneWidth) > 0 && Number(consumed.paneWidth) < 80, `a half of an 80-column window, not ${String(consumed.paneWidth)}`);
    assert.equal(typeof consumed.capturedBytes, 'number');
    assert.deepEqual(
      [consumed.paneCount, consumed.criteriaEntity, consumed.matchedActive, consumed.key, consumed.planWindows, consumed.planPanes],
      [2, 'pane', 1, 'ctrl+c', 2, 3],
    );
  });
});
