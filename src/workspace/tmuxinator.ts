import { dirname, resolve } from 'node:path';
import { stringify } from 'yaml';
import { WorkspaceError, combineProblems } from './errors.js';
import { parseWorkspace, readBoundedFile } from './parse.js';
import { readYaml } from './read-yaml.js';
import { DEFAULT_WORKSPACE_LIMITS, describeType, indexPath, keyPath, type TreeMap, type TreeValue } from './tree.js';

/** A tmuxinator project converted to a drover workspace, with what did not carry over. */
export interface TmuxinatorImport {
  /** Workspace file data (tmuxp key names), ready to save as YAML or JSON. */
  readonly workspace: Record<string, unknown>;
  /** One line per project setting that has no place in a workspace, saying what to do instead. */
  readonly notes: readonly string[];
}

/** Project keys whose meaning lies outside the session's layout: reported, never silently dropped. */
const NOT_CONVERTED: ReadonlyMap<string, string> = new Map([
  ['socket_name', 'choose the server when loading: drover workspace load -L NAME'],
  ['socket_path', 'choose the server when loading: drover workspace load -S PATH'],
  ['tmux_options', 'tmux arguments are not part of a workspace; set them in tmux.conf'],
  ['cli_args', 'tmux arguments are not part of a workspace; set them in tmux.conf'],
  ['tmux_command', 'drover drives tmux itself'],
  ['attach', 'use drover workspace load --attach'],
  ['tmux_detached', 'use drover workspace load --attach to attach'],
  ['pre', 'a command run before the session is created: run it yourself before loading'],
  ['post', 'a command run after the session is created: run it yourself after loading'],
  ['on_project_start', 'a hook: run it yourself'],
  ['on_project_first_start', 'a hook: run it yourself'],
  ['on_project_restart', 'a hook: run it yourself'],
  ['on_project_exit', 'a hook: run it yourself'],
  ['on_project_stop', 'a hook: run it yourself'],
  ['enable_pane_titles', 'pane titles are not part of a drover workspace'],
  ['pane_title_position', 'pane titles are not part of a drover workspace'],
  ['pane_title_format', 'pane titles are not part of a drover workspace'],
]);
const SESSION_KEYS = new Set(['name', 'project_name', 'root', 'project_root', 'pre_window', 'pre_tab', 'rbenv', 'rvm', 'startup_window', 'startup_pane', 'windows', 'tabs']);
const WINDOW_KEYS = new Set(['layout', 'root', 'pre', 'panes', 'synchronize']);

/**
 * Converts a tmuxinator project (YAML text) into a drover workspace: `name`/`root` become
 * `session_name`/`start_directory`, `pre_window` runs first in every pane
 * (session `shell_command_before`), a window's `pre` next (window `shell_command_before`),
 * then the pane's commands; named panes keep their commands; `synchronize` becomes
 * synchronize-panes set before (`options`) or after (`options_after`) the commands;
 * `startup_window`/`startup_pane` become `focus`. ERB templates are refused, since only
 * tmuxinator's Ruby can render them. Inert: reads no files and runs nothing.
 */
export function importTmuxinator(text: string): TmuxinatorImport {
  const erb = text.indexOf('<%');
  if (erb !== -1) {
    const line = text.slice(0, erb).split('\n').length;
    throw new WorkspaceError(
      `this tmuxinator project uses ERB (<% … %>, line ${line}), which only tmuxinator can render; replace the tags with their values, then import it`,
      { path: '$', code: 'unsupported', unsupportedFeature: 'erb', line },
    );
  }
  return new Converter().project(readYaml(text, DEFAULT_WORKSPACE_LIMITS));
}

/**
 * Reads a tmuxinator project file and converts it; the result is checked to load as a drover
 * workspace from the project's directory, so a conversion drover cannot load is an error here.
 */
export async function importTmuxinatorFile(path: string): Promise<TmuxinatorImport> {
  const absolute = resolve(path);
  const result = importTmuxinator(await readBoundedFile(absolute, DEFAULT_WORKSPACE_LIMITS.maxBytes));
  parseWorkspace(JSON.stringify(result.workspace), { format: 'json', baseDir: dirname(absolute) });
  return result;
}

