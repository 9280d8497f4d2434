/**
 * What a tmux server holds after a workspace load, read the same way whichever tool built it,
 * in terms two loads can be compared on: session names; the session's options and
 * environment; each window's index, name, layout and options; each pane's directory, start
 * command, environment, options and what was typed into it.
 *
 * The servers are started by the bench with a stand-in for the shell as tmux's
 * default-command (`exec /bin/cat >/dev/null`): the terminal echoes whatever a tool types,
 * nothing runs, and the screen is exactly what was typed — so the corpus's `top`, `vim` or
 * `tail -F` never run here, and what a pane was sent can be read back whole. A file that
 * declares its own default-command runs that instead; in those panes what was typed (and where
 * the typed commands have taken the program since) is not compared.
 */
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { run as runChild, type RunResult } from '../../src/process/index.js';
import type { Endpoint } from '../../src/tmux/index.js';

/**
 * The program every pane runs unless the file declares another: it keeps what is typed on the
 * screen. By absolute path, since a file may give its panes a PATH without it.
 */
export const STAND_IN_COMMAND = 'exec /bin/cat >/dev/null';
/** What /proc shows a stand-in pane's process running once the shell has handed over. */
const STAND_IN_PROGRAM = realpathSync('/bin/cat');
/** Typed into every stand-in pane once a load is over: when it shows, everything typed before it shows too. */
const SETTLE_MARKER = '@@drover-bench-settled@@';
const SETTLE_TIMEOUT_MS = 10_000;

export interface HeldPane {
  readonly index: number;
  readonly active: boolean;
  readonly startCommand: string;
  /** Where the stand-in runs: the pane's start directory; null in a pane running another program. */
  readonly cwd: string | null;
  /** The environment tmux gave the pane's program, less TMUX and TMUX_PANE (which name the server and the pane id). */
  readonly environment: Record<string, string>;
  /** Options set on the pane itself. */
  readonly options: Record<string, string>;
  /** The lines typed into the stand-in, as its screen shows them (trailing blanks trimmed); null in a pane running another program. */
  readonly typed: readonly string[] | null;
}

export interface HeldWindow {
  readonly index: number;
  /** null when automatic-rename is on: then tmux names the window after its program, not the tool. */
  readonly name: string | null;
  readonly active: boolean;
  /** tmux's layout string without its checksum, each pane named by its index instead of its id. */
  readonly layout: string;
  /** Every window option as the window sees it, its own or inherited. */
  readonly options: Record<string, string>;
  readonly panes: readonly HeldPane[];
}

export interface HeldSession {
  /** Every session on the server, by name. */
  readonly sessions: readonly string[];
  readonly name: string;
  /** Every session option as the session sees it, its own or inherited. */
  readonly options: Record<string, string>;
  readonly serverOptions: Record<string, string>;
  /** The session environment (`-NAME` entries as null: removed for this session). */
  readonly environment: Record<string, string | null>;
  readonly windows: readonly HeldWindow[];
}

async function tmux(endpoint: Endpoint, env: NodeJS.ProcessEnv, args: readonly string[]): Promise<string> {
  const result: RunResult = await runChild([endpoint.executable, ...endpoint.args, ...args], { env });
  if (!result.ok) throw new Error(`tmux ${args[0]} failed (exit ${result.exitCode}): ${result.stderrText().trim()}`);
  return result.text();
}

/** `show-options` lines (`name value`, `name* value` when inherited) as a map; values stay as tmux quotes them. */
function optionMap(text: string): Record<string, string> {
  const options: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^(\S+?)\*? (.*)$/.exec(line);
    if (match) options[match[1]!] = match[2]!;
  }
  return options;
}

const FIELDS = ['session_id', 'window_index', 'window_id', 'window_name', 'window_active', 'window_layout', 'pane_index', 'pane_id', 'pane_active', 'pane_pid', 'pane_current_path', 'pane_start_command'] as const;
type Row = Record<(typeof FIELDS)[number], string>;

async function paneRows(endpoint: Endpoint, env: NodeJS.ProcessEnv, session: string): Promise<Row[]> {
  const text = await tmux(endpoint, env, ['list-panes', '-s', '-t', `=${session}`, '-F', FIELDS.map((field) => `#{${field}}`).join('\t')]);
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const values = line.split('\t');
      return Object.fromEntries(FIELDS.map((field, i) => [field, values[i] ?? ''])) as Row;
    });
}

