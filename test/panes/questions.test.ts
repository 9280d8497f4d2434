import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { screenOfRows } from '../../src/agents/index.js';
import {
  discoverCandidates,
  judgeAgentReading,
  judgePaneScreen,
  menuAnswers,
  questionAnswers,
  judgePane,
  renderQuestionSweep,
  scanScreen,
  sweepQuestions,
  type QuestionCandidate,
  type ScreenText,
} from '../../src/panes/index.js';
import { loadScreenFixture, screenFixtures } from '../agents/screens/fixtures.js';
import { QUESTIONS, renderFrame, type Model } from '../fixtures/fake-agent.js';
import { FAKE_AGENT_INDICATORS, fixture } from './fixtures.js';

const waiting: QuestionCandidate = { pane: '%3', agentState: 'waiting' };

/** Rows as a multiplexer without a cursor reports them (herdr, zellij). */
const rows = (text: string): ScreenText => screenOfRows(text);

/** What the line scan reports: the indicator, or the skip reason. */
const scanned = (screen: ScreenText): string => {
  const scan = scanScreen(screen);
  return 'reason' in scan ? scan.reason : scan.indicator;
};

/** A screen of 40 columns whose cursor stands where `|` is (removed from the row). */
function withCursor(...lines: string[]): ScreenText {
  const y = lines.findIndex((line) => line.includes('|'));
  return { lines: lines.map((line) => line.replace('|', '').replace(/\s+$/, '')), width: 40, cursor: { x: lines[y]!.indexOf('|'), y, visible: true } };
}

describe('the line scan over captured screens', () => {
  const cases: [string, string, string][] = [
    ['question-question-mark.txt', 'question_mark', 'Which branch should the fix go on?'],
    ['question-yes-no.txt', 'yes_no', 'Continue with the destructive migration? (y/n)'],
    ['question-action-word.txt', 'action_word', 'Allow? use y to allow once, n to deny'],
    ['question-imperative.txt', 'imperative_question', 'Would you like me to also update the changelog'],
    ['question-colon-prompt.txt', 'colon_prompt', 'Name of the release branch:'],
    ['question-enumerated.txt', 'enumerated_options', '  3) both'],
    ['question-press-key.txt', 'press_key', 'Press any key to continue'],
    ['claude-permission-menu.txt', 'imperative_question', ' Do you want to make this edit to tail.ts?'],
  ];
  for (const [file, indicator, line] of cases) {
    it(`${file} → ${indicator}`, () => {
      const judged = judgePane('%3', waiting, rows(fixture(file)));
      assert.ok(!('reason' in judged), JSON.stringify(judged));
      const { answers, ...match } = judged;
      assert.deepEqual(match, { pane: '%3', agent_state: 'waiting', indicator, snippet: line, agent: null, rule: null });
      assert.ok(Array.isArray(answers));
    });
  }

  it('tries question_mark on the last line only', () => {
    assert.equal(scanned(rows('Is this a question?\nno it is not\n')), 'no_indicator');
    assert.equal(scanned(rows('Is this a question?\n\n  \n')), 'question_mark');
  });

  it('does not take comments, quotes, log lines or long lines for questions', () => {
    for (const line of ['# why?', '// why?', '* why?', '> why?', '[12:30] why?', '2026-09-02 why?', `${'x'.repeat(119)}?`]) {
      assert.equal(scanned(rows(`${line}\n`)), 'no_indicator', line);
    }
    assert.equal(scanned(rows(`${'x'.repeat(118)}?\n`)), 'question_mark');
  });

  it("takes bash's select prompt and git's hunk counter for questions, not for a comment and a timestamp", () => {
    assert.equal(scanned(rows('1) staging\n2) production\n#? \n')), 'question_mark');
    assert.equal(scanned(rows('(1/3) Stage this hunk [y,n,q,a,d,e,?]? \n')), 'question_mark');
    assert.equal(scanned(rows('(10/03 12:00) retry?\n')), 'no_indicator');
  });

  it('takes the table order within a line', () => {
    assert.equal(scanned(rows('Proceed? [y/n]\nPress Enter to go on\n')), 'press_key');
    assert.equal(scanned(rows('Allow? (y/n) Should I:\n')), 'yes_no');
    assert.equal(scanned(rows('Should I pick 1) or 2):\n')), 'imperative_question');
  });

  it('matches case-insensitively where the classes say so', () => {
    assert.equal(scanned(rows('OVERWRITE [Y/N]\n')), 'yes_no');
    assert.equal(scanned(rows('do YOU WANT TO go on\n')), 'imperative_question');
    assert.equal(scanned(rows('allow? maybe\n')), 'no_indicator', 'action words are case-sensitive');
  });

  it('takes an option for a digit that stands alone, and a colon prompt for words before the colon', () => {
    assert.equal(scanned(rows('    at Module._compile (node:internal/modules/cjs/loader:1554:14)\n')), 'no_indicator');
    assert.equal(scanned(rows(' Manual page ls(1) line 1 (press h for help or q to quit)\n')), 'no_indicator');
    assert.equal(scanned(rows('(2) production\n')), 'enumerated_options');
    assert.equal(scanned(rows(':\n')), 'no_indicator', "a pager's prompt");
    assert.equal(scanned(rows('package name: (app)\n')), 'colon_prompt');
    assert.equal(scanned(rows('Traceback (most recent call last):\n')), 'no_indicator');
    assert.equal(scanned(rows('During handling of the above exception, another exception occurred:\n')), 'no_indicator');
  });
});

