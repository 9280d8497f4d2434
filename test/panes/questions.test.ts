import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  QUESTION_CAPTURE_LINES,
  discoverCandidates,
  judgeAgentReading,
  judgePane,
  renderQuestionSweep,
  scanIndicators,
  sweepQuestions,
  type QuestionCandidate,
} from '../../src/panes/index.js';
import { QUESTIONS, renderFrame, type Model } from '../fixtures/fake-agent.js';
import { FAKE_AGENT_INDICATORS, fixture } from './fixtures.js';

const waiting: QuestionCandidate = { pane: '%3', agentState: 'waiting' };

describe('scanIndicators over captured screens', () => {
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
      assert.deepEqual(judgePane('%3', waiting, fixture(file)), { pane: '%3', agent_state: 'waiting', indicator, snippet: line, agent: null, rule: null });
    });
  }

  it('tries question_mark on the last line only', () => {
    assert.equal(scanIndicators('Is this a question?\nno it is not\n'), undefined);
    assert.equal(scanIndicators('Is this a question?\n\n  \n')?.indicator, 'question_mark');
  });

  it('does not take comments, quotes, log lines or long lines for questions', () => {
    for (const line of ['# why?', '// why?', '* why?', '> why?', '[12:30] why?', '2026-09-02 why?', `${'x'.repeat(119)}?`]) {
      assert.equal(scanIndicators(`${line}\n`), undefined, line);
    }
    assert.equal(scanIndicators(`${'x'.repeat(118)}?\n`)?.indicator, 'question_mark');
  });

  it('prefers the bottom-most matching line, and the table order within a line', () => {
    assert.equal(scanIndicators('Proceed? [y/n]\nPress Enter to go on\n')?.indicator, 'press_key');
    assert.equal(scanIndicators('Allow? (y/n) Should I:\n')?.indicator, 'yes_no');
    assert.equal(scanIndicators('Should I pick 1) or 2):\n')?.indicator, 'imperative_question');
  });

  it('matches case-insensitively where the classes say so', () => {
    assert.equal(scanIndicators('OVERWRITE [Y/N]\n')?.indicator, 'yes_no');
    assert.equal(scanIndicators('do YOU WANT TO go on\n')?.indicator, 'imperative_question');
    assert.equal(scanIndicators('allow? maybe\n'), undefined, 'action words are case-sensitive');
  });
});

describe('the guards and skip reasons', () => {
  it('capture_failed when the pane left the snapshot or the capture failed', () => {
    assert.deepEqual(judgePane('%3', undefined, 'x?\n'), { pane: '%3', reason: 'capture_failed' });
    assert.deepEqual(judgePane('%3', waiting, undefined), { pane: '%3', reason: 'capture_failed' });
  });

  it('state_changed when the agent is no longer waiting or idle, no_agent_state when nothing was reported', () => {
    assert.deepEqual(judgePane('%3', { pane: '%3', agentState: 'active' }, 'x?\n'), { pane: '%3', reason: 'state_changed' });
    assert.deepEqual(judgePane('%3', { pane: '%3', agentState: null }, 'x?\n'), { pane: '%3', reason: 'no_agent_state' });
  });

  it('pane_dead for a pane whose program exited, whatever its last lines say', () => {
    assert.deepEqual(judgePane('%3', { ...waiting, dead: true }, 'Pane is dead (status 1, Thu Dec  3 12:00:00 2026)\n'), { pane: '%3', reason: 'pane_dead' });
  });

  it('blank_capture, turn_boundary and no_indicator from the screen', () => {
    assert.deepEqual(judgePane('%3', waiting, fixture('blank.txt')), { pane: '%3', reason: 'blank_capture' });
    assert.deepEqual(judgePane('%3', waiting, fixture('turn-boundary.txt')), { pane: '%3', reason: 'turn_boundary' });
    assert.deepEqual(judgePane('%3', waiting, fixture('no-indicator.txt')), { pane: '%3', reason: 'no_indicator' });
    assert.deepEqual(judgePane('%3', waiting, fixture('question-timestamp-log.txt')), { pane: '%3', reason: 'no_indicator' });
    assert.deepEqual(judgePane('%3', waiting, fixture('claude-idle-box.txt')), { pane: '%3', reason: 'no_indicator' });
  });

  it('looks at the last 20 lines only', () => {
    const question = `Overwrite the file? [y/n]\n${'output\n'.repeat(QUESTION_CAPTURE_LINES)}`;
    assert.deepEqual(judgePane('%3', waiting, question), { pane: '%3', reason: 'no_indicator' });
    const within = `Overwrite the file? [y/n]\n${'output\n'.repeat(QUESTION_CAPTURE_LINES - 1)}`;
    assert.equal((judgePane('%3', waiting, within) as { indicator: string }).indicator, 'yes_no');
  });
});

