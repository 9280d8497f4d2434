import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ArgumentError, UnsupportedFeatureError } from './errors.js';
import { escapeFormat, protectArgument } from './escape.js';
import type { PaneId, SessionId, WindowId } from './ids.js';

/**
 * One tmux argv builder per operation. Builders validate their inputs and return the tmux
 * arguments (without executable or socket flags); they perform no I/O beyond checking that
 * a requested working directory exists.
 */

/** Printed by every creation command: the ids tmux assigned, from the same reply. */
export const CREATION_FORMAT = '#{session_id} #{window_id} #{pane_id}';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const OPTION_NAME = /^@?[A-Za-z0-9_-]+(\[\d+\])?$/;
const MAX_NAME_BYTES = 1024;

export interface SpawnSpec {
  /** Working directory; must be an existing directory. Unset = tmux's default. */
  cwd?: string;
  /** Extra environment for the new pane; values are literal. */
  env?: Readonly<Record<string, string>>;
  /**
   * The program as argv. One element is run directly (never through `sh -c`); to use a
   * shell, pass it explicitly: ['sh', '-c', '…'].
   */
  command?: readonly string[];
}

export function checkName(what: string, name: string): string {
  if (typeof name !== 'string' || name === '') throw new ArgumentError(`${what} must be a non-empty string`);
  if (name.includes('\0')) throw new ArgumentError(`${what} contains NUL`);
  if (Buffer.byteLength(name) > MAX_NAME_BYTES) throw new ArgumentError(`${what} is longer than ${MAX_NAME_BYTES} bytes`);
  return name;
}

/** A window name may be empty: tmux then shows no name and leaves automatic-rename off, as tmuxp files expect. */
function checkWindowName(name: string): string {
  return name === '' ? name : checkName('window name', name);
}

export function checkEnvName(name: string): string {
  if (!ENV_NAME.test(name)) throw new ArgumentError(`${JSON.stringify(name)} is not a valid environment variable name`);
  return name;
}

export function checkOptionName(name: string): string {
  if (typeof name !== 'string' || !OPTION_NAME.test(name)) throw new ArgumentError(`${JSON.stringify(name)} is not a valid tmux option name`);
  return name;
}

function checkDirectory(cwd: string): void {
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    throw new ArgumentError(`working directory ${cwd} does not exist`);
  }
  if (!isDirectory) throw new ArgumentError(`working directory ${cwd} is not a directory`);
}

function spawnArgs(spec: SpawnSpec): { flags: string[]; command: string[] } {
  const flags: string[] = [];
  if (spec.cwd !== undefined) {
    checkName('cwd', spec.cwd);
    checkDirectory(spec.cwd);
    flags.push('-c', protectArgument(escapeFormat(spec.cwd)));
  }
  for (const [name, value] of Object.entries(spec.env ?? {})) {
    checkEnvName(name);
    if (typeof value !== 'string' || value.includes('\0')) throw new ArgumentError(`environment value for ${name} must be a string without NUL`);
    flags.push('-e', protectArgument(`${name}=${value}`));
  }
  const command: string[] = [];
  if (spec.command !== undefined) {
    if (!Array.isArray(spec.command) || spec.command.length === 0) throw new ArgumentError('command must be a non-empty argv array');
    spec.command.forEach((arg, i) => {
      if (typeof arg !== 'string' || arg.includes('\0')) throw new ArgumentError(`command[${i}] must be a string without NUL`);
    });
    // tmux hands a lone argument to `sh -c`; env makes it an exec of exactly that program.
    const argv = spec.command.length === 1 ? ['/usr/bin/env', '--', spec.command[0]!] : spec.command;
    command.push(...argv.map(protectArgument));
  }
  return { flags, command };
}

export interface NewSessionSpec extends SpawnSpec {
  name?: string;
  windowName?: string;
  width?: number;
  height?: number;
}

