import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatMuxKey, isDeclaredUnsupported, KeySpellingError, MUX_DECLARATIONS, MUX_NAMED_KEYS, parseMuxKey, toHerdrKey, toTmuxKey, toZellijKey } from '../../src/mux/index.js';

function translate(table: typeof toTmuxKey, spelling: string): string {
  const translation = table(parseMuxKey(spelling));
  return translation.ok ? translation.key : `refused: ${translation.detail}`;
}

describe('the neutral key grammar', () => {
  it('parses single characters, named keys and canonical chords', () => {
    assert.deepEqual(parseMuxKey('a'), { modifiers: [], key: 'a', named: false });
    assert.deepEqual(parseMuxKey('ctrl+c'), { modifiers: ['ctrl'], key: 'c', named: false });
    assert.deepEqual(parseMuxKey('ctrl+alt+shift+meta+F12'), { modifiers: ['ctrl', 'alt', 'shift', 'meta'], key: 'F12', named: true });
    assert.deepEqual(parseMuxKey('+'), { modifiers: [], key: '+', named: false });
    assert.deepEqual(parseMuxKey('ctrl++'), { modifiers: ['ctrl'], key: '+', named: false });
    assert.deepEqual(parseMuxKey('shift+Tab'), { modifiers: ['shift'], key: 'Tab', named: true });
    assert.deepEqual(parseMuxKey('é'), { modifiers: [], key: 'é', named: false });
  });

  it('formats a parsed key back to the same spelling', () => {
    for (const spelling of ['a', 'ctrl+c', 'alt+shift+Enter', 'ctrl++', 'meta+PageDown', ';']) {
      assert.equal(formatMuxKey(parseMuxKey(spelling)), spelling);
    }
  });

  const rejections: [string, RegExp][] = [
    ['', /cannot be empty/],
    ['Ctrl+c', /Ctrl is spelled ctrl/],
    ['C-c', /joined with "\+", as in ctrl\+c/],
    ['shift+ctrl+a', /order ctrl, alt, shift, meta: write ctrl\+shift\+a/],
    ['ctrl+ctrl+a', /ctrl appears twice/],
    ['enter', /did you mean Enter\?/],
    ['esc', /did you mean Escape\?/],
    ['BTab', /did you mean shift\+Tab\?/],
    ['ctrl+', /nothing follows the last "\+"/],
    [' ', /spelled Space/],
    ['\n', /spelled Enter/],
    ['\u0003', /not a printable character/],
    ['Nonsense', /neither one character nor a key name/],
    ['cmd+a', /cmd is spelled meta/],
  ];
  for (const [spelling, message] of rejections) {
    it(`refuses ${JSON.stringify(spelling)} with a clear message`, () => {
      assert.throws(
        () => parseMuxKey(spelling),
        (error: unknown) => error instanceof KeySpellingError && message.test(error.message) && error.message.includes(JSON.stringify(spelling)),
      );
    });
  }

  it('matches declared unsupported keys by bare key or by exact chord', () => {
    assert.equal(isDeclaredUnsupported(parseMuxKey('shift+PageUp'), ['PageUp']), true);
    assert.equal(isDeclaredUnsupported(parseMuxKey('ctrl+Enter'), ['ctrl+Enter']), true);
    assert.equal(isDeclaredUnsupported(parseMuxKey('Enter'), ['ctrl+Enter']), false);
    assert.equal(isDeclaredUnsupported(parseMuxKey('alt+Enter'), ['ctrl+Enter']), false);
  });
});

describe('the translation tables', () => {
  it('spells keys the tmux way', () => {
    assert.equal(translate(toTmuxKey, 'ctrl+c'), 'C-c');
    assert.equal(translate(toTmuxKey, 'ctrl+alt+x'), 'C-M-x');
    assert.equal(translate(toTmuxKey, 'shift+Tab'), 'BTab');
    assert.equal(translate(toTmuxKey, 'ctrl+shift+Tab'), 'C-S-Tab');
    assert.equal(translate(toTmuxKey, 'PageUp'), 'PPage');
    assert.equal(translate(toTmuxKey, 'PageDown'), 'NPage');
    assert.equal(translate(toTmuxKey, 'Delete'), 'DC');
    assert.equal(translate(toTmuxKey, 'Insert'), 'IC');
    assert.equal(translate(toTmuxKey, 'Backspace'), 'BSpace');
    assert.equal(translate(toTmuxKey, ';'), ';');
    assert.match(translate(toTmuxKey, 'meta+a'), /^refused: .*Super/);
    assert.match(translate(toTmuxKey, 'ctrl+Enter'), /^refused: tmux delivers nothing for ctrl\+Enter/);
  });

  it('declares no unsupported key for tmux or zellij, which translate the whole alphabet', () => {
    for (const [mux, table] of [['tmux', toTmuxKey], ['zellij', toZellijKey]] as const) {
      assert.deepEqual(MUX_DECLARATIONS[mux].unsupportedKeys, [], mux);
      for (const name of MUX_NAMED_KEYS) assert.doesNotMatch(translate(table, name), /^refused/, `${mux} ${name}`);
    }
  });

  it('spells keys the herdr way', () => {
    assert.equal(translate(toHerdrKey, 'ctrl+c'), 'ctrl+c');
    assert.equal(translate(toHerdrKey, 'Escape'), 'escape');
    assert.equal(translate(toHerdrKey, 'shift+Tab'), 'shift+tab');
    assert.equal(translate(toHerdrKey, 'meta+k'), 'cmd+k');
    assert.equal(translate(toHerdrKey, 'ctrl++'), 'ctrl+plus');
    assert.equal(translate(toHerdrKey, 'F5'), 'f5');
    for (const name of ['PageUp', 'PageDown', 'Home', 'End', 'Insert', 'Delete']) assert.match(translate(toHerdrKey, name), /^refused: herdr has no key named/);
  });

  it('spells keys the zellij way', () => {
    assert.equal(translate(toZellijKey, 'ctrl+a'), 'Ctrl a');
    assert.equal(translate(toZellijKey, 'alt+shift+b'), 'Alt Shift b');
    assert.equal(translate(toZellijKey, 'Escape'), 'Esc');
    assert.equal(translate(toZellijKey, 'PageUp'), 'PageUp');
    assert.equal(translate(toZellijKey, 'ctrl+Enter'), 'Ctrl Enter');
    assert.match(translate(toZellijKey, 'meta+a'), /^refused: zellij drops/);
  });
});