/** The layout with its checksum dropped and pane ids (which depend on what else the server made) replaced by pane indexes. */
function layoutByIndex(layout: string, indexOfPaneId: ReadonlyMap<string, string>): string {
  return layout.replace(/^[0-9a-f]{4},/, '').replace(/(\d+x\d+,\d+,\d+),(\d+)/g, (_, cell: string, id: string) => `${cell},pane${indexOfPaneId.get(`%${id}`) ?? `?${id}`}`);
}

function processEnvironment(pid: string): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const equals = entry.indexOf('=');
    if (equals <= 0) continue;
    const name = entry.slice(0, equals);
    if (name !== 'TMUX' && name !== 'TMUX_PANE') environment[name] = entry.slice(equals + 1);
  }
  return environment;
}

/** The program a process runs ('' once it is gone). */
function processExecutable(pid: string): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}

function runsStandIn(row: Row): boolean {
  return row.pane_start_command.replace(/^"|"$/g, '') === STAND_IN_COMMAND;
}

async function capture(endpoint: Endpoint, env: NodeJS.ProcessEnv, paneId: string): Promise<string> {
  return tmux(endpoint, env, ['capture-pane', '-p', '-J', '-S', '-', '-E', '-', '-t', paneId]);
}

/**
 * Waits until every pane of the session runs its final program and every stand-in pane shows
 * all that was typed into it: each pane's process must have left tmux's fork for its program
 * (a stand-in pane: until the shell has handed over to cat, whose environment is the one
 * read); a marker typed into each stand-in pane after the tool has exited must show on its
 * screen. Throws naming the pane that never does.
 */
export async function settle(endpoint: Endpoint, env: NodeJS.ProcessEnv, session: string): Promise<void> {
  const rows = await paneRows(endpoint, env, session);
  const tmuxProgram = processExecutable((await tmux(endpoint, env, ['display-message', '-p', '#{pid}'])).trim());
  for (const row of rows.filter(runsStandIn)) await tmux(endpoint, env, ['send-keys', '-l', '-t', row.pane_id, SETTLE_MARKER]);
  const since = Date.now();
  for (const row of rows) {
    const standIn = runsStandIn(row);
    for (;;) {
      const program = processExecutable(row.pane_pid);
      const running = standIn ? program === STAND_IN_PROGRAM : program !== '' && program !== tmuxProgram;
      const shown = !standIn || (await capture(endpoint, env, row.pane_id)).includes(SETTLE_MARKER);
      if (running && shown) break;
      if (Date.now() - since > SETTLE_TIMEOUT_MS) {
        throw new Error(`pane ${row.window_index}.${row.pane_index} of ${session} did not settle in ${SETTLE_TIMEOUT_MS} ms (${shown ? 'its program never started' : 'the marker never showed'})`);
      }
      await sleep(10);
    }
  }
}

