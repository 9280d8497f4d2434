/**
 * The fleet layout, Director on the left and members stacked in an equal-height column on
 * the right, as pure planning over where panes sit in their tab. The backend reads the
 * geometry from the multiplexer and applies the plans as pane sizes in cells.
 */

export interface PaneBox {
  id: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Panes right of the Director (the member column), top first. */
export function memberColumn<T extends PaneBox>(director: T, panes: readonly T[]): T[] {
  return panes.filter((pane) => pane.id !== director.id && pane.x >= director.x + director.width).sort((a, b) => a.y - b.y || a.x - b.x);
}

/**
 * Heights for `count` panes stacked in `total` rows with a one-row border between
 * neighbours: equal, the first ones one row taller when the rows do not divide evenly.
 */
export function equalHeights(total: number, count: number): number[] {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`a column needs at least one pane, got ${count}`);
  const usable = total - (count - 1);
  const base = Math.floor(usable / count);
  const extra = usable - base * count;
  return Array.from({ length: count }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * The heights (all but the bottom pane, top first) that make a column equal, applied in that
 * order: each pane takes its rows from the panes below it, and the bottom one keeps the rest.
 */
export function columnHeightPlan(column: readonly PaneBox[]): { id: string; height: number }[] {
  if (column.length < 2) return [];
  const total = column.reduce((sum, pane) => sum + pane.height, 0) + column.length - 1;
  const heights = equalHeights(total, column.length);
  return column.slice(0, -1).map((pane, i) => ({ id: pane.id, height: heights[i]! }));
}

/**
 * After the last member is gone: a Director left alone in its tab but narrower than it (a
 * multiplexer that keeps the closed side of a split) gets the whole width back. Null when
 * there is nothing to restore.
 */
export function directorRestorePlan(director: PaneBox, panes: readonly PaneBox[], tabWidth: number): { id: string; width: number } | null {
  const alone = panes.every((pane) => pane.id === director.id);
  return alone && director.width < tabWidth ? { id: director.id, width: tabWidth } : null;
}