export function newSessionArgs(spec: NewSessionSpec = {}): string[] {
  const args = ['new-session', '-d', '-P', '-F', CREATION_FORMAT];
  if (spec.name !== undefined) args.push('-s', protectArgument(escapeFormat(checkName('session name', spec.name))));
  if (spec.windowName !== undefined) args.push('-n', protectArgument(escapeFormat(checkWindowName(spec.windowName))));
  if (spec.width !== undefined) args.push('-x', String(checkCells('width', spec.width)));
  if (spec.height !== undefined) args.push('-y', String(checkCells('height', spec.height)));
  const { flags, command } = spawnArgs(spec);
  return [...args, ...flags, ...command];
}

export interface NewWindowSpec extends SpawnSpec {
  name?: string;
  /** Explicit window index; an index already in use fails instead of replacing it. */
  index?: number;
  /** Make the new window current in its session (default false). */
  focus?: boolean;
}

export function newWindowArgs(session: SessionId, spec: NewWindowSpec = {}): string[] {
  const args = ['new-window', '-P', '-F', CREATION_FORMAT];
  if (!spec.focus) args.push('-d');
  const index = spec.index === undefined ? '' : String(checkIndex(spec.index));
  args.push('-t', `${session}:${index}`);
  if (spec.name !== undefined) args.push('-n', protectArgument(escapeFormat(checkWindowName(spec.name))));
  const { flags, command } = spawnArgs(spec);
  return [...args, ...flags, ...command];
}

export type SplitDirection = 'horizontal' | 'vertical';

export interface SplitSpec extends SpawnSpec {
  /** horizontal: the new pane sits beside the target (tmux -h); vertical: below it (tmux -v). */
  direction: SplitDirection;
  /** Put the new pane left of / above the target instead. */
  before?: boolean;
  /** Cells, or a percentage string like "30%". */
  size?: number | string;
  /** Split across the whole window rather than the target pane (tmux -f). */
  fullSize?: boolean;
  focus?: boolean;
}

export function splitArgs(target: PaneId | WindowId, spec: SplitSpec): string[] {
  const args = ['split-window', '-P', '-F', CREATION_FORMAT, '-t', target, directionFlag(spec.direction)];
  if (!spec.focus) args.push('-d');
  if (spec.before) args.push('-b');
  if (spec.fullSize) args.push('-f');
  if (spec.size !== undefined) args.push('-l', checkSize(spec.size));
  const { flags, command } = spawnArgs(spec);
  return [...args, ...flags, ...command];
}

export interface RespawnSpec extends SpawnSpec {
  /**
   * A command line tmux runs through the default shell, exactly as it runs
   * default-command for a new pane.
   */
  shellCommand?: string;
  /**
   * Run again the command the pane was created (or last respawned) with; for a pane created
   * without one, what a new pane runs now (default-command, else default-shell).
   */
  original?: true;
  /** Kill a still-running program first (tmux -k); otherwise a live pane refuses. */
  kill?: boolean;
}

/** Exactly one of command, shellCommand and original says what the pane runs: never implied. */
export function respawnPaneArgs(pane: PaneId, spec: RespawnSpec): string[] {
  const given = [spec.command !== undefined, spec.shellCommand !== undefined, spec.original === true].filter(Boolean).length;
  if (given !== 1) throw new ArgumentError('respawn needs exactly one of command (argv), shellCommand (a shell line) or original: true');
  const args = ['respawn-pane', '-t', pane];
  if (spec.kill) args.push('-k');
  const { flags, command } = spawnArgs(spec);
  args.push(...flags, ...command);
  if (spec.shellCommand !== undefined) args.push(protectArgument(checkName('shell command', spec.shellCommand)));
  return args;
}

export interface JoinSpec {
  /** horizontal: the pane lands beside the target (tmux -h); vertical: below it (tmux -v). */
  direction: SplitDirection;
  /** Put the pane left of / above the target instead (default false). */
  before?: boolean;
  /** Cells, or a percentage string like "30%". */
  size?: number | string;
  /** Span the whole window rather than the target pane (tmux -f). */
  fullSize?: boolean;
  /** Make the moved pane the active one (default false). */
  focus?: boolean;
}

