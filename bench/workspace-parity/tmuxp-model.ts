/**
 * A model of what `tmuxp load` (1.27) builds from a workspace file, for when tmuxp itself is
 * not installed. It follows tmuxp's own pipeline as its source reads: PyYAML (YAML 1.1) or
 * JSON, `loader.expand` (shorthands, `~` and `$VAR` in names, directories, values and
 * commands), `loader.trickle` (inheritance) and the classic builder (what reaches tmux). It
 * stops at what tmux is told: it does not run tmux, plugins or before_script, and it does not
 * model tmux rejecting an option value. Whatever the model cannot decide is reported as such,
 * never guessed in drover's favour.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, extname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';

/** What a workspace becomes in tmux, in terms both tools can be compared on. */
export interface BuiltSession {
  readonly session: string;
  readonly environment: Record<string, string>;
  readonly options: Record<string, string>;
  readonly globalOptions: Record<string, string>;
  /** The window left current after the build (position in the file). */
  readonly activeWindow: number;
  readonly windows: readonly BuiltWindow[];
}

export interface BuiltWindow {
  readonly name: string | null;
  readonly index: number | null;
  /** Full preset name or layout string, as tmux applies it. */
  readonly layout: string | null;
  readonly options: Record<string, string>;
  readonly optionsAfter: Record<string, string>;
  /** The pane left active in the window (position in the window). */
  readonly activePane: number;
  readonly panes: readonly BuiltPane[];
}

export interface BuiltPane {
  /** Absolute directory, or null: tmux's default. */
  readonly cwd: string | null;
  /** The program the pane runs instead of the default shell (window_shell, a pane's shell); null: the shell. */
  readonly program: string | null;
  readonly environment: Record<string, string>;
  /** Keys typed, in order: text (shell-expanded as the pane's shell would see it) and Enter. */
  readonly keys: readonly string[];
}

export type ModelOutcome = { readonly loads: true; readonly built: BuiltSession } | { readonly loads: false; readonly reason: string };

class TmuxpFailure extends Error {}

const PRESETS = ['even-horizontal', 'even-vertical', 'main-horizontal', 'main-vertical', 'tiled'];

type Value = unknown;
type Dict = Record<string, Value>;

/** Runs the model on one file with the given environment (tmuxp expands from its process environment). */
export function tmuxpBuild(file: string, env: Readonly<Record<string, string>>): ModelOutcome {
  try {
    const text = readFileSync(file, 'utf8');
    // PyYAML: YAML 1.1 (yes/no/on/off are booleans), with merge keys.
    const data: Value = extname(file) === '.json' ? JSON.parse(text) : parseYaml(text, { version: '1.1', merge: true });
    return { loads: true, built: new Model(env, dirname(resolve(file))).session(data) };
  } catch (error) {
    if (error instanceof TmuxpFailure) return { loads: false, reason: error.message };
    // Anything else is where Python would raise too (a wrong type reaching tmuxp's code).
    return { loads: false, reason: `tmuxp raises (${(error as Error).message})` };
  }
}

/** tmuxp's expandshell (os.path.expandvars(os.path.expanduser(value))), also what a pane's shell does to a command. */
export function tmuxpExpandShell(value: string, env: Readonly<Record<string, string>>): string {
  const home = env.HOME ?? homedir();
  const user = value === '~' || value.startsWith('~/') ? home + value.slice(1) : value;
  return user.replace(/\$(\w+)|\$\{([^}]*)\}/g, (whole, bare: string | undefined, braced: string | undefined) => {
    const name = bare ?? braced ?? '';
    return Object.hasOwn(env, name) ? (env[name] ?? '') : whole;
  });
}

class Model {
  constructor(
    private readonly env: Readonly<Record<string, string>>,
    private readonly fileDir: string,
  ) {}

  /** os.path.expandvars(os.path.expanduser(value)): unknown variables stay as written. */
  expandShell(value: Value): string {
    if (typeof value !== 'string') throw new TmuxpFailure(`expandshell on ${typeName(value)}`);
    return tmuxpExpandShell(value, this.env);
  }

