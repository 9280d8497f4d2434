import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keyedSubmitVerdict, lineEndingAt, textBeforeCursor, type ScreenText } from '../../src/panes/index.js';

/** A screen of `width` columns; `|` marks the cursor (removed from the row), none when absent. */
function screen(width: number, ...rows: string[]): ScreenText {
  const y = rows.findIndex((row) => row.includes('|'));
  const lines = rows.map((row) => row.replace('|', '').replace(/\s+$/, ''));
  return { lines, width, cursor: y === -1 ? null : { x: rows[y]!.indexOf('|'), y, visible: true } };
}

const TEXT = 'hello-drover-42';

describe('textBeforeCursor and lineEndingAt', () => {
  it('reads the cursor row up to the cursor, after the full rows it wrapped from', () => {
    assert.equal(textBeforeCursor(screen(10, 'aaaaaaaaaa', 'bbbbbbbbbb', 'cc|  ', 'dd')), 'aaaaaaaaaabbbbbbbbbbcc');
    assert.equal(textBeforeCursor(screen(10, 'aaaaaaaaa', 'cc|')), 'cc', 'a row that ends short ended with a line break');
    assert.equal(lineEndingAt(screen(10, 'aaaaaaaaaa', 'cc'), 1), 'aaaaaaaaaacc');
  });

  it('joins a row that wrapped just after a space, with the space, where the screen says which rows wrapped', () => {
    const text = 'aaaaaaaaa bbb';
    const wrapped = { ...screen(10, 'aaaaaaaaa ', 'bbb|'), wrapped: [true, false] };
    assert.equal(textBeforeCursor(wrapped), text);
    assert.equal(textBeforeCursor({ ...wrapped, wrapped: [false, false] }), 'bbb', 'a row that did not wrap ended with a line break, full or not');
    assert.equal(textBeforeCursor(screen(10, 'aaaaaaaaa ', 'bbb|')), 'bbb', 'without the flags a trimmed row is not full');
  });

  it('is empty at the start of a row, and null without a cursor', () => {
    assert.equal(textBeforeCursor(screen(10, 'aaaaaaaaaa', '|')), '');
    assert.equal(textBeforeCursor(screen(10, 'abc')), null);
  });
});

describe('keyedSubmitVerdict', () => {
  const typed = screen(40, 'cat-ready', `${TEXT}|`);

  it('cat: the echo of the line above the cursor is not the input line', () => {
    assert.equal(keyedSubmitVerdict(typed, screen(40, 'cat-ready', TEXT, TEXT, '|'), TEXT), 'submitted');
    assert.equal(keyedSubmitVerdict(typed, screen(40, 'cat-ready', TEXT, '|'), TEXT), 'submitted', 'before cat printed it');
  });

  it('a REPL that answers and prompts again', () => {
    const before = screen(40, '>>> 1', '1', `>>> ${TEXT}|`);
    assert.equal(keyedSubmitVerdict(before, screen(40, '>>> 1', '1', `>>> ${TEXT}`, 'NameError', '>>> |'), TEXT), 'submitted');
  });

  it('a screen that scrolled: the typed row moved up, the cursor stayed on the bottom row', () => {
    const before = screen(40, '38', '39', `${TEXT}|`);
    assert.equal(keyedSubmitVerdict(before, screen(40, '39', TEXT, '|'), TEXT), 'submitted');
    assert.equal(keyedSubmitVerdict(before, screen(40, TEXT, TEXT, '|'), TEXT), 'submitted');
  });

  it('a tail split over the cursor row and the full row above it', () => {
    const long = `${TEXT}-abcdefg`;
    const before = screen(10, 'hello-drov', 'er-42-abcd', 'efg|');
    assert.equal(keyedSubmitVerdict(before, screen(10, 'hello-drov', 'er-42-abcd', 'efg', 'hello-drov', 'er-42-abcd', 'efg', '|'), long), 'submitted');
    assert.equal(keyedSubmitVerdict(screen(10, 'x', 'hello-drov', 'er-42-abcd', 'efg|'), before, long), 'still_typed', 'scrolled, but the cursor still follows the text');
    assert.equal(keyedSubmitVerdict(screen(10, 'hello-drov', 'er-42-abc', 'defg|'), screen(10, '|'), `${TEXT}-abcdefg`), 'unwatched', 'a short row above ended with a line break: the tail is not before the cursor');
  });

  it('unchanged, still typed, and no cursor to read', () => {
    assert.equal(keyedSubmitVerdict(typed, screen(40, 'cat-ready', `${TEXT}|`), TEXT), 'unchanged');
    assert.equal(keyedSubmitVerdict(typed, screen(40, '[enter seen]', `${TEXT}|`), TEXT), 'still_typed');
    assert.equal(keyedSubmitVerdict(typed, screen(40, 'cat-ready', TEXT, ''), TEXT), 'unwatched');
    assert.equal(keyedSubmitVerdict(screen(40, 'cat-ready', TEXT), screen(40, 'cat-ready', TEXT, TEXT), TEXT), 'unwatched');
  });
});
