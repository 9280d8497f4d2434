/**
 * Control clients coming and going together on one session, for the tests of their starts and
 * ends (and run on its own by them in a second process).
 */
import { Endpoint, Server, type SessionId } from '../../../src/tmux/index.js';
import { testEnvironment } from '../../support/tmux.js';

const ROUNDS = 12;
const AT_ONCE = 6;

/**
 * Opens and closes control clients on `session`, AT_ONCE at a time for ROUNDS rounds, half of
 * each round closing while the other half opens: every close is a detach a client opening
 * beside it could meet. Each client has a binding of its own (a binding holds only a few).
 */
export async function churn(socketPath: string, session: SessionId): Promise<void> {
  const env = testEnvironment();
  const endpoint = Endpoint.fromSocketPath(socketPath, { env });
  const open = async (): Promise<{ close(): Promise<void> }> => {
    const binding = await Server.open(endpoint, { env });
    const connection = await binding.openControl({ session: binding.session(session), output: true, anchor: false, timeoutMs: 20_000 });
    return {
      close: async () => {
        await connection.close();
        await binding.close();
      },
    };
  };
  for (let round = 0; round < ROUNDS; round += 1) {
    const first = await Promise.all(Array.from({ length: AT_ONCE }, open));
    await Promise.all([...first.map((connection) => connection.close()), ...Array.from({ length: AT_ONCE }, async () => (await open()).close())]);
  }
}
