import { inspect } from 'node:util';
import { ArgumentError } from '../process/index.js';
import { deepFreeze, type EnvironmentMap, type OptionMap, type WorkspaceDocument, type WorkspaceWindow } from './document.js';
import type { DeclaredDirectory } from './directories.js';
import type { WorkspacePlanJson } from './json-schemas.js';
import { indexPath, keyPath } from './tree.js';

/** Names for objects the plan creates; an interpreter binds each to the tmux id it receives. */
export type SymbolicId = 'session' | `window:${number}` | `pane:${number}.${number}`;

/** What a step does to tmux, for reporting and for deciding what a failure may have left. */
export type StepEffect = 'create' | 'configure' | 'layout' | 'environment' | 'dispatch' | 'focus';

export interface NewSessionArgs {
  /** The name tmux will give the session (tmux turns `.` and `:` into `_`). */
  readonly name: string;
  readonly windowName: string | null;
  readonly cwd: string | null;
  /** Passed as `-e`: session environment plus the first pane's own; restored by set-environment steps. */
  readonly env: EnvironmentMap;
  readonly width: number | null;
  readonly height: number | null;
}

export interface SetEnvironmentArgs {
  readonly session: SymbolicId;
  readonly name: string;
  /** null: remove the session's own entry for the variable (the global environment applies again). */
  readonly value: string | null;
}

export interface SetOptionArgs {
  /**
   * `session`: an entry of the session's options; `global`: a global_options entry. Applying
   * either leaves everything outside the workspace's session alone: a session option is set on
   * the session, a window option on each window the load creates (the session's value winning
   * over a global one), and a server-wide option is refused before anything is created.
   */
  readonly scope: 'global' | 'session' | 'window';
  /** null for global options. */
  readonly target: SymbolicId | null;
  readonly name: string;
  readonly value: string;
}

/** Moves the reused first window to its declared index; nothing to do when it is already there. */
export interface MoveWindowArgs {
  readonly window: SymbolicId;
  readonly index: number;
}

/**
 * A new pane takes the first pane's place, split from it before the old one is closed: tmux
 * runs a respawned pane under the shell it first had, so only a new pane starts under a
 * declared default-shell (and default-command), as every later pane does. The new pane is
 * `pane` from then on.
 */
export interface ReplacePaneArgs {
  readonly pane: SymbolicId;
  readonly cwd: string | null;
  readonly env: EnvironmentMap;
}

export interface NewWindowArgs {
  readonly session: SymbolicId;
  readonly name: string | null;
  /** null: the next free index from the session's base-index. */
  readonly index: number | null;
  readonly cwd: string | null;
  readonly env: EnvironmentMap;
}

export interface SplitWindowArgs {
  /** The pane to split: the previous pane of the same window, as tmuxp does. */
  readonly target: SymbolicId;
  readonly direction: 'below';
  readonly cwd: string | null;
  readonly env: EnvironmentMap;
}

export interface SelectLayoutArgs {
  readonly window: SymbolicId;
  readonly layout: string;
}

export interface SendKeysArgs {
  readonly pane: SymbolicId;
  /** Literal text, including the leading space that keeps it out of shell history when asked. */
  readonly text: string;
  readonly enter: boolean;
}

export interface SleepArgs {
  readonly pane: SymbolicId;
  readonly ms: number;
}

export interface SelectPaneArgs {
  readonly pane: SymbolicId;
}

export interface SelectWindowArgs {
  readonly window: SymbolicId;
}

