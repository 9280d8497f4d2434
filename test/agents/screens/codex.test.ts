import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMuxKey } from '../../../src/mux/index.js';
import { codexRules } from '../../../src/agents/screens/codex.js';
import { agentScreen } from '../../../src/agents/screens/screen.js';
import type { AgentScreen } from '../../../src/agents/screens/types.js';
import { describeRecordedScreens, type ExpectedReading, loadScreenFixture, type ScreenFixture } from './fixtures.js';


/** What each recorded screen of Codex must read as. */
const EXPECTED: Readonly<Record<string, ExpectedReading>> = {
  'idle-empty': { phase: 'composer', rule: 'codex.composer', composer: '' },
  'idle-after-reply': { phase: 'composer', rule: 'codex.composer', composer: '' },
  'idle-after-interrupt': { phase: 'composer', rule: 'codex.composer', composer: '' },
  'draft-single': { phase: 'composer', rule: 'codex.composer', composer: 'hello from drover' },
  'draft-multiline': { phase: 'composer', rule: 'codex.composer', composer: 'first line\nsecond line\nthird line' },
  // 300 characters wrap at 117 columns: the rows joined with newlines.
  'draft-wrapped': { phase: 'composer', rule: 'codex.composer', composer: `${'w'.repeat(117)}\n${'w'.repeat(117)}\n${'w'.repeat(66)}` },
  'draft-paste-placeholder': { phase: 'composer', rule: 'codex.composer', composer: '[Pasted Content 2000 chars]' },
  // 1000 characters in a 40x16 pane: the last 8 rows of 37 columns, without the dim ↑.
  'draft-scrolled': { phase: 'composer', rule: 'codex.composer', composer: /^mnopqrstuvwxyzabcdefghijklmnopqrstuvw\n(?:[a-z]{37}\n){6}l$/ },
  'completion-at': { phase: 'composer', rule: 'codex.composer', composer: '@no', completion: true },
  'completion-slash': { phase: 'composer', rule: 'codex.composer', composer: '/', completion: true },
  busy: { phase: 'busy', rule: 'codex.streaming', composer: '' },
  'busy-working': { phase: 'busy', rule: 'codex.working', composer: '' },
  'busy-queued': { phase: 'busy', rule: 'codex.working', composer: '' },
  'busy-typeahead': { phase: 'busy', rule: 'codex.queue-hint', composer: 'typed ahead' },
  permission: { phase: 'permission', rule: 'codex.approval', composer: null, question: 'Would you like to run the following command?' },
  'trust-dialog': { phase: 'dialog', rule: 'codex.trust-dialog', composer: null, question: 'Trust this folder? Codex can read, edit, and run files here, subject to your permission settings. Folder settings' },
  'first-start': { phase: 'dialog', rule: 'codex.sign-in', composer: null, question: 'Choose how you want to use Codex.' },
  'login-other': { phase: 'dialog', rule: 'codex.sign-in', composer: null, question: 'Sign in another way' },
  'key-dialog': { phase: 'dialog', rule: 'codex.sign-in', composer: null, question: '> Use your own OpenAI API key for usage-based billing' },
  'model-migration': { phase: 'dialog', rule: 'codex.selection', composer: null, question: 'Meet GPT-6 Sol' },
  'agent-command-center': { phase: 'dialog', rule: 'codex.agent-command-center', composer: null, question: 'Agent command center  Group: Project  g' },
  warnings: { phase: 'dialog', rule: 'codex.warnings', composer: null, question: 'Warnings · 1 of 1 · Startup' },
  exited: { phase: 'exited', rule: 'codex.shell', composer: null },
};

describeRecordedScreens(codexRules, EXPECTED, 23);

const VERSION = '0.171.0';

/** A recorded screen with some rows replaced by other (SGR-styled) text. */
function edited(name: string, rows: Readonly<Record<number, string>>, cursor?: ScreenFixture['meta']['cursor']): AgentScreen {
  const fixture = loadScreenFixture('codex', VERSION, name);
  const lines = fixture.capture.split('\n');
  for (const [row, text] of Object.entries(rows)) lines[Number(row)] = text;
  return agentScreen(lines.join('\n'), { ...fixture.meta, cursor: cursor === undefined ? fixture.meta.cursor : cursor });
}

const BOLD_GLYPH = '\x1b[1m›\x1b[0m';

