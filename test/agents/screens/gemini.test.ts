import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { geminiRules } from '../../../src/agents/screens/gemini.js';
import { agentScreen } from '../../../src/agents/screens/screen.js';
import type { AgentScreen } from '../../../src/agents/screens/types.js';
import { describeRecordedScreens, type ExpectedReading, screenFixtures } from './fixtures.js';


/** What each recorded screen of Gemini CLI must read as. */
const EXPECTED: Readonly<Record<string, ExpectedReading>> = {
  'idle-empty': { phase: 'composer', rule: 'gemini.composer', composer: '' },
  'idle-after-reply': { phase: 'composer', rule: 'gemini.composer', composer: '' },
  'draft-single': { phase: 'composer', rule: 'gemini.composer', composer: 'hello drover' },
  'draft-multiline': { phase: 'composer', rule: 'gemini.composer', composer: 'first line\nsecond line\nthird line' },
  'draft-paste-placeholder': { phase: 'composer', rule: 'gemini.composer', composer: '[Pasted Text: 2000 chars]' },
  // "w0 w1 … w299 endZ" typed: the composer shows its last 10 rows, the wrapped rows joined with the spaces they dropped.
  'draft-scrolled': { phase: 'composer', rule: 'gemini.composer', composer: `${Array.from({ length: 213 }, (_, index) => `w${index + 87}`).join(' ')} endZ` },
  'completion-at': { phase: 'composer', rule: 'gemini.composer', composer: '@no', completion: true },
  'completion-slash': { phase: 'composer', rule: 'gemini.composer', composer: '/', completion: true },
  busy: { phase: 'busy', rule: 'gemini.busy', composer: '' },
  'busy-typeahead': { phase: 'busy', rule: 'gemini.busy', composer: 'next idea' },
  'busy-queued': { phase: 'busy', rule: 'gemini.busy', composer: '' },
  permission: { phase: 'permission', rule: 'gemini.permission', composer: null, question: 'Allow execution of [Shell]?' },
  'trust-dialog': { phase: 'dialog', rule: 'gemini.trust-dialog', composer: null, question: 'Do you trust the files in this folder?' },
  'first-start-trust': { phase: 'dialog', rule: 'gemini.trust-dialog', composer: null, question: 'Do you trust the files in this folder?' },
  'first-start': { phase: 'dialog', rule: 'gemini.auth-dialog', composer: null, question: 'How would you like to authenticate for this project?' },
  'key-dialog': { phase: 'dialog', rule: 'gemini.key-dialog', composer: null, question: 'Enter Gemini API Key' },
  'rewind-dialog': { phase: 'dialog', rule: 'gemini.dialog', composer: null, question: '> Rewind' },
  'model-dialog': { phase: 'dialog', rule: 'gemini.dialog', composer: null, question: 'Select Model' },
  exited: { phase: 'exited', rule: 'gemini.exited', composer: null },
  'exited-trust-escape': { phase: 'exited', rule: 'gemini.exited', composer: null },
};

describeRecordedScreens(geminiRules, EXPECTED, 20);

const WIDTH = 120;
const HEIGHT = 40;
const GREY_BAND = '\x1b[48;5;240m';
const SEPARATOR = `\x1b[2m\x1b[38;5;244m${'─'.repeat(WIDTH)}\x1b[0m`;
const FOOTER = [
  ' workspace (/directory)                                                 sandbox                                  /model',
  ' /tmp/project                                                           no sandbox                                 Auto',
];
const PLACEHOLDER = ' > \x1b[7m \x1b[0m\x1b[38;5;248m Type your message or @path/to/file';

/** A Gemini CLI screen: transcript rows, the status row, the separator, the mode hint, the composer on its band, the footer. */
function screen(transcript: readonly string[], composer: readonly string[], status = '  ? for shortcuts'): AgentScreen {
  const rows = [...transcript, status, SEPARATOR, ' Shift+Tab to accept edits', GREY_BAND, ...composer, `\x1b[49m`, ...FOOTER];
  return agentScreen(rows.join('\n'), { width: WIDTH, height: HEIGHT, cursor: { x: 3, y: HEIGHT - 4, visible: false } });
}