export type StepOperation =
  | { readonly op: 'new-session'; readonly args: NewSessionArgs }
  | { readonly op: 'set-environment'; readonly args: SetEnvironmentArgs }
  | { readonly op: 'set-option'; readonly args: SetOptionArgs }
  | { readonly op: 'move-window'; readonly args: MoveWindowArgs }
  | { readonly op: 'replace-pane'; readonly args: ReplacePaneArgs }
  | { readonly op: 'new-window'; readonly args: NewWindowArgs }
  | { readonly op: 'split-window'; readonly args: SplitWindowArgs }
  | { readonly op: 'select-layout'; readonly args: SelectLayoutArgs }
  | { readonly op: 'send-keys'; readonly args: SendKeysArgs }
  | { readonly op: 'sleep'; readonly args: SleepArgs }
  | { readonly op: 'select-pane'; readonly args: SelectPaneArgs }
  | { readonly op: 'select-window'; readonly args: SelectWindowArgs };

export type StepOp = StepOperation['op'];

export type PlanStep = StepOperation & {
  /** 1-based position in the plan. */
  readonly index: number;
  readonly effect: StepEffect;
  /** Objects this step creates, in the order tmux reports their ids. */
  readonly produces: readonly SymbolicId[];
  /** Objects that must exist (be bound) before this step runs. */
  readonly consumes: readonly SymbolicId[];
  /** The part of the workspace the step comes from, e.g. `windows[1].panes[2]`. */
  readonly source: string;
};

/** Where tmux keeps an option, which decides what setting it changes. */
export type OptionTable = 'server' | 'session' | 'window';

/** Facts about the target server a plan is checked against; a snapshot of it, not a promise. */
export interface PlanSnapshot {
  readonly sessionNames: readonly string[];
  /** The server's global base-index, when known. */
  readonly baseIndex?: number;
  /**
   * The table of each option name the plan sets, as the server answered (the option set
   * varies between tmux versions); null: tmux has no option by that name. A name left out is
   * not checked.
   */
  readonly optionTables?: ReadonlyMap<string, OptionTable | null>;
  /** The option names (as the plan sets them) that begin several of tmux's options' names, and those names. */
  readonly ambiguousOptions?: ReadonlyMap<string, readonly string[]>;
}

/** The size a session is built at, and why that one (shown in the plan). */
export interface PlanSize {
  readonly width: number;
  readonly height: number;
  readonly reason: string;
}

/**
 * The size a session is built at when drover has no terminal to take it from: tmux's own
 * 80x24 leaves main-vertical's side panes one cell wide beside its 80-column main pane until a
 * client attaches. 200x50 is a full-screen terminal on a common monitor: room for the
 * 80-column main pane and side panes of over 100 columns, or main-horizontal's 24-row main
 * pane and 25 rows below it. tmux rescales the layout when a client of another size attaches.
 */
export const DETACHED_BUILD_SIZE: PlanSize = Object.freeze({ width: 200, height: 50, reason: "drover's size for a build without a terminal on standard output" });

export interface WorkspacePlanOptions {
  snapshot?: PlanSnapshot;
  /** Size of the new session (new-session -x/-y, kept as its default-size); tmux's default-size when absent. */
  size?: PlanSize;
  /** Missing start directories the load creates first (see checkDirectories). */
  createDirectories?: readonly DeclaredDirectory[];
}

/** Something that must hold when the plan is applied; an interpreter rechecks it. */
export interface PlanPrecondition {
  readonly kind: 'session_absent';
  readonly sessionName: string;
}

/** A precondition the snapshot already contradicts: applying would fail before any effect. */
export interface PlanConflict {
  readonly kind: 'session_exists' | 'window_index_taken' | 'server_option' | 'unknown_option';
  readonly path: string;
  readonly message: string;
}

/** Every step operation and effect, as the JSON schema lists them (toJSON will not compile if one is missing). */
export const STEP_OPS = [
  'new-session',
  'set-environment',
  'set-option',
  'move-window',
  'replace-pane',
  'new-window',
  'split-window',
  'select-layout',
  'send-keys',
  'sleep',
  'select-pane',
  'select-window',
] as const satisfies readonly StepOp[];
export const STEP_EFFECTS = ['create', 'configure', 'layout', 'environment', 'dispatch', 'focus'] as const satisfies readonly StepEffect[];