  session(data: Value): BuiltSession {
    const root = dict(data, 'the workspace');
    if (!('session_name' in root)) throw new TmuxpFailure('workspace requires "session_name"');
    if (!Array.isArray(root.windows)) throw new TmuxpFailure('workspace requires list of "windows"');
    if ('plugins' in root) throw new TmuxpFailure('plugins: tmuxp imports their Python modules, which are not installed here');
    if ('before_script' in root) {
      const script = this.relative(this.expandShell(root.before_script), this.fileDir);
      if (!existsSync(script)) throw new TmuxpFailure('before_script does not exist');
      throw new TmuxpFailure('before_script runs a program: the model does not run it');
    }
    // expand(): a session directory starting with . is relative to the file's directory.
    const sessionDir = 'start_directory' in root ? this.dotRelative(this.expandShell(root.start_directory), this.fileDir) : null;
    const before = this.commandList(root.shell_command_before);
    const windows = root.windows.map((window) => this.window(dict(window, 'a window'), sessionDir, before, root.suppress_history));
    if (windows.length === 0) throw new TmuxpFailure('no windows');
    const focused = root.windows.map((window, w) => (truthy((window as Dict).focus) ? w : -1)).filter((w) => w !== -1);
    return {
      session: this.expandShell(root.session_name),
      environment: this.values(root.environment, true, this.fileDir),
      options: this.values(root.options, false, this.fileDir),
      globalOptions: this.values(root.global_options, false, this.fileDir),
      activeWindow: focused.at(-1) ?? 0,
      windows,
    };
  }

  private window(window: Dict, sessionDir: string | null, sessionBefore: Value[], sessionSuppress: Value): BuiltWindow {
    // expand() resolves a directory starting with . against the parent's own start_directory
    // (a KeyError when the parent has none); trickle() then joins other relative ones to the session's.
    const declaredDir = 'start_directory' in window ? this.dotRelative(this.expandShell(window.start_directory), sessionDir) : null;
    let windowDir = declaredDir ?? sessionDir;
    if (declaredDir !== null && sessionDir !== null && !declaredDir.startsWith('/') && !declaredDir.startsWith('~')) windowDir = join(sessionDir, declaredDir);
    const windowBefore = [...sessionBefore, ...this.commandList(window.shell_command_before)];
    const suppress = 'suppress_history' in window ? window.suppress_history : sessionSuppress;
    const paneValues = 'panes' in window ? window.panes : [{ shell_command: [] }];
    if (!Array.isArray(paneValues)) throw new TmuxpFailure('panes is not a list');
    const windowEnv = window.environment;
    const panes = paneValues.map((value) => {
      const pane = this.paneShorthand(value);
      const cwd = 'start_directory' in pane ? this.dotRelative(this.expandShell(pane.start_directory), declaredDir) : windowDir;
      const commands = [...windowBefore, ...this.commandList(pane.shell_command_before), ...this.commandList(pane.shell_command)];
      const program = 'shell' in pane ? pane.shell : window.window_shell;
      return {
        program: typeof program === 'string' && program !== '' ? program : null,
        // tmux takes an absolute directory as the same place with or without a trailing /; a relative one is left as tmuxp passes it.
        cwd: cwd === null ? null : isAbsolute(cwd) ? resolve(cwd) : cwd,
        environment: this.values('environment' in pane ? pane.environment : windowEnv, true, process.cwd()),
        keys: this.keys(commands, pane, 'suppress_history' in pane ? pane.suppress_history : suppress === undefined ? true : suppress),
        focus: truthy(pane.focus),
      };
    });
    const focusedPane = panes.map((pane, p) => (pane.focus ? p : -1)).filter((p) => p !== -1);
    return {
      name: 'window_name' in window && window.window_name !== null ? this.expandShell(window.window_name) : null,
      index: typeof window.window_index === 'number' ? window.window_index : null,
      layout: 'layout' in window ? tmuxLayout(String(window.layout)) : null,
      options: this.values(window.options, false, process.cwd()),
      optionsAfter: this.values(window.options_after, false, process.cwd()),
      // Later splits become active (attach=True); a focused pane is selected again at the end.
      activePane: focusedPane.at(-1) ?? panes.length - 1,
      panes: panes.map(({ cwd, program, environment, keys }) => ({ cwd, program, environment, keys })),
    };
  }