describe('the rows that matter', () => {
  it('a question is the line the cursor stands on or right after; what is above is history', () => {
    assert.equal(scanned(withCursor('$ ./clean.sh', 'Delete build dir? [y/n] |')), 'yes_no');
    assert.equal(scanned(withCursor('Which branch should the fix go on?', '|')), 'question_mark', 'printed with a line break, waiting below it');
    assert.equal(scanned(withCursor('Which branch should the fix go on?', '', '|')), 'no_indicator');
    assert.equal(scanned(withCursor('$ echo "Continue? [y/n]"', 'Continue? [y/n]', '$ |')), 'no_indicator');
  });

  it('^C and a traceback are not questions, with a cursor or without', () => {
    const screen = ['$ python3 app.py', '^CTraceback (most recent call last):', '  File "app.py", line 3, in <module>', '    time.sleep(100)', 'KeyboardInterrupt', '$ |'];
    assert.equal(scanned(withCursor(...screen)), 'no_indicator');
    assert.equal(scanned(rows(screen.join('\n').replace('|', ''))), 'no_indicator');
    assert.equal(scanned(withCursor('$ python3 app.py', '^CTraceback (most recent call last):', '|')), 'no_indicator', 'the traceback still being printed');
    assert.equal(scanned(rows('$ python3 app.py\n^CTraceback (most recent call last):\n')), 'no_indicator');
  });

  it('an answer typed after the prompt: answered once the cursor moved on (or no cursor says otherwise)', () => {
    assert.equal(scanned(withCursor('Delete build dir? [y/n] y', '|')), 'answered');
    assert.equal(scanned(rows('Delete build dir? [y/n] y\n')), 'answered');
    assert.equal(scanned(withCursor('Delete build dir? [y/n] y|')), 'yes_no', 'typed, Enter not pressed yet');
    assert.equal(scanned(withCursor('Deploy? Proceed? yes', '|')), 'answered');
    assert.equal(scanned(withCursor('Pick a target: 1) staging 2) production 2', '|')), 'answered');
    assert.equal(scanned(withCursor('Pick a target: 1) staging 2) production 2|')), 'enumerated_options');
    assert.equal(scanned(withCursor('Pick a target: 1) staging 2) production', '|')), 'enumerated_options');
    assert.equal(scanned(withCursor('Delete build dir? [y/n] y', 'deleting build/|')), 'no_indicator');
  });

  it('a question above a menu or a hint', () => {
    assert.equal(scanned(rows('Do you want to make this edit?\n❯ 1. Yes\n  2. No\n\n')), 'imperative_question');
    assert.equal(scanned(rows('Would you like a changelog?\n(answer in a few words)\n')), 'imperative_question');
    assert.equal(scanned(rows('$ ls\na.txt\n  1. not a menu\n')), 'no_indicator');
  });

  it('a question wrapped over rows is read whole, from the rows the terminal wrapped onto the cursor row', () => {
    const long = 'Remove every file under build/ and dist/ before rebuilding? [y/';
    assert.deepEqual(scanScreen(withCursor(long.slice(0, 40), `${long.slice(40)}n] |`)), { indicator: 'yes_no', snippet: `${long}n]` });
  });
});

