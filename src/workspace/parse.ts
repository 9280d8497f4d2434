import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { ArgumentError, DecodeError, decodeUtf8, errnoReason } from '../process/index.js';
import {
  WORKSPACE_PROFILE,
  WORKSPACE_VERSION,
  deepFreeze,
  workspaceToJSON,
  type EnvironmentMap,
  type OptionMap,
  type WorkspaceCommand,
  type WorkspaceDocument,
  type WorkspacePane,
  type WorkspaceWindow,
} from './document.js';
import { WorkspaceError, combineProblems, unsupported } from './errors.js';
import { expandHome, expandVariables, resolveDirectory, resolveRelativeValue, type ExpansionContext } from './expand.js';
import { checkLayout } from './layout.js';
import { planWorkspace, windowIndexConflicts } from './plan.js';
import { readJson } from './read-json.js';
import { readYaml } from './read-yaml.js';
import { DEFAULT_WORKSPACE_LIMITS, describeType, indexPath, keyPath, type TreeMap, type TreeValue, type WorkspaceLimits } from './tree.js';

export type WorkspaceFormat = 'yaml' | 'json';

export interface WorkspaceParseOptions {
  format: WorkspaceFormat;
  /** Absolute directory that relative start directories and `./` values resolve against. */
  baseDir: string;
  /** Names whose `${NAME}` / `$NAME` references are expanded, or `true` for any name. Off by default. */
  expandEnv?: readonly string[] | true;
  /** The only source of expanded values; the process environment is never consulted. */
  env?: Readonly<Record<string, string>>;
  /** What `~` means in directories and values; defaults to the current user's home. */
  homeDir?: string;
  limits?: Partial<WorkspaceLimits>;
}

export interface WorkspaceLoadOptions extends Omit<WorkspaceParseOptions, 'format' | 'baseDir'> {
  /** Overrides the format the file's extension implies. */
  format?: WorkspaceFormat;
}

const FORMAT_BY_EXTENSION: ReadonlyMap<string, WorkspaceFormat> = new Map([
  ['.yaml', 'yaml'],
  ['.yml', 'yaml'],
  ['.json', 'json'],
]);
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OPTION_NAME = /^(?:[a-z][a-z0-9-]*(?:\[[0-9]{1,5}\])?|@[A-Za-z0-9_.:-]+)$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const MAX_INDEX = 2 ** 31 - 1;
const MAX_SLEEP_SECONDS = 3600;
/** The boolean words of YAML 1.1 in the three spellings it accepts (true, True, TRUE). */
const YAML_1_1_BOOLEANS: ReadonlyMap<string, boolean> = new Map(
  (
    [
      ['true', true],
      ['yes', true],
      ['on', true],
      ['false', false],
      ['no', false],
      ['off', false],
    ] as const
  ).flatMap(([word, meaning]) =>
    [word, word.charAt(0).toUpperCase() + word.slice(1), word.toUpperCase()].map((spelling) => [spelling, meaning] as const),
  ),
);

/** Keys of the accepted subset, per level. */
const SESSION_KEYS = new Set([
  'session_name',
  'start_directory',
  'environment',
  'global_options',
  'options',
  'suppress_history',
  'shell_command_before',
  'windows',
  'profile',
  'version',
]);
const WINDOW_KEYS = new Set([
  'window_name',
  'window_index',
  'layout',
  'start_directory',
  'options',
  'options_after',
  'environment',
  'focus',
  'shell_command_before',
  'suppress_history',
  'panes',
]);
const PANE_KEYS = new Set([
  'shell_command',
  'shell_command_before',
  'start_directory',
  'focus',
  'environment',
  'enter',
  'sleep_before',
  'sleep_after',
  'suppress_history',
]);
const COMMAND_KEYS = new Set(['cmd', 'enter', 'sleep_before', 'sleep_after']);

type Level = 'session' | 'window' | 'pane' | 'command';