  /** expand_cmd: a string, a list or nothing becomes {shell_command: [...]}. */
  private paneShorthand(value: Value): Dict {
    if (typeof value === 'string') return { shell_command: [value] };
    if (Array.isArray(value)) return { shell_command: value };
    if (value === null || value === undefined) return { shell_command: [] };
    return dict(value, 'a pane');
  }

  /** A shell_command(_before) value as the list of {cmd, enter…} tmuxp iterates. */
  private commandList(value: Value): Value[] {
    if (value === undefined || value === null) return [];
    const list = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
    if (list === null) throw new TmuxpFailure(`shell_command is ${typeName(value)}`);
    if (list.length === 0 || (list.length === 1 && (list[0] === null || list[0] === 'blank' || list[0] === 'pane'))) return [];
    return list.map((item) => {
      const command = typeof item === 'string' ? { cmd: item } : dict(item, 'a command');
      if (!('cmd' in command)) throw new TmuxpFailure('a command without cmd');
      return { ...command, cmd: this.expandShell(command.cmd) };
    });
  }

  /** The builder's loop: enter (and sleeps) carry over from one command to the next. */
  private keys(commands: Value[], pane: Dict, suppress: Value): string[] {
    const keys: string[] = [];
    let enter: Value = 'enter' in pane ? pane.enter : true;
    for (const command of commands) {
      const entry = command as Dict;
      if ('enter' in entry) enter = entry.enter;
      keys.push(`${truthy(suppress) ? ' ' : ''}${String(entry.cmd)}`);
      if (truthy(enter)) keys.push('Enter');
    }
    return keys;
  }

  /** expand(): a directory starting with . resolves against the parent's start_directory, which must exist. */
  private dotRelative(raw: string, parent: string | null): string {
    if (!raw.startsWith('.')) return raw;
    if (parent === null) throw new TmuxpFailure("KeyError: 'start_directory' (a ./ directory under a level without one)");
    return resolve(parent, raw);
  }

  private relative(value: string, base: string): string {
    return isAbsolute(value) ? value : resolve(base, value);
  }

  /**
   * environment / options as expand() leaves them and libtmux sends them: strings expanded
   * (./ values against `cwd`: the file's directory at session level, tmuxp's own working
   * directory below), booleans on/off for options; environment values must be strings.
   */
  private values(value: Value, environment: boolean, cwd: string): Record<string, string> {
    if (value === undefined || value === null) return {};
    const out: Record<string, string> = {};
    for (const [key, raw] of Object.entries(dict(value, 'a mapping'))) {
      let text: string;
      if (typeof raw === 'string') {
        text = this.expandShell(raw);
        if (text.startsWith('.')) text = resolve(cwd, text);
      } else if (!environment && typeof raw === 'boolean') text = raw ? 'on' : 'off';
      else if (!environment && typeof raw === 'number') text = String(raw);
      else throw new TmuxpFailure(`${key}: expandshell on ${typeName(raw)}`);
      out[key] = text;
    }
    return out;
  }
}

/** tmux accepts a unique prefix of a preset name. */
function tmuxLayout(layout: string): string {
  const matches = PRESETS.filter((preset) => preset.startsWith(layout));
  return matches.length === 1 ? (matches[0] ?? layout) : layout;
}

/** Python truthiness, as the builder tests `focus`, `enter` and `suppress_history`. */
function truthy(value: Value): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

function dict(value: Value, what: string): Dict {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TmuxpFailure(`${what} is ${typeName(value)}`);
  return value as Dict;
}

function typeName(value: Value): string {
  if (value === null || value === undefined) return 'None';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a dict' : `a ${typeof value}`;
}