/**
 * An immutable, ordered list of tmux operations that builds a workspace. Creating it does
 * no tmux I/O and applying it is a separate, explicit act.
 */
export class WorkspacePlan {
  readonly sessionName: string;
  readonly windowCount: number;
  readonly paneCount: number;
  readonly steps: readonly PlanStep[];
  readonly preconditions: readonly PlanPrecondition[];
  readonly conflicts: readonly PlanConflict[];
  /** null: tmux's own default-size. */
  readonly size: PlanSize | null;
  /** Created (with missing parents) before the first tmux step. */
  readonly directoriesToCreate: readonly DeclaredDirectory[];

  constructor(fields: {
    sessionName: string;
    windowCount: number;
    paneCount: number;
    steps: readonly PlanStep[];
    preconditions: readonly PlanPrecondition[];
    conflicts: readonly PlanConflict[];
    size?: PlanSize | null;
    directoriesToCreate?: readonly DeclaredDirectory[];
  }) {
    this.sessionName = fields.sessionName;
    this.windowCount = fields.windowCount;
    this.paneCount = fields.paneCount;
    this.steps = deepFreeze([...fields.steps]);
    this.preconditions = deepFreeze([...fields.preconditions]);
    this.conflicts = deepFreeze([...fields.conflicts]);
    this.size = fields.size === undefined || fields.size === null ? null : deepFreeze({ ...fields.size });
    this.directoriesToCreate = deepFreeze((fields.directoriesToCreate ?? []).map((directory) => ({ ...directory })));
    Object.freeze(this);
  }

  /** JSON export (snake_case). It contains commands, paths and environment values by design. */
  toJSON(): WorkspacePlanJson {
    return {
      session_name: this.sessionName,
      window_count: this.windowCount,
      pane_count: this.paneCount,
      preconditions: this.preconditions.map((p) => ({ kind: p.kind, session_name: p.sessionName })),
      conflicts: this.conflicts.map((c) => ({ kind: c.kind, path: c.path, message: c.message })),
      size: this.size === null ? null : { width: this.size.width, height: this.size.height, reason: this.size.reason },
      creates_directories: this.directoriesToCreate.map((directory) => ({ path: directory.path, source: directory.source })),
      steps: this.steps.map((step) => ({
        index: step.index,
        op: step.op,
        args: snakeKeys(step.args),
        effect: step.effect,
        produces: [...step.produces],
        consumes: [...step.consumes],
        source: step.source,
      })),
    };
  }

  /**
   * A numbered list for people. Shows command text and directories (the user's own file)
   * but only the names of environment variables, whose values are often secrets.
   */
  toText(): string {
    const lines = [
      `Plan for session ${JSON.stringify(this.sessionName)}: ${this.windowCount} window(s), ${this.paneCount} pane(s), ${this.steps.length} steps`,
      `Requires: no session named ${JSON.stringify(this.sessionName)} exists`,
      this.size === null ? "Size: tmux's default-size" : `Size: ${this.size.width}x${this.size.height} (${this.size.reason})`,
      ...this.directoriesToCreate.map((directory) => `Creates the missing directory ${directory.path} (${directory.source})`),
    ];
    const width = String(this.steps.length).length;
    for (const step of this.steps) {
      const made = step.produces.length === 0 ? '' : ` -> ${step.produces.join(', ')}`;
      lines.push(`${String(step.index).padStart(width)}. ${`[${step.effect}]`.padEnd(14)}${describeStep(step)}${made}`);
    }
    if (this.conflicts.length > 0) {
      lines.push('Conflicts (applying would fail before any effect):');
      for (const conflict of this.conflicts) lines.push(`  - ${conflict.path}: ${conflict.message}`);
    }
    return lines.join('\n');
  }

