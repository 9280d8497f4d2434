/** The profile and version a canonical document declares; the only pair drover accepts. */
export const WORKSPACE_PROFILE = 'drover.workspace';
export const WORKSPACE_VERSION = 1;

export type EnvironmentMap = Readonly<Record<string, string>>;
/** tmux option name → value as tmux takes it (booleans become `on`/`off`, numbers decimal). */
export type OptionMap = Readonly<Record<string, string>>;

/** One shell command for a pane: authored text, dispatched literally. */
export interface WorkspaceCommand {
  readonly text: string;
  /** Press Enter after the text (tmuxp `enter`). */
  readonly enter: boolean;
  readonly sleepBeforeMs: number;
  readonly sleepAfterMs: number;
}

export interface WorkspacePane {
  /** Absolute, inherited from the window when the pane does not set one; null: tmux's default. */
  readonly startDirectory: string | null;
  /** The window's environment overlaid with the pane's own. */
  readonly environment: EnvironmentMap;
  readonly focus: boolean;
  /** Send commands with a leading space so shells keep them out of history (tmuxp default: on). */
  readonly suppressHistory: boolean;
  /** Inherited `shell_command_before` (session, window, pane) followed by the pane's own. */
  readonly commands: readonly WorkspaceCommand[];
}

export interface WorkspaceWindow {
  /** null: tmux names the window (automatic-rename); "" is a window named "" with automatic-rename off. */
  readonly name: string | null;
  /** null: the next free index, as tmux picks it. */
  readonly index: number | null;
  /** A full preset name or a saved layout string; null: none applied. */
  readonly layout: string | null;
  readonly startDirectory: string | null;
  readonly environment: EnvironmentMap;
  readonly options: OptionMap;
  /** Options set after every pane's commands were dispatched (e.g. synchronize-panes). */
  readonly optionsAfter: OptionMap;
  readonly focus: boolean;
  readonly panes: readonly WorkspacePane[];
}

/**
 * The canonical, immutable form of a workspace file: every inheritance resolved, every
 * directory absolute, every enabled variable expanded. `workspaceToJSON` turns it back into
 * file data that parses to an equal document.
 */
export interface WorkspaceDocument {
  readonly profile: typeof WORKSPACE_PROFILE;
  readonly version: typeof WORKSPACE_VERSION;
  readonly sessionName: string;
  readonly startDirectory: string | null;
  /** Set on the session (set-environment); every pane inherits it. */
  readonly environment: EnvironmentMap;
  readonly options: OptionMap;
  readonly globalOptions: OptionMap;
  readonly windows: readonly WorkspaceWindow[];
}

/** File data (tmuxp key names) for a canonical document; JSON.stringify it to save or reload. */
export function workspaceToJSON(doc: WorkspaceDocument): Record<string, unknown> {
  return {
    profile: doc.profile,
    version: doc.version,
    session_name: doc.sessionName,
    ...(doc.startDirectory === null ? {} : { start_directory: doc.startDirectory }),
    ...nonEmpty('environment', doc.environment),
    ...nonEmpty('options', doc.options),
    ...nonEmpty('global_options', doc.globalOptions),
    windows: doc.windows.map((window) => ({
      ...(window.name === null ? {} : { window_name: window.name }),
      ...(window.index === null ? {} : { window_index: window.index }),
      ...(window.layout === null ? {} : { layout: window.layout }),
      ...(window.startDirectory === null ? {} : { start_directory: window.startDirectory }),
      ...nonEmpty('environment', window.environment),
      ...nonEmpty('options', window.options),
      ...nonEmpty('options_after', window.optionsAfter),
      ...(window.focus ? { focus: true } : {}),
      panes: window.panes.map((pane) => ({
        shell_command: pane.commands.map((command) => ({
          cmd: command.text,
          ...(command.enter ? {} : { enter: false }),
          ...(command.sleepBeforeMs === 0 ? {} : { sleep_before: command.sleepBeforeMs / 1000 }),
          ...(command.sleepAfterMs === 0 ? {} : { sleep_after: command.sleepAfterMs / 1000 }),
        })),
        ...(pane.startDirectory === null ? {} : { start_directory: pane.startDirectory }),
        ...nonEmpty('environment', pane.environment),
        ...(pane.focus ? { focus: true } : {}),
        suppress_history: pane.suppressHistory,
      })),
    })),
  };
}

function nonEmpty(key: string, map: Readonly<Record<string, string>>): Record<string, unknown> {
  return Object.keys(map).length === 0 ? {} : { [key]: { ...map } };
}

/** Freezes a plain data tree in place and returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