/** Moves a pane next to another (tmux join-pane; move-pane is the same command). */
export function joinPaneArgs(source: PaneId, target: PaneId | WindowId, spec: JoinSpec): string[] {
  const args = ['join-pane', '-s', source, '-t', target, directionFlag(spec.direction)];
  if (!spec.focus) args.push('-d');
  if (spec.before) args.push('-b');
  if (spec.fullSize) args.push('-f');
  if (spec.size !== undefined) args.push('-l', checkSize(spec.size));
  return args;
}

export interface BreakSpec {
  /** The new window's index in the destination session; the next free one when absent. An index in use fails. */
  index?: number;
  name?: string;
  /** Make the new window current (default false). */
  focus?: boolean;
}

/** Breaks a pane out into a new window of a session, printing the new window's ids. */
export function breakPaneArgs(pane: PaneId, session: SessionId, spec: BreakSpec = {}): string[] {
  const index = spec.index === undefined ? '' : String(checkIndex(spec.index));
  const args = ['break-pane', '-P', '-F', CREATION_FORMAT, '-s', pane, '-t', `${session}:${index}`];
  if (!spec.focus) args.push('-d');
  if (spec.name !== undefined) args.push('-n', protectArgument(escapeFormat(checkName('window name', spec.name))));
  return args;
}

/** Links a window into a session at an explicit index; an index in use fails rather than being replaced. */
export function linkWindowArgs(window: WindowId, session: SessionId, index: number, focus = false): string[] {
  return ['link-window', ...(focus ? [] : ['-d']), '-s', window, '-t', `${session}:${checkIndex(index)}`];
}

export interface PipeSpec {
  /** Pipe what the pane's program writes to the command (default true). */
  output?: boolean;
  /** Send what the command writes to the pane as input (default false). */
  input?: boolean;
  /** tmux -o: when a pipe is already open, close it and start nothing. */
  onlyIfClosed?: boolean;
}

/**
 * Pipes a pane to an authored shell command (tmux expands formats in it and runs it with
 * the default shell), or closes the pane's pipe when the command is null.
 */
export function pipePaneArgs(pane: PaneId, shellCommand: string | null, spec: PipeSpec = {}): string[] {
  if (shellCommand === null) return ['pipe-pane', '-t', pane];
  const output = spec.output ?? true;
  const input = spec.input ?? false;
  if (!output && !input) throw new ArgumentError('a pipe needs a direction: output, input or both');
  return [
    'pipe-pane',
    ...(output ? ['-O'] : []),
    ...(input ? ['-I'] : []),
    ...(spec.onlyIfClosed ? ['-o'] : []),
    '-t',
    pane,
    protectArgument(checkName('shell command', shellCommand)),
  ];
}

export interface CopyModeSpec {
  /** Scroll one page up on entering (tmux -u). */
  scrollUp?: boolean;
  /** Scroll one page down when already in copy mode (tmux -d, tmux 3.5+). */
  pageDown?: boolean;
  /** Begin a mouse drag (tmux -M; only meaningful from a mouse binding). */
  mouseDrag?: boolean;
  /** Leave copy mode when scrolling reaches the bottom (tmux -e). */
  exitOnBottom?: boolean;
  /** Cancel copy mode and any other mode (tmux -q). */
  cancel?: boolean;
  /** Hide the position indicator (tmux -H). */
  hidePosition?: boolean;
}

/** The flags copy-mode takes, with the tmux version each needs. */
const COPY_MODE_FLAGS: readonly { key: keyof CopyModeSpec; flag: string; since?: string }[] = [
  { key: 'scrollUp', flag: '-u' },
  { key: 'pageDown', flag: '-d', since: '3.5' },
  { key: 'mouseDrag', flag: '-M' },
  { key: 'exitOnBottom', flag: '-e' },
  { key: 'cancel', flag: '-q' },
  { key: 'hidePosition', flag: '-H' },
];

