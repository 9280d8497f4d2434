/**
 * The fleet layout, Director on the left and members stacked in an equal-height column on
 * the right, as pure planning over pane geometry. The backends read the geometry and apply
 * the plans.
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

/** The row resizes (all but the bottom pane, top first) that make a tmux column equal. */
export function columnHeightPlan(column: readonly PaneBox[]): { id: string; height: number }[] {
  if (column.length < 2) return [];
  const total = column.reduce((sum, pane) => sum + pane.height, 0) + column.length - 1;
  const heights = equalHeights(total, column.length);
  return column.slice(0, -1).map((pane, i) => ({ id: pane.id, height: heights[i]! }));
}

// ---- herdr: splits with ratios -------------------------------------------------------------

export interface RatioSplit {
  direction: 'right' | 'down';
  ratio: number;
  rect: { x: number; y: number; width: number; height: number };
}

export interface RatioLayout {
  panes: readonly { pane_id: string; rect: { x: number; y: number; width: number; height: number } }[];
  splits: readonly RatioSplit[];
}

/** One signed ratio change: grow (`down`/`right`) or shrink (`up`/`left`) the split that `pane` leads. */
export interface RatioResize {
  pane: string;
  direction: 'up' | 'down' | 'left' | 'right';
  amount: number;
}

/** Ratio changes smaller than this are left alone. */
export const RATIO_TOLERANCE = 1e-3;

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

function boxes(layout: RatioLayout): PaneBox[] {
  return layout.panes.map((pane) => ({ id: pane.pane_id, ...pane.rect }));
}

/** The member column of a ratio layout, top first; empty when the Director is not in it. */
export function ratioColumn(layout: RatioLayout, director: string): PaneBox[] {
  const all = boxes(layout);
  const anchor = all.find((pane) => pane.id === director);
  return anchor === undefined ? [] : memberColumn(anchor, all);
}

/**
 * Equalizes a column built by splitting its bottom pane downwards: split k (led by the
 * k-th pane from the top) gets ratio 1/(N−k), so every member has 1/N of the column.
 * Each change is rounded to four decimals; changes under RATIO_TOLERANCE are skipped.
 */
export function columnRatioPlan(layout: RatioLayout, director: string): RatioResize[] {
  const column = ratioColumn(layout, director);
  const plan: RatioResize[] = [];
  column.slice(0, -1).forEach((pane, k) => {
    const split = layout.splits.find((s) => s.direction === 'down' && s.rect.x === pane.x && s.rect.y === pane.y && s.rect.width === pane.width);
    if (split === undefined) return;
    const delta = round4(1 / (column.length - k) - split.ratio);
    if (Math.abs(delta) < RATIO_TOLERANCE) return;
    plan.push({ pane: pane.id, direction: delta > 0 ? 'down' : 'up', amount: Math.abs(delta) });
  });
  return plan;
}

/**
 * After the last member is gone: a right split still led by the Director is widened back
 * to the whole tab. Null when there is nothing to restore.
 */
export function directorRestorePlan(layout: RatioLayout, director: string): RatioResize | null {
  const anchor = boxes(layout).find((pane) => pane.id === director);
  if (anchor === undefined) return null;
  const split = layout.splits.find((s) => s.direction === 'right' && s.rect.x === anchor.x && s.rect.y === anchor.y && s.rect.height === anchor.height);
  if (split === undefined) return null;
  const amount = round4(1 - split.ratio);
  return amount < RATIO_TOLERANCE ? null : { pane: director, direction: 'right', amount };
}