/** Keys of features drover refuses rather than ignores: [feature name, why]. */
const REFUSED_KEYS: ReadonlyMap<string, readonly [string, string]> = new Map([
  ['plugins', ['plugins', 'plugins load and run Python code']],
  ['before_script', ['before_script', 'before_script runs a program while loading']],
  ['shell_command_after', ['shell_command_after', 'shell_command_after is not supported']],
  ['window_shell', ['window_shell', 'window_shell (a program instead of the shell) is not supported']],
  ['if', ['conditions', 'conditional sections are not supported']],
]);
const TMUXINATOR_KEYS: Readonly<Record<Level, ReadonlySet<string>>> = {
  session: new Set([
    'name',
    'root',
    'project_name',
    'project_root',
    'pre',
    'pre_window',
    'pre_tab',
    'post',
    'tmux_options',
    'tmux_command',
    'socket_name',
    'socket_path',
    'startup_window',
    'startup_pane',
    'attach',
    'tabs',
    'on_project_start',
    'on_project_first_start',
    'on_project_restart',
    'on_project_exit',
    'on_project_stop',
    'enable_pane_titles',
    'pane_title_position',
    'pane_title_format',
  ]),
  window: new Set(['pre', 'root', 'synchronize', 'name']),
  pane: new Set(),
  command: new Set(),
};

/**
 * Parses workspace text into its canonical document. Inert: reads nothing, runs nothing,
 * talks to no tmux. A rejection is one WorkspaceError for the first problem, naming its
 * structural path, with every problem of the text in its `problems`.
 */
export function parseWorkspace(text: string, options: WorkspaceParseOptions): WorkspaceDocument {
  const settings = settle(options);
  const { limits } = settings;
  if (text.length > limits.maxBytes || Buffer.byteLength(text) > limits.maxBytes) {
    throw new WorkspaceError(`the workspace is larger than ${limits.maxBytes} bytes`, { path: '$', code: 'bounds' });
  }
  const tree = settings.format === 'yaml' ? readYaml(text, limits) : readJson(text, limits);
  const problems = refuseUnsupported(tree);
  const builder = new DocumentBuilder(settings, problems);
  let doc: WorkspaceDocument | undefined;
  try {
    doc = builder.session(tree);
  } catch (error) {
    // A bound ends the reading; the problems found until then are reported with it.
    if (!(error instanceof WorkspaceError)) throw error;
    problems.push(error);
  }
  if (problems.length > 0 || doc === undefined) throw combineProblems(problems);
  // A window_index that the file's own base-index gives an earlier window fails on every
  // server, after the session exists: the file is refused instead.
  const clashes = windowIndexConflicts(planWorkspace(doc).steps);
  if (clashes.length > 0) throw combineProblems(clashes.map((clash) => new WorkspaceError(clash.message, { path: clash.path, code: 'value' })));
  const canonicalBytes = Buffer.byteLength(JSON.stringify(workspaceToJSON(doc)));
  if (canonicalBytes > limits.maxBytes) {
    throw new WorkspaceError(`the normalized workspace is larger than ${limits.maxBytes} bytes`, { path: '$', code: 'bounds' });
  }
  return deepFreeze(doc);
}

/**
 * Reads a regular file of at most the byte limit (UTF-8), infers the format from its
 * extension (.yaml, .yml, .json) unless given, and parses it with the file's directory as
 * the base for relative paths.
 */
export async function loadWorkspaceFile(path: string, options: WorkspaceLoadOptions = {}): Promise<WorkspaceDocument> {
  const absolute = resolve(path);
  const format = options.format ?? FORMAT_BY_EXTENSION.get(extname(absolute).toLowerCase());
  if (format === undefined) {
    throw new WorkspaceError('cannot tell the format from the file extension (.yaml, .yml or .json); name it explicitly', {
      path: '$',
      code: 'io',
    });
  }
  const maxBytes = options.limits?.maxBytes ?? DEFAULT_WORKSPACE_LIMITS.maxBytes;
  const text = await readBoundedFile(absolute, maxBytes);
  return parseWorkspace(text, { ...options, format, baseDir: dirname(absolute) });
}

