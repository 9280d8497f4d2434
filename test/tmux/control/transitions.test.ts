import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { run } from '../../../src/process/index.js';
import { testEnvironment, useTestServer } from '../../support/tmux.js';
import { churn } from './churn.js';

// tmux before 3.7 dies when an attached client leaves while a control client is still
// identifying itself; drover's own clients must never line up that way, in one process or several.
describe('control clients starting and ending at once', () => {
  const t = useTestServer();

  const serverPid = async (): Promise<string> => (await t.server.command(['display-message', '-p', '#{pid}'])).text().trim();

  it('leaves the tmux server running while one process opens and closes them together', async () => {
    const session = await t.server.newSession({ name: 'churn', command: ['cat'] });
    const pid = await serverPid();
    await churn(t.server.endpoint.socketPath, session.id);
    assert.equal(await serverPid(), pid, 'the same tmux server answers after every round');
  });

  it('leaves the tmux server running while two processes do so at once', async () => {
    const session = await t.server.newSession({ name: 'churn-two', command: ['cat'] });
    const pid = await serverPid();
    const script = `import { churn } from ${JSON.stringify(new URL('./churn.js', import.meta.url).href)}; await churn(${JSON.stringify(t.server.endpoint.socketPath)}, ${JSON.stringify(session.id)});`;
    const other = run([process.execPath, '--input-type=module', '-e', script], { env: testEnvironment(), timeoutMs: 120_000 });
    await churn(t.server.endpoint.socketPath, session.id);
    const result = await other;
    assert.equal(result.exitCode, 0, result.stderrText());
    assert.equal(await serverPid(), pid, 'the same tmux server answers after every round');
  });
});
