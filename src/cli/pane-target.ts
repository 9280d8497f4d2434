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

/** A window part tmux reads as something other than a name: an index, an id, or a token such as `{last}`, `!` or `+1`. */
const WINDOW_NOT_A_NAME = /^(?:[0-9]+|@[0-9]+|\{[a-z-]+\}|[!^$]|[+-][0-9]*)$/;

/**
 * The target with its session and window names marked for exact matching (tmux's `=`): on its
 * own tmux takes a name's prefix or pattern too (`work:ca` reaching window `cat5`), and a pane
 * verb must reach the pane that was named or none. The pane part is split off at the last
 * period, as tmux splits it.
 */
export function exactTmuxTarget(target: string): string {
  const colon = target.indexOf(':');
  const session = target.slice(0, colon);
  const rest = target.slice(colon + 1);
  const period = rest.lastIndexOf('.');
  const window = period === -1 ? rest : rest.slice(0, period);
  const pane = period === -1 ? '' : rest.slice(period);
  const exactSession = session.startsWith('$') ? session : `=${session}`;
  const exactWindow = window === '' || WINDOW_NOT_A_NAME.test(window) ? window : `=${window}`;
  return `${exactSession}:${exactWindow}${pane}`;
}

/**
 * The pane id a target names, asked of tmux once: `%3` as it is, `work:0.1` or `work:editor`
 * (that window's active pane) resolved to its `%id`, names matched exactly. A missing pane is
 * PaneNotFoundError; a target of another form is refused before tmux is asked.
 */
export async function resolveTmuxTarget(server: Server, target: string): Promise<string> {
  if (isPaneId(target)) return target;
  if (!TARGET.test(target)) throw new ArgumentError(`${JSON.stringify(target)} does not name a pane: give ${PANE_TARGET_FORMS}`);
  // display-message alone answers for the current pane when its target names none, so a
  // read-only command that fails on a missing pane (show-options -p) goes first, in the same client.
  const exact = exactTmuxTarget(target);
  const result = await server.run(['show-options', '-p', '-t', exact, ';', 'display-message', '-p', '-t', exact, '#{pane_id}']);
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