/** The converted workspace as YAML text, with the notes as comments at the top. */
export function tmuxinatorImportToYaml(result: TmuxinatorImport, source: string): string {
  const header = [`# Converted from the tmuxinator project ${source} by drover workspace import tmuxinator.`];
  for (const note of result.notes) header.push(`# not converted: ${note}`);
  return `${header.join('\n')}\n${stringify(result.workspace, { lineWidth: 0 })}`;
}

class Converter {
  private readonly problems: WorkspaceError[] = [];
  private readonly notes: string[] = [];

  project(tree: TreeValue): TmuxinatorImport {
    if (!(tree instanceof Map)) throw new WorkspaceError(`expected a tmuxinator project (a mapping), found ${describeType(tree)}`, { path: '$', code: 'type' });
    let ordinal = 0;
    for (const key of tree.keys()) {
      ordinal += 1;
      const why = NOT_CONVERTED.get(key);
      if (why !== undefined) this.notes.push(`${key}: ${why}`);
      else if (!SESSION_KEYS.has(key)) this.problems.push(new WorkspaceError('not a tmuxinator project key', { path: keyPath('$', key, ordinal), code: 'unknown_key' }));
    }
    // tmuxinator's precedence: project_name over name, project_root over root, tabs over windows,
    // and the deprecated rbenv, rvm, pre_tab over pre_window.
    const name = this.text(tree, 'project_name') ?? this.text(tree, 'name');
    if (name === undefined) this.problems.push(new WorkspaceError('name is required', { path: 'name', code: 'missing' }));
    const root = this.text(tree, 'project_root') ?? this.text(tree, 'root');
    const before = tree.has('rbenv')
      ? [`rbenv shell ${this.text(tree, 'rbenv') ?? ''}`]
      : tree.has('rvm')
        ? [`rvm use ${this.text(tree, 'rvm') ?? ''}`]
        : tree.has('pre_tab')
          ? this.commands(tree.get('pre_tab') ?? null, 'pre_tab')
          : this.commands(tree.get('pre_window') ?? null, 'pre_window');
    const windowsKey = tree.has('tabs') ? 'tabs' : 'windows';
    const windowList = tree.get(windowsKey);
    if (!Array.isArray(windowList) || windowList.length === 0) {
      this.problems.push(new WorkspaceError('expected a non-empty list of windows', { path: windowsKey, code: windowList === undefined ? 'missing' : 'type' }));
    }
    const windows = (Array.isArray(windowList) ? windowList : []).map((item, w) => this.window(item, indexPath(windowsKey, w)));
    this.focus(tree, windows);
    if (this.problems.length > 0) throw combineProblems(this.problems);
    return {
      workspace: {
        session_name: name,
        ...(root === undefined ? {} : { start_directory: root }),
        ...(before.length === 0 ? {} : { shell_command_before: before }),
        windows,
      },
      notes: this.notes,
    };
  }

  /** `- name: value`: a command, a command list, nothing, or a mapping with panes. */
  private window(item: TreeValue, path: string): Record<string, unknown> {
    if (!(item instanceof Map) || item.size !== 1) {
      this.problems.push(new WorkspaceError('expected a window as a one-key mapping (- NAME: …)', { path, code: 'type' }));
      return {};
    }
    const [[name, value]] = [...item] as [[string, TreeValue]];
    const named = { window_name: name };
    const windowPath = keyPath(path, name, 1);
    if (!(value instanceof Map)) return { ...named, panes: [this.pane(value, windowPath)] };
    const at = (key: string): string => `${windowPath}.${key}`;
    let ordinal = 0;
    for (const key of value.keys()) {
      ordinal += 1;
      if (!WINDOW_KEYS.has(key)) this.problems.push(new WorkspaceError('not a tmuxinator window key', { path: keyPath(windowPath, key, ordinal), code: 'unknown_key' }));
    }
    const layout = this.text(value, 'layout', at('layout'));
    const root = this.text(value, 'root', at('root'));
    const before = this.commands(value.get('pre') ?? null, at('pre'));
    const panes = value.get('panes');
    const paneList = panes === undefined || panes === null ? [null] : Array.isArray(panes) ? panes : this.wrong(panes, at('panes'), 'a list of panes', []);
    const sync = this.synchronize(value.get('synchronize'), at('synchronize'));
    return {
      ...named,
      ...(layout === undefined ? {} : { layout }),
      ...(root === undefined ? {} : { start_directory: root }),
      ...(before.length === 0 ? {} : { shell_command_before: before }),
      ...(sync === 'before' ? { options: { 'synchronize-panes': 'on' } } : {}),
      ...(sync === 'after' ? { options_after: { 'synchronize-panes': 'on' } } : {}),
      // A named pane (- NAME: commands) keeps its commands; a mapping of several names is several panes.
      panes: paneList.flatMap((pane, p) =>
        pane instanceof Map ? [...pane.values()].map((commands) => this.pane(commands, indexPath(at('panes'), p))) : [this.pane(pane, indexPath(at('panes'), p))],
      ),
    };
  }