describe('the guards and skip reasons', () => {
  it('capture_failed when the pane left the snapshot or the capture failed', () => {
    assert.deepEqual(judgePane('%3', undefined, rows('x?\n')), { pane: '%3', reason: 'capture_failed' });
    assert.deepEqual(judgePane('%3', waiting, undefined), { pane: '%3', reason: 'capture_failed' });
  });

  it('state_changed when the agent is no longer waiting or idle, no_agent_state when nothing was reported', () => {
    assert.deepEqual(judgePane('%3', { pane: '%3', agentState: 'active' }, rows('x?\n')), { pane: '%3', reason: 'state_changed' });
    assert.deepEqual(judgePane('%3', { pane: '%3', agentState: null }, rows('x?\n')), { pane: '%3', reason: 'no_agent_state' });
  });

  it('pane_dead for a pane whose program exited, whatever its last lines say', () => {
    assert.deepEqual(judgePane('%3', { ...waiting, dead: true }, rows('Pane is dead (status 1, Thu Dec  3 12:00:00 2026)\n')), { pane: '%3', reason: 'pane_dead' });
  });

  it('blank_capture, turn_boundary and no_indicator from the screen', () => {
    assert.deepEqual(judgePane('%3', waiting, rows(fixture('blank.txt'))), { pane: '%3', reason: 'blank_capture' });
    assert.deepEqual(judgePane('%3', waiting, rows(fixture('turn-boundary.txt'))), { pane: '%3', reason: 'turn_boundary' });
    assert.deepEqual(judgePane('%3', waiting, rows(fixture('no-indicator.txt'))), { pane: '%3', reason: 'no_indicator' });
    assert.deepEqual(judgePane('%3', waiting, rows(fixture('question-timestamp-log.txt'))), { pane: '%3', reason: 'no_indicator' });
    assert.deepEqual(judgePane('%3', waiting, rows(fixture('claude-idle-box.txt'))), { pane: '%3', reason: 'no_indicator' });
  });

  it('a question with output printed after it is history', () => {
    assert.deepEqual(judgePane('%3', waiting, rows(`Overwrite the file? [y/n]\n${'output\n'.repeat(3)}`)), { pane: '%3', reason: 'no_indicator' });
  });
});

describe("the fake agent's questions", () => {
  for (const [kind, indicator] of Object.entries(FAKE_AGENT_INDICATORS)) {
    it(`ask:${kind} is detected as ${indicator}`, () => {
      const model: Model = { phase: { name: 'question', question: QUESTIONS[kind]!, typed: '' }, transcript: [`> ask:${kind}`], input: '', style: 'box' };
      const screen = rows(renderFrame(model, 80, 24).join('\n'));
      assert.equal((judgePane('%1', waiting, screen) as { indicator?: string }).indicator, indicator);
    });
  }

  it('ask:blank clears the screen, and the rule composer ends a turn with a bare prompt', () => {
    const blank: Model = { phase: { name: 'question', question: QUESTIONS.blank!, typed: '' }, transcript: ['> ask:blank'], input: '', style: 'box' };
    assert.deepEqual(judgePane('%1', waiting, rows(renderFrame(blank, 80, 24).join('\n'))), { pane: '%1', reason: 'blank_capture' });
    const rule: Model = { phase: { name: 'composer' }, transcript: ['> hi', '● Done.'], input: '', style: 'rule' };
    assert.deepEqual(judgePane('%1', waiting, rows(renderFrame(rule, 80, 24).join('\n'))), { pane: '%1', reason: 'turn_boundary' });
    const box: Model = { ...rule, style: 'box' };
    assert.deepEqual(judgePane('%1', waiting, rows(renderFrame(box, 80, 24).join('\n'))), { pane: '%1', reason: 'no_indicator' });
  });
});

