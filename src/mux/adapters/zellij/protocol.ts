/**
 * What the zellij adapter says to the `zellij` CLI and how it reads the answers; no I/O.
 *
 * `zellij action …` is fire-and-forget: aimed at a pane or tab that does not exist it exits 0
 * and does nothing. Only a session that is not running fails with an exit code, so `gone` is
 * always learned from a fresh listing, and every listing asks for --json rather than a table.
 */
import { requestedCwd } from '../../rules.js';

export const LIST_PANES = ['action', 'list-panes', '--all', '--json'] as const;
export const LIST_TABS = ['action', 'list-tabs', '--all', '--json'] as const;
export const LIST_SESSIONS = ['list-sessions', '--no-formatting'] as const;

/**
 * zellij takes typed text as one argv element with no stdin path, and Linux caps one argument at
 * 128 KiB including its terminating NUL (MAX_ARG_STRLEN); past that it is refused, never split.
 */
export const MAX_TYPED_TEXT_BYTES = 128 * 1024 - 1;
/** zellij's default scroll_buffer_size: no verb reports a pane's real depth. */
export const SCROLL_BUFFER_LINES = 10_000;

export function sessionArgs(session: string, args: readonly string[]): string[] {
  return ['--session', session, ...args];
}

export function dumpScreenArgs(paneId: string, ansi: boolean, full: boolean): string[] {
  return ['action', 'dump-screen', '--pane-id', paneId, ...(ansi ? ['--ansi'] : []), ...(full ? ['--full'] : [])];
}

/** "--" ends zellij's flag parsing, so text starting with "-" is text. */
export function writeCharsArgs(paneId: string, text: string): string[] {
  return ['action', 'write-chars', '--pane-id', paneId, '--', text];
}

export function sendKeysArgs(paneId: string, keys: readonly string[]): string[] {
  return ['action', 'send-keys', '--pane-id', paneId, '--', ...keys];
}

/** An empty name restores zellij's own name for the pane, which is how a label is cleared. */
export function renamePaneArgs(paneId: string, label: string): string[] {
  return ['action', 'rename-pane', '--pane-id', paneId, '--', label];
}

export function closePaneArgs(paneId: string): string[] {
  return ['action', 'close-pane', '--pane-id', paneId];
}

/** A blank cwd is left off: zellij refuses a --cwd with no value outright. */
export function newTabArgs(label: string | undefined, cwd: string | undefined): string[] {
  const asked = requestedCwd(cwd);
  return ['action', 'new-tab', ...(label === undefined ? [] : ['--name', label]), ...(asked === undefined ? [] : ['--cwd', asked])];
}

export function renameTabArgs(tabNumber: number, label: string): string[] {
  return ['action', 'rename-tab-by-id', '--', String(tabNumber), label];
}

export function closeTabArgs(tabNumber: number): string[] {
  return ['action', 'close-tab-by-id', '--', String(tabNumber)];
}

export function subscribeArgs(paneIds: readonly string[]): string[] {
  return ['subscribe', '--ansi', '--format', 'json', ...paneIds.flatMap((paneId) => ['--pane-id', paneId])];
}

export interface ZellijPaneRecord {
  readonly paneNumber: number;
  readonly focusedInTab: boolean;
  readonly exited: boolean;
  /** The exit status of an exited pane's command, when zellij kept it. */
  readonly exitStatus: number | null;
  readonly title: string;
  readonly tabNumber: number;
  readonly rows: number;
  readonly columns: number;
  /** The cursor within the pane's content, when zellij reports it. */
  readonly cursor: { readonly x: number; readonly y: number } | null;
  /** The command the pane was started with ("" for the default shell), not what runs in its foreground. */
  readonly command: string;
  readonly cwd: string;
}

export interface ZellijTabRecord {
  readonly tabNumber: number;
  readonly position: number;
  readonly name: string;
  readonly active: boolean;
}

export interface ZellijSessionRecord {
  readonly name: string;
  readonly running: boolean;
  /** Whole seconds since zellij created the session's socket, as list-sessions prints them. */
  readonly ageSeconds: number | undefined;
}

type JsonRecord = Record<string, unknown>;

function records(stdout: string): JsonRecord[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  return parsed.filter((row): row is JsonRecord => typeof row === 'object' && row !== null && !Array.isArray(row));
}

const integer = (row: JsonRecord, key: string): number | undefined => (Number.isInteger(row[key]) ? (row[key] as number) : undefined);
const text = (row: JsonRecord, key: string): string => (typeof row[key] === 'string' ? (row[key] as string) : '');

/**
 * The terminal panes of a `list-panes --all --json`, or undefined when stdout is not a listing.
 * Plugin panes (tab bar, status bar, overlays) are zellij's furniture and are dropped.
 */
