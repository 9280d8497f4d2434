import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { run } from '../../src/process/index.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('published type declarations', () => {
  it('compile a consumer of the built package, and reject wrong uses', async () => {
    const result = await run([process.execPath, `${root}node_modules/typescript/bin/tsc`, '-p', `${root}test/fixtures/consumer/tsconfig.json`], {
      cwd: root,
      timeoutMs: 120_000,
    });
    // Each @ts-expect-error in the consumer must be an error, or tsc reports the unused directive.
    assert.equal(result.exitCode, 0, result.lossyText());
  });
});
