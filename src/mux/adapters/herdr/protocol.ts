/**
 * herdr's socket protocol, as drover speaks it: newline-delimited JSON over a unix socket, one
 * request per connection ({"id","method","params"} → {"id","result":{"type",…}} or
 * {"id","error":{"code","message"}}), and events.subscribe, which acknowledges with
 * subscription_started and then streams {"event":"<snake_name>","data":{"type":…,…}} lines.
 * Field names are herdr's (snake_case); nothing here does I/O.
 */
import { HerdrError } from '../../errors.js';
import type { AgentStatus, MuxRefusalReason } from '../../types.js';

export interface HerdrWorkspaceWorktree {
  readonly repo_key: string;
  readonly repo_name: string;
  readonly repo_root: string;
  readonly checkout_path: string;
  readonly is_linked_worktree: boolean;
}

export interface HerdrWorkspaceInfo {
  readonly workspace_id: string;
  readonly number: number;
  readonly label: string;
  readonly focused: boolean;
  readonly pane_count: number;
  readonly tab_count: number;
  readonly active_tab_id: string;
  readonly agent_status: AgentStatus;
  readonly worktree?: HerdrWorkspaceWorktree | null;
}

export interface HerdrTabInfo {
  readonly tab_id: string;
  readonly workspace_id: string;
  readonly number: number;
  readonly label: string;
  readonly focused: boolean;
  readonly pane_count: number;
  readonly agent_status: AgentStatus;
}

export interface HerdrAgentSession {
  readonly source: string;
  readonly agent: string;
  readonly kind: 'id' | 'path';
  readonly value: string;
}

export interface HerdrScrollInfo {
  readonly offset_from_bottom: number;
  readonly max_offset_from_bottom: number;
  readonly viewport_rows: number;
}

export interface HerdrPaneInfo {
  readonly pane_id: string;
  readonly terminal_id: string;
  readonly workspace_id: string;
  readonly tab_id: string;
  readonly focused: boolean;
  readonly cwd?: string | null;
  readonly foreground_cwd?: string | null;
  readonly agent?: string | null;
  readonly agent_status: AgentStatus;
  readonly label?: string | null;
  readonly terminal_title?: string | null;
  readonly revision: number;
  readonly agent_session?: HerdrAgentSession | null;
  readonly scroll?: HerdrScrollInfo | null;
}

export interface HerdrSessionSnapshot {
  readonly version: string;
  readonly protocol: number;
  readonly workspaces: readonly HerdrWorkspaceInfo[];
  readonly tabs: readonly HerdrTabInfo[];
  readonly panes: readonly HerdrPaneInfo[];
  /** Each tab's layout; absent from an older herdr read through its list calls. */
  readonly layouts?: readonly HerdrLayout[];
  readonly focused_workspace_id?: string | null;
  readonly focused_tab_id?: string | null;
  readonly focused_pane_id?: string | null;
}

export type HerdrReadSource = 'visible' | 'recent' | 'recent_unwrapped' | 'detection';
export type HerdrReadFormat = 'text' | 'ansi';

export interface HerdrReadResult {
  readonly pane_id: string;
  readonly workspace_id: string;
  readonly tab_id: string;
  readonly source: HerdrReadSource;
  readonly format: HerdrReadFormat;
  readonly text: string;
  readonly revision: number;
  readonly truncated: boolean;
}

export interface HerdrRect {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export type HerdrSplitDirection = 'right' | 'down';
export type HerdrDirection = 'left' | 'right' | 'up' | 'down';

export interface HerdrLayout {
  readonly workspace_id: string;
  readonly tab_id: string;
  readonly zoomed: boolean;
  readonly area: HerdrRect;
  readonly focused_pane_id: string;
  readonly panes: readonly { readonly pane_id: string; readonly focused: boolean; readonly rect: HerdrRect }[];
  readonly splits: readonly { readonly id: string; readonly direction: HerdrSplitDirection; readonly ratio: number; readonly rect: HerdrRect }[];
}

export interface HerdrWorktreeInfo {
  readonly path: string;
  readonly branch?: string | null;
  readonly label: string;
  readonly is_bare: boolean;
  readonly is_detached: boolean;
  readonly is_prunable: boolean;
  readonly is_linked_worktree: boolean;
  readonly open_workspace_id?: string | null;
}

/** One pushed event: the snake_case event name and its data. */
export interface HerdrEvent {
  readonly event: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A subscription entry: the dot-form event type, plus pane_id where the type requires one. */
export interface HerdrSubscription {
  readonly type: string;
  readonly pane_id?: string;
}

/** herdr error codes that say the target does not exist. */
const NOT_FOUND_CODES = new Set(['not_found', 'pane_not_found', 'tab_not_found', 'workspace_not_found', 'worktree_not_found', 'agent_not_found']);

/** What a gated verb answers for a herdr error code: a missing target is gone, anything else herdr declined. */
export function reasonForCode(code: string): MuxRefusalReason {
  return NOT_FOUND_CODES.has(code) ? 'gone' : 'refused';
}

export type ResultObject = Readonly<Record<string, unknown>>;

function protocolError(what: string): HerdrError {
  return new HerdrError(`herdr answered something drover does not understand: ${what}`, { phase: 'decode', delivery: 'observed', reason: 'refused' });
}

/** The result's `type` must be the one the method answers with. */
export function expectResultType(result: ResultObject, type: string, method: string): void {
  if (result.type !== type) throw protocolError(`${method} answered ${JSON.stringify(result.type)}, not ${type}`);
}

export function field<T>(result: ResultObject, name: string, check: (value: unknown) => boolean, method: string): T {
  const value = result[name];
  if (!check(value)) throw protocolError(`${method} answered without a valid ${name}`);
  return value as T;
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
export const isArray = (value: unknown): value is unknown[] => Array.isArray(value);
export const isString = (value: unknown): value is string => typeof value === 'string';

/** Light structural checks on records herdr sends; full field-by-field validation would only restate herdr's schema. */
export function paneInfo(value: unknown, method: string): HerdrPaneInfo {
  if (!isObject(value) || !isString(value.pane_id) || !isString(value.workspace_id) || !isString(value.tab_id)) throw protocolError(`${method} sent a pane without ids`);
  return value as unknown as HerdrPaneInfo;
}

export function tabInfo(value: unknown, method: string): HerdrTabInfo {
  if (!isObject(value) || !isString(value.tab_id) || !isString(value.workspace_id)) throw protocolError(`${method} sent a tab without ids`);
  return value as unknown as HerdrTabInfo;
}

export function workspaceInfo(value: unknown, method: string): HerdrWorkspaceInfo {
  if (!isObject(value) || !isString(value.workspace_id)) throw protocolError(`${method} sent a workspace without an id`);
  return value as unknown as HerdrWorkspaceInfo;
}