/** A regular UTF-8 file of at most maxBytes, as text; every failure is a WorkspaceError at `$`. */
export async function readBoundedFile(path: string, maxBytes: number): Promise<string> {
  let handle;
  try {
    // Non-blocking so that a FIFO is reported as not a regular file instead of waiting for a writer.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw new WorkspaceError(`cannot open the workspace file (${errnoReason(cause)})`, { path: '$', code: 'io', cause });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new WorkspaceError('the workspace file is not a regular file', { path: '$', code: 'io' });
    if (stat.size > maxBytes) {
      throw new WorkspaceError(`the workspace is larger than ${maxBytes} bytes`, { path: '$', code: 'bounds' });
    }
    // Room for one byte more than stat reported: the file may have grown since.
    const buffer = Buffer.alloc(stat.size + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > stat.size) throw new WorkspaceError('the workspace file grew while it was read', { path: '$', code: 'io' });
    }
    return decodeUtf8(buffer.subarray(0, length), 'workspace file');
  } catch (error) {
    if (error instanceof DecodeError) {
      throw new WorkspaceError('the workspace file is not valid UTF-8', { path: '$', code: 'syntax', cause: error });
    }
    if (error instanceof WorkspaceError) throw error;
    throw new WorkspaceError(`cannot read the workspace file (${errnoReason(error)})`, { path: '$', code: 'io', cause: error });
  } finally {
    await handle.close();
  }
}

interface Settings extends ExpansionContext {
  readonly format: WorkspaceFormat;
  readonly limits: WorkspaceLimits;
}

function settle(options: WorkspaceParseOptions): Settings {
  if (options.format !== 'yaml' && options.format !== 'json') throw new ArgumentError('format must be "yaml" or "json"');
  if (typeof options.baseDir !== 'string' || !isAbsolute(options.baseDir)) {
    throw new ArgumentError('baseDir must be an absolute directory');
  }
  const homeDir = options.homeDir ?? homedir();
  if (!isAbsolute(homeDir)) throw new ArgumentError('homeDir must be an absolute directory');
  const names = options.expandEnv;
  if (Array.isArray(names)) {
    for (const name of names) {
      if (typeof name !== 'string' || !NAME.test(name)) throw new ArgumentError('expandEnv lists variable names such as HOME');
    }
  } else if (names !== undefined && names !== true) {
    throw new ArgumentError('expandEnv is a list of variable names or true');
  }
  const env = options.env ?? {};
  for (const value of Object.values(env)) {
    if (typeof value !== 'string') throw new ArgumentError('env maps variable names to string values');
  }
  const limits = { ...DEFAULT_WORKSPACE_LIMITS, ...options.limits };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value <= 0) throw new ArgumentError(`limits.${name} must be a positive integer`);
  }
  return {
    format: options.format,
    baseDir: resolve(options.baseDir),
    homeDir: resolve(homeDir),
    enabled: names === true ? true : names === undefined || names.length === 0 ? null : new Set(names),
    env,
    limits,
  };
}

/**
 * First pass: features drover refuses, found anywhere, come first among the problems, so a
 * tmuxp file that uses one is always rejected for that reason before any type or value problem.
 */