/** Rows as a rounded box, the way Gemini CLI draws tool results, dialogs and approvals. */
function box(body: readonly string[]): string[] {
  const inner = WIDTH - 4;
  return [`╭${'─'.repeat(WIDTH - 2)}╮`, ...body.map((line) => `│ ${line.padEnd(inner)} │`), `╰${'─'.repeat(WIDTH - 2)}╯`];
}

describe('geminiRules.composerShows on recorded drafts', () => {
  it('accepts the scrolled composer for the whole typed text', () => {
    const fixture = screenFixtures('gemini').find(({ name }) => name === 'draft-scrolled');
    assert.ok(fixture !== undefined);
    const typed = `${Array.from({ length: 300 }, (_, index) => `w${index}`).join(' ')} endZ`;
    assert.ok(geminiRules.composerShows(geminiRules.read(fixture.screen).composer?.text ?? '', typed));
  });
});

describe('geminiRules on screens that quote its own UI', () => {
  it('reads a reply quoting the trust dialog and an approval box as the composer', () => {
    const reading = geminiRules.read(
      screen(
        [
          ' > what does the trust dialog say?',
          '',
          '✦ It asks:',
          ...box(['Do you trust the files in this folder?', '', '● 1. Trust folder (project)', '  2. Trust parent folder', "  3. Don't trust"]),
          ...box(['? Shell  rm -rf build', 'Allow execution of [Shell]?', '', '● 1. Allow once', '  2. Allow for this session', '  3. No, suggest changes (esc)']),
        ],
        [PLACEHOLDER],
      ),
    );
    assert.equal(reading.phase, 'composer');
    assert.deepEqual(reading.composer, { text: '' });
    assert.equal(reading.question, null);
  });

  it('reads an idle composer under a finished exchange as empty', () => {
    const reading = geminiRules.read(screen([' > hello there', '', '✦ Received 11 characters. Done.'], [PLACEHOLDER]));
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.rule, 'gemini.composer');
    assert.deepEqual(reading.composer, { text: '' });
    assert.equal(reading.completion, false);
  });

  it('reads a draft that asks "Do you want to proceed?" as the composer with that text', () => {
    const reading = geminiRules.read(screen([], [' > \x1b[38;5;231mDo you want to proceed?\x1b[7m \x1b[0m', '   1. Allow once']));
    assert.equal(reading.phase, 'composer');
    assert.deepEqual(reading.composer, { text: 'Do you want to proceed?\n1. Allow once' });
    assert.equal(reading.question, null);
  });

  it('is not busy when the transcript quotes the spinner line', () => {
    const reading = geminiRules.read(screen(['✦ The status row said "⠏ Thinking... (esc to cancel, 3s)".'], [PLACEHOLDER]));
    assert.equal(reading.phase, 'composer');
  });

  it('is busy when the status row above the separator shows the spinner, whatever its phrase', () => {
    const reading = geminiRules.read(screen([' > go'], [PLACEHOLDER], ' ⠼ Planning the refactor (esc to cancel, 1m 4s)'));
    assert.equal(reading.phase, 'busy');
    assert.deepEqual(reading.composer, { text: '' });
  });

  it('takes a user message in the transcript for no composer when a dialog holds the input', () => {
    const rows = [' > /model', '', ...box(['', 'Select Model', '', '● 1. Auto', '  2. Manual', '', '(Press Esc to close)'])];
    const reading = geminiRules.read(agentScreen(rows.join('\n'), { width: WIDTH, height: HEIGHT, cursor: { x: 0, y: HEIGHT - 1, visible: false } }));
    assert.equal(reading.phase, 'dialog');
    assert.equal(reading.composer, null);
    assert.deepEqual(reading.question, { snippet: 'Select Model' });
  });

  it('keeps a dialog a dialog with the Ctrl+C warning under its box', () => {
    const rows = [...box(['', 'Enter Gemini API Key', '', '(Press Enter to submit, Esc to cancel, Ctrl+C to clear stored key)']), '', 'Press Ctrl+C again to exit.'];
    const reading = geminiRules.read(agentScreen(rows.join('\n'), { width: WIDTH, height: HEIGHT, cursor: { x: 0, y: 10, visible: false } }));
    assert.equal(reading.phase, 'dialog');
    assert.equal(reading.rule, 'gemini.key-dialog');
  });

  it('reads a blank screen (the agent starting) as unknown, not exited', () => {
    const reading = geminiRules.read(agentScreen('', { width: WIDTH, height: HEIGHT, cursor: { x: 0, y: 0, visible: true } }));
    assert.equal(reading.phase, 'unknown');
  });
});