export function parsePaneList(stdout: string): ZellijPaneRecord[] | undefined {
  const rows = records(stdout);
  if (rows === undefined) return undefined;
  const panes: ZellijPaneRecord[] = [];
  for (const row of rows) {
    if (row.is_plugin === true) continue;
    const paneNumber = integer(row, 'id');
    const tabNumber = integer(row, 'tab_id');
    if (paneNumber === undefined || tabNumber === undefined) continue;
    const cursor = row.cursor_coordinates_in_pane;
    panes.push({
      paneNumber,
      focusedInTab: row.is_focused === true,
      exited: row.exited === true,
      exitStatus: integer(row, 'exit_status') ?? null,
      title: text(row, 'title'),
      tabNumber,
      rows: integer(row, 'pane_content_rows') ?? 0,
      columns: integer(row, 'pane_content_columns') ?? 0,
      cursor: Array.isArray(cursor) && cursor.length === 2 && cursor.every((value) => Number.isInteger(value) && value >= 0) ? { x: cursor[0] as number, y: cursor[1] as number } : null,
      command: text(row, 'terminal_command'),
      cwd: text(row, 'pane_cwd'),
    });
  }
  return panes;
}

/** The tabs of a `list-tabs --all --json`; zellij's pane counts are not read (they include plugin panes). */
export function parseTabList(stdout: string): ZellijTabRecord[] | undefined {
  const rows = records(stdout);
  if (rows === undefined) return undefined;
  const tabs: ZellijTabRecord[] = [];
  for (const row of rows) {
    const tabNumber = integer(row, 'tab_id');
    if (tabNumber === undefined) continue;
    tabs.push({ tabNumber, position: integer(row, 'position') ?? 0, name: text(row, 'name'), active: row.active === true });
  }
  return tabs.sort((a, b) => a.position - b.position);
}

/** humantime's units, as zellij's list-sessions prints an age ("1day 2h 3m 4s"; a year is 365.25 days, a month 30.44). */
const AGE_UNITS: Readonly<Record<string, number>> = { year: 31_557_600, years: 31_557_600, month: 2_630_016, months: 2_630_016, day: 86_400, days: 86_400, h: 3_600, m: 60, s: 1, ms: 0, us: 0, ns: 0 };

/** The whole seconds of a humantime duration, or undefined when the text is not one. */
function parseAge(text: string): number | undefined {
  const words = text.trim().split(/\s+/);
  let seconds = 0;
  for (const word of words) {
    const match = /^(\d+)([a-z]+)$/.exec(word);
    const unit = match === null ? undefined : AGE_UNITS[match[2]!];
    if (unit === undefined) return undefined;
    seconds += Number(match![1]) * unit;
  }
  return words.length > 0 ? seconds : undefined;
}

/** `list-sessions --no-formatting`: "<name> [Created <age> ago]" per line, "(EXITED …" for a stopped one. */
export function parseSessionList(stdout: string): ZellijSessionRecord[] {
  return stdout
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => {
      const age = /\[Created (.+?) ago\]/.exec(line)?.[1];
      return { name: line.split(/\s/)[0]!, running: !line.includes('(EXITED'), ageSeconds: age === undefined ? undefined : parseAge(age) };
    });
}

/**
 * Whether zellij said the session is not there. Three spellings: a name it never knew ("not
 * found. The following sessions are active"), none running ("No active zellij sessions"), and a
 * session that has exited ("There is no active session!").
 */
export function saysNoSession(stderr: string): boolean {
  return /not found\.?\s*(the following sessions|$)/im.test(stderr) || stderr.includes('No active zellij sessions') || /there is no active session/i.test(stderr);
}

/** zellij's default filler in the one title slot, which is neither a label nor a program's title. */
export function isDefaultTitle(title: string): boolean {
  return /^Pane #\d+$/.test(title);
}

/** One line of `subscribe --format json`: a pane repainted (with its viewport) or a pane closed; anything else is ignored. */
export function parseStreamLine(line: string): { kind: 'update'; paneId: string; initial: boolean; screen: string } | { kind: 'closed'; paneId: string } | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof frame !== 'object' || frame === null) return undefined;
  const { event, pane_id: paneId, is_initial: initial, viewport } = frame as JsonRecord;
  if (typeof paneId !== 'string' || paneId === '') return undefined;
  if (event === 'pane_closed') return { kind: 'closed', paneId };
  if (event !== 'pane_update') return undefined;
  const screen = Array.isArray(viewport) ? viewport.filter((entry) => typeof entry === 'string').join('\n') : '';
  return { kind: 'update', paneId, initial: initial === true, screen };
}

/** Everything about the session's structure, and nothing that moves on its own (focus). */
export function censusSignature(panes: readonly ZellijPaneRecord[], tabs: readonly ZellijTabRecord[]): string {
  return JSON.stringify([
    panes.map((pane) => [pane.paneNumber, pane.tabNumber, pane.exited, pane.title]),
    tabs.map((tab) => [tab.tabNumber, tab.position, tab.name]),
  ]);
}
