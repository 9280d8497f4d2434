import type { Server } from '../tmux/index.js';
import { callerPane } from './caller.js';
import { providersFor } from './project-config.js';
import { DEFAULT_ROLE, resolveLaunchCommand, type Provider } from './providers.js';

export interface OpenAgentOptions {
  provider: string;
  role?: string;
  /** Where the agent starts, and where the project config is looked up. Default: this process's cwd. */
  cwd?: string;
  /** Default: the built-ins merged with the project config found from `cwd`. */
  providers?: Readonly<Record<string, Provider>>;
  env?: NodeJS.ProcessEnv;
}

export interface OpenedAgentPane {
  pane: string;
  provider: string;
  command: string;
  placement: 'split' | 'window';
}

/**
 * `drover pane open`: starts a provider's interactive command in a plain split of the
 * caller's window when the caller is a pane of this server, else in a new window of the
 * server's current session. No size, no title: placement policy belongs to the caller.
 */
export async function openAgentPane(server: Server, options: OpenAgentOptions): Promise<OpenedAgentPane> {
  const cwd = options.cwd ?? process.cwd();
  const launch = resolveLaunchCommand(options.providers ?? providersFor(cwd), options.provider, options.role ?? DEFAULT_ROLE);
  // The provider command is a shell command line written by the user (or the built-in table).
  const spawn = { cwd, command: ['/bin/sh', '-c', launch.command] };
  const caller = callerPane(server, options.env ?? process.env);
  if (caller !== undefined) {
    const pane = await server.pane(caller).split({ ...spawn, direction: 'vertical' });
    return { pane: pane.id, provider: launch.provider, command: launch.command, placement: 'split' };
  }
  const session = server.session((await server.display('#{session_id}')).toString('latin1'));
  const receipt = await session.newWindow({ ...spawn, receipt: true });
  return { pane: receipt.pane.id, provider: launch.provider, command: launch.command, placement: 'window' };
}
