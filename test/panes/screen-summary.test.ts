import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LAST_LINE_MAX, lastMeaningfulLine, transcriptEnd } from '../../src/panes/screen-summary.js';
import { loadScreenFixture } from '../agents/screens/fixtures.js';

const plain = (capture: string): string => capture.replace(/\x1b\[[0-9;?:]*[a-zA-Z]/g, '');

describe('lastMeaningfulLine', () => {
  it('takes the lowest row with words on a program’s screen, frames and blank runs taken out', () => {
    const screen = ['$ npm test', '', '│ ✔ parses   12 ms │', '╰──────────────────╯', '  ', '$'].join('\n');
    assert.equal(lastMeaningfulLine(screen, { agent: false, width: 40 }), '✔ parses 12 ms');
    assert.equal(lastMeaningfulLine('\n  \n──\n', { agent: false, width: 40 }), null);
  });

  it('clips a long line', () => {
    const line = lastMeaningfulLine(`${'x'.repeat(500)}\n`, { agent: false, width: 500 });
    assert.equal(line?.length, LAST_LINE_MAX);
    assert.ok(line?.endsWith('…'));
  });

  it('reads an agent’s transcript, not its input box or footer', () => {
    const claude = loadScreenFixture('claude', '2.1.332', 'permission');
    assert.equal(lastMeaningfulLine(plain(claude.capture), { agent: true, width: claude.meta.width }), '⎿ $ echo drover-tool-ran');
    const gemini = loadScreenFixture('gemini', '0.61.0', 'busy');
    const line = lastMeaningfulLine(plain(gemini.capture), { agent: true, width: gemini.meta.width });
    assert.match(line ?? '', /^Thinking\.\.\. \(esc to cancel/, 'Gemini draws inline: the blank rows under its footer are skipped');
    const opencode = loadScreenFixture('opencode', '1.18.33', 'idle-after-reply');
    assert.doesNotMatch(lastMeaningfulLine(plain(opencode.capture), { agent: true, width: opencode.meta.width }) ?? '', /ctrl\+p/);
  });

  it('ends the transcript at the highest rule of the input area, and nowhere on a screen without one', () => {
    const rows = ['reply', '─'.repeat(40), '> draft', '─'.repeat(40), 'footer'];
    assert.equal(transcriptEnd(rows, 40), 1);
    assert.equal(transcriptEnd(['a', 'b', '', ''], 40), 2);
    assert.equal(transcriptEnd(['short ──', 'b'], 40), 2, 'a rule must span most of the screen');
  });
});
