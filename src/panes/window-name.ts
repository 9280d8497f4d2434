import { ArgumentError, type Server } from '../tmux/index.js';
import { requirePane } from './tmux-pane.js';
import { foldBody } from './printable.js';

/** The `--json` document of both window-name verbs. */
export interface WindowRename {
  pane: string;
  old: string;
  new: string;
  action: 'renamed' | 'noop';
}

async function rewrite(server: Server, paneId: string, rename: (name: string) => string | undefined): Promise<WindowRename> {
  const { values } = await requirePane(server, paneId, ['window_id', 'window_name']);
  const [windowId, name] = values as [string, string];
  const next = rename(name);
  if (next === undefined || next === name) return { pane: paneId, old: name, new: name, action: 'noop' };
  await server.window(windowId).rename(next);
  return { pane: paneId, old: name, new: next, action: 'renamed' };
}

/** Prepends `prefix` to the pane's window name unless it already starts with it. */
export function ensureWindowPrefix(server: Server, paneId: string, prefix: string): Promise<WindowRename> {
  if (prefix === '') return Promise.reject(new ArgumentError('the prefix is empty'));
  return rewrite(server, paneId, (name) => (name.startsWith(prefix) ? undefined : prefix + name));
}

/**
 * Swaps the window name's `from` prefix for `to` (empty `to` strips it). A name that does
 * not start with `from` (the user retitled the window) is left alone.
 */
export function replaceWindowPrefix(server: Server, paneId: string, from: string, to: string): Promise<WindowRename> {
  if (from === '') return Promise.reject(new ArgumentError('the prefix to replace is empty'));
  return rewrite(server, paneId, (name) => (name.startsWith(from) ? to + name.slice(from.length) : undefined));
}

/** Plain output: one line on a rename, nothing on a no-op. */
export function renderWindowRename(rename: WindowRename): string {
  return rename.action === 'renamed' ? `renamed: ${foldBody(rename.old)} -> ${foldBody(rename.new)}\n` : '';
}

/** The `--json` shape of a window rename. */
export function windowRenameJson(rename: WindowRename): Record<string, unknown> {
  return { pane_id: rename.pane, old: rename.old, new: rename.new, action: rename.action };
}
