import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnHeightPlan, columnRatioPlan, directorRestorePlan, equalHeights, memberColumn, plainCapture, type RatioLayout } from '../../src/fleet/index.js';

const box = (id: string, x: number, y: number, width: number, height: number) => ({ id, x, y, width, height });

describe('tmux column planning', () => {
  it('splits rows evenly between stacked panes, one-row borders included', () => {
    assert.deepEqual(equalHeights(50, 3), [16, 16, 16]);
    assert.deepEqual(equalHeights(50, 4), [12, 12, 12, 11]);
    assert.deepEqual(equalHeights(24, 1), [24]);
    assert.throws(() => equalHeights(24, 0), RangeError);
  });

  it('finds the member column right of the Director, top first, ignoring panes beside or below it', () => {
    const director = box('%0', 0, 0, 100, 40);
    const panes = [director, box('%5', 0, 41, 100, 9), box('%3', 101, 20, 99, 30), box('%1', 101, 0, 99, 19)];
    assert.deepEqual(
      memberColumn(director, panes).map((p) => p.id),
      ['%1', '%3'],
    );
  });

  it('resizes all but the bottom pane to equal heights', () => {
    const column = [box('%1', 101, 0, 99, 24), box('%2', 101, 25, 99, 12), box('%3', 101, 38, 99, 12)];
    assert.deepEqual(columnHeightPlan(column), [
      { id: '%1', height: 16 },
      { id: '%2', height: 16 },
    ]);
    assert.deepEqual(columnHeightPlan(column.slice(0, 1)), []);
  });
});

/** Director p1 on the left (ratio `left`), a down-split chain of `ratios` on the right. */
function herdrLayout(left: number, ratios: number[]): RatioLayout {
  const area = { x: 0, y: 0, width: 200, height: 60 };
  const width = Math.round(area.width * left);
  const panes = [{ pane_id: 'p1', rect: { x: 0, y: 0, width, height: 60 } }];
  const splits: RatioLayout['splits'][number][] = [{ direction: 'right', ratio: left, rect: area }];
  let rect = { x: width, y: 0, width: area.width - width, height: 60 };
  ratios.forEach((ratio, k) => {
    splits.push({ direction: 'down', ratio, rect });
    const height = Math.round(rect.height * ratio);
    panes.push({ pane_id: `m${k + 1}`, rect: { ...rect, height } });
    rect = { ...rect, y: rect.y + height, height: rect.height - height };
  });
  panes.push({ pane_id: `m${ratios.length + 1}`, rect });
  return { panes, splits };
}

describe('herdr column planning', () => {
  it('gives split k of an N-pane column the ratio 1/(N-k), skipping changes under 1e-3', () => {
    assert.deepEqual(columnRatioPlan(herdrLayout(0.5, [0.5, 0.5]), 'p1'), [{ pane: 'm1', direction: 'up', amount: 0.1667 }]);
    assert.deepEqual(columnRatioPlan(herdrLayout(0.5, [0.2, 0.6]), 'p1'), [
      { pane: 'm1', direction: 'down', amount: 0.1333 },
      { pane: 'm2', direction: 'up', amount: 0.1 },
    ]);
    assert.deepEqual(columnRatioPlan(herdrLayout(0.5, [0.3334, 0.5]), 'p1'), []);
    assert.deepEqual(columnRatioPlan(herdrLayout(0.5, []), 'p1'), []);
    assert.deepEqual(columnRatioPlan(herdrLayout(0.5, [0.5]), 'elsewhere'), [], 'a layout without the Director plans nothing');
  });

  it('widens the Director back to the whole tab only while a right split it leads remains', () => {
    assert.deepEqual(directorRestorePlan({ panes: [{ pane_id: 'p1', rect: { x: 0, y: 0, width: 100, height: 60 } }], splits: [{ direction: 'right', ratio: 0.5, rect: { x: 0, y: 0, width: 200, height: 60 } }] }, 'p1'), {
      pane: 'p1',
      direction: 'right',
      amount: 0.5,
    });
    assert.equal(directorRestorePlan({ panes: [{ pane_id: 'p1', rect: { x: 0, y: 0, width: 200, height: 60 } }], splits: [] }, 'p1'), null);
  });
});

describe('plainCapture', () => {
  it('drops escape sequences and keeps what the last carriage-return redraw left', () => {
    const raw = '\u001b[32m$\u001b[0m ls\n\u001b]0;title\u0007done\nprogress 10%\rprogress 100%\r\n\u001b(Bplain';
    assert.equal(plainCapture(raw), '$ ls\ndone\nprogress 100%\nplain');
  });
});