  private pane(value: TreeValue, path: string): Record<string, unknown> {
    return { shell_command: this.commands(value, path) };
  }

  /** A command, a list of commands (empty entries skipped), or nothing. */
  private commands(value: TreeValue, path: string): string[] {
    if (value === null) return [];
    if (typeof value === 'string' || typeof value === 'number') return String(value) === '' ? [] : [String(value)];
    if (Array.isArray(value)) {
      return value.flatMap((item, c) => {
        if (item === null) return [];
        if (typeof item === 'string' || typeof item === 'number') return [String(item)];
        return this.wrong(item, indexPath(path, c), 'a command', []);
      });
    }
    return this.wrong(value, path, 'a command or a list of commands', []);
  }

  /** tmuxinator: `true` or `before` synchronizes before the commands are typed, `after` after them. */
  private synchronize(value: TreeValue | undefined, path: string): 'before' | 'after' | null {
    if (value === undefined || value === false || value === null) return null;
    if (value === true || value === 'before') return 'before';
    if (value === 'after') return 'after';
    return this.wrong(value, path, 'true, false, before or after', null);
  }

  /** startup_window (a window name or tmux index, base-index 0) and startup_pane become focus. */
  private focus(tree: TreeMap, windows: Record<string, unknown>[]): void {
    const windowKey = tree.get('startup_window');
    const paneKey = tree.get('startup_pane');
    if (windowKey === undefined && paneKey === undefined) return;
    let w = 0;
    if (windowKey !== undefined && windowKey !== null) {
      w = typeof windowKey === 'string' ? windows.findIndex((window) => window.window_name === windowKey) : -1;
      if (w === -1 && typeof windowKey === 'number' && Number.isInteger(windowKey)) w = windowKey;
      if (windows[w] === undefined) {
        this.problems.push(new WorkspaceError('names no window of the project (a window name, or an index from 0)', { path: 'startup_window', code: 'value' }));
        return;
      }
      if (typeof windowKey === 'number') this.notes.push(`startup_window: ${windowKey} taken as the window at position ${windowKey} from 0 (tmux's default base-index)`);
      windows[w] = { ...windows[w], focus: true };
    }
    if (paneKey === undefined || paneKey === null) return;
    const panes = windows[w]?.panes;
    const pane = Array.isArray(panes) && typeof paneKey === 'number' && Number.isInteger(paneKey) ? (panes[paneKey] as Record<string, unknown> | undefined) : undefined;
    if (pane === undefined || !Array.isArray(panes)) {
      this.problems.push(new WorkspaceError("names no pane of the startup window (an index from 0, tmux's default pane-base-index)", { path: 'startup_pane', code: 'value' }));
      return;
    }
    panes[paneKey as number] = { ...pane, focus: true };
  }

  private text(map: TreeMap, key: string, path = key): string | undefined {
    const value = map.get(key);
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'string' || typeof value === 'number') return String(value);
    return this.wrong(value, path, 'a string', undefined);
  }

  /** Records a value of the wrong type and goes on with the fallback, so every problem is reported. */
  private wrong<T>(value: TreeValue, path: string, expected: string, fallback: T): T {
    this.problems.push(new WorkspaceError(`expected ${expected}, found ${describeType(value)}`, { path, code: 'type' }));
    return fallback;
  }
}