function refuseUnsupported(tree: TreeValue): WorkspaceError[] {
  const problems: WorkspaceError[] = [];
  if (!(tree instanceof Map)) return problems;
  const refuseKeys = (map: TreeMap, path: string, level: Level): void => {
    let ordinal = 0;
    for (const key of map.keys()) {
      ordinal += 1;
      const refused = refusal(key, level, keyPath(path, key, ordinal));
      if (refused !== undefined) problems.push(refused);
    }
  };
  const refuseInCommands = (commands: TreeValue | undefined, path: string): void => {
    if (!Array.isArray(commands)) return;
    commands.forEach((command, c) => {
      if (command instanceof Map) refuseKeys(command, indexPath(path, c), 'command');
    });
  };
  refuseKeys(tree, '$', 'session');
  refuseInCommands(tree.get('shell_command_before'), keyPath('$', 'shell_command_before', 0));
  const windows = tree.get('windows');
  if (!Array.isArray(windows)) return problems;
  windows.forEach((window, w) => {
    if (!(window instanceof Map)) return;
    const windowPath = indexPath('windows', w);
    refuseKeys(window, windowPath, 'window');
    refuseInCommands(window.get('shell_command_before'), `${windowPath}.shell_command_before`);
    const panes = window.get('panes');
    if (!Array.isArray(panes)) return;
    panes.forEach((pane, p) => {
      if (!(pane instanceof Map)) return;
      const panePath = indexPath(`${windowPath}.panes`, p);
      refuseKeys(pane, panePath, 'pane');
      refuseInCommands(pane.get('shell_command'), `${panePath}.shell_command`);
      refuseInCommands(pane.get('shell_command_before'), `${panePath}.shell_command_before`);
    });
  });
  return problems;
}

/** Why a key is refused by name at this level, or undefined when it is not one drover refuses. */
function refusal(key: string, level: Level, at: string): WorkspaceError | undefined {
  const refused = REFUSED_KEYS.get(key);
  if (refused !== undefined) return unsupported(at, refused[0], refused[1]);
  if (key.startsWith('workspace_builder')) return unsupported(at, 'workspace_builder', 'workspace builder settings are not supported');
  if (level === 'pane' && key === 'shell') return unsupported(at, 'pane_shell', 'a pane shell (a program instead of the shell) is not supported');
  if (TMUXINATOR_KEYS[level].has(key)) {
    return unsupported(at, 'tmuxinator', 'this is a tmuxinator key; convert the project with `drover workspace import tmuxinator FILE`');
  }
  return undefined;
}

/** Inherited settings on the way down from session to pane. */
interface Inherited {
  readonly startDirectory: string | null;
  readonly environment: EnvironmentMap;
  readonly suppressHistory: boolean | undefined;
  readonly before: readonly AuthoredCommand[];
}

/** A command as written: per-command settings stay undefined until the pane resolves them. */
interface AuthoredCommand {
  readonly text: string;
  readonly enter: boolean | undefined;
  readonly sleepBefore: number | undefined;
  readonly sleepAfter: number | undefined;
}

/**
 * Second pass: types, values, inheritance and normalization into the canonical document.
 * A problem is recorded where it is found and reading goes on with the rest, so one run
 * reports every problem of the file; the document is only returned when there are none.
 */
class DocumentBuilder {
  private paneCount = 0;

  constructor(
    private readonly settings: Settings,
    private readonly problems: WorkspaceError[],
  ) {}

  session(tree: TreeValue): WorkspaceDocument {
    const root = this.map(tree, '$', 'a workspace');
    this.checkKeys(root, '$', SESSION_KEYS, 'session');
    this.attempt(() => this.profile(root));
    const sessionName = this.attempt(() => this.name(this.required(root, '$', 'session_name'), 'session_name')) ?? '';
    const startDirectory = this.optional(root, '$', 'start_directory', (value, path) =>
      resolveDirectory(this.string(value, path), path, this.settings.baseDir, this.settings),
    );
    const inherited: Inherited = {
      startDirectory: startDirectory ?? null,
      environment: {},
      suppressHistory: this.optional(root, '$', 'suppress_history', (value, path) => this.boolean(value, path)),
      before: this.optional(root, '$', 'shell_command_before', (value, path) => this.commands(value, path)) ?? [],
    };
    const environment = this.optional(root, '$', 'environment', (value, path) => this.environment(value, path)) ?? {};
    const options = this.optional(root, '$', 'options', (value, path) => this.options(value, path)) ?? {};
    const globalOptions = this.optional(root, '$', 'global_options', (value, path) => this.options(value, path)) ?? {};
    const windowList = this.attempt(() => this.list(this.required(root, '$', 'windows'), 'windows')) ?? [];
    if (root.get('windows') instanceof Array && windowList.length === 0) {
      this.record(new WorkspaceError('a workspace needs at least one window', { path: 'windows', code: 'value' }));
    }
    if (windowList.length > this.settings.limits.maxWindows) {
      throw new WorkspaceError(`a workspace has at most ${this.settings.limits.maxWindows} windows`, {
        path: 'windows',
        code: 'bounds',
      });
    }
    // Positions stay those of the file when a window is left out for its problems.
    const windows = windowList.map((value, w) => this.attempt(() => this.window(value, indexPath('windows', w), inherited)));
    const indexes = new Set<number>();
    windows.forEach((window, w) => {
      if (window === undefined || window.index === null) return;
      if (indexes.has(window.index)) {
        this.record(new WorkspaceError('another window already uses this index', { path: `${indexPath('windows', w)}.window_index`, code: 'value' }));
      }
      indexes.add(window.index);
    });
    this.refuseSecondFocus(windows, (w) => `${indexPath('windows', w)}.focus`, 'only one window can have focus');
    return {
      profile: WORKSPACE_PROFILE,
      version: WORKSPACE_VERSION,
      sessionName,
      startDirectory: startDirectory ?? null,
      environment,
      options,
      globalOptions,
      windows: windows.filter((window) => window !== undefined),
    };
  }

