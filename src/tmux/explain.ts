import { Criteria, criteriaReads, type CriteriaReads } from './criteria.js';
import { ArgumentError } from './errors.js';
import { snapshotCommands } from './snapshot.js';

/**
 * How much of a search may be handed to tmux: `auto` and `never` capture the graph and
 * evaluate locally; `required` insists on a tmux-side filter, which drover does not have.
 */
export type Pushdown = 'auto' | 'never' | 'required';

/** How a pane search runs, decided without tmux I/O. */
export interface PaneSearchPlan {
  readonly entity: 'pane';
  readonly pushdown: Pushdown;
  /** False when the pushdown asked for cannot be honoured: the search refuses before any I/O. */
  readonly executable: boolean;
  /** What is captured: the tmux reads of one snapshot, and the fields and relations the criteria use. */
  readonly capture: {
    readonly reads: readonly string[];
    readonly clients: false;
    readonly fields: CriteriaReads['fields'];
    readonly relations: readonly string[];
  };
  /** What tmux filters before drover sees rows: nothing. */
  readonly pushedDown: null;
  /** What drover evaluates on the captured graph: all of the criteria (shown with values redacted; toWire() exports them). */
  readonly residual: Criteria;
  /** Why no part of the criteria is sent to tmux. */
  readonly rejected: readonly string[];
}

const NO_COMPILER = "drover has no compiler from criteria to tmux's -f filter formats whose results are proven equal to local evaluation";

/** Validates pane criteria and explains the search they make; no tmux I/O. */
export function explainPaneSearch(criteria: Criteria | object | string, pushdown: Pushdown = 'auto'): PaneSearchPlan {
  if (pushdown !== 'auto' && pushdown !== 'never' && pushdown !== 'required') throw new ArgumentError(`pushdown must be auto, never or required, not ${JSON.stringify(pushdown)}`);
  const compiled = paneCriteria(criteria);
  const reads = criteriaReads(compiled);
  const rejected = [NO_COMPILER];
  if (reads.relations.length > 0) rejected.push(`relations (${reads.relations.join(', ')}) need the captured graph; tmux filters one listing row at a time`);
  if (reads.patterns) rejected.push("regex matches with RE2 in linear time; tmux's #{m/r:} uses the system's POSIX regular expressions");
  if (pushdown === 'never') rejected.unshift('pushdown: never was asked');
  return Object.freeze({
    entity: 'pane' as const,
    pushdown,
    executable: pushdown !== 'required',
    capture: Object.freeze({ reads: Object.freeze(snapshotCommands().map((command) => command[0]!)), clients: false as const, fields: reads.fields, relations: reads.relations }),
    pushedDown: null,
    residual: compiled,
    rejected: Object.freeze(rejected),
  });
}

/** Pane criteria from a Criteria, the versioned wire form (object or JSON text) or a bare pane expression. */
export function paneCriteria(criteria: Criteria | object | string): Criteria {
  const compiled = criteria instanceof Criteria ? criteria : typeof criteria === 'string' || 'version' in criteria ? Criteria.fromJSON(criteria) : Criteria.build('pane', criteria);
  if (compiled.entity !== 'pane') throw new ArgumentError(`a pane search needs pane criteria, not ${compiled.entity}`);
  return compiled;
}
