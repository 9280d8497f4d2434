import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArgumentError, run } from '../../src/process/index.js';
import { foldBody } from '../../src/panes/index.js';
import {
  INLINE_BODY_LIMIT,
  formatNotificationLine,
  formatTimestamp,
  maxTextLength,
  shellPromptLine,
  truncateForText,
  validateLiteralLine,
} from '../../src/fleet/index.js';

const CLAUSES =
  "[drover] Resume your work if something was still running. [drover] If this delivery's Escape dismissed a pending prompt in your pane, that rejection did not come from the user; re-issue the tool call if you still need it.";

describe('notification line', () => {
  it('matches the documented example exactly', () => {
    const line = formatNotificationLine({
      messageId: 57,
      fromMemberId: 15,
      createdAt: '2026-10-24T09:00:00.000000+00:00',
      text: 'ready (doc)\nsee the reviewer notes',
    });
    assert.equal(line, `[drover msg 57 from 15 2026-10-24T09:00:00.000000+00:00] ready (doc)⏎see the reviewer notes ${CLAUSES}`);
    assert.doesNotThrow(() => validateLiteralLine(line));
  });

  it('folds line breaks, tabs and other controls onto one visible line', () => {
    assert.equal(foldBody('a\r\nb\nc\rd'), 'a⏎b⏎c⏎d');
    assert.equal(foldBody('\r\n\r\n'), '⏎⏎');
    assert.equal(foldBody('col1\tcol2'), 'col1␉col2');
    assert.equal(foldBody('bell\u0007esc\u001b[0mnul\u0000del\u007f'), 'bell\\x07esc\\x1B[0mnul\\x00del\\x7F');
    assert.equal(foldBody('ünïcödé 🚀 \u0085'), 'ünïcödé 🚀 \u0085');
  });

  it('keeps a folded body of exactly 4000 scalar values inline and points to a longer one', () => {
    const atLimit = '🚀'.repeat(INLINE_BODY_LIMIT);
    const inline = formatNotificationLine({ messageId: 3, fromMemberId: 1, createdAt: 'T', text: atLimit });
    assert.ok(inline.includes(atLimit), 'astral characters count as one scalar each');

    // 3999 characters plus CRLF folds to 4000 scalars: still inline.
    const foldsToLimit = `${'x'.repeat(INLINE_BODY_LIMIT - 1)}\r\n`;
    assert.ok(formatNotificationLine({ messageId: 3, fromMemberId: 1, createdAt: 'T', text: foldsToLimit }).includes('x⏎ [drover]'));

    const over = 'y'.repeat(INLINE_BODY_LIMIT + 1);
    const pointer = formatNotificationLine({ messageId: 9, fromMemberId: 2, createdAt: 'T', text: over });
    assert.equal(pointer, `[drover msg 9 from 2 T] Body is 4001 characters; run drover message show 9 --json to read it. ${CLAUSES}`);
  });

  it('gives a shell at its prompt a line it runs as a no-op, expanding nothing of the message', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-shell-line-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const marker = (name: string): string => join(dir, name);
    const text = `it's \`touch ${marker('a')}\` and $(touch ${marker('b')}); touch ${marker('c')} && touch ${marker('d')} | \\ $HOME "!!" ~ *`;
    const message = { messageId: 5, fromMemberId: 1, createdAt: 'T', text };
    const line = shellPromptLine(message);
    const result = await run(['/bin/sh', '-c', line], { timeoutMs: 10_000 });
    assert.deepEqual([result.exitCode, result.text(), result.stderrText()], [0, '', '']);
    for (const name of ['a', 'b', 'c', 'd']) assert.equal(existsSync(marker(name)), false, `the shell ran touch ${name}`);
    // The one argument `:` gets is the notification, unchanged: printed by printf in its place.
    assert.ok(line.startsWith(': '), line);
    const argument = await run(['/bin/sh', '-c', `printf %s ${line.slice(2)}`], { timeoutMs: 10_000 });
    assert.equal(argument.text(), formatNotificationLine(message, { escapeLead: false }));
  });

  it('counts the stored text, not the folded text, in the pointer', () => {
    // Each control folds to four characters, so the folded body passes the limit first.
    const text = '\u0001'.repeat(1001);
    const line = formatNotificationLine({ messageId: 4, fromMemberId: 1, createdAt: 'T', text });
    assert.ok(line.includes('Body is 1001 characters;'), line);
  });
});

describe('literal line validation', () => {
  it('accepts an ordinary line, shell metacharacters and leading hyphens included, where a control character in the same place is refused', () => {
    for (const text of ['hello', '-n', '! ls | wc -l && echo $(id)', 'ünï 🚀']) {
      assert.equal(validateLiteralLine(text), undefined, `${JSON.stringify(text)} is accepted`);
      // The same line with a control character spliced in is refused, so the check did look at every character.
      const spliced = `${text.slice(0, 1)}\u0007${text.slice(1)}`;
      assert.throws(() => validateLiteralLine(spliced), { message: 'text may not contain control characters (\\x07 at offset 1).' });
    }
  });

  it('refuses newlines first, then blank text, then other controls, naming what was wrong', () => {
    assert.throws(() => validateLiteralLine('\n'), { name: 'ArgumentError', message: 'text may not contain newlines.' });
    assert.throws(() => validateLiteralLine('a\rb'), { message: 'text may not contain newlines.' });
    assert.throws(() => validateLiteralLine('   '), { message: 'text may not be empty.' });
    assert.throws(() => validateLiteralLine(''), ArgumentError);
    assert.throws(() => validateLiteralLine('ok\tno'), { message: 'text may not contain control characters (\\x09 at offset 2).' });
    assert.throws(() => validateLiteralLine('x\u007f', 'command'), { message: 'command may not contain control characters (\\x7F at offset 1).' });
  });
});

describe('text-mode truncation', () => {
  it('keeps the first N code points and appends an ellipsis only when longer', () => {
    assert.equal(truncateForText('a'.repeat(200)), 'a'.repeat(200));
    assert.equal(truncateForText('a'.repeat(201)), `${'a'.repeat(200)}…`);
    assert.equal(truncateForText('🚀🚀🚀', 2), '🚀🚀…');
  });

  it('reads DROVER_MAX_TEXT_LEN and refuses a bad value', () => {
    assert.equal(maxTextLength({}), 200);
    assert.equal(maxTextLength({ DROVER_MAX_TEXT_LEN: '12' }), 12);
    assert.throws(() => maxTextLength({ DROVER_MAX_TEXT_LEN: 'ten' }), { message: "DROVER_MAX_TEXT_LEN must be a positive integer, got 'ten'" });
    assert.throws(() => maxTextLength({ DROVER_MAX_TEXT_LEN: '0' }), ArgumentError);
  });
});

describe('timestamps', () => {
  it('formats microseconds in UTC with a +00:00 offset', () => {
    assert.equal(formatTimestamp(Date.UTC(2026, 9, 24, 9, 0, 0) * 1000), '2026-10-24T09:00:00.000000+00:00');
    assert.equal(formatTimestamp(Date.UTC(2026, 0, 2, 3, 4, 5) * 1000 + 123_456), '2026-01-02T03:04:05.123456+00:00');
    assert.throws(() => formatTimestamp(-1), RangeError);
  });
});
