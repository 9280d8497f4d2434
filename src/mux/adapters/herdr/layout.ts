/**
 * herdr lays a tab out as a tree of splits, each giving its first part a ratio of its rectangle,
 * and resizes a pane by moving the ratio of the innermost split along that axis that holds it.
 * These pure functions put that in the port's terms: where each pane sits in its tab, and the
 * ratio change that gives a pane a size in cells.
 */
import type { MuxRect, MuxSize } from '../../types.js';
import type { HerdrDirection, HerdrLayout, HerdrRect } from './protocol.js';

/** The tab's size, and each pane's rectangle from the tab's top-left corner. */
export function layoutGeometry(layout: HerdrLayout): { size: MuxSize; panes: Map<string, MuxRect> } {
  const { area } = layout;
  return {
    size: { width: area.width, height: area.height },
    panes: new Map(layout.panes.map((pane) => [pane.pane_id, { x: pane.rect.x - area.x, y: pane.rect.y - area.y, width: pane.rect.width, height: pane.rect.height }])),
  };
}

/** One move of a split's ratio, as herdr's pane.resize takes it. */
export interface RatioStep {
  readonly direction: HerdrDirection;
  /** How far the ratio moves (a fraction of the split's rectangle), rounded to four decimals. */
  readonly amount: number;
}

function within(inner: HerdrRect, outer: HerdrRect): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/**
 * The ratio change that gives `paneId` `cells` along `axis`: the innermost split of that
 * orientation holding the pane moves by the difference, its first part growing when the pane
 * is in it, shrinking when the pane is in the second. Null when nothing is to move (the size is
 * already right, or no split of that orientation holds the pane, which then spans the whole
 * tab that way); undefined when the layout has no such pane.
 */
export function ratioStep(layout: HerdrLayout, paneId: string, axis: 'width' | 'height', cells: number): RatioStep | null | undefined {
  const pane = layout.panes.find((candidate) => candidate.pane_id === paneId)?.rect;
  if (pane === undefined) return undefined;
  const orientation = axis === 'height' ? 'down' : 'right';
  const split = layout.splits
    .filter((candidate) => candidate.direction === orientation && within(pane, candidate.rect))
    .sort((a, b) => a.rect.width * a.rect.height - b.rect.width * b.rect.height)[0];
  const change = cells - pane[axis];
  if (split === undefined || change === 0) return null;
  const start = axis === 'height' ? 'y' : 'x';
  const extent = split.rect[axis];
  const first = Math.round(extent * split.ratio);
  const inFirst = pane[start] < split.rect[start] + first;
  const delta = round4((first + (inFirst ? change : -change)) / extent - split.ratio);
  if (delta === 0) return null;
  const grow = orientation === 'down' ? 'down' : 'right';
  const shrink = orientation === 'down' ? 'up' : 'left';
  return { direction: delta > 0 ? grow : shrink, amount: Math.abs(delta) };
}