/** Enters (or changes) copy mode; a source pane shows that pane's contents instead (tmux -s). */
export function copyModeArgs(pane: PaneId, spec: CopyModeSpec, source: PaneId | undefined, tmuxVersion: string | undefined): string[] {
  const args = ['copy-mode'];
  for (const { key, flag, since } of COPY_MODE_FLAGS) {
    if (!spec[key]) continue;
    if (since !== undefined && (tmuxVersion === undefined || !versionAtLeast(tmuxVersion, since))) {
      throw new UnsupportedFeatureError(`copy mode's ${key} needs tmux ${since} or newer (this server runs ${tmuxVersion ?? 'an unknown version'})`);
    }
    args.push(flag);
  }
  if (source !== undefined) args.push('-s', source);
  return [...args, '-t', pane];
}

/** Whether copyModeArgs needs the server's version for this spec. */
export function copyModeNeedsVersion(spec: CopyModeSpec): boolean {
  return COPY_MODE_FLAGS.some(({ key, since }) => since !== undefined && spec[key] === true);
}

/**
 * Returns a pane that a mode holds (copy mode, view mode, a chooser) to its live input, where
 * keys sent would otherwise be read as mode commands; a pane in no mode is left as it is.
 */
export function leaveModeArgs(pane: PaneId): string[] {
  return copyModeArgs(pane, { cancel: true }, undefined, undefined);
}

const COPY_COMMAND = /^[a-z][a-z-]{0,63}$/;

/** A copy-mode command (`begin-selection`, `search-backward` …) and its arguments, sent with send-keys -X. */
export function copyCommandArgs(pane: PaneId, command: string, args: readonly string[] = []): string[] {
  if (typeof command !== 'string' || !COPY_COMMAND.test(command)) throw new ArgumentError(`${JSON.stringify(command)} is not a copy-mode command name (lower-case words joined by "-")`);
  args.forEach((arg, i) => {
    if (typeof arg !== 'string' || arg.includes('\0')) throw new ArgumentError(`copy command argument ${i} must be a string without NUL`);
  });
  return ['send-keys', '-t', pane, '-X', '--', command, ...args.map(protectArgument)];
}

function directionFlag(direction: SplitDirection): string {
  if (direction !== 'horizontal' && direction !== 'vertical') throw new ArgumentError('direction must be "horizontal" or "vertical"');
  return direction === 'horizontal' ? '-h' : '-v';
}

export function checkCells(what: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) throw new ArgumentError(`${what} must be a positive number of cells`);
  return value;
}

function checkIndex(index: number): number {
  if (!Number.isSafeInteger(index) || index < 0) throw new ArgumentError('window index must be a non-negative integer');
  return index;
}

function checkSize(size: number | string): string {
  if (typeof size === 'number') return String(checkCells('size', size));
  const match = /^(\d{1,3})%$/.exec(size);
  if (!match || Number(match[1]) < 1 || Number(match[1]) > 100) throw new ArgumentError(`size ${JSON.stringify(size)} must be cells or a percentage like "30%"`);
  return size;
}

