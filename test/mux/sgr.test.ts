import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applySgr, parseStyledText, rowText, stripEscapes } from '../../src/mux/index.js';

describe("drover's SGR parser", () => {
  it('splits text into rows of spans, one span per run of one style', () => {
    const rows = parseStyledText('plain \x1b[1;31mbold red\x1b[0m back\nsecond');
    assert.deepEqual(rows, [
      [
        { text: 'plain ', style: {} },
        { text: 'bold red', style: { bold: true, fg: 1 } },
        { text: ' back', style: {} },
      ],
      [{ text: 'second', style: {} }],
    ]);
  });

  it('reads 256-colour and 24-bit colours in both the ; and the : forms', () => {
    assert.deepEqual(applySgr({}, '38;5;208;48;2;1;2;3'), { fg: 208, bg: '#010203' });
    assert.deepEqual(applySgr({}, '38:2::255:128:0'), { fg: '#ff8000' });
    assert.deepEqual(applySgr({}, '38:5:27'), { fg: 27 });
    assert.deepEqual(applySgr({}, '97;101'), { fg: 15, bg: 9 });
  });

  it('turns flags off one by one and resets on 0 or an empty list', () => {
    const on = applySgr({}, '1;2;3;4;7;9');
    assert.deepEqual(on, { bold: true, dim: true, italic: true, underline: true, inverse: true, strike: true });
    assert.deepEqual(applySgr(on, '22;23'), { underline: true, inverse: true, strike: true });
    assert.deepEqual(applySgr({ bold: true, fg: 3 }, '39'), { bold: true });
    assert.deepEqual(applySgr({ bold: true, fg: 3 }, ''), {});
  });

  it('carries the style from one row to the next, as a terminal does', () => {
    const rows = parseStyledText('\x1b[32mgreen\nstill green\x1b[m');
    assert.deepEqual(rows[1], [{ text: 'still green', style: { fg: 2 } }]);
  });

  it('drops every other escape: cursor moves, OSC titles and links, charset switches, private modes', () => {
    const text = '\x1b]0;title\x07\x1b[2J\x1b[?25lA\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\\x1b(0B\x1b[5;10H\x1b[>4;1mC';
    assert.equal(stripEscapes(text), 'AlinkBC');
    assert.deepEqual(parseStyledText('\x1b[?1049hx')[0], [{ text: 'x', style: {} }]);
  });

  it('keeps markup-looking text as text and removes control characters', () => {
    const [row] = parseStyledText('<script>alert(1)</script>\r\x07\x00&amp;');
    assert.equal(rowText(row!), '<script>alert(1)</script>&amp;');
  });
});
