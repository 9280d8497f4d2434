import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { opencodeRules } from '../../../src/agents/screens/opencode.js';
import { agentScreen } from '../../../src/agents/screens/screen.js';
import type { AgentScreen, ScreenReading } from '../../../src/agents/screens/types.js';
import { fixtureVersions, loadScreenFixture, screenFixtures } from './fixtures.js';

type Expected = Pick<ScreenReading, 'phase' | 'completion'> & { composer: string | null; snippet: string | null };

/** What the rules must read on every recorded screen, by fixture name (the same for each version). */
const EXPECTED: Readonly<Record<string, Expected>> = {
  'first-start': { phase: 'composer', composer: '', completion: false, snippet: null },
  'key-dialog': { phase: 'dialog', composer: null, completion: false, snippet: 'Connect a provider' },
  'dialog-connect': { phase: 'dialog', composer: null, completion: false, snippet: 'Connect a provider' },
  'dialog-api-key': { phase: 'dialog', composer: null, completion: false, snippet: 'API key' },
  'dialog-commands': { phase: 'dialog', composer: null, completion: false, snippet: 'Commands' },
  'dialog-models': { phase: 'dialog', composer: null, completion: false, snippet: 'Select model' },
  'idle-empty': { phase: 'composer', composer: '', completion: false, snippet: null },
  'idle-after-reply': { phase: 'composer', composer: '', completion: false, snippet: null },
  'draft-single': { phase: 'composer', composer: 'fix the failing test in src/app.ts', completion: false, snippet: null },
  'draft-multiline': { phase: 'composer', composer: 'first line of the draft\nsecond line\nthird line', completion: false, snippet: null },
  'draft-paste-placeholder': { phase: 'composer', composer: '[Pasted ~3 lines]', completion: false, snippet: null },
  // Checked against the typed text below: the box shows its last 13 rows.
  'draft-long': { phase: 'composer', composer: null, completion: false, snippet: null },
  'completion-at': { phase: 'composer', composer: '@no', completion: true, snippet: null },
  'completion-slash': { phase: 'composer', composer: '/', completion: true, snippet: null },
  busy: { phase: 'busy', composer: '', completion: false, snippet: null },
  'busy-typeahead': { phase: 'busy', composer: 'typed while busy', completion: false, snippet: null },
  'busy-queued': { phase: 'busy', composer: '', completion: false, snippet: null },
  permission: { phase: 'permission', composer: null, completion: false, snippet: 'Permission required: # Shell command $ echo drover-tool-ran' },
  exited: { phase: 'exited', composer: null, completion: false, snippet: null },
};

/** What test/agents/opencode.probe.ts typed for draft-long. */
const LONG_DRAFT = Array.from({ length: 40 }, (_, index) => `word${index}`).join(' ').repeat(6);

const VERSION = fixtureVersions('opencode').at(-1)!;

/** A recorded screen with its capture edited: the same UI around other text. */
function edited(name: string, edit: (capture: string) => string): AgentScreen {
  const fixture = loadScreenFixture('opencode', VERSION, name);
  const capture = edit(fixture.capture);
  assert.notEqual(capture, fixture.capture, `the edit of ${name} changed nothing`);
  return agentScreen(capture, fixture.meta);
}

function replaced(capture: string, from: string, to: string): string {
  assert.ok(capture.includes(from), `the capture holds ${JSON.stringify(from)}`);
  return capture.replace(from, to);
}

const blank = (lines: number): AgentScreen => agentScreen('\n'.repeat(lines - 1), { width: 120, height: lines, cursor: null });

describe('opencodeRules on recorded screens', () => {
  const fixtures = screenFixtures('opencode');

  it('has fixtures of every phase', () => {
    assert.deepEqual(new Set(fixtures.map((fixture) => fixture.meta.phase)), new Set(['composer', 'busy', 'dialog', 'permission', 'exited']));
  });

  for (const fixture of fixtures) {
    it(`${fixture.version}/${fixture.name}`, () => {
      const expected = EXPECTED[fixture.name];
      assert.ok(expected !== undefined, `no expectation for the fixture ${fixture.name}`);
      const reading = opencodeRules.read(fixture.screen);
      assert.equal(reading.phase, fixture.meta.phase);
      assert.equal(reading.phase, expected.phase);
      assert.equal(reading.rule, `opencode.${expected.phase}`);
      assert.equal(reading.completion, expected.completion);
      assert.equal(reading.question?.snippet ?? null, expected.snippet);
      if (fixture.name === 'draft-long') {
        assert.equal(reading.composer?.text.split('\n').length, 13);
        assert.ok(opencodeRules.composerShows(reading.composer!.text, LONG_DRAFT));
      } else if (expected.phase === 'composer' || expected.phase === 'busy') {
        assert.equal(reading.composer?.text, expected.composer);
      } else {
        assert.equal(reading.composer, null);
      }
      assert.ok(reading.detail.length > 0 && !reading.detail.includes('\n'));
    });
  }
});