const LAYOUT_NAMES = ['even-horizontal', 'even-vertical', 'main-horizontal', 'main-vertical', 'tiled'] as const;
const MIRRORED_LAYOUTS = ['main-horizontal-mirrored', 'main-vertical-mirrored'] as const;
const MIRRORED_SINCE = '3.5';
const SAVED_LAYOUT = /^[0-9a-f]{4},\d+x\d+,\d+,\d+[,[{]/;

/**
 * Whether resolving this layout name depends on the tmux version: only a name that is, or
 * abbreviates, a mirrored layout does. The five base names and saved layouts never do.
 */
export function layoutNeedsVersion(layout: string): boolean {
  if (typeof layout !== 'string' || layout === '' || /^[0-9a-f]{4},/.test(layout) || (LAYOUT_NAMES as readonly string[]).includes(layout)) return false;
  return MIRRORED_LAYOUTS.some((name) => name.startsWith(layout));
}

/**
 * Resolves a layout name the way tmux does (an exact name first, else an unambiguous
 * prefix) or accepts a saved layout string; anything else fails before tmux is asked. The
 * mirrored layouts need tmux 3.5: on an older server (or without its version) a name that
 * resolves only to one of them is UnsupportedFeatureError.
 */
export function resolveLayout(layout: string, tmuxVersion?: string): string {
  if (typeof layout !== 'string' || layout === '') throw new ArgumentError('layout must be a non-empty string');
  if (/^[0-9a-f]{4},/.test(layout)) {
    if (!SAVED_LAYOUT.test(layout)) throw new ArgumentError('saved layout string is malformed (expected "XXXX,WxH,X,Y…")');
    return layout;
  }
  const mirroredSupported = tmuxVersion !== undefined && versionAtLeast(tmuxVersion, MIRRORED_SINCE);
  const names: readonly string[] = mirroredSupported ? [...LAYOUT_NAMES, ...MIRRORED_LAYOUTS] : LAYOUT_NAMES;
  if (names.includes(layout)) return layout;
  const matches = names.filter((name) => name.startsWith(layout));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) throw new ArgumentError(`layout ${JSON.stringify(layout)} is ambiguous (${matches.join(', ')})`);
  const mirrored = MIRRORED_LAYOUTS.filter((name) => name.startsWith(layout));
  if (mirrored.length > 0) {
    throw new UnsupportedFeatureError(`layout ${mirrored.length === 1 ? mirrored[0] : JSON.stringify(layout)} needs tmux ${MIRRORED_SINCE} or newer (this server runs ${tmuxVersion ?? 'an unknown version'})`);
  }
  throw new ArgumentError(`unknown layout ${JSON.stringify(layout)} (layouts: ${names.join(', ')})`);
}

/** Compares tmux version strings like "3.3a", "3.5", "next-3.6". */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parse = (v: string): [number, number, number] => {
    const match = /(\d+)\.(\d+)([a-z]?)/.exec(v);
    if (!match) return [0, 0, 0];
    return [Number(match[1]), Number(match[2]), match[3] ? match[3].charCodeAt(0) - 96 : 0];
  };
  const a = parse(version);
  const b = parse(minimum);
  for (let i = 0; i < 3; i += 1) {
    if (a[i]! !== b[i]!) return a[i]! > b[i]!;
  }
  return true;
}

export function sendTextArgs(pane: PaneId, text: string): string[] {
  if (typeof text !== 'string') throw new ArgumentError('text must be a string');
  if (text.includes('\0')) throw new ArgumentError('text contains NUL');
  return ['send-keys', '-t', pane, '-l', '--', protectArgument(text)];
}

export function sendKeysArgs(pane: PaneId, keys: readonly string[]): string[] {
  if (!Array.isArray(keys) || keys.length === 0) throw new ArgumentError('keys must be a non-empty array of tmux key names');
  keys.forEach((key, i) => {
    if (typeof key !== 'string' || key === '' || key.includes('\0')) throw new ArgumentError(`keys[${i}] must be a non-empty key name`);
  });
  return ['send-keys', '-t', pane, '--', ...keys.map(protectArgument)];
}

export interface PasteSpec {
  /** Delete the buffer after pasting. */
  delete?: boolean;
  /** Ask for bracketed paste markers (honoured only if the program enabled bracket mode). */
  bracketed?: boolean;
  /** Replace newlines with this separator instead of tmux's default carriage return. */
  separator?: string;
}

export function pasteBufferArgs(pane: PaneId, buffer: string, spec: PasteSpec = {}): string[] {
  const args = ['paste-buffer', '-b', protectArgument(checkName('buffer name', buffer)), '-t', pane];
  if (spec.delete) args.push('-d');
  if (spec.bracketed) args.push('-p');
  if (spec.separator !== undefined) args.push('-s', protectArgument(spec.separator));
  return args;
}

export interface CaptureSpec {
  /** First line: 0 is the top of the visible screen, negative lines reach into history, "-" is the start of history. */
  start?: number | '-';
  /** Last line, or "-" for the end of the visible screen. */
  end?: number | '-';
  /** Keep escape sequences for colours and attributes (tmux -e). */
  escapes?: boolean;
  /** Join wrapped lines (tmux -J). */
  join?: boolean;
  /** Keep trailing spaces at line ends (tmux -N). */
  trailingSpaces?: boolean;
  /** Capture the alternate screen (tmux -a). */
  alternate?: boolean;
  /** Capture the copy-mode screen the pane shows (tmux -M, tmux 3.6+). */
  modeScreen?: boolean;
  /** Capture output tmux has not yet processed (tmux -P). */
  pending?: boolean;
}

