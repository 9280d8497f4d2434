import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claudeRules } from '../../../src/agents/screens/claude.js';
import { agentScreen } from '../../../src/agents/screens/screen.js';
import type { AgentScreen } from '../../../src/agents/screens/types.js';
import { describeRecordedScreens, type ExpectedReading } from './fixtures.js';


/** What the probe typed for draft-scrolled, in pieces too small to count as a paste. */
const SCROLLED_DRAFT = Array.from({ length: 900 }, (_, index) => `word${index}`).join(' ');

/** What each recorded screen of Claude Code must read as. */
const EXPECTED: Readonly<Record<string, ExpectedReading>> = {
  'idle-empty': { phase: 'composer', rule: 'claude.composer', composer: '' },
  'idle-after-reply': { phase: 'composer', rule: 'claude.composer', composer: '' },
  'idle-named-session': { phase: 'composer', rule: 'claude.composer', composer: '' },
  interrupted: { phase: 'composer', rule: 'claude.composer', composer: '' },
  'not-logged-in': { phase: 'composer', rule: 'claude.composer', composer: '' },
  'shortcuts-help': { phase: 'composer', rule: 'claude.composer', composer: '' },
  'draft-single': { phase: 'composer', rule: 'claude.composer', composer: 'a single draft line, not submitted', shows: 'a single draft line, not submitted' },
  'draft-multiline': { phase: 'composer', rule: 'claude.composer', composer: 'first line of three\nsecond line\nthird line', shows: 'first line of three\nsecond line\nthird line' },
  'draft-paste-placeholder': { phase: 'composer', rule: 'claude.composer', composer: '[Pasted text #1]', shows: 'p'.repeat(2000) },
  'draft-scrolled': { phase: 'composer', rule: 'claude.composer', composer: /^…word\d+ (?:word\d+[ \n])+word899$/, shows: SCROLLED_DRAFT },
  'shell-mode': { phase: 'composer', rule: 'claude.shell-mode', composer: 'echo not a shell' },
  'completion-at': { phase: 'composer', rule: 'claude.composer', composer: '@no', completion: true },
  'completion-slash': { phase: 'composer', rule: 'claude.composer', composer: '/', completion: true },
  busy: { phase: 'busy', rule: 'claude.turn-running', composer: '' },
  'busy-typeahead': { phase: 'busy', rule: 'claude.turn-running', composer: 'typed while busy' },
  'busy-queued': { phase: 'busy', rule: 'claude.turn-running', composer: '' },
  permission: { phase: 'permission', rule: 'claude.permission', composer: null, question: 'Do you want to proceed?' },
  'trust-dialog': {
    phase: 'dialog',
    rule: 'claude.dialog',
    composer: null,
    question: 'Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source',
  },
  'key-dialog': { phase: 'dialog', rule: 'claude.dialog', composer: null, question: 'Do you want to use this API key?' },
  'auto-mode-nudge': { phase: 'dialog', rule: 'claude.dialog', composer: null, question: 'Make auto mode your default permission mode?' },
  'rewind-menu': { phase: 'dialog', rule: 'claude.dialog', composer: null, question: 'Rewind' },
  exited: { phase: 'exited', rule: 'claude.exited', composer: null },
  'first-start': { phase: 'exited', rule: 'claude.exited', composer: null },
};

describeRecordedScreens(claudeRules, EXPECTED, 20);

const WIDTH = 120;
const HEIGHT = 40;
const RULE = `\x1b[38;5;244m${'─'.repeat(WIDTH)}\x1b[39m`;

/** A Claude Code screen: transcript rows, then a blank row, the composer between two rules, and the footer. */
function screen(transcript: readonly string[], composer: readonly string[], footer = '  ⏸ manual mode on · ? for shortcuts'): AgentScreen {
  const rows = [...transcript, '', RULE, ...composer, RULE, footer];
  const padded = [...Array<string>(Math.max(0, HEIGHT - rows.length)).fill(''), ...rows];
  return agentScreen(padded.join('\n'), { width: WIDTH, height: HEIGHT, cursor: { x: 2, y: HEIGHT - 3, visible: false } });
}

const CURSOR = '\x1b[7m \x1b[0m';
const prompt = (text: string): string => `❯\u00a0${text}${CURSOR}`;

const QUOTING_TRANSCRIPT = [
  '❯ what does the trust dialog say?',
  '',
  '● It says:',
  '   Accessing workspace:',
  '   Quick safety check: Is this a project you created or one you trust?',
  ' ❯ 1. Yes',
  '   2. No',
  ' Do you want to proceed?',
  ' Allow Bash(rm -rf build)?',
  ' Enter to confirm · Esc to cancel',
  '',
  '✻ Worked for 2s · done 12:40 PM',
];