  /** A summary without names, commands or paths. */
  toString(): string {
    return `WorkspacePlan(${this.windowCount} windows, ${this.paneCount} panes, ${this.steps.length} steps, ${this.conflicts.length} conflicts)`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  /** This plan with the conflicts `snapshot` shows: exactly what an apply on that server would refuse. */
  checkedAgainst(snapshot: PlanSnapshot): WorkspacePlan {
    return new WorkspacePlan({ ...this, conflicts: planConflicts(this, snapshot) });
  }
}

/** tmux replaces `.` and `:` in session names, since they separate target parts. */
export function tmuxSessionName(name: string): string {
  return name.replace(/[.:]/g, '_');
}

/**
 * Orders the tmux operations that build `doc`, as tmuxp would: the session with the first
 * window and pane, session environment and options, each window with its options, splits
 * and layout, then every pane's commands (dispatch only), options_after, and focus last.
 * Structure is complete before the first command is dispatched.
 */
export function planWorkspace(doc: WorkspaceDocument, options: WorkspacePlanOptions = {}): WorkspacePlan {
  const { size, createDirectories = [] } = options;
  if (size !== undefined && !(isPositiveInteger(size.width) && isPositiveInteger(size.height))) {
    throw new ArgumentError('size needs positive integer width and height');
  }
  const builder = new StepList();
  const sessionName = tmuxSessionName(doc.sessionName);
  const [first, ...rest] = doc.windows;
  if (first === undefined) throw new ArgumentError('a workspace document has at least one window');
  const firstPane = first.panes[0];
  const initialEnv = { ...doc.environment, ...firstPane?.environment };

  builder.add('create', 'session_name', ['session', 'window:0', 'pane:0.0'], [], {
    op: 'new-session',
    args: {
      name: sessionName,
      windowName: first.name,
      cwd: firstPane?.startDirectory ?? first.startDirectory,
      env: initialEnv,
      width: size?.width ?? null,
      height: size?.height ?? null,
    },
  });
  // new-session's -e also lands in the session environment; put that back as declared.
  for (const [name, value] of Object.entries(initialEnv)) {
    const declared = Object.hasOwn(doc.environment, name) ? doc.environment[name] : undefined;
    if (declared === value) continue;
    builder.add('environment', `${indexPath('windows', 0)}.panes[0].environment`, [], ['session'], {
      op: 'set-environment',
      args: { session: 'session', name, value: declared ?? null },
    });
  }
  Object.entries(doc.options).forEach(([name, value], n) => {
    builder.add('configure', keyPath('options', name, n + 1), [], ['session'], {
      op: 'set-option',
      args: { scope: 'session', target: 'session', name, value },
    });
  });
  Object.entries(doc.globalOptions).forEach(([name, value], n) => {
    builder.add('configure', keyPath('global_options', name, n + 1), [], [], {
      op: 'set-option',
      args: { scope: 'global', target: null, name, value },
    });
  });
  // The first pane started before the session's shell options existed; a new pane in its
  // place (nothing has been sent to it yet) runs what every later pane runs.
  const shellOption = ['options', 'global_options']
    .flatMap((field) => ['default-shell', 'default-command'].map((name) => [field, name] as const))
    .find(([field, name]) => Object.hasOwn(field === 'options' ? doc.options : doc.globalOptions, name));
  if (shellOption !== undefined) {
    builder.add('create', shellOption.join('.'), [], ['pane:0.0'], {
      op: 'replace-pane',
      args: {
        pane: 'pane:0.0',
        cwd: firstPane?.startDirectory ?? first.startDirectory,
        env: firstPane?.environment ?? {},
      },
    });
  }
  const sessionBaseIndex = integerOption(doc.options['base-index']);
  const firstIndex = first.index ?? sessionBaseIndex;
  if (firstIndex !== null) {
    builder.add('configure', first.index === null ? 'options.base-index' : 'windows[0].window_index', [], ['window:0', 'session'], {
      op: 'move-window',
      args: { window: 'window:0', index: firstIndex },
    });
  }
  addWindowStructure(builder, first, 0);
  rest.forEach((window, offset) => {
    const w = offset + 1;
    const pane = window.panes[0];
    builder.add('create', indexPath('windows', w), [`window:${w}`, `pane:${w}.0`], ['session'], {
      op: 'new-window',
      args: {
        session: 'session',
        name: window.name,
        index: window.index,
        cwd: pane?.startDirectory ?? window.startDirectory,
        env: pane?.environment ?? {},
      },
    });
    addWindowStructure(builder, window, w);
  });
  doc.windows.forEach((window, w) => addDispatch(builder, window, w));
  doc.windows.forEach((window, w) => addWindowOptions(builder, window.optionsAfter, w, 'options_after'));
  doc.windows.forEach((window, w) => {
    const p = window.panes.findIndex((pane) => pane.focus);
    if (p === -1) return;
    builder.add('focus', `${indexPath('windows', w)}.panes[${p}].focus`, [], [`pane:${w}.${p}`], {
      op: 'select-pane',
      args: { pane: `pane:${w}.${p}` },
    });
  });
  // Window focus last: selecting a pane does not change the session's current window, and
  // nothing after this may.
  const focused = doc.windows.findIndex((window) => window.focus);
  if (focused !== -1) {
    builder.add('focus', `${indexPath('windows', focused)}.focus`, [], [`window:${focused}`], {
      op: 'select-window',
      args: { window: `window:${focused}` },
    });
  }

  const paneCount = doc.windows.reduce((total, window) => total + window.panes.length, 0);
  const plan = new WorkspacePlan({
    sessionName,
    windowCount: doc.windows.length,
    paneCount,
    steps: builder.steps,
    preconditions: [{ kind: 'session_absent', sessionName }],
    conflicts: [],
    size: size ?? null,
    directoriesToCreate: createDirectories,
  });
  return options.snapshot === undefined ? plan : plan.checkedAgainst(options.snapshot);
}

/**
 * Window options, then one split per further pane. Like tmuxp, a window with a layout has a
 * layout applied after every split, so the pane split next has room; unlike tmuxp, the
 * in-between layouts are `tiled` (which keeps room longest, e.g. where a large
 * main-pane-height would leave the other panes one line tall) and the declared layout comes
 * once, after the last split.
 */
function addWindowStructure(builder: StepList, window: WorkspaceWindow, w: number): void {
  const windowId: SymbolicId = `window:${w}`;
  addWindowOptions(builder, window.options, w, 'options');
  const declared = window.layout;
  const selectLayout = (layout: string): void => {
    builder.add('layout', `${indexPath('windows', w)}.layout`, [], [windowId], {
      op: 'select-layout',
      args: { window: windowId, layout },
    });
  };
  window.panes.forEach((pane, p) => {
    if (p > 0) {
      builder.add('create', `${indexPath('windows', w)}.panes[${p}]`, [`pane:${w}.${p}`], [`pane:${w}.${p - 1}`], {
        op: 'split-window',
        args: { target: `pane:${w}.${p - 1}`, direction: 'below', cwd: pane.startDirectory, env: pane.environment },
      });
    }
    const last = p === window.panes.length - 1;
    if (declared !== null && (last || p > 0)) selectLayout(last ? declared : 'tiled');
  });
}

function addWindowOptions(builder: StepList, options: OptionMap, w: number, field: 'options' | 'options_after'): void {
  Object.entries(options).forEach(([name, value], n) => {
    builder.add('configure', keyPath(`${indexPath('windows', w)}.${field}`, name, n + 1), [], [`window:${w}`], {
      op: 'set-option',
      args: { scope: 'window', target: `window:${w}`, name, value },
    });
  });
}

function addDispatch(builder: StepList, window: WorkspaceWindow, w: number): void {
  window.panes.forEach((pane, p) => {
    const paneId: SymbolicId = `pane:${w}.${p}`;
    pane.commands.forEach((command, c) => {
      const source = `${indexPath('windows', w)}.panes[${p}].shell_command[${c}]`;
      if (command.sleepBeforeMs > 0) {
        builder.add('dispatch', source, [], [paneId], { op: 'sleep', args: { pane: paneId, ms: command.sleepBeforeMs } });
      }
      const text = pane.suppressHistory && command.text !== '' ? ` ${command.text}` : command.text;
      if (text !== '' || command.enter) {
        builder.add('dispatch', source, [], [paneId], { op: 'send-keys', args: { pane: paneId, text, enter: command.enter } });
      }
      if (command.sleepAfterMs > 0) {
        builder.add('dispatch', source, [], [paneId], { op: 'sleep', args: { pane: paneId, ms: command.sleepAfterMs } });
      }
    });
  });
}

/**
 * Everything `snapshot` shows an apply of `plan` would fail on, found before anything is
 * created: the session name taken, a window index taken when its window is created, and an
 * option that is server-wide (it would change every other session) or that tmux does not have.
 * The one check both `plan --live` and an apply make.
 */
export function planConflicts(plan: Pick<WorkspacePlan, 'steps' | 'preconditions'>, snapshot: PlanSnapshot): PlanConflict[] {
  return [...violatedPreconditions(plan.preconditions, snapshot), ...windowIndexConflicts(plan.steps, snapshot.baseIndex), ...optionConflicts(plan.steps, snapshot)];
}

function optionConflicts(steps: readonly PlanStep[], snapshot: PlanSnapshot): PlanConflict[] {
  const tables = snapshot.optionTables;
  if (tables === undefined) return [];
  return steps.flatMap((step): PlanConflict[] => {
    if (step.op !== 'set-option' || step.args.name.startsWith('@')) return [];
    const table = tables.get(step.args.name);
    if (table === null) {
      const several = snapshot.ambiguousOptions?.get(step.args.name);
      const message = several === undefined ? 'tmux has no option by that name' : `tmux has no option by that name, and several begin with it: ${several.join(', ')}`;
      return [{ kind: 'unknown_option', path: step.source, message }];
    }
    // tmux picks an option's table by its name whatever scope it is set at, so a window's
    // options reach the server as surely as the session's do.
    if (table === 'server') {
      return [
        {
          kind: 'server_option',
          path: step.source,
          message: `${step.args.name} is a server-wide tmux option: loading a workspace changes nothing outside its own session, so set it in tmux.conf instead`,
        },
      ];
    }
    return [];
  });
}

/**
 * Replays where tmux puts each window the plan creates, in order: the first at the server's
 * base-index (the session's own does not exist yet), moved if the plan moves it; a later one at
 * its window_index, else the first free index from the session's base-index as last set (tmux
 * takes base-index for the session at whatever scope it is set). A window_index already held
 * makes new-window fail after the session exists. An index that depends on a base not known
 * (no server base given) is not guessed, so only clashes certain from what is known are found:
 * without a server, those the file alone decides.
 */
export function windowIndexConflicts(steps: readonly PlanStep[], serverBaseIndex?: number): PlanConflict[] {
  const conflicts: PlanConflict[] = [];
  // Each created window's index; null when it is not known.
  const placed = new Map<SymbolicId, number | null>();
  let base: number | null = serverBaseIndex ?? null;
  const firstFree = (): number | null => {
    if (base === null || [...placed.values()].includes(null)) return null;
    let index = base;
    while ([...placed.values()].includes(index)) index += 1;
    return index;
  };
  for (const step of steps) {
    if (step.op === 'new-session') placed.set('window:0', base);
    else if (step.op === 'set-option' && step.args.name === 'base-index') base = integerOption(step.args.value);
    else if (step.op === 'move-window') placed.set(step.args.window, step.args.index);
    else if (step.op === 'new-window') {
      const window = step.produces[0];
      if (window === undefined) continue;
      const { index } = step.args;
      if (index === null) {
        placed.set(window, firstFree());
        continue;
      }
      const holder = [...placed].find(([, at]) => at === index)?.[0];
      if (holder !== undefined) {
        conflicts.push({
          kind: 'window_index_taken',
          path: `${step.source}.window_index`,
          message: `index ${index} is already taken by ${windowPath(holder)} when the windows are created in order`,
        });
        continue;
      }
      placed.set(window, index);
    }
  }
  return conflicts;
}

/** `window:2` as the file names it, `windows[2]`. */
function windowPath(symbol: SymbolicId): string {
  return indexPath('windows', Number(symbol.slice('window:'.length)));
}

/** The preconditions a snapshot contradicts, as conflicts. */
export function violatedPreconditions(preconditions: readonly PlanPrecondition[], snapshot: PlanSnapshot): PlanConflict[] {
  return preconditions
    .filter((precondition) => snapshot.sessionNames.includes(precondition.sessionName))
    .map((precondition) => ({
      kind: 'session_exists',
      path: 'session_name',
      message: `a session named ${JSON.stringify(precondition.sessionName)} already exists`,
    }));
}

class StepList {
  readonly steps: PlanStep[] = [];

