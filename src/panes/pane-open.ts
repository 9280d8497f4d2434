import { DEFAULT_ROLE, isAssignmentWord, providersFor, resolveLaunchCommand, rulesFor, splitShellWords, unquoteWord, type AgentScreenRules, type Provider } from '../agents/index.js';
import { paneChannel, unwrapOutcome, type MuxCreatedPane, type MuxPort, type PaneChannel } from '../mux/index.js';
import { ArgumentError, findExecutable } from '../process/index.js';
import { DEFAULT_PACING, type Pacing } from './choreography.js';
import { AgentExitedError, PaneNotFoundError } from './errors.js';
import { agentNamerFor, listedPane, readPaneFacts } from './facts.js';
import { requireCapabilities } from './pane-actions.js';
import { snippet } from './tail.js';
import { paneKeysOf, type PaneRef } from './target.js';

export interface OpenAgentOptions {
  provider: string;
  role?: string;
  /** Where the agent starts, and where the project config is looked up. Default: this process's cwd. */
  cwd?: string;
  /** Default: the built-ins merged with the project config found from `cwd`. */
  providers?: Readonly<Record<string, Provider>>;
  /**
   * The environment drover runs in: the provider's command line is filled from it ($SHELL for
   * the shell provider), and its PATH (else this process's) is the one the program is looked up
   * in and started with.
   */
  env?: NodeJS.ProcessEnv;
  /** The pane this process runs in, when it is a pane of the multiplexer the port drives: the agent opens beside it. */
  callerPane?: string;
  /**
   * How long a program drover has no screen rules for must stay up before the pane counts as
   * opened (default 2 s). An agent drover knows is watched until it draws a screen it knows.
   */
  startupCheckMs?: number;
  pacing?: Partial<Pick<Pacing, 'sleep' | 'pollMs'>>;
}

export interface OpenedAgentPane extends PaneRef {
  provider: string;
  command: string;
  /** The argv the pane runs, or null when the command line needed /bin/sh -c. */
  argv: string[] | null;
  /** split: beside the caller's pane; window: in a new window (tab) of the session in front. */
  placement: 'split' | 'window';
  /** The agent runs with its permission checks off (the project opted in). */
  bypassesPermissions: boolean;
}

export const DEFAULT_STARTUP_CHECK_MS = 2000;
/** The longest `pane open` waits for an agent it knows to draw its first recognisable screen. */
export const AGENT_START_LIMIT_MS = 30_000;
/** How far back an exited agent's last words are looked for. */
const EXIT_HISTORY_LINES = 500;

/** A word only a shell can run: operators, expansions, globs, redirections, comments. */
const NEEDS_SHELL = /[|&;<>(){}$`*?[\]~!#\n]/;

/** A word's unquoted parts, where the shell would interpret characters. */
function unquotedParts(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw[i]!;
    if (c === '\\') i += 1;
    else if (c === "'") i = raw.indexOf("'", i + 1);
    else if (c === '"') {
      const close = raw.indexOf('"', i + 1);
      // `$` and backquotes still expand inside double quotes.
      out += raw.slice(i + 1, close).replace(/[^$`\\]/g, '');
      i = close;
    } else out += c;
  }
  return out;
}

/**
 * A command line that needs no shell (`NAME=value… program args…`, quoting allowed) as its
 * environment and argv; undefined when it needs one. Run as argv, the agent is the pane's
 * own process, so tmux names the pane after it and nothing sits between.
 */
export function plainCommand(line: string): { env: Record<string, string>; argv: string[] } | undefined {
  const words = splitShellWords(line);
  if (words.some((word) => NEEDS_SHELL.test(unquotedParts(word.raw)))) return undefined;
  const env: Record<string, string> = {};
  let at = 0;
  for (; at < words.length && isAssignmentWord(words[at]!.raw); at += 1) {
    const word = unquoteWord(words[at]!.raw);
    const equals = word.indexOf('=');
    env[word.slice(0, equals)] = word.slice(equals + 1);
  }
  const argv = words.slice(at).map((word) => unquoteWord(word.raw));
  return argv.length === 0 ? undefined : { env, argv };
}

/** What an agent's command line runs, on the PATH its pane gets. */
export interface AgentProgram {
  /** The command as environment and argv; undefined when it needs a shell. */
  readonly plain: { env: Record<string, string>; argv: string[] } | undefined;
  /** The pane's PATH: the command's own `PATH=` prefix, else the caller's (tmux gives a pane its client's). */
  readonly path: string;
  /** The program found on that PATH, null when it is not there; undefined when a shell runs the command and finds it. */
  readonly executable: string | null | undefined;
}

/** Where an agent's command finds its program: what `pane open` checks before it opens a pane, and `drover doctor` reports. */
export function agentProgram(command: string, env: NodeJS.ProcessEnv): AgentProgram {
  const plain = plainCommand(command);
  const path = plain?.env.PATH ?? env.PATH ?? process.env.PATH ?? '';
  return { plain, path, executable: plain === undefined ? undefined : (findExecutable(plain.argv[0]!, { PATH: path }) ?? null) };
}

/**
 * Where the new pane goes: beside the caller's pane when it is one of this multiplexer's panes,
 * else in a new window (tab) of the session in front, split off the window's first pane, which
 * is closed once the agent's pane stands beside it.
 */
