/**
 * The field catalog: every metadata field drover reads from tmux, with its type, its tmux
 * format spelling and whether an empty value means "absent". Snapshot framing, typed
 * readers, criteria validation and JSON output are all generated from these tables.
 */

export type FieldType = 'id' | 'string' | 'int' | 'bool' | 'time';

export interface FieldSpec<T extends FieldType = FieldType, N extends boolean = boolean> {
  /** tmux's format variable, also the field's name in criteria and JSON. */
  readonly wire: string;
  readonly type: T;
  /** An empty value is reported as null instead of an empty string or a decode error. */
  readonly emptyIsNull: N;
  /**
   * tmux reads the value from the system each time a format names it (a pane's running
   * command, its directory), so a length and the bytes after it could come from two different
   * reads. Such a field is framed by an end marker instead of a length.
   */
  readonly volatile?: boolean;
}

function field<const T extends FieldType, const N extends boolean = false>(wire: string, type: T, emptyIsNull?: N, volatile?: 'volatile'): FieldSpec<T, N> {
  return Object.freeze({ wire, type, emptyIsNull: (emptyIsNull ?? false) as N, ...(volatile ? { volatile: true } : {}) });
}

export const SESSION_FIELDS = {
  sessionId: field('session_id', 'id'),
  sessionName: field('session_name', 'string'),
  sessionCreated: field('session_created', 'time'),
  sessionActivity: field('session_activity', 'time'),
  sessionLastAttached: field('session_last_attached', 'time', true),
  sessionAttached: field('session_attached', 'int'),
  sessionWindows: field('session_windows', 'int'),
  sessionPath: field('session_path', 'string', true),
  sessionGroup: field('session_group', 'string', true),
} as const;

/** One row per (session, window index): a window linked into two sessions appears twice. */
export const WINDOW_LINK_FIELDS = {
  sessionId: field('session_id', 'id'),
  windowIndex: field('window_index', 'int'),
  windowId: field('window_id', 'id'),
  windowActive: field('window_active', 'bool'),
} as const;

export const WINDOW_FIELDS = {
  windowId: field('window_id', 'id'),
  windowName: field('window_name', 'string'),
  windowLayout: field('window_layout', 'string'),
  windowVisibleLayout: field('window_visible_layout', 'string'),
  windowPanes: field('window_panes', 'int'),
  windowWidth: field('window_width', 'int'),
  windowHeight: field('window_height', 'int'),
  windowZoomedFlag: field('window_zoomed_flag', 'bool'),
  windowLinked: field('window_linked', 'bool'),
  windowActivity: field('window_activity', 'time'),
} as const;

export const PANE_FIELDS = {
  paneId: field('pane_id', 'id'),
  windowId: field('window_id', 'id'),
  paneIndex: field('pane_index', 'int'),
  paneActive: field('pane_active', 'bool'),
  panePid: field('pane_pid', 'int', true),
  paneCurrentCommand: field('pane_current_command', 'string', true, 'volatile'),
  paneCurrentPath: field('pane_current_path', 'string', true, 'volatile'),
  paneStartCommand: field('pane_start_command', 'string', true),
  paneTitle: field('pane_title', 'string'),
  paneTty: field('pane_tty', 'string', true),
  paneWidth: field('pane_width', 'int'),
  paneHeight: field('pane_height', 'int'),
  paneLeft: field('pane_left', 'int'),
  paneTop: field('pane_top', 'int'),
  paneDead: field('pane_dead', 'bool'),
  paneDeadStatus: field('pane_dead_status', 'int', true),
  paneInMode: field('pane_in_mode', 'bool'),
  paneMode: field('pane_mode', 'string', true),
  paneSynchronized: field('pane_synchronized', 'bool'),
  alternateOn: field('alternate_on', 'bool'),
  cursorX: field('cursor_x', 'int', true),
  cursorY: field('cursor_y', 'int', true),
  historySize: field('history_size', 'int'),
} as const;

export const CLIENT_FIELDS = {
  clientName: field('client_name', 'string'),
  sessionId: field('session_id', 'id', true),
  clientTty: field('client_tty', 'string', true),
  clientPid: field('client_pid', 'int'),
  clientSession: field('client_session', 'string', true),
  clientWidth: field('client_width', 'int'),
  clientHeight: field('client_height', 'int'),
  clientControlMode: field('client_control_mode', 'bool'),
  clientFlags: field('client_flags', 'string', true),
  clientTermname: field('client_termname', 'string', true),
  clientCreated: field('client_created', 'time'),
  clientActivity: field('client_activity', 'time'),
} as const;

export type FieldTable = Readonly<Record<string, FieldSpec>>;

type ValueOf<T extends FieldType> = T extends 'int' | 'time' ? number : T extends 'bool' ? boolean : string;

/** The typed values of one row of a field table. */
export type FieldValues<T extends FieldTable> = {
  readonly [K in keyof T]: T[K]['emptyIsNull'] extends true ? ValueOf<T[K]['type']> | null : ValueOf<T[K]['type']>;
};

export type SessionFields = FieldValues<typeof SESSION_FIELDS>;
export type WindowLinkFields = FieldValues<typeof WINDOW_LINK_FIELDS>;
export type WindowFields = FieldValues<typeof WINDOW_FIELDS>;
export type PaneFields = FieldValues<typeof PANE_FIELDS>;
export type ClientFields = FieldValues<typeof CLIENT_FIELDS>;

export const ENTITY_FIELDS = {
  session: SESSION_FIELDS,
  window: WINDOW_FIELDS,
  pane: PANE_FIELDS,
  client: CLIENT_FIELDS,
} as const;

export type CatalogEntity = keyof typeof ENTITY_FIELDS;

/** Looks a field up by its tmux spelling within one entity's table. */
export function fieldByWire(entity: CatalogEntity, wire: string): { key: string; spec: FieldSpec } | undefined {
  for (const [key, spec] of Object.entries(ENTITY_FIELDS[entity])) {
    if (spec.wire === wire) return { key, spec };
  }
  return undefined;
}
