import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Server, type Session } from '../../../src/tmux/index.js';
import { testEnvironment, useTestServer } from '../../support/tmux.js';

const ROUNDS = 12;
const AT_ONCE = 6;

describe('control clients starting and ending at once', () => {
  const t = useTestServer();

  // tmux before 3.7 dies when an attached client leaves while a control client is still
  // identifying itself; drover's own clients must never line up that way.
  it('leaves the tmux server running while clients come and go together', async () => {
    const { server } = t;
    const session: Session = await server.newSession({ name: 'churn', command: ['cat'] });
    const pid = (await server.command(['display-message', '-p', '#{pid}'])).text().trim();
    // A binding holds a few control connections: each client here has a binding of its own.
    const open = async (): Promise<{ close(): Promise<void> }> => {
      const binding = await Server.open(server.endpoint, { env: testEnvironment() });
      const connection = await binding.openControl({ session: binding.session(session.id), output: true, anchor: false, timeoutMs: 20_000 });
      return {
        close: async () => {
          await connection.close();
          await binding.close();
        },
      };
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      const first = await Promise.all(Array.from({ length: AT_ONCE }, open));
      // Each closing client is a detach the clients opening beside it could meet.
      await Promise.all([...first.map((connection) => connection.close()), ...Array.from({ length: AT_ONCE }, async () => (await open()).close())]);
    }
    const after = await server.command(['display-message', '-p', '#{pid}']);
    assert.equal(after.text().trim(), pid, 'the same tmux server answers after every round');
  });
});