describe("the fake agent's questions", () => {
  for (const [kind, indicator] of Object.entries(FAKE_AGENT_INDICATORS)) {
    it(`ask:${kind} is detected as ${indicator}`, () => {
      const model: Model = { phase: { name: 'question', question: QUESTIONS[kind]!, typed: '' }, transcript: [`> ask:${kind}`], input: '', style: 'box' };
      const screen = renderFrame(model, 80, 24).join('\n');
      assert.equal((judgePane('%1', waiting, screen) as { indicator?: string }).indicator, indicator);
    });
  }

  it('ask:blank clears the screen, and the rule composer ends a turn with a bare prompt', () => {
    const blank: Model = { phase: { name: 'question', question: QUESTIONS.blank!, typed: '' }, transcript: ['> ask:blank'], input: '', style: 'box' };
    assert.deepEqual(judgePane('%1', waiting, renderFrame(blank, 80, 24).join('\n')), { pane: '%1', reason: 'blank_capture' });
    const rule: Model = { phase: { name: 'composer' }, transcript: ['> hi', '● Done.'], input: '', style: 'rule' };
    assert.deepEqual(judgePane('%1', waiting, renderFrame(rule, 80, 24).join('\n')), { pane: '%1', reason: 'turn_boundary' });
    const box: Model = { ...rule, style: 'box' };
    assert.deepEqual(judgePane('%1', waiting, renderFrame(box, 80, 24).join('\n')), { pane: '%1', reason: 'no_indicator' });
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
      return { capture: screen };
    });
    assert.deepEqual(captured, ['%1', '%4', '%5']);
    assert.deepEqual(JSON.parse(JSON.stringify(sweep)), {
      matches: [{ pane: '%1', agent_state: 'waiting', indicator: 'yes_no', snippet: 'Continue with the destructive migration? (y/n)', agent: null, rule: null }],
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
    const sweep = await sweepQuestions([], new Map(), async () => ({ capture: '' }));
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
    assert.deepEqual(judgeAgentReading('%5', codex, reading('permission', 'Would you like to run the following command?')), {
      pane: '%5',
      agent_state: 'waiting',
      indicator: 'permission_prompt',
      snippet: 'Would you like to run the following command?',
      agent: 'codex',
      rule: 'codex.permission',
    });
    assert.equal((judgeAgentReading('%5', codex, reading('dialog', 'Do you trust the contents of this directory?')) as { indicator: string }).indicator, 'agent_dialog');
  });

  it('skips composers, busy turns, exited agents, dead panes and screens it cannot read', () => {
    assert.deepEqual(judgeAgentReading('%5', codex, reading('composer')), { pane: '%5', reason: 'agent_at_composer' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('busy')), { pane: '%5', reason: 'agent_busy' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('exited')), { pane: '%5', reason: 'agent_exited' });
    assert.deepEqual(judgeAgentReading('%5', codex, reading('unknown')), { pane: '%5', reason: 'screen_unrecognised' });
    assert.deepEqual(judgeAgentReading('%5', { ...codex, dead: true }, reading('permission', 'Allow?')), { pane: '%5', reason: 'pane_dead' });
    assert.deepEqual(judgeAgentReading('%5', codex, undefined), { pane: '%5', reason: 'capture_failed' });
  });
});