/** Capture flags that need a newer tmux than drover's oldest, with the version each needs. */
const CAPTURE_FLAG_SINCE: Readonly<Partial<Record<keyof CaptureSpec, string>>> = { modeScreen: '3.6' };

/** Whether captureArgs needs the server's version for this spec. */
export function captureNeedsVersion(spec: CaptureSpec): boolean {
  return Object.keys(CAPTURE_FLAG_SINCE).some((key) => spec[key as keyof CaptureSpec] === true);
}

export function captureArgs(pane: PaneId, spec: CaptureSpec = {}, tmuxVersion?: string): string[] {
  const modes = (['alternate', 'modeScreen', 'pending'] as const).filter((mode) => spec[mode]);
  if (modes.length > 1) throw new ArgumentError(`capture modes ${modes.join(' and ')} are mutually exclusive`);
  for (const [key, since] of Object.entries(CAPTURE_FLAG_SINCE)) {
    if (spec[key as keyof CaptureSpec] === true && (tmuxVersion === undefined || !versionAtLeast(tmuxVersion, since))) {
      throw new UnsupportedFeatureError(`capture's ${key} needs tmux ${since} or newer (this server runs ${tmuxVersion ?? 'an unknown version'})`);
    }
  }
  const args = ['capture-pane', '-p', '-t', pane];
  const line = (what: string, value: number | '-'): string => {
    if (value === '-' || Number.isSafeInteger(value)) return String(value);
    throw new ArgumentError(`${what} must be an integer or "-"`);
  };
  if (spec.start !== undefined) args.push('-S', line('start', spec.start));
  if (spec.end !== undefined) args.push('-E', line('end', spec.end));
  if (spec.escapes) args.push('-e');
  if (spec.join) args.push('-J');
  if (spec.trailingSpaces) args.push('-N');
  if (spec.alternate) args.push('-a');
  if (spec.modeScreen) args.push('-M');
  if (spec.pending) args.push('-P');
  return args;
}

export type OptionScope =
  | { kind: 'server' }
  | { kind: 'global'; of: 'session' | 'window' | 'pane' }
  | { kind: 'session'; id: SessionId }
  | { kind: 'window'; id: WindowId }
  | { kind: 'pane'; id: PaneId };

function scopeFlags(scope: OptionScope): string[] {
  switch (scope.kind) {
    case 'server':
      return ['-s'];
    case 'global':
      return scope.of === 'session' ? ['-g'] : scope.of === 'window' ? ['-g', '-w'] : ['-g', '-p'];
    case 'session':
      return ['-t', scope.id];
    case 'window':
      return ['-w', '-t', scope.id];
    case 'pane':
      return ['-p', '-t', scope.id];
  }
}

/** Prints the value alone; absent prints nothing at all, empty prints an empty line. */
export function showOptionArgs(scope: OptionScope, name: string, inherited: boolean): string[] {
  return ['show-options', ...scopeFlags(scope), '-q', '-v', ...(inherited ? ['-A'] : []), '--', checkOptionName(name)];
}

export function setOptionArgs(scope: OptionScope, name: string, value: string | number | boolean, append = false): string[] {
  let text: string;
  if (typeof value === 'boolean') text = value ? 'on' : 'off';
  else if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new ArgumentError(`option ${name} value must be an integer`);
    text = String(value);
  } else if (typeof value === 'string') {
    if (value.includes('\0')) throw new ArgumentError(`option ${name} value contains NUL`);
    text = value;
  } else throw new ArgumentError(`option ${name} value must be a string, integer or boolean`);
  return ['set-option', ...scopeFlags(scope), ...(append ? ['-a'] : []), '--', checkOptionName(name), protectArgument(text)];
}

export function unsetOptionArgs(scope: OptionScope, name: string): string[] {
  return ['set-option', ...scopeFlags(scope), '-u', '--', checkOptionName(name)];
}

