import { unwrapOutcome, type MuxPort } from '../mux/index.js';
import { ArgumentError } from '../process/index.js';
import { listedPane, onPane } from './facts.js';
import { PANE_VERB_BUDGET_MS, requireCapabilities } from './pane-actions.js';
import { foldBody, hexEscape } from './printable.js';
import { paneRefJson, type PaneRef } from './target.js';

/** What either window-name verb did to the tab (tmux window) holding a pane. */
export interface WindowRename extends PaneRef {
  old: string;
  new: string;
  action: 'renamed' | 'noop';
}

async function rewrite(port: MuxPort, pane: string, rename: (name: string) => string | undefined): Promise<WindowRename> {
  requireCapabilities(port, 'renaming the window of a pane', ['renameTab']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (ref) => {
    const listed = await listedPane(port, ref.paneId);
    const name = listed.tabLabel ?? '';
    const next = rename(name);
    if (next === undefined || next === name) return { ...ref, old: name, new: name, action: 'noop' };
    unwrapOutcome(port, await port.renameTab(listed.tabId, next));
    return { ...ref, old: name, new: next, action: 'renamed' };
  });
}

/** A control character in a prefix, refused as the caller's mistake before the multiplexer is asked: a window name is one printable line. */
function controlIn(what: string, text: string): ArgumentError | undefined {
  const control = /\p{Cc}/u.exec(text);
  return control === null ? undefined : new ArgumentError(`${what} contains a control character (${hexEscape(control[0])} at offset ${control.index}); a window name is one printable line`);
}

/** Prepends `prefix` to the name of the pane's window (tab) unless it already starts with it. */
export function ensureWindowPrefix(port: MuxPort, pane: string, prefix: string): Promise<WindowRename> {
  if (prefix === '') return Promise.reject(new ArgumentError('the prefix is empty'));
  const control = controlIn('the prefix', prefix);
  if (control !== undefined) return Promise.reject(control);
  return rewrite(port, pane, (name) => (name.startsWith(prefix) ? undefined : prefix + name));
}

/**
 * Swaps the window name's `from` prefix for `to` (empty `to` strips it). A name that does
 * not start with `from` (the user retitled the window) is left alone.
 */
export function replaceWindowPrefix(port: MuxPort, pane: string, from: string, to: string): Promise<WindowRename> {
  if (from === '') return Promise.reject(new ArgumentError('the prefix to replace is empty'));
  const control = controlIn('the new prefix', to);
  if (control !== undefined) return Promise.reject(control);
  return rewrite(port, pane, (name) => (name.startsWith(from) ? to + name.slice(from.length) : undefined));
}

/** Plain output: one line on a rename, nothing on a no-op. */
export function renderWindowRename(rename: WindowRename): string {
  return rename.action === 'renamed' ? `renamed: ${foldBody(rename.old)} -> ${foldBody(rename.new)}\n` : '';
}

/** The `--json` shape of a window rename. */
export function windowRenameJson(rename: WindowRename): Record<string, unknown> {
  return { ...paneRefJson(rename), old: rename.old, new: rename.new, action: rename.action };
}