describe('sweepQuestions', () => {
  it('produces the JSON rows in candidate order and captures only panes that pass the early guards', async () => {
    const snapshot = new Map<string, QuestionCandidate>([
      ['%1', { pane: '%1', agentState: 'waiting' }],
      ['%2', { pane: '%2', agentState: 'active' }],
      ['%4', { pane: '%4', agentState: 'idle' }],
      ['%5', { pane: '%5', agentState: 'idle' }],
    ]);
    const captured: string[] = [];
    const screens: Record<string, string> = { '%1': fixture('question-yes-no.txt'), '%4': fixture('turn-boundary.txt') };
    const sweep = await sweepQuestions(['%1', '%2', '%3', '%4', '%5'], snapshot, async ({ pane }) => {
      captured.push(pane);
      const screen = screens[pane];
      if (screen === undefined) throw new Error('capture failed');
      return screenOfRows(screen);
    });
    assert.deepEqual(captured, ['%1', '%4', '%5']);
    assert.deepEqual(JSON.parse(JSON.stringify(sweep)), {
      matches: [
        {
          pane: '%1',
          agent_state: 'waiting',
          indicator: 'yes_no',
          snippet: 'Continue with the destructive migration? (y/n)',
          agent: null,
          rule: null,
          answers: [
            { label: 'y', keys: ['y'] },
            { label: 'n', keys: ['n'] },
          ],
        },
      ],
      skipped: [
        { pane: '%2', reason: 'state_changed' },
        { pane: '%3', reason: 'capture_failed' },
        { pane: '%4', reason: 'turn_boundary' },
        { pane: '%5', reason: 'capture_failed' },
      ],
    });
    assert.equal(
      renderQuestionSweep(sweep),
      '%1 [waiting] yes_no: Continue with the destructive migration? (y/n)\n%2: state_changed\n%3: capture_failed\n%4: turn_boundary\n%5: capture_failed\n1 matched, 4 skipped\n',
    );
  });

  it('an empty sweep is two empty lists and one line of text', async () => {
    const sweep = await sweepQuestions([], new Map(), async () => screenOfRows(''));
    assert.deepEqual(sweep, { matches: [], skipped: [] });
    assert.equal(renderQuestionSweep(sweep), 'No candidate panes.\n');
  });
});

describe('discoverCandidates', () => {
  it('keeps waiting and idle panes, and every live pane of an agent drover knows', () => {
    assert.deepEqual(
      discoverCandidates([
        { pane: '%1', agentState: 'active' },
        { pane: '%2', agentState: 'waiting' },
        { pane: '%3', agentState: null },
        { pane: '%4', agentState: 'idle' },
        { pane: '%5', agentState: null, agent: 'codex', agentKind: 'codex' },
        { pane: '%6', agentState: 'active', agent: 'gemini', agentKind: 'gemini' },
        { pane: '%7', agentState: 'idle', dead: true },
        { pane: '%8', agentState: null, agent: 'aider', agentKind: null },
      ]),
      ['%2', '%4', '%5', '%6'],
    );
  });
});

describe('judgeAgentReading', () => {
  const reading = (phase: 'composer' | 'busy' | 'dialog' | 'permission' | 'exited' | 'unknown', snippet?: string) => ({
    phase,
    rule: `codex.${phase}`,
    detail: `a ${phase}`,
    composer: null,
    completion: false,
    question: snippet === undefined ? null : { snippet },
  });
  const codex = { pane: '%5', agentState: null, agent: 'codex', agentKind: 'codex' as const };

  it('matches a permission prompt or dialog even without hook state, and says which rule', () => {
    assert.deepEqual(judgeAgentReading('%5', codex, reading('permission', 'Would you like to run the following command?'), []), {
      pane: '%5',
      agent_state: 'waiting',
      indicator: 'permission_prompt',
      snippet: 'Would you like to run the following command?',
      agent: 'codex',
      rule: 'codex.permission',
      answers: [],
    });
    assert.equal((judgeAgentReading('%5', codex, reading('dialog', 'Do you trust the contents of this directory?'), []) as { indicator: string }).indicator, 'agent_dialog');
  });

  it('skips composers, busy turns, exited agents, dead panes and screens it cannot read', () => {
    assert.deepEqual(judgeAgentReading('%5', codex, reading('composer'), []), { pane: '%5', reason: 'agent_at_composer' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('busy'), []), { pane: '%5', reason: 'agent_busy' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('exited'), []), { pane: '%5', reason: 'agent_exited' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('unknown'), []), { pane: '%5', reason: 'screen_unrecognised' });
    assert.deepEqual(judgeAgentReading('%5', { ...codex, dead: true }, reading('permission', 'Allow?'), []), { pane: '%5', reason: 'pane_dead' });
    assert.deepEqual(judgeAgentReading('%5', codex, undefined, []), { pane: '%5', reason: 'capture_failed' });
  });
});