  /** Runs one read; a problem it finds is recorded (a bound ends the reading) and the read yields undefined. */
  private attempt<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof WorkspaceError) || error.code === 'bounds') throw error;
      this.record(error);
      return undefined;
    }
  }

  private record(problem: WorkspaceError): void {
    this.problems.push(problem);
  }

  private refuseSecondFocus(items: readonly ({ focus: boolean } | undefined)[], pathOf: (index: number) => string, message: string): void {
    const second = items.flatMap((item, index) => (item?.focus === true ? [index] : []))[1];
    if (second !== undefined) this.record(new WorkspaceError(message, { path: pathOf(second), code: 'value' }));
  }

  private profile(root: TreeMap): void {
    const hasProfile = root.has('profile');
    const hasVersion = root.has('version');
    if (hasProfile !== hasVersion) {
      throw new WorkspaceError('profile and version must appear together', {
        path: hasProfile ? 'version' : 'profile',
        code: 'missing',
      });
    }
    if (!hasProfile) return;
    if (this.string(root.get('profile') ?? null, 'profile') !== WORKSPACE_PROFILE) {
      throw new WorkspaceError(`the only profile is ${WORKSPACE_PROFILE}`, { path: 'profile', code: 'value' });
    }
    if (this.integer(root.get('version') ?? null, 'version', 0, MAX_INDEX) !== WORKSPACE_VERSION) {
      throw unsupported('version', 'workspace_version', `only version ${WORKSPACE_VERSION} is supported`);
    }
  }

  private window(value: TreeValue, path: string, session: Inherited): WorkspaceWindow {
    const map = this.map(value, path, 'a window');
    this.checkKeys(map, path, WINDOW_KEYS, 'window');
    const startDirectory =
      this.optional(map, path, 'start_directory', (raw, at) =>
        resolveDirectory(this.string(raw, at), at, session.startDirectory ?? this.settings.baseDir, this.settings),
      ) ?? session.startDirectory;
    const environment = this.optional(map, path, 'environment', (raw, at) => this.environment(raw, at)) ?? {};
    const inherited: Inherited = {
      startDirectory,
      environment,
      suppressHistory:
        this.optional(map, path, 'suppress_history', (raw, at) => this.boolean(raw, at)) ?? session.suppressHistory,
      before: [
        ...session.before,
        ...(this.optional(map, path, 'shell_command_before', (raw, at) => this.commands(raw, at)) ?? []),
      ],
    };
    const paneValues = this.optional(map, path, 'panes', (raw, at) => this.list(raw, at)) ?? [];
    const panesPath = `${path}.panes`;
    // tmuxp: a window without panes (or with an empty list) has one blank pane.
    const panes =
      paneValues.length === 0
        ? [this.pane(null, indexPath(panesPath, 0), inherited)]
        : paneValues.map((pane, p) => this.attempt(() => this.pane(pane, indexPath(panesPath, p), inherited)));
    this.refuseSecondFocus(panes, (p) => `${indexPath(panesPath, p)}.focus`, 'only one pane of a window can have focus');
    return {
      // tmuxp: an empty window_name is a window named "" (automatic-rename off); null is no name at all.
      name: this.optional(map, path, 'window_name', (raw, at) => (raw === null ? null : this.name(raw, at, { allowEmpty: true }))) ?? null,
      index: this.optional(map, path, 'window_index', (raw, at) => this.integer(raw, at, 0, MAX_INDEX)) ?? null,
      layout: this.optional(map, path, 'layout', (raw, at) => this.layout(raw, at, panes.length)) ?? null,
      startDirectory,
      environment,
      options: this.optional(map, path, 'options', (raw, at) => this.options(raw, at)) ?? {},
      optionsAfter: this.optional(map, path, 'options_after', (raw, at) => this.options(raw, at)) ?? {},
      focus: this.optional(map, path, 'focus', (raw, at) => this.boolean(raw, at)) ?? false,
      panes: panes.filter((pane) => pane !== undefined),
    };
  }

  private pane(value: TreeValue, path: string, window: Inherited): WorkspacePane {
    this.paneCount += 1;
    if (this.paneCount > this.settings.limits.maxPanes) {
      throw new WorkspaceError(`a workspace has at most ${this.settings.limits.maxPanes} panes`, { path, code: 'bounds' });
    }
    // tmuxp shorthands: a string is one command, a list is the command list, null is blank.
    const map: TreeMap =
      value instanceof Map ? value : value === null ? new Map() : new Map([['shell_command', value]]);
    const commandsPath = value instanceof Map ? `${path}.shell_command` : path;
    if (value instanceof Map) this.checkKeys(map, path, PANE_KEYS, 'pane');
    else if (value !== null && typeof value !== 'string' && !Array.isArray(value)) {
      throw this.typeError(value, path, 'a pane (a command, a list of commands, a mapping or nothing)');
    }
    const own = (map.has('shell_command') ? this.attempt(() => this.commands(map.get('shell_command') ?? null, commandsPath)) : []) ?? [];
    const before = this.optional(map, path, 'shell_command_before', (raw, at) => this.commands(raw, at)) ?? [];
    const enter = this.optional(map, path, 'enter', (raw, at) => this.boolean(raw, at));
    const sleepBefore = this.optional(map, path, 'sleep_before', (raw, at) => this.seconds(raw, at));
    const sleepAfter = this.optional(map, path, 'sleep_after', (raw, at) => this.seconds(raw, at));
    const commands = [...window.before, ...before, ...own].map(
      (command): WorkspaceCommand => ({
        text: command.text,
        enter: command.enter ?? enter ?? true,
        sleepBeforeMs: toMs(command.sleepBefore ?? sleepBefore),
        sleepAfterMs: toMs(command.sleepAfter ?? sleepAfter),
      }),
    );
    const ownEnvironment = this.optional(map, path, 'environment', (raw, at) => this.environment(raw, at)) ?? {};
    return {
      startDirectory:
        this.optional(map, path, 'start_directory', (raw, at) =>
          resolveDirectory(this.string(raw, at), at, window.startDirectory ?? this.settings.baseDir, this.settings),
        ) ?? window.startDirectory,
      environment: { ...window.environment, ...ownEnvironment },
      focus: this.optional(map, path, 'focus', (raw, at) => this.boolean(raw, at)) ?? false,
      suppressHistory:
        this.optional(map, path, 'suppress_history', (raw, at) => this.boolean(raw, at)) ?? window.suppressHistory ?? true,
      commands,
    };
  }

  /** shell_command / shell_command_before: a string, a list of strings and `{cmd, …}` mappings, or nothing. */
  private commands(value: TreeValue, path: string): AuthoredCommand[] {
    if (value === null) return [];
    const items = typeof value === 'string' ? [value] : Array.isArray(value) ? value : null;
    if (items === null) throw this.typeError(value, path, 'a command or a list of commands');
    // tmuxp: a lone "blank", "pane" or empty entry means a pane without commands.
    const [only] = items;
    if (items.length === 1 && (only === null || only === 'blank' || only === 'pane')) return [];
    return items.flatMap((item, c) => this.attempt(() => this.command(item, typeof value === 'string' ? path : indexPath(path, c))) ?? []);
  }

  private command(value: TreeValue, path: string): AuthoredCommand {
    if (typeof value === 'string') {
      return { text: typedText(value), enter: undefined, sleepBefore: undefined, sleepAfter: undefined };
    }
    const map = this.map(value, path, 'a command (text or a mapping with cmd)');
    this.checkKeys(map, path, COMMAND_KEYS, 'command');
    return {
      text: typedText(this.string(this.required(map, path, 'cmd'), `${path}.cmd`)),
      enter: this.optional(map, path, 'enter', (raw, at) => this.boolean(raw, at)),
      sleepBefore: this.optional(map, path, 'sleep_before', (raw, at) => this.seconds(raw, at)),
      sleepAfter: this.optional(map, path, 'sleep_after', (raw, at) => this.seconds(raw, at)),
    };
  }

  private environment(value: TreeValue, path: string): EnvironmentMap {
    const map = this.map(value, path, 'a mapping of variable names to values');
    const environment: Record<string, string> = {};
    let ordinal = 0;
    for (const [name, raw] of map) {
      ordinal += 1;
      const at = keyPath(path, name, ordinal);
      const text = this.attempt(() => {
        if (!NAME.test(name)) {
          throw new WorkspaceError('environment variable names are letters, digits and _, not starting with a digit', { path: at, code: 'value' });
        }
        const value = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : this.expanded(this.string(raw, at, 'a string or a number'), at);
        if (value.includes('\0')) throw new WorkspaceError('environment values must not contain NUL', { path: at, code: 'value' });
        return value;
      });
      if (text !== undefined) Object.defineProperty(environment, name, { value: text, enumerable: true, writable: true, configurable: true });
    }
    return environment;
  }

  private options(value: TreeValue, path: string): OptionMap {
    const map = this.map(value, path, 'a mapping of tmux option names to values');
    const options: Record<string, string> = {};
    let ordinal = 0;
    for (const [name, raw] of map) {
      ordinal += 1;
      const at = keyPath(path, name, ordinal);
      const text = this.attempt(() => {
        if (!OPTION_NAME.test(name)) {
          throw new WorkspaceError('not a tmux option name (lowercase words joined by -, or @user-option)', { path: at, code: 'value' });
        }
        let value: string;
        if (typeof raw === 'boolean') value = raw ? 'on' : 'off';
        else if (typeof raw === 'number') value = String(this.integer(raw, at, -MAX_INDEX - 1, MAX_INDEX));
        else value = this.expanded(this.string(raw, at, 'a string, a number or a boolean'), at);
        if (value.includes('\0')) throw new WorkspaceError('option values must not contain NUL', { path: at, code: 'value' });
        return value;
      });
      if (text !== undefined) Object.defineProperty(options, name, { value: text, enumerable: true, writable: true, configurable: true });
    }
    return options;
  }

  /** Environment and option values: `~`, enabled variables and `./` paths, as tmuxp expands them. */
  private expanded(text: string, path: string): string {
    return resolveRelativeValue(expandVariables(expandHome(text, this.settings), path, this.settings), this.settings);
  }

  private layout(value: TreeValue, path: string, paneCount: number): string {
    const check = checkLayout(this.string(value, path), paneCount);
    if (!check.ok) throw new WorkspaceError(check.reason, { path, code: 'value' });
    return check.layout;
  }

  private name(value: TreeValue, path: string, { allowEmpty = false } = {}): string {
    const name = expandVariables(this.string(value, path), path, this.settings);
    if (name === '' && !allowEmpty) throw new WorkspaceError('a name must not be empty', { path, code: 'value' });
    if (CONTROL.test(name)) throw new WorkspaceError('a name must not contain control characters', { path, code: 'value' });
    return name;
  }

  private seconds(value: TreeValue, path: string): number {
    if (typeof value !== 'number') throw this.typeError(value, path, 'a number of seconds');
    if (value < 0 || value > MAX_SLEEP_SECONDS) {
      throw new WorkspaceError(`a sleep is between 0 and ${MAX_SLEEP_SECONDS} seconds`, { path, code: 'value' });
    }
    return value;
  }

  private integer(value: TreeValue, path: string, min: number, max: number): number {
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.typeError(value, path, 'an integer');
    if (value < min || value > max) throw new WorkspaceError(`an integer between ${min} and ${max} is expected`, { path, code: 'value' });
    return value;
  }

  private boolean(value: TreeValue, path: string): boolean {
    if (typeof value === 'boolean') return value;
    // tmuxp reads YAML 1.1, where yes/no/on/off are booleans, and `tmuxp freeze` writes focus: 'true'.
    const word = typeof value === 'string' ? YAML_1_1_BOOLEANS.get(value) : undefined;
    if (word === undefined) throw this.typeError(value, path, 'true or false (or yes/no, on/off)');
    return word;
  }

  private string(value: TreeValue, path: string, expected = 'a string'): string {
    if (typeof value === 'string') return value;
    // Unquoted `{HOME}` in YAML is a one-key mapping: tmuxp's test files template paths that way.
    if (value instanceof Map && value.size === 1) {
      const [key, inner] = [...value][0] ?? [];
      if (inner === null && key !== undefined && NAME.test(key)) {
        throw unsupported(path, 'template_placeholder', 'template placeholders such as {NAME} are not supported');
      }
    }
    throw this.typeError(value, path, expected);
  }

  private list(value: TreeValue, path: string): TreeValue[] {
    if (!Array.isArray(value)) throw this.typeError(value, path, 'a list');
    return value;
  }

  private map(value: TreeValue, path: string, what: string): TreeMap {
    if (!(value instanceof Map)) throw this.typeError(value, path, what);
    return value;
  }

  private typeError(value: TreeValue, path: string, expected: string): WorkspaceError {
    return new WorkspaceError(`expected ${expected}, found ${describeType(value)}`, { path, code: 'type' });
  }

  /** Records every unknown key; keys refused by name were reported by the first pass. */
  private checkKeys(map: TreeMap, path: string, allowed: ReadonlySet<string>, level: Level): void {
    let ordinal = 0;
    for (const key of map.keys()) {
      ordinal += 1;
      const at = keyPath(path, key, ordinal);
      if (!allowed.has(key) && refusal(key, level, at) === undefined) this.record(new WorkspaceError('unknown key', { path: at, code: 'unknown_key' }));
    }
  }

  private required(map: TreeMap, path: string, key: string): TreeValue {
    const value = map.get(key);
    if (value === undefined) {
      throw new WorkspaceError(`${key} is required`, { path: keyPath(path, key, 0), code: 'missing' });
    }
    return value;
  }

  /** Reads the key when present; a problem in its value is recorded and the key counts as absent. */
  private optional<T>(map: TreeMap, path: string, key: string, read: (value: TreeValue, at: string) => T): T | undefined {
    const value = map.get(key);
    return value === undefined ? undefined : this.attempt(() => read(value, keyPath(path, key, 0)));
  }
}

/**
 * The text a command types. tmuxp hands each command to tmux as an argument, and tmux reads an
 * argument ending in `\;` as ending in `;` (a bare trailing `;` would end the tmux command), so
 * files written for tmuxp spell a command's trailing semicolon `\;`: it is typed as `;`.
 */
function typedText(text: string): string {
  return text.endsWith('\\;') ? `${text.slice(0, -2)};` : text;
}

function toMs(seconds: number | undefined): number {
  return seconds === undefined ? 0 : Math.round(seconds * 1000);
}
