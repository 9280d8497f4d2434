import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkLayout, layoutChecksum } from '../../src/workspace/index.js';

/** Layout strings tmux 3.3a printed for #{window_layout}. */
const SAVED = [
  ['b25d,80x24,0,0,0', 1],
  ['8be7,80x24,0,0{78x24,0,0,1,1x24,79,0,2}', 2],
  ['487f,120x40,0,0[120x12,0,0{59x12,0,0,0,60x12,60,0,1},120x12,0,13{59x12,0,13,2,60x12,60,13,3},120x14,0,26,4]', 5],
  ['171f,120x40,0,0[120x24,0,0,0,120x15,0,25{29x15,0,25,1,29x15,30,25,2,29x15,60,25,3,30x15,90,25,4}]', 5],
  ['a731,120x40,0,0[120x7,0,0,0,120x7,0,8,1,120x7,0,16,2,120x7,0,24,3,120x8,0,32,4]', 5],
] as const;

describe('checkLayout', () => {
  it("computes tmux's checksum", () => {
    for (const [layout] of SAVED) assert.equal(layoutChecksum(layout.slice(5)), parseInt(layout.slice(0, 4), 16), layout);
  });

  it('accepts saved layouts with enough cells and refuses too few', () => {
    for (const [layout, cells] of SAVED) {
      assert.deepEqual(checkLayout(layout, cells), { ok: true, layout });
      assert.equal(checkLayout(layout, cells + 1).ok, false);
    }
  });

  it('accepts cells without pane ids, as older tmux wrote them', () => {
    const body = '80x24,0,0{40x24,0,0,39x24,41,0}';
    const layout = `${layoutChecksum(body).toString(16).padStart(4, '0')},${body}`;
    assert.deepEqual(checkLayout(layout, 2), { ok: true, layout });
  });

  it('refuses malformed layout strings even with a matching checksum', () => {
    for (const body of ['80x24,0,0{40x24,0,0,1', '80x24,0,0,1}', '80x24,0', '80x24,0,0{}', `${'80x24,0,0{'.repeat(40)}1x1,0,0${'}'.repeat(40)}`]) {
      const layout = `${layoutChecksum(body).toString(16).padStart(4, '0')},${body}`;
      assert.equal(checkLayout(layout, 1).ok, false, body);
    }
  });

  it('resolves presets and unique prefixes', () => {
    for (const name of ['even-horizontal', 'even-vertical', 'main-horizontal', 'main-vertical', 'tiled']) {
      assert.deepEqual(checkLayout(name, 3), { ok: true, layout: name });
    }
    assert.deepEqual(checkLayout('even-h', 1), { ok: true, layout: 'even-horizontal' });
    assert.equal(checkLayout('even', 1).ok, false);
    assert.equal(checkLayout('tiles', 1).ok, false);
    assert.equal(checkLayout('main-vertical-mirrored', 1).ok, false);
  });
});
