import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { columnHeightPlan, directorRestorePlan, equalHeights, memberColumn, plainCapture } from '../../src/fleet/index.js';

const box = (id: string, x: number, y: number, width: number, height: number) => ({ id, x, y, width, height });

describe('column planning', () => {
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

describe('restoring the Director after the last member', () => {
  it('widens a Director left alone but narrower than its tab to the whole width, and nothing else', () => {
    const narrow = box('p1', 0, 0, 100, 60);
    assert.deepEqual(directorRestorePlan(narrow, [narrow], 200), { id: 'p1', width: 200 });
    assert.equal(directorRestorePlan(box('p1', 0, 0, 200, 60), [box('p1', 0, 0, 200, 60)], 200), null, 'already the whole width');
    assert.equal(directorRestorePlan(narrow, [narrow, box('%5', 101, 0, 99, 60)], 200), null, 'another pane still shares the tab');
  });
});

describe('plainCapture', () => {
  it('drops escape sequences and keeps what the last carriage-return redraw left', () => {
    const raw = '\u001b[32m$\u001b[0m ls\n\u001b]0;title\u0007done\nprogress 10%\rprogress 100%\r\n\u001b(Bplain';
    assert.equal(plainCapture(raw), '$ ls\ndone\nprogress 100%\nplain');
  });
});