describe('codexRules on screens that must not mislead them', () => {
  it('reads a reply that quotes a dialog, an approval and a selected option as the idle composer', () => {
    const screen = edited('idle-after-reply', {
      12: '• Trust this folder? Codex can read, edit, and run files here',
      13: '  Would you like to run the following command?',
      14: '› 1. Yes, proceed (y)',
      15: '  Press enter to confirm or esc to cancel',
      16: '  Welcome to Codex, OpenAI\'s command-line coding agent',
      17: '  Worked for 2s • 12:00',
    });
    const reading = codexRules.read(screen);
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.rule, 'codex.composer');
    assert.equal(reading.composer?.text, '');
    assert.equal(reading.question, null);
  });

  it('reads a draft that asks "Do you want to proceed?" as the composer holding it', () => {
    const reading = codexRules.read(edited('draft-single', { 36: `${BOLD_GLYPH} Do you want to proceed?` }));
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.composer?.text, 'Do you want to proceed?');
    assert.equal(reading.question, null);
  });

  it('does not take a transcript prompt (dim glyph on a background) for the composer', () => {
    const screen = edited('trust-dialog', { 20: '\x1b[1;2;48;5;238m› \x1b[0;48;5;238mhello\x1b[0m' });
    assert.equal(codexRules.read(screen).rule, 'codex.trust-dialog');
  });

  it('reads a reply quoting "Working (… esc to interrupt)" above a closed turn as idle', () => {
    const screen = edited('idle-after-reply', { 8: '• Working (3s • esc to interrupt)' });
    assert.equal(codexRules.read(screen).phase, 'composer');
  });

  it('reads a prompt whose turn closed with ■ as idle, and one still open as busy', () => {
    assert.equal(codexRules.read(loadScreenFixture('codex', VERSION, 'idle-after-interrupt').screen).phase, 'composer');
    const stopped = loadScreenFixture('codex', VERSION, 'idle-after-interrupt').screen.lines.findIndex((line) => line.startsWith('■ '));
    assert.ok(stopped > 0);
    const open = edited('idle-after-interrupt', { [stopped]: '' });
    assert.equal(codexRules.read(open).rule, 'codex.streaming');
  });

  it('reads a blank pane as unknown, and a shell prompt away from the cursor as unknown', () => {
    assert.equal(codexRules.read(agentScreen('', { width: 80, height: 24, cursor: null })).phase, 'unknown');
    const exited = loadScreenFixture('codex', VERSION, 'exited');
    assert.equal(codexRules.read(agentScreen(exited.capture, { ...exited.meta, cursor: { x: 0, y: 0, visible: true } })).phase, 'unknown');
  });
});

describe('codexRules.composerShows', () => {
  const scrolled = loadScreenFixture('codex', VERSION, 'draft-scrolled');
  const scrolledText = codexRules.read(scrolled.screen).composer!.text;
  const alphabet = (length: number): string => Array.from({ length }, (_, i) => String.fromCharCode(97 + (i % 26))).join('');

  it('accepts the text as shown: wrapped rows, further lines, an empty draft', () => {
    const wrapped = codexRules.read(loadScreenFixture('codex', VERSION, 'draft-wrapped').screen).composer!.text;
    assert.ok(codexRules.composerShows(wrapped, 'w'.repeat(300)));
    assert.ok(codexRules.composerShows('first line\nsecond line\nthird line', 'first line\nsecond line\nthird line'));
    assert.ok(codexRules.composerShows('fix the bug in\nparser.ts', 'fix the bug in parser.ts'), 'a row broken at a space');
    assert.ok(codexRules.composerShows('', ''));
  });

  it('accepts the paste placeholder of a paste of that many characters (not bytes)', () => {
    assert.ok(codexRules.composerShows('[Pasted Content 2000 chars]', 'p'.repeat(2000)));
    assert.ok(codexRules.composerShows('[Pasted Content 1200 chars]', 'é'.repeat(1200)));
    assert.ok(codexRules.composerShows('[Pasted Content 1001 chars] #2', 'y'.repeat(1001)));
    assert.ok(!codexRules.composerShows('[Pasted Content 2000 chars]', 'p'.repeat(1999)));
    assert.ok(!codexRules.composerShows('[Pasted Content 1000 chars]', 'p'.repeat(1000)), '1000 characters are shown, not folded');
  });

  it('accepts the last rows of a scrolled draft, not its first ones nor a short tail', () => {
    assert.ok(codexRules.composerShows(scrolledText, alphabet(1000)));
    assert.ok(!codexRules.composerShows(scrolledText, alphabet(1000).slice(0, 900)), 'the composer shows an end the text does not have');
    assert.ok(!codexRules.composerShows('abcdefghijklm', alphabet(1000)), 'one row is the whole draft, not a scrolled part');
  });

  it('rejects other text, part of the text, and an empty composer', () => {
    assert.ok(!codexRules.composerShows('hello from drover', 'hello from rover'));
    assert.ok(!codexRules.composerShows('hello from', 'hello from drover'));
    assert.ok(!codexRules.composerShows('', 'hello'));
    assert.ok(!codexRules.composerShows('hello', ''));
  });

  it('clears with ctrl+c and closes popups with Escape (verified on codex 0.171.0), in the neutral key spelling', () => {
    assert.deepEqual(codexRules.clearKeys, ['ctrl+c']);
    assert.deepEqual(codexRules.dismissCompletionKeys, ['Escape']);
    for (const key of [...codexRules.clearKeys, ...codexRules.dismissCompletionKeys]) assert.doesNotThrow(() => parseMuxKey(key), key);
  });
});
