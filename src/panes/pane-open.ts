import { DEFAULT_ROLE, isAssignmentWord, providersFor, resolveLaunchCommand, rulesFor, splitShellWords, unquoteWord, type AgentScreenRules, type Provider } from '../agents/index.js';
import { DroverError, findExecutable } from '../process/index.js';
import { ArgumentError, NoMatchError, checkId, respawnPaneArgs, setOptionArgs, unsetOptionArgs, type Pane, type Server } from '../tmux/index.js';
import { callerPane } from './caller.js';
import { DEFAULT_PACING, type Pacing } from './pane-io.js';
import { snippet } from './tail.js';
import { agentNamerFor, parseTextRows, textRowFormat, tmuxPaneIO } from './tmux-pane.js';

export interface OpenAgentOptions {
  provider: string;
  role?: string;
  /** Where the agent starts, and where the project config is looked up. Default: this process's cwd. */
  cwd?: string;
  /** Default: the built-ins merged with the project config found from `cwd`. */
  providers?: Readonly<Record<string, Provider>>;
  env?: NodeJS.ProcessEnv;
  /**
   * How long a program drover has no screen rules for must stay up before the pane counts as
   * opened (default 2 s). An agent drover knows is watched until it draws a screen it knows.
   */
  startupCheckMs?: number;
  pacing?: Partial<Pick<Pacing, 'sleep' | 'pollMs'>>;
}

export interface OpenedAgentPane {
  pane: string;
  provider: string;
  command: string;
  /** The argv the pane runs, or null when the command line needed /bin/sh -c. */
  argv: string[] | null;
  placement: 'split' | 'window';
  /** The agent runs with its permission checks off (the project opted in). */
  bypassesPermissions: boolean;
}

export const DEFAULT_STARTUP_CHECK_MS = 2000;
/** The longest `pane open` waits for an agent it knows to draw its first recognisable screen. */
export const AGENT_START_LIMIT_MS = 30_000;
/** How far back an exited agent's last words are looked for. */
const EXIT_HISTORY_LINES = 500;

/** The agent exited while drover watched it start; the pane is gone, its last lines are kept here. */
export class AgentExitedError extends DroverError {
  constructor(
    readonly command: string,
    readonly exitStatus: number | null,
    readonly lastLines: string,
  ) {
    super(`the agent exited right after it started${exitStatus === null ? '' : ` (status ${exitStatus})`}: ${command}`, { phase: 'start', delivery: 'observed' });
  }
}

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

/** The PATH the server gives new panes (its global environment), overridden by the command's own. */
async function panePath(server: Server, env: Record<string, string>): Promise<string> {
  if (env.PATH !== undefined) return env.PATH;
  try {
    return (await server.environment().get('PATH')) ?? '';
  } catch (error) {
    if (error instanceof NoMatchError) return '';
    throw error;
  }
}

/**
 * `drover pane open`: starts a provider's agent in a plain split of the caller's window when
 * the caller is a pane of this server, else in a new window of the server's current session,
 * and watches it start. The pane is created with a placeholder, told to keep itself when its
 * program exits, then respawned with the agent: an agent that exits at once (a refused flag,
 * a missing login) leaves its last lines for the error instead of a pane id that no longer
 * exists. After the check the pane goes back to the server's remain-on-exit setting.
 */