describe('claudeRules on hand-made screens', () => {
  it('reads a transcript quoting dialogs and permission prompts above an idle composer as the composer', () => {
    const reading = claudeRules.read(screen(QUOTING_TRANSCRIPT, [prompt('')]));
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.composer?.text, '');
    assert.equal(reading.question, null);
  });

  it('reads a draft that asks "Do you want to proceed?" as a draft', () => {
    const reading = claudeRules.read(screen(['● Done.'], [prompt('Do you want to proceed? ❯ 1. Yes')]));
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.composer?.text, 'Do you want to proceed? ❯ 1. Yes');
  });

  it('treats the dim placeholder, whose first letter carries the cursor, as empty', () => {
    const placeholder = `❯\u00a0\x1b[7mT\x1b[0;2mry "fix the failing test"\x1b[0m`;
    assert.equal(claudeRules.read(screen([], [placeholder])).composer?.text, '');
  });

  it('keeps a character under the cursor when the cursor sits inside typed text', () => {
    assert.equal(claudeRules.read(screen([], [`❯\u00a0fix th\x1b[7me\x1b[0m bug`])).composer?.text, 'fix the bug');
  });

  it('does not take a spinner-like line in a finished reply for a running turn', () => {
    const reading = claudeRules.read(screen(['● Here is the log:', '  ✻ Thinking… (3s)', '', '✻ Baked for 1s · done 12:41 PM'], [prompt('')]));
    assert.equal(reading.phase, 'composer');
  });

  it('reads the spinner over the composer as busy even when the footer lost its hint', () => {
    const reading = claudeRules.read(screen(['❯ slow please', '', '✶ Pondering… (4s · ↓ 2 tokens)', '  ⎿  Tip: Use /statusline'], [prompt('next')], '  ⏸ manual mode on'));
    assert.equal(reading.phase, 'busy');
    assert.equal(reading.composer?.text, 'next');
  });

  it('sees no completion menu in an indented transcript line separated from the composer by a blank row', () => {
    assert.equal(claudeRules.read(screen(['    + notes.txt'], [prompt('@no')])).completion, false);
  });

  it('knows neither a blank screen nor a shell command line still running', () => {
    assert.equal(claudeRules.read(agentScreen('', { width: WIDTH, height: HEIGHT, cursor: null })).phase, 'unknown');
    const starting = agentScreen('you@box:~/project# exec claude\n', { width: WIDTH, height: HEIGHT, cursor: { x: 0, y: 1, visible: true } });
    assert.equal(claudeRules.read(starting).phase, 'unknown');
  });
});

describe('claudeRules.composerShows', () => {
  const long = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');

  it('accepts the text as typed, wrapped (the space at a wrap is not drawn) or over several lines', () => {
    assert.ok(claudeRules.composerShows('a short line', 'a short line'));
    assert.ok(claudeRules.composerShows('alpha bravo\ncharlie delta', 'alpha bravo charlie delta'));
    assert.ok(claudeRules.composerShows('first\nsecond\nthird', 'first\nsecond\nthird'));
  });

  it('accepts the placeholder of a paste Claude Code folds, with its line count', () => {
    assert.ok(claudeRules.composerShows('[Pasted text #1]', long));
    assert.ok(claudeRules.composerShows('[Pasted text #3 +11 lines]', Array.from({ length: 12 }, (_, index) => `line ${index}`).join('\n')));
    assert.ok(claudeRules.composerShows('[Pasted text #2 +3 lines]', 'a\nb\nc\nd'));
  });

  it('rejects a placeholder that does not fit the text', () => {
    assert.equal(claudeRules.composerShows('[Pasted text #1]', 'short'), false, 'short single lines are not folded');
    assert.equal(claudeRules.composerShows('[Pasted text #1 +2 lines]', 'a\nb\nc'), false, 'three lines are not folded');
    assert.equal(claudeRules.composerShows('[Pasted text #1 +5 lines]', 'a\nb\nc\nd'), false, 'another paste’s size');
  });

  it('accepts the last rows of a scrolled composer, and only the last ones', () => {
    assert.ok(claudeRules.composerShows(`…${long.slice(-300)}`, long));
    assert.equal(claudeRules.composerShows(`…${long.slice(-600, -300)}`, long), false);
  });

  it('rejects a composer showing only part of the text, or something else', () => {
    assert.equal(claudeRules.composerShows('second line', 'first line second line'), false);
    assert.equal(claudeRules.composerShows('first line', 'first line second line'), false);
    assert.equal(claudeRules.composerShows('another draft', 'the prompt'), false);
    assert.equal(claudeRules.composerShows('', 'the prompt'), false);
  });
});

describe('claudeRules keys', () => {
  it('clears with Escape twice and dismisses a completion with one Escape', () => {
    assert.deepEqual(claudeRules.clearKeys, ['Escape', 'Escape']);
    assert.deepEqual(claudeRules.dismissCompletionKeys, ['Escape']);
    assert.equal(claudeRules.agent, 'claude');
  });
});