describe('opencodeRules on text that quotes its UI', () => {
  it('reads an idle composer under a reply that quotes a permission box', () => {
    const screen = edited('idle-after-reply', (capture) =>
      replaced(replaced(capture, 'Received 32 characters. Done.', '△ Permission required'), 'Received 17 characters. Done.', 'Allow once   Allow always   Reject   enter confirm'),
    );
    const reading = opencodeRules.read(screen);
    assert.equal(reading.phase, 'composer');
    assert.equal(reading.composer?.text, '');
  });

  it('does not take a bold reply line ending in "esc" for a dialog title', () => {
    const screen = edited('idle-after-reply', (capture) => replaced(capture, 'Received 32 characters. Done.', '\x1b[1mConnect a provider\x1b[22m                      esc'));
    assert.equal(opencodeRules.read(screen).phase, 'composer');
  });

  it('does not take a quoted farewell or "esc interrupt" in the transcript for an exit or a turn', () => {
    const screen = edited('idle-after-reply', (capture) =>
      replaced(replaced(capture, 'Received 32 characters. Done.', 'Continue  opencode -s ses_0123456789abcdef'), 'Received 17 characters. Done.', '⬝⬝⬝■■■■⬝  esc interrupt'),
    );
    assert.equal(opencodeRules.read(screen).phase, 'composer');
  });

  it('reads a draft that asks a question as a draft', () => {
    for (const draft of ['Do you want to proceed?', '△ Permission required']) {
      const reading = opencodeRules.read(edited('draft-single', (capture) => replaced(capture, 'fix the failing test in src/app.ts', draft)));
      assert.equal(reading.phase, 'composer');
      assert.equal(reading.composer?.text, draft);
      assert.equal(reading.question, null);
    }
  });

  it('keeps a queued message right above the input box out of the draft', () => {
    // When the transcript fills the screen, the queued message's box touches the input box.
    const screen = edited('busy-queued', (capture) => {
      const lines = capture.split('\n');
      const queued = lines.splice(9, 4, '', '', '', '');
      lines.splice(29, 4, ...queued);
      return lines.join('\n');
    });
    assert.match(screen.lines[30]!, /queued while busy/);
    const reading = opencodeRules.read(screen);
    assert.equal(reading.phase, 'busy');
    assert.equal(reading.composer?.text, '');
  });

  it('reads a blank screen (opencode starting) and a bare shell as unknown', () => {
    assert.equal(opencodeRules.read(blank(40)).phase, 'unknown');
    const shell = agentScreen('root@host:~/project# ls\nREADME.md  notes.txt\nroot@host:~/project# ', { width: 120, height: 40, cursor: { x: 21, y: 2, visible: true } });
    assert.equal(opencodeRules.read(shell).phase, 'unknown');
  });
});

describe('opencodeRules.composerShows', () => {
  const shows = opencodeRules.composerShows;

  it('accepts the text as shown, wrapped at any space', () => {
    assert.ok(shows('fix the failing test in src/app.ts', 'fix the failing test in src/app.ts'));
    assert.ok(shows('alpha beta\ngamma', 'alpha beta gamma'));
    assert.ok(shows('first\nsecond', 'first\nsecond'));
    assert.ok(shows('', ''));
  });

  it('rejects other text, part of a short text, and more than was typed', () => {
    assert.ok(!shows('fix the failing test', 'fix the failing test in src/app.ts'));
    assert.ok(!shows('src/app.ts', 'fix the failing test in src/app.ts'));
    assert.ok(!shows('fix the failing test in src/app.ts', 'fix the failing test'));
    assert.ok(!shows('', 'x'));
    assert.ok(!shows('something else', 'fix the failing test'));
  });

  it("accepts opencode's placeholder for a paste of 3 lines or over 150 characters, with the right count", () => {
    assert.ok(shows('[Pasted ~3 lines]', 'line one\nline two\nline three'));
    assert.ok(shows('[Pasted ~3 lines]', 'line one\nline two\nline three\n'));
    assert.ok(shows('[Pasted ~3 lines]', 'line one\r\nline two\r\nline three'));
    assert.ok(shows('[Pasted ~1 lines]', 'x'.repeat(151)));
    assert.ok(!shows('[Pasted ~1 lines]', 'x'.repeat(150)));
    assert.ok(!shows('[Pasted ~2 lines]', 'line one\nline two\nline three'));
    assert.ok(!shows('[Pasted ~2 lines]', 'line one\nline two'));
  });

  it('accepts the last rows of a draft taller than the box, and not a few rows of it', () => {
    const text = opencodeRules.read(loadScreenFixture('opencode', VERSION, 'draft-long').screen).composer!.text;
    assert.ok(shows(text, LONG_DRAFT));
    assert.ok(!shows(text, `${LONG_DRAFT} and more`));
    assert.ok(!shows(text.split('\n').slice(-2).join('\n'), LONG_DRAFT));
  });
});