export async function openAgentPane(server: Server, options: OpenAgentOptions): Promise<OpenedAgentPane> {
  const cwd = options.cwd ?? process.cwd();
  const launch = resolveLaunchCommand(options.providers ?? providersFor(cwd), options.provider, options.role ?? DEFAULT_ROLE, options.env);
  const plain = plainCommand(launch.command);
  if (plain !== undefined && findExecutable(plain.argv[0]!, { PATH: await panePath(server, plain.env) }) === undefined) {
    throw new ArgumentError(`${plain.argv[0]} is not on the PATH of the tmux server's panes; install it or give its full path in providers.${launch.provider}.interactive_command`);
  }
  const placeholder = { cwd, command: ['sleep', '86400'] };
  const caller = callerPane(server, options.env ?? process.env);
  let pane: Pane;
  let placement: OpenedAgentPane['placement'];
  if (caller !== undefined) {
    pane = await server.pane(caller).split({ ...placeholder, direction: 'vertical' });
    placement = 'split';
  } else {
    const session = server.session((await server.display('#{session_id}')).toString('latin1'));
    pane = (await session.newWindow({ ...placeholder, receipt: true })).pane;
    placement = 'window';
  }
  const scope = { kind: 'pane', id: checkId('pane', pane.id) } as const;
  const spawn = plain === undefined ? { cwd, command: ['/bin/sh', '-c', launch.command] } : { cwd, env: plain.env, command: plain.argv };
  const started = await server.runGroup([setOptionArgs(scope, 'remain-on-exit', 'on'), respawnPaneArgs(checkId('pane', pane.id), { ...spawn, kill: true })]);
  if (!started.ok) {
    await pane.kill().catch(() => undefined);
    throw new DroverError(`tmux could not start the agent: ${started.result.stderrText().trim()}`, { phase: 'start', delivery: 'not_sent' });
  }
  await watchStart(pane, launch.command, options);
  return { pane: pane.id, provider: launch.provider, command: launch.command, argv: plain?.argv ?? null, placement, bypassesPermissions: launch.bypassesPermissions };
}

async function deadStatus(pane: Pane): Promise<{ dead: boolean; status: number | null }> {
  const fields = ['pane_dead', 'pane_dead_status'];
  const [dead, status] = parseTextRows(Buffer.concat([await pane.display(textRowFormat(fields)), Buffer.from('\n')]), fields)[0] ?? [];
  return { dead: dead === '1', status: status === undefined || status === '' ? null : Number(status) };
}

/**
 * Watches the agent start. An agent drover knows is watched until its screen shows something
 * the rules recognise (composer, dialog…), up to AGENT_START_LIMIT_MS: a slow start is not an
 * error, and `ready` tells the rest. Any other program is watched for `startupCheckMs`. Either
 * way a program that exits meanwhile is an AgentExitedError.
 */
async function watchStart(pane: Pane, command: string, options: OpenAgentOptions): Promise<void> {
  const pacing = { ...DEFAULT_PACING, ...options.pacing };
  const checkMs = options.startupCheckMs ?? DEFAULT_STARTUP_CHECK_MS;
  const exited = async (status: number | null): Promise<never> => {
    // Agents print their error and then clear the screen they drew, so the words are in the
    // history; blank rows and tmux's own "Pane is dead" line say nothing the status does not.
    const history = (await pane.capture({ start: -EXIT_HISTORY_LINES })).toString('utf8');
    const lastLines = snippet(
      history
        .split('\n')
        .filter((line) => line.trim() !== '' && !/^Pane is dead \(/.test(line))
        .join('\n'),
    );
    await pane.kill().catch(() => undefined);
    throw new AgentExitedError(command, status, lastLines);
  };
  const io = tmuxPaneIO(pane, agentNamerFor(options.cwd));
  let rules: AgentScreenRules | undefined;
  for (let waited = 0; waited < (rules === undefined ? checkMs : AGENT_START_LIMIT_MS); waited += pacing.pollMs) {
    await pacing.sleep(pacing.pollMs);
    const state = await deadStatus(pane);
    if (state.dead) await exited(state.status);
    if (rules === undefined) {
      const kind = (await io.describe()).agent.kind;
      rules = kind === null ? undefined : rulesFor(kind);
    }
    if (rules !== undefined && rules.read(await io.screen()).phase !== 'unknown') break;
  }
  await pane.server.command(unsetOptionArgs({ kind: 'pane', id: checkId('pane', pane.id) }, 'remain-on-exit'));
  // It may have exited between the last look and the unset, which tmux does not undo.
  const last = await deadStatus(pane).catch(() => undefined);
  if (last?.dead) await exited(last.status);
}
