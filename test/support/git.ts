import assert from 'node:assert/strict';
import { run } from '../../src/process/index.js';

/** git as the tests run it: none of the caller's GIT_* variables, no global or system config. */
export const gitEnv: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))),
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** Runs git in gitEnv and fails the test, naming the command, unless it succeeds. */
export async function git(...args: string[]): Promise<void> {
  const result = await run(['git', ...args], { env: gitEnv, timeoutMs: 10_000 });
  assert.equal(result.exitCode, 0, `git ${args.join(' ')}: ${result.stderrText()}`);
}
