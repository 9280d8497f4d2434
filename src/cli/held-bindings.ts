import { Server, type Endpoint } from '../tmux/index.js';

/**
 * tmux bindings a long-lived drover process lends to every command it runs in turn:
 * `drover rpc`, which answers a hub's polls for as long as the link stays up. Each server is
 * bound once, over a control connection, so a poll reads it without starting a tmux client
 * (and without attaching and detaching one every few seconds). A binding whose control
 * connection is no longer up (the server stopped or was started again, or the client was
 * detached) is replaced on the next borrow, as a fresh `drover` would bind anew; pane keys of
 * the old server stay refused, since they carry its run. The replaced binding is closed once
 * the commands still using it give it back.
 */
export class HeldTmuxBindings {
  private readonly held = new Map<string, Promise<Server>>();
  /** How many commands use each binding now. */
  private readonly users = new Map<Server, number>();
  /** Bindings replaced while in use: closed when the last user gives them back. */
  private readonly replaced = new Set<Server>();
  private closed = false;

  /** The binding of the server at `endpoint`, opened now when none is held or the held one is no longer connected. */
  async borrow(endpoint: Endpoint, env: NodeJS.ProcessEnv): Promise<Server> {
    if (this.closed) throw new Error('the held tmux bindings are closed');
    const key = `${endpoint.executable}\u0000${endpoint.socketPath}`;
    const pending = this.held.get(key);
    if (pending !== undefined) {
      const server = await pending.catch(() => undefined);
      if (server?.connectedToItsServer === true) return this.lend(server);
      // Another borrower may have replaced it while this one waited.
      if (this.held.get(key) !== pending) return this.borrow(endpoint, env);
      this.held.delete(key);
      if (server !== undefined) this.retire(server);
    }
    const opening = Server.open(endpoint, { env, transport: 'control' });
    this.held.set(key, opening);
    try {
      return this.lend(await opening);
    } catch (error) {
      if (this.held.get(key) === opening) this.held.delete(key);
      throw error;
    }
  }

  /** A command is done with a binding it borrowed. */
  giveBack(server: Server): void {
    const left = (this.users.get(server) ?? 1) - 1;
    if (left > 0) return void this.users.set(server, left);
    this.users.delete(server);
    if (this.replaced.delete(server)) void server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const servers = [...(await Promise.all([...this.held.values()].map((pending) => pending.catch(() => undefined)))), ...this.replaced];
    this.held.clear();
    this.replaced.clear();
    await Promise.all(servers.map(async (server) => server?.close().catch(() => undefined)));
  }

  private lend(server: Server): Server {
    this.users.set(server, (this.users.get(server) ?? 0) + 1);
    return server;
  }

  private retire(server: Server): void {
    if ((this.users.get(server) ?? 0) === 0) void server.close().catch(() => undefined);
    else this.replaced.add(server);
  }
}
