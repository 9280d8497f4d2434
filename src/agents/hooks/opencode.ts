import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { ArgumentError } from '../../process/index.js';
import { HOOK_REPORTS } from './reports.js';
import type { AgentHookInstaller } from './types.js';

/** The plugin's file name in opencode's `plugins/` directory (opencode loads every .js there). */
export const OPENCODE_PLUGIN_FILE = 'drover-agent-state.js';

/** How the plugin's first line starts: how setup recognises a file it may replace, whatever drover version wrote it. */
const MARKER = '// drover agent state:';
const HEADER = `${MARKER} written by \`drover agent setup\`, replaced on every run; delete this file to remove it.`;

/** Which opencode bus event moves the plugin's state, for `drover agent setup --dry-run`. */
const EVENTS: readonly string[] = Object.freeze([
  'plugin loaded → idle',
  'session.status busy or retry → active (any session of the directory, subagents included)',
  'session.status idle → idle once no session is busy',
  'permission.asked, question.asked → waiting',
  'permission.replied, question.replied, question.rejected → active or idle',
]);

/**
 * The plugin: one opencode plugin function whose `event` hook keeps which sessions run a turn
 * and which permission or question requests wait for the person, and runs
 * `<drover…> agent hook <state>` when the state they add up to changes.
 */
function pluginText(drover: readonly string[]): string {
  return `${HEADER}
// opencode runs it in its own process, so TMUX_PANE is the pane opencode runs in.
import { spawn } from 'node:child_process';

const DROVER = ${JSON.stringify(drover)};

export const DroverAgentState = async () => {
  if (!process.env.TMUX_PANE) return {};
  const busySessions = new Set();
  /** Permission and question requests waiting for the person: request id → session id. */
  const openRequests = new Map();
  let reported;
  let reporting = Promise.resolve();

  const run = (state) =>
    new Promise((done) => {
      const child = spawn(DROVER[0], [...DROVER.slice(1), 'agent', 'hook', state], { stdio: 'ignore' });
      child.on('error', done);
      child.on('close', done);
    });

  const report = () => {
    const state = openRequests.size > 0 ? 'waiting' : busySessions.size > 0 ? 'active' : 'idle';
    if (state === reported) return;
    reported = state;
    // One at a time, in order, so an earlier state never lands after a later one.
    reporting = reporting.then(() => run(state));
  };

  report();
  return {
    event: async ({ event }) => {
      const properties = event.properties ?? {};
      switch (event.type) {
        case 'session.status':
          if (properties.status?.type === 'idle') {
            busySessions.delete(properties.sessionID);
            // An interrupted turn leaves its requests unanswered.
            for (const [request, session] of openRequests) if (session === properties.sessionID) openRequests.delete(request);
          } else busySessions.add(properties.sessionID);
          break;
        case 'permission.asked':
        case 'question.asked':
          openRequests.set(properties.id, properties.sessionID);
          break;
        case 'permission.replied':
        case 'question.replied':
        case 'question.rejected':
          openRequests.delete(properties.requestID);
          break;
        default:
          return;
      }
      report();
    },
  };
};
`;
}

/**
 * Where opencode looks for the user's plugins: `$OPENCODE_CONFIG_DIR/plugins` when that is
 * set (opencode loads it besides the global directory), else the global config directory,
 * `$XDG_CONFIG_HOME/opencode/plugins` or `~/.config/opencode/plugins`.
 */
export function opencodePluginPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OPENCODE_CONFIG_DIR) return join(resolve(env.OPENCODE_CONFIG_DIR), 'plugins', OPENCODE_PLUGIN_FILE);
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'opencode', 'plugins', OPENCODE_PLUGIN_FILE);
}

/** The plugin file is drover's alone: written whole, refused when someone else's file has its name. */
function planOpencodePlugin(current: string | undefined, drover: readonly string[], path: string): string {
  if (current !== undefined && current.trim() !== '' && !current.startsWith(MARKER)) {
    throw new ArgumentError(`${path} exists and was not written by drover; move it away first`);
  }
  return pluginText(drover);
}

/** opencode's plugins: a JS module in its plugins directory, fed every event of its bus. */
export const opencodeHookInstaller: AgentHookInstaller = {
  agent: 'opencode',
  reports: HOOK_REPORTS.opencode,
  configPath: opencodePluginPath,
  plan: planOpencodePlugin,
  describe: () => EVENTS,
};
