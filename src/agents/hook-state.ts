import { ArgumentError } from '../process/index.js';
import { Endpoint, Server, checkId, setOptionArgs } from '../tmux/index.js';
import { AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION, formatAgentStateValue, isAgentState } from './state.js';
import { createAgentNamer, findAgentAncestor, systemProcessLookup } from './process-tree.js';
import { providersOrBuiltins } from './project-config.js';
import { agentNames } from './providers.js';

export interface AgentHookOptions {
  env?: NodeJS.ProcessEnv;
  nowSeconds?: number;
  /** The agent's pid; by default the nearest agent among this process's ancestors, if any. */
  agentPid?: number;
}

export type AgentHookOutcome = { written: true; pane: string; value: string } | { written: false; reason: string };

/**
 * `drover agent hook <state>`: records the state of the agent in `$TMUX_PANE` on the
 * server of `$TMUX`, under both option names, in one tmux call. A hook must never disturb
 * the agent that runs it, so every failure (outside tmux, tmux unreachable…) becomes an
 * outcome instead of an error; only an unknown state is refused.
 */
export async function writeAgentHookState(state: string, options: AgentHookOptions = {}): Promise<AgentHookOutcome> {
  if (!isAgentState(state)) throw new ArgumentError(`unknown agent state ${JSON.stringify(state)}; use active, waiting or idle`);
  const env = options.env ?? process.env;
  const pane = env.TMUX_PANE;
  if (!env.TMUX || !pane) return { written: false, reason: 'not inside a tmux pane' };
  try {
    const agentPid = options.agentPid ?? findAgentAncestor(process.pid, createAgentNamer(agentNames(providersOrBuiltins(process.cwd()))), await systemProcessLookup());
    const value = formatAgentStateValue({ state, epochSeconds: options.nowSeconds ?? Math.floor(Date.now() / 1000), pid: agentPid });
    const server = await Server.open(Endpoint.fromEnv({ env }), { env });
    try {
      const scope = { kind: 'pane', id: checkId('pane', pane) } as const;
      const group = await server.runGroup([setOptionArgs(scope, AGENT_STATE_OPTION, value), setOptionArgs(scope, LEGACY_AGENT_STATE_OPTION, value)]);
      return group.ok ? { written: true, pane, value } : { written: false, reason: group.result.stderrText() || 'tmux refused the option' };
    } finally {
      await server.close();
    }
  } catch (error) {
    return { written: false, reason: (error as Error).message };
  }
}