describe('the answers a question offers', () => {
  const answersOf = (judged: ReturnType<typeof judgePane>): readonly { label: string; keys: readonly string[] }[] | string => ('reason' in judged ? judged.reason : judged.answers);

  it('reads a menu only when it counts 1, 2, … from the top', () => {
    assert.deepEqual(menuAnswers(['Pick:', '  2. two', '  3. three'], 1), []);
    assert.deepEqual(
      menuAnswers(['Pick:', '│ ❯ 1. one  │', '│   2. two  │'], 1).map((answer) => answer.label),
      ['1. one', '2. two'],
    );
  });

  it('gives a line-scanned question the menu under it, else what its line offers, else nothing', () => {
    const menu = rows(`${QUESTIONS.menu!.lines.join('\n')}\n`);
    assert.deepEqual(answersOf(judgePane('%3', waiting, menu)), [
      { label: '1. Yes', keys: ['1'] },
      { label: "2. Yes, and don't ask again this session", keys: ['2'] },
      { label: '3. No, and tell me what to do differently (esc)', keys: ['3'] },
    ]);
    assert.deepEqual(answersOf(judgePane('%3', waiting, rows('Overwrite the file? [y/n]\n'))), [
      { label: 'y', keys: ['y'] },
      { label: 'n', keys: ['n'] },
    ]);
    assert.deepEqual(answersOf(judgePane('%3', waiting, rows('Press any key to continue\n'))), [{ label: 'Continue', keys: ['Enter'] }]);
    assert.deepEqual(answersOf(judgePane('%3', waiting, rows('Which branch should the fix go on?\n'))), []);
  });

  it("gives an agent's permission prompt its menu, with the keys that agent takes", () => {
    const screen = rows(['Do you want to make this edit to tail.ts?', '❯ 1. Yes', '  2. No', ''].join('\n'));
    assert.deepEqual(questionAnswers(screen.lines, 'Do you want to make this edit to tail.ts?', 'permission_prompt', 'claude'), [
      { label: '1. Yes', keys: ['1', 'Enter'] },
      { label: '2. No', keys: ['2', 'Enter'] },
    ]);
    assert.deepEqual(
      questionAnswers(screen.lines, 'Do you want to make this edit to tail.ts?', 'permission_prompt', 'codex').map((answer) => answer.keys),
      [['1'], ['2']],
    );
    // An agent's question is read by its rules: a [y/n] written on its line is not a menu of its.
    assert.deepEqual(questionAnswers(['Allow? [y/n]'], 'Allow? [y/n]', 'permission_prompt', 'claude'), []);
  });

  it('reads the answers off the same screen the sweep judged', () => {
    const codex = { pane: '%5', agentState: null, agent: 'codex', agentKind: 'codex' as const };
    const [version] = screenFixtures('codex').map((entry) => entry.version);
    const judged = judgePaneScreen('%5', codex, screenOfRows(loadScreenFixture('codex', version!, 'permission').capture));
    assert.ok(!('reason' in judged), JSON.stringify(judged));
    assert.ok(judged.answers.length >= 2, JSON.stringify(judged.answers));
    judged.answers.forEach((answer, index) => assert.deepEqual(answer.keys, [String(index + 1)]));
  });
});