/** The listing (names, `[index]`, `*` for inherited, quoted values) of every option, or of one. */
export function listOptionArgs(scope: OptionScope, inherited: boolean, name?: string): string[] {
  const base = name === undefined ? [] : ['-q', '--', checkOptionName(name)];
  return ['show-options', ...scopeFlags(scope), ...(inherited ? ['-A'] : []), ...base];
}

export type HookScope = { kind: 'global' } | { kind: 'session'; id: SessionId } | { kind: 'window'; id: WindowId } | { kind: 'pane'; id: PaneId };

/** Hooks live in the same scopes as options, except that "global" means the global session scope. */
function hookFlags(scope: HookScope): string[] {
  return scope.kind === 'global' ? ['-g'] : scopeFlags(scope);
}

export function showHooksArgs(scope: HookScope, name?: string): string[] {
  return ['show-hooks', ...hookFlags(scope), ...(name === undefined ? [] : ['--', checkOptionName(name)])];
}

export function setHookArgs(scope: HookScope, name: string, command: string, append = false): string[] {
  checkName('hook command', command);
  return ['set-hook', ...hookFlags(scope), ...(append ? ['-a'] : []), '--', checkOptionName(name), protectArgument(command)];
}

export function unsetHookArgs(scope: HookScope, name: string): string[] {
  return ['set-hook', ...hookFlags(scope), '-u', '--', checkOptionName(name)];
}

/** Runs a hook's commands now (tmux set-hook -R). */
export function runHookArgs(scope: HookScope, name: string): string[] {
  return ['set-hook', ...hookFlags(scope), '-R', '--', checkOptionName(name)];
}

export type EnvironmentScope = { kind: 'global' } | { kind: 'session'; id: SessionId };

function envFlags(scope: EnvironmentScope): string[] {
  return scope.kind === 'global' ? ['-g'] : ['-t', scope.id];
}

export function showEnvironmentArgs(scope: EnvironmentScope, name?: string): string[] {
  return ['show-environment', ...envFlags(scope), ...(name === undefined ? [] : ['--', checkEnvName(name)])];
}

export function setEnvironmentArgs(scope: EnvironmentScope, name: string, value: string, hidden = false): string[] {
  if (typeof value !== 'string' || value.includes('\0')) throw new ArgumentError(`environment value for ${name} must be a string without NUL`);
  return ['set-environment', ...envFlags(scope), ...(hidden ? ['-h'] : []), '--', checkEnvName(name), protectArgument(value)];
}

/** Records the variable as unset (`-NAME`): processes started in the scope run without it, whatever a wider scope says. */
export function unsetEnvironmentArgs(scope: EnvironmentScope, name: string): string[] {
  return ['set-environment', ...envFlags(scope), '-r', '--', checkEnvName(name)];
}

/** Removes the scope's own entry for the variable, so a wider scope's value applies again. */
export function removeEnvironmentArgs(scope: EnvironmentScope, name: string): string[] {
  return ['set-environment', ...envFlags(scope), '-u', '--', checkEnvName(name)];
}

const BUFFER_NAME = /^[^\0\n]{1,256}$/;

/**
 * A path for source-file exactly as written: tmux expands glob patterns in it (`*`, `?`,
 * `[…]`, with `\` escaping) and reads `-` as standard input, so those are made literal.
 */
export function literalSourcePath(path: string): string {
  const absolute = resolve(checkName('path', path));
  return absolute.replace(/[\\*?[]/g, (char) => `\\${char}`);
}

export function checkBufferName(name: string): string {
  if (typeof name !== 'string' || !BUFFER_NAME.test(name)) throw new ArgumentError('buffer name must be 1–256 characters without NUL or newline');
  return name;
}

export type WaitAction = 'wait' | 'signal' | 'lock' | 'unlock';

export function waitForArgs(channel: string, action: WaitAction): string[] {
  checkName('channel', channel);
  const flag = { wait: [], signal: ['-S'], lock: ['-L'], unlock: ['-U'] }[action];
  if (!flag) throw new ArgumentError(`wait action must be wait, signal, lock or unlock`);
  return ['wait-for', ...flag, protectArgument(channel)];
}