  add(
    effect: StepEffect,
    source: string,
    produces: readonly SymbolicId[],
    consumes: readonly SymbolicId[],
    operation: StepOperation,
  ): void {
    this.steps.push({ ...operation, index: this.steps.length + 1, effect, produces, consumes, source });
  }
}

function describeStep(step: PlanStep): string {
  const where = (cwd: string | null): string => (cwd === null ? '' : ` in ${cwd}`);
  const env = (vars: EnvironmentMap): string => {
    const names = Object.keys(vars);
    return names.length === 0 ? '' : ` env ${names.join(',')}`;
  };
  const name = (value: string | null): string => (value === null ? '' : ` ${JSON.stringify(value)}`);
  switch (step.op) {
    case 'new-session':
      return `new-session${name(step.args.name)}${step.args.windowName === null ? '' : ` window${name(step.args.windowName)}`}${where(step.args.cwd)}${env(step.args.env)}`;
    case 'set-environment':
      return step.args.value === null
        ? `set-environment ${step.args.session} unset ${step.args.name}`
        : `set-environment ${step.args.session} ${step.args.name} (session value)`;
    case 'set-option':
      return `set-option ${step.args.target ?? "the workspace's session or windows"} ${step.args.name} ${JSON.stringify(step.args.value)}`;
    case 'move-window':
      return `move-window ${step.args.window} to index ${step.args.index}`;
    case 'replace-pane':
      return `replace-pane ${step.args.pane} with a new pane${where(step.args.cwd)}${env(step.args.env)}`;
    case 'new-window':
      return `new-window${name(step.args.name)}${step.args.index === null ? '' : ` at index ${step.args.index}`}${where(step.args.cwd)}${env(step.args.env)}`;
    case 'split-window':
      return `split-window ${step.args.target} ${step.args.direction}${where(step.args.cwd)}${env(step.args.env)}`;
    case 'select-layout':
      return `select-layout ${step.args.window} ${step.args.layout}`;
    case 'send-keys':
      return `send-keys ${step.args.pane} ${JSON.stringify(step.args.text)}${step.args.enter ? ' + Enter' : ''}`;
    case 'sleep':
      return `sleep ${step.args.ms} ms (${step.args.pane})`;
    case 'select-pane':
      return `select-pane ${step.args.pane}`;
    case 'select-window':
      return `select-window ${step.args.window}`;
  }
}

function snakeKeys(args: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));
}

function integerOption(value: string | undefined): number | null {
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : null;
}

function isPositiveInteger(value: unknown): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