/** Reads what the server holds for `session` (call settle first). */
export async function readHeld(endpoint: Endpoint, env: NodeJS.ProcessEnv, session: string): Promise<HeldSession> {
  const sessions = (await tmux(endpoint, env, ['list-sessions', '-F', '#{session_name}'])).split('\n').filter((name) => name !== '').sort();
  const rows = await paneRows(endpoint, env, session);
  // By id: an option or environment target of `=name` is looked up as a pane, not a session.
  const target = rows[0]!.session_id;
  const environment: Record<string, string | null> = {};
  for (const line of (await tmux(endpoint, env, ['show-environment', '-t', target])).split('\n')) {
    if (line.startsWith('-')) environment[line.slice(1)] = null;
    else if (line.includes('=')) environment[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  const windows: HeldWindow[] = [];
  for (const windowId of [...new Set(rows.map((row) => row.window_id))]) {
    const panesOfWindow = rows.filter((row) => row.window_id === windowId);
    const first = panesOfWindow[0]!;
    const options = optionMap(await tmux(endpoint, env, ['show-options', '-w', '-A', '-t', windowId]));
    const panes: HeldPane[] = [];
    for (const row of panesOfWindow) {
      const standIn = runsStandIn(row);
      let typed: string[] | null = null;
      if (standIn) {
        typed = (await capture(endpoint, env, row.pane_id)).split(SETTLE_MARKER).join('').split('\n').map((line) => line.trimEnd());
        while (typed.length > 0 && typed.at(-1) === '') typed.pop();
      }
      panes.push({
        index: Number(row.pane_index),
        active: row.pane_active === '1',
        startCommand: row.pane_start_command,
        cwd: standIn ? row.pane_current_path : null,
        environment: processEnvironment(row.pane_pid),
        options: optionMap(await tmux(endpoint, env, ['show-options', '-p', '-t', row.pane_id])),
        typed,
      });
    }
    windows.push({
      index: Number(first.window_index),
      name: options['automatic-rename'] === 'on' ? null : first.window_name,
      active: first.window_active === '1',
      layout: layoutByIndex(first.window_layout, new Map(panesOfWindow.map((row) => [row.pane_id, row.pane_index]))),
      options,
      panes,
    });
  }
  return {
    sessions,
    name: session,
    options: optionMap(await tmux(endpoint, env, ['show-options', '-A', '-t', target])),
    serverOptions: optionMap(await tmux(endpoint, env, ['show-options', '-s'])),
    environment,
    windows: windows.sort((a, b) => a.index - b.index),
  };
}

/**
 * What was typed as the pane's shell would run it: a `~` opening a line and
 * `$NAME`/`${NAME}` outside single quotes replaced from the pane's environment. tmuxp expands
 * these itself before typing; drover types the command as written and leaves that to the
 * shell, so the two are compared on what the shell would see.
 */
export function asShellSees(held: HeldSession): HeldSession {
  return {
    ...held,
    windows: held.windows.map((window) => ({
      ...window,
      // One text per pane: a quote opened on one line may close on a later one, as in the shell.
      panes: window.panes.map((pane) => ({ ...pane, typed: pane.typed === null ? null : expandTyped(pane.typed, pane.environment) })),
    })),
  };
}

/** A pane's typed lines with variables (and a `~` opening a line) expanded from `environment`, quotes respected. */
export function expandTyped(typed: readonly string[], environment: Readonly<Record<string, string | undefined>>): string[] {
  return shellExpand(typed.join('\n'), environment).split('\n');
}

function shellExpand(typed: string, environment: Readonly<Record<string, string | undefined>>): string {
  const home = environment.HOME;
  const text = home === undefined ? typed : typed.replace(/^([ \t]*)~(?=\/|$)/gm, (_, indent: string) => `${indent}${home}`);
  let out = '';
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i]!;
    if (char === '\\' && quote !== "'") {
      out += text.slice(i, i + 2);
      i += 1;
    } else if ((char === "'" && quote !== '"') || (char === '"' && quote !== "'")) {
      quote = quote === null ? char : null;
      out += char;
    } else if (char === '$' && quote !== "'") {
      const match = /^\$(?:(\w+)|\{(\w+)\})/.exec(text.slice(i));
      const name = match?.[1] ?? match?.[2];
      const value = name === undefined || !Object.hasOwn(environment, name) ? undefined : environment[name];
      if (match && value !== undefined) {
        out += value;
        i += match[0].length - 1;
      } else out += char;
    } else out += char;
  }
  return out;
}

export interface Difference {
  /** Where, e.g. `windows[1].panes[0].environment.PATH`. */
  readonly path: string;
  readonly drover: unknown;
  readonly tmuxp: unknown;
}

/** Every place two holdings differ. */
export function differences(drover: unknown, tmuxp: unknown, path = ''): Difference[] {
  if (isDeepStrictEqual(drover, tmuxp)) return [];
  if (typeof drover === 'object' && drover !== null && typeof tmuxp === 'object' && tmuxp !== null) {
    const keys = [...new Set([...Object.keys(drover), ...Object.keys(tmuxp)])];
    return keys.flatMap((key) => {
      const step = Array.isArray(drover) ? `[${key}]` : path === '' ? key : `.${key}`;
      return differences((drover as Record<string, unknown>)[key], (tmuxp as Record<string, unknown>)[key], `${path}${step}`);
    });
  }
  return [{ path, drover, tmuxp }];
}

export function describeDifference({ path, drover, tmuxp }: Difference): string {
  const shown = (value: unknown): string => {
    const text = JSON.stringify(value) ?? 'nothing';
    return text.length > 100 ? `${text.slice(0, 97)}...` : text;
  };
  return `${path}: drover ${shown(drover)}, tmuxp ${shown(tmuxp)}`;
}
