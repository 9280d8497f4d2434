import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { SNIPPET_LINES, snippet, tailLines } from '../../src/panes/index.js';
import { fixture } from './fixtures.js';

describe('tailLines', () => {
  it('drops the blank rows tmux pads the screen with, then keeps the last N lines', () => {
    const screen = fixture('claude-idle-box.txt');
    assert.equal(
      tailLines(screen, 3),
      '│ >                                                │\n╰──────────────────────────────────────────────────╯\n  ? for shortcuts\n',
    );
  });

  it('keeps interior blank lines and trailing spaces inside a line', () => {
    assert.equal(tailLines('one  \n\n  two \n   \n\n', 5), 'one  \n\n  two \n');
    assert.equal(tailLines('one  \n\n  two \n   \n\n', 2), '\n  two \n');
  });

  it('returns everything when there are fewer lines than asked for', () => {
    assert.equal(tailLines('a\nb\n', 50), 'a\nb\n');
  });

  it('terminates the last line even when the input did not', () => {
    assert.equal(tailLines('a\nb', 1), 'b\n');
  });

  it('yields nothing for a screen of padding', () => {
    assert.equal(tailLines(fixture('blank.txt'), 20), '');
    assert.equal(tailLines('', 20), '');
  });

  it('leaves escape sequences of an -e capture intact and treats escape-only rows as padding', () => {
    const screen = fixture('escapes-e-capture.txt');
    assert.equal(tailLines(screen, 2), '\n\x1b[2m  3 skipped\x1b[0m\n');
    assert.equal(tailLines(screen, 10), '\x1b[1m● Build\x1b[0m finished   \n\x1b[32m✓\x1b[39m 12 tests passed  \n\n\x1b[2m  3 skipped\x1b[0m\n');
  });

  it('tails a Buffer byte for byte, invalid UTF-8 included', () => {
    const bytes = Buffer.concat([Buffer.from('keep\n'), Buffer.from([0xff, 0xa0, 0x20, 0x0a]), Buffer.from('  \n\n')]);
    assert.deepEqual([...tailLines(bytes, 1)], [0xff, 0xa0, 0x20, 0x0a]);
    assert.ok(Buffer.isBuffer(tailLines(bytes, 1)));
  });

  it('does not count a non-breaking space as padding', () => {
    assert.equal(tailLines('a\n\u00a0\n', 1), '\u00a0\n');
  });

  it('rejects a line count below 1 or not whole', () => {
    assert.throws(() => tailLines('a\n', 0), ArgumentError);
    assert.throws(() => tailLines('a\n', 1.5), /whole number/);
  });
});

describe('snippet', () => {
  it('is the last 20 lines without padding', () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const text = snippet(`${lines.join('\n')}\n\n\n`);
    assert.equal(SNIPPET_LINES, 20);
    assert.equal(text.split('\n').length - 1, 20);
    assert.ok(text.startsWith('line 10\n'));
    assert.ok(text.endsWith('line 29\n'));
  });
});