async function placeSplit(port: MuxPort, callerPane: string | undefined, cwd: string, split: (beside: string) => Promise<MuxCreatedPane>): Promise<{ pane: MuxCreatedPane; placement: OpenedAgentPane['placement'] }> {
  const snapshot = await port.snapshot();
  if (callerPane !== undefined && snapshot.panes.some((pane) => pane.paneId === callerPane)) return { pane: await split(callerPane), placement: 'split' };
  requireCapabilities(port, 'opening an agent pane outside a pane of this server', ['createTab']);
  const space = snapshot.spaces.find((candidate) => candidate.focused) ?? snapshot.spaces[0];
  if (space === undefined) throw new ArgumentError(`${port.mux} has no session to open a window in`);
  const tab = unwrapOutcome(port, await port.createTab({ spaceId: space.spaceId, cwd }));
  try {
    return { pane: await split(tab.paneId), placement: 'window' };
  } finally {
    await port.closePane(tab.paneId);
  }
}

/**
 * `drover pane open`: starts a provider's agent in a split of the caller's pane when the
 * caller is a pane of this multiplexer, else in a new window of the session in front, and
 * watches it start. Where the multiplexer reports a pane's process (paneProcess), the pane is
 * kept on exit while drover watches, so an agent that exits at once (a refused flag, a missing
 * login) leaves its last lines and status for the error instead of a pane id that no longer
 * exists; after the check the pane goes back to the multiplexer's own rule for exited programs.
 * Elsewhere an agent that exits at once is seen by its pane going away.
 */
export async function openAgentPane(port: MuxPort, options: OpenAgentOptions): Promise<OpenedAgentPane> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const launch = resolveLaunchCommand(options.providers ?? providersFor(cwd), options.provider, options.role ?? DEFAULT_ROLE, env);
  const { plain, path, executable } = agentProgram(launch.command, env);
  if (executable === null) {
    throw new ArgumentError(`${plain!.argv[0]} is not on the PATH of the ${port.mux} server's panes; install it or give its full path in providers.${launch.provider}.interactive_command`);
  }
  requireCapabilities(port, 'opening an agent pane', ['splitPane', 'closePane', 'paneScreen']);
  const keep = port.declaration.supports.paneProcess;
  const command = plain === undefined ? ['/bin/sh', '-c', launch.command] : plain.argv;
  const spawnEnv = { ...plain?.env, PATH: path };
  const { pane, placement } = await placeSplit(port, options.callerPane, cwd, async (beside) =>
    unwrapOutcome(port, await port.splitPane({ besidePaneId: beside, direction: 'below', cwd, env: spawnEnv, command, keepOnExit: keep })),
  );
  await watchStart(paneChannel(port, pane.paneId), launch.command, keep, options);
  const keys = await paneKeysOf(port);
  return { ...keys.refOf(pane.paneId), provider: launch.provider, command: launch.command, argv: plain?.argv ?? null, placement, bypassesPermissions: launch.bypassesPermissions };
}

/** Whether the pane's program exited, and with what status where the multiplexer keeps it. */
async function exitOf(channel: PaneChannel): Promise<{ exited: boolean; status: number | null }> {
  if (channel.port.declaration.supports.paneProcess) {
    const process = await channel.process();
    return { exited: process.dead, status: process.exitStatus };
  }
  try {
    return { exited: !(await listedPane(channel.port, channel.paneId)).alive, status: null };
  } catch (error) {
    if (error instanceof PaneNotFoundError) return { exited: true, status: null };
    throw error;
  }
}

/**
 * Watches the agent start. An agent drover knows is watched until its screen shows something
 * the rules recognise (composer, dialog…), up to AGENT_START_LIMIT_MS: a slow start is not an
 * error, and `ready` tells the rest. Any other program is watched for `startupCheckMs`. Either
 * way a program that exits meanwhile is an AgentExitedError, and its pane is closed.
 */
async function watchStart(channel: PaneChannel, command: string, kept: boolean, options: OpenAgentOptions): Promise<void> {
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  const checkMs = options.startupCheckMs ?? DEFAULT_STARTUP_CHECK_MS;
  const exited = async (status: number | null): Promise<never> => {
    let lastLines = '';
    if (kept) {
      // Agents print their error and then clear the screen they drew, so the words are in the
      // history; blank rows and tmux's own "Pane is dead" line say nothing the status does not.
      const history = (await channel.grid({ scope: 'recent', lines: EXIT_HISTORY_LINES, styling: 'strip' })).text;
      lastLines = snippet(
        history
          .split('\n')
          .filter((line) => line.trim() !== '' && !/^Pane is dead \(/.test(line))
          .join('\n'),
      );
    }
    await channel.close().catch(() => undefined);
    throw new AgentExitedError(command, status, lastLines);
  };
  const nameAgent = agentNamerFor(options.cwd);
  let rules: AgentScreenRules | undefined;
  for (let waited = 0; waited < (rules === undefined ? checkMs : AGENT_START_LIMIT_MS); waited += pacing.pollMs) {
    await pacing.sleep(pacing.pollMs);
    const state = await exitOf(channel);
    if (state.exited) await exited(state.status);
    if (rules === undefined) {
      const kind = (await readPaneFacts(channel, nameAgent)).agent.kind;
      rules = kind === null ? undefined : rulesFor(kind);
    }
    if (rules !== undefined && rules.read(await channel.read()).phase !== 'unknown') break;
  }
  if (!kept) return;
  unwrapOutcome(channel.port, await channel.port.releaseKeptPane(channel.paneId));
  // It may have exited between the last look and the release, which the multiplexer does not undo.
  const last = await exitOf(channel).catch(() => undefined);
  if (last?.exited) await exited(last.status);
}
