import { fileURLToPath } from 'node:url';
import { createMuxPort, TmuxAdapter, type MuxPort } from '../../src/mux/index.js';
import type { Pane, Server } from '../../src/tmux/index.js';
import { eventually } from '../support/wait.js';

export { eventually };

/** The compiled fake agent, run with node inside a pane. */
export const FAKE_AGENT = fileURLToPath(new URL('../fixtures/fake-agent.js', import.meta.url));
const AGENTS = fileURLToPath(new URL('../../src/agents/index.js', import.meta.url));

/**
 * A hook argv for the fake agent that records its state through the library's hook
 * writer (the same code `drover agent hook` runs), in the pane's own tmux environment.
 */
export const HOOK_ARGV = ['node', '--input-type=module', '-e', `const { writeAgentHookState } = await import(${JSON.stringify(AGENTS)}); await writeAgentHookState(process.argv[1]);`];

export async function screenOf(pane: Pane): Promise<string> {
  return (await pane.capture()).toString('utf8');
}

/** Waits until the pane's screen contains `text`. */
export function screenShows(pane: Pane, text: string): Promise<string> {
  return eventually(`${pane.id} to show ${JSON.stringify(text)}`, async () => {
    const screen = await screenOf(pane);
    return screen.includes(text) ? screen : undefined;
  });
}

/**
 * Starts the fake agent in a new session (its own window) and waits until it has drawn its
 * first screen. `hook`: true for HOOK_ARGV, or another argv prefix that records the state.
 */
export async function startFakeAgent(
  server: Server,
  args: readonly string[] = [],
  options: { width?: number; height?: number; hook?: boolean | readonly string[]; cwd?: string; waitFor?: string } = {},
): Promise<Pane> {
  const hook = options.hook === true ? HOOK_ARGV : options.hook || undefined;
  const env = hook ? { DROVER_FAKE_AGENT_HOOK: JSON.stringify(hook) } : undefined;
  const receipt = await server.newSession({
    width: options.width ?? 80,
    height: options.height ?? 24,
    command: ['node', FAKE_AGENT, ...args],
    env,
    cwd: options.cwd,
    receipt: true,
  });
  await screenShows(receipt.pane, options.waitFor ?? '╭');
  return receipt.pane;
}

/** The mux port over a test server, as the pane verbs reach it. */
export function portOn(server: Server): MuxPort {
  return createMuxPort(new TmuxAdapter({ server }));
}

/** The pane key of `paneId` on the run of the server the port is bound to. */
export async function keyOf(port: MuxPort, paneId: string): Promise<string> {
  return `local::${port.mux}::${await port.serverIncarnation()}::${paneId}`;
}
