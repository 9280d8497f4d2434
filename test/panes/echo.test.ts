import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { countWrapped, newlyEchoed, squeeze } from '../../src/panes/index.js';
import { renderComposer } from '../fixtures/fake-agent.js';
import { fixture } from './fixtures.js';

describe('the wrap-tolerant echo matcher', () => {
  it('finds text wrapped across a framed composer with side borders', () => {
    const screen = fixture('wrapped-prompt-side-borders.txt');
    assert.equal(countWrapped(screen, 'Read /tmp/prompts/refactor-the-tail-helper.md and execute it.'), 1);
  });

  it('finds text the fake agent wrapped at every width', () => {
    const text = 'Read /tmp/a-rather-long-prompt-file-name.md and execute it.';
    for (const columns of [10, 17, 30, 80]) {
      for (const style of ['box', 'rule'] as const) {
        const screen = renderComposer(text, columns, style).join('\n');
        assert.equal(countWrapped(screen, text), 1, `${style} at ${columns} columns`);
      }
    }
  });

  it('does not match different text', () => {
    const screen = fixture('wrapped-prompt-side-borders.txt');
    assert.equal(countWrapped(screen, 'Read /tmp/prompts/refactor-the-tail-helpers.md and execute it.'), 0);
  });

  it('counts non-overlapping occurrences', () => {
    assert.equal(countWrapped('abab ab\nab', 'ab'), 4);
    assert.equal(countWrapped('aaaa', 'aa'), 2);
  });

  it('squeezes whitespace and box-drawing runes but keeps block elements and text', () => {
    assert.equal(squeeze(' │a─b╮\u2580c\n\td'), 'ab\u2580cd');
  });

  it('rejects text with nothing visible to look for', () => {
    assert.throws(() => countWrapped('screen', ' ─ \n'), ArgumentError);
  });

  it('reports an echo only when the count rose over the baseline', () => {
    const text = 'run the tests';
    const before = `> ${text}\n● Done.\n│ >   │`;
    assert.equal(newlyEchoed(before, before, text), false);
    assert.equal(newlyEchoed(before, `${before.slice(0, -1)}${text} │`, text), true);
  });
});
