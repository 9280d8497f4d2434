/**
 * tmux targets as a person types them (`work:0.1`, `work:editor`), resolved once, through the
 * tmux library, to the id of the pane they name, so that everything after acts on that one pane
 * even if windows are renamed or moved meanwhile. They are tmux's own addressing, so they are
 * resolved here, at the command line, and the pane verbs only ever see pane ids and keys.
 */
import { PANE_TARGET_FORMS, PaneNotFoundError } from '../panes/index.js';
import { ArgumentError, TargetNotFoundError, failureOf, isPaneId, type Server } from '../tmux/index.js';

/** A tmux target a person types: `session:window` with an optional `.pane`, no control characters, not an option. */
const TARGET = /^[^\s:-][^:\u0000-\u001f\u007f]*:[^:\u0000-\u001f\u007f]*$/;

/**
 * The pane id a target names, asked of tmux once: `%3` as it is, `work:0.1` or `work:editor`
 * (that window's active pane) resolved to its `%id`. A missing pane is PaneNotFoundError; a
 * target of another form is refused before tmux is asked.
 */
export async function resolveTmuxTarget(server: Server, target: string): Promise<string> {
  if (isPaneId(target)) return target;
  if (!TARGET.test(target)) throw new ArgumentError(`${JSON.stringify(target)} does not name a pane: give ${PANE_TARGET_FORMS}`);
  // display-message alone answers for the current pane when its target names none, so a
  // read-only command that fails on a missing pane (show-options -p) goes first, in the same client.
  const result = await server.run(['show-options', '-p', '-t', target, ';', 'display-message', '-p', '-t', target, '#{pane_id}']);
  if (!result.ok) {
    const failure = failureOf(result);
    // show-options reports a missing target as "no such pane: TARGET".
    const missing = failure instanceof TargetNotFoundError || /^no such pane: /m.test(result.stderrText());
    throw missing ? new PaneNotFoundError(target, `give ${PANE_TARGET_FORMS}`) : failure;
  }
  const id = result.text().trimEnd().split('\n').at(-1) ?? '';
  if (!isPaneId(id)) throw new PaneNotFoundError(target, `give ${PANE_TARGET_FORMS}`);
  return id;
}