describe('geminiRules.composerShows', () => {
  const long = Array.from({ length: 300 }, (_, index) => `w${index}`).join(' ');

  it('accepts the text as typed or as wrapped', () => {
    assert.ok(geminiRules.composerShows('hello drover', 'hello drover'));
    assert.ok(geminiRules.composerShows('line one\nline two', 'line one\nline two'));
    assert.ok(geminiRules.composerShows('word000 word001\nword002', 'word000 word001 word002'));
  });

  it('accepts the placeholder for a folded paste of that size only', () => {
    assert.ok(geminiRules.composerShows('[Pasted Text: 2000 chars]', 'x'.repeat(2000)));
    assert.ok(geminiRules.composerShows('[Pasted Text: 6 lines]', 'a\nb\nc\nd\ne\nf'));
    assert.ok(geminiRules.composerShows('[Pasted Text: 6 lines]', 'a\r\nb\r\nc\r\nd\r\ne\r\nf'));
    assert.ok(!geminiRules.composerShows('[Pasted Text: 1999 chars]', 'x'.repeat(2000)));
    assert.ok(!geminiRules.composerShows('[Pasted Text: 5 lines]', 'a\nb\nc\nd\ne'));
    assert.ok(!geminiRules.composerShows('[Pasted Text: 400 chars]', 'x'.repeat(400)), 'a paste this small is shown, not folded');
  });

  it('accepts the last rows of a text too long for the input box', () => {
    assert.ok(geminiRules.composerShows(long.slice(-1000), long));
  });

  it('rejects a part of the text the agent would show whole, and other text', () => {
    assert.ok(!geminiRules.composerShows('hello', 'hello drover'));
    assert.ok(!geminiRules.composerShows('drover', 'hello drover'));
    assert.ok(!geminiRules.composerShows(long.slice(0, 1000), long), 'the first part: the text is still arriving');
    assert.ok(!geminiRules.composerShows('something else', 'hello drover'));
    assert.ok(!geminiRules.composerShows('', 'hello drover'));
    assert.ok(geminiRules.composerShows('', ''));
  });
});

describe('geminiRules on a composer band drawn with half-block edges', () => {
  // Gemini CLI 0.61 in a full-colour tmux pane draws its band's top and bottom edges as rows of
  // half blocks; the bottom edge sits between the composer and the footer, where a menu would.
  const edged = (composer: readonly string[], between: readonly string[] = []): AgentScreen =>
    agentScreen(
      ['Tips for getting started:', '', '  ? for shortcuts', SEPARATOR, ' Shift+Tab to accept edits', '▄'.repeat(WIDTH), ...composer, '▀'.repeat(WIDTH), ...between, ...FOOTER].join('\n'),
      { width: WIDTH, height: HEIGHT, cursor: { x: 25, y: 6, visible: false } },
    );

  it('reads the draft, with no menu open', () => {
    const reading = geminiRules.read(edged([' > Say hello in one word.']));
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.composer?.text, 'Say hello in one word.');
    assert.equal(reading.completion, false);
  });

  it('still sees a completion menu opened under the band', () => {
    const reading = geminiRules.read(edged([' > @no'], [' notes.txt']));
    assert.equal(reading.composer?.text, '@no');
    assert.equal(reading.completion, true);
  });
});
