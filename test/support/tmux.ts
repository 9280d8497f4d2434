import { after, before } from 'node:test';
import { Server, type StartOptions } from '../../src/tmux/index.js';

/**
 * Starts an owned tmux server on a private socket in a fresh temporary directory. drover's
 * tmux clients never see $TMUX or $TMUX_PANE, so nothing here can reach the user's server.
 */
export async function startTestServer(options: StartOptions = {}): Promise<Server> {
  const env = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return Server.start({ env, ...options });
}

/** Runs fn against a fresh owned server that is retired afterwards, even when fn fails. */
export async function withServer<T>(fn: (server: Server) => Promise<T>, options: StartOptions = {}): Promise<T> {
  const server = await startTestServer(options);
  try {
    return await fn(server);
  } finally {
    await server.close();
  }
}

/**
 * One owned server for a whole describe() block: started before its tests, retired after
 * them whatever happened. Read `.server` inside tests.
 */
export function useTestServer(options: StartOptions = {}): { readonly server: Server } {
  const holder: { server?: Server } = {};
  before(async () => {
    holder.server = await startTestServer(options);
  });
  after(async () => {
    await holder.server?.close();
  });
  return {
    get server(): Server {
      if (!holder.server) throw new Error('the test server is not running (used outside a test?)');
      return holder.server;
    },
  };
}
