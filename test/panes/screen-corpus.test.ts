import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AGENT_KINDS, rulesFor, screenOfRows, type AgentKind, type AgentScreen } from '../../src/agents/index.js';
import { judgePaneScreen, readinessOfReading, type QuestionCandidate, type QuestionIndicator, type Readiness } from '../../src/panes/index.js';
import { programScreens, screenFixtures } from '../agents/screens/fixtures.js';

/**
 * Every recorded screen — the real agents' (test/fixtures/screens/<agent>/<version>) and other
 * programs' (test/fixtures/screens/programs, recorded by test/panes/record-screens.ts) — run
 * through the judgement `drover pane questions` makes of a pane (judgePaneScreen), once as
 * tmux reports the screen (with its cursor) and once as herdr and zellij do (rows only). It
 * prints precision (true questions among those reported) and recall (questions found among
 * the true ones), and fails on any false question, on any agent's question not found, and on a
 * question found under another indicator than the one that describes it. Programs are judged
 * as if their hooks had reported waiting, so the line scan alone decides.
 */

/** What each agent screen is: the question the sweep must report (null: none) and the readiness `pane ready` must read. */
const AGENT_VERDICTS: Readonly<Record<string, { question: QuestionIndicator | null; readiness: Readiness }>> = {
  'claude/2.1.332/auto-mode-nudge': { question: 'agent_dialog', readiness: 'parked' },
  'claude/2.1.332/busy-queued': { question: null, readiness: 'busy' },
  'claude/2.1.332/busy-typeahead': { question: null, readiness: 'busy' },
  'claude/2.1.332/busy': { question: null, readiness: 'busy' },
  'claude/2.1.332/completion-at': { question: null, readiness: 'ready' },
  'claude/2.1.332/completion-slash': { question: null, readiness: 'ready' },
  'claude/2.1.332/draft-multiline': { question: null, readiness: 'ready' },
  'claude/2.1.332/draft-paste-placeholder': { question: null, readiness: 'ready' },
  'claude/2.1.332/draft-scrolled': { question: null, readiness: 'ready' },
  'claude/2.1.332/draft-single': { question: null, readiness: 'ready' },
  'claude/2.1.332/exited': { question: null, readiness: 'exited' },
  'claude/2.1.332/first-start': { question: null, readiness: 'exited' },
  'claude/2.1.332/idle-after-reply': { question: null, readiness: 'ready' },
  'claude/2.1.332/idle-empty': { question: null, readiness: 'ready' },
  'claude/2.1.332/idle-named-session': { question: null, readiness: 'ready' },
  'claude/2.1.332/interrupted': { question: null, readiness: 'ready' },
  'claude/2.1.332/key-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'claude/2.1.332/not-logged-in': { question: null, readiness: 'ready' },
  'claude/2.1.332/permission': { question: 'permission_prompt', readiness: 'parked' },
  'claude/2.1.332/rewind-menu': { question: 'agent_dialog', readiness: 'parked' },
  'claude/2.1.332/shell-mode': { question: null, readiness: 'ready' },
  'claude/2.1.332/shortcuts-help': { question: null, readiness: 'ready' },
  'claude/2.1.332/trust-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/agent-command-center': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/busy-queued': { question: null, readiness: 'busy' },
  'codex/0.171.0/busy-typeahead': { question: null, readiness: 'busy' },
  'codex/0.171.0/busy-working': { question: null, readiness: 'busy' },
  'codex/0.171.0/busy': { question: null, readiness: 'busy' },
  'codex/0.171.0/completion-at': { question: null, readiness: 'ready' },
  'codex/0.171.0/completion-slash': { question: null, readiness: 'ready' },
  'codex/0.171.0/draft-multiline': { question: null, readiness: 'ready' },
  'codex/0.171.0/draft-paste-placeholder': { question: null, readiness: 'ready' },
  'codex/0.171.0/draft-scrolled': { question: null, readiness: 'ready' },
  'codex/0.171.0/draft-single': { question: null, readiness: 'ready' },
  'codex/0.171.0/draft-wrapped': { question: null, readiness: 'ready' },
  'codex/0.171.0/exited': { question: null, readiness: 'exited' },
  'codex/0.171.0/first-start': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/idle-after-interrupt': { question: null, readiness: 'ready' },
  'codex/0.171.0/idle-after-reply': { question: null, readiness: 'ready' },
  'codex/0.171.0/idle-empty': { question: null, readiness: 'ready' },
  'codex/0.171.0/key-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/login-other': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/model-migration': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/permission': { question: 'permission_prompt', readiness: 'parked' },
  'codex/0.171.0/trust-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'codex/0.171.0/warnings': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/busy-queued': { question: null, readiness: 'busy' },
  'gemini/0.61.0/busy-typeahead': { question: null, readiness: 'busy' },
  'gemini/0.61.0/busy': { question: null, readiness: 'busy' },
  'gemini/0.61.0/completion-at': { question: null, readiness: 'ready' },
  'gemini/0.61.0/completion-slash': { question: null, readiness: 'ready' },
  'gemini/0.61.0/draft-multiline': { question: null, readiness: 'ready' },
  'gemini/0.61.0/draft-paste-placeholder': { question: null, readiness: 'ready' },
  'gemini/0.61.0/draft-scrolled': { question: null, readiness: 'ready' },
  'gemini/0.61.0/draft-single': { question: null, readiness: 'ready' },
  'gemini/0.61.0/exited-trust-escape': { question: null, readiness: 'exited' },
  'gemini/0.61.0/exited': { question: null, readiness: 'exited' },
  'gemini/0.61.0/first-start-trust': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/first-start': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/idle-after-reply': { question: null, readiness: 'ready' },
  'gemini/0.61.0/idle-empty': { question: null, readiness: 'ready' },
  'gemini/0.61.0/key-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/model-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/permission': { question: 'permission_prompt', readiness: 'parked' },
  'gemini/0.61.0/rewind-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'gemini/0.61.0/trust-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/busy-queued': { question: null, readiness: 'busy' },
  'opencode/1.18.33/busy-typeahead': { question: null, readiness: 'busy' },
  'opencode/1.18.33/busy': { question: null, readiness: 'busy' },
  'opencode/1.18.33/completion-at': { question: null, readiness: 'ready' },
  'opencode/1.18.33/completion-slash': { question: null, readiness: 'ready' },
  'opencode/1.18.33/dialog-api-key': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/dialog-commands': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/dialog-connect': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/dialog-models': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/draft-long': { question: null, readiness: 'ready' },
  'opencode/1.18.33/draft-multiline': { question: null, readiness: 'ready' },
  'opencode/1.18.33/draft-paste-placeholder': { question: null, readiness: 'ready' },
  'opencode/1.18.33/draft-single': { question: null, readiness: 'ready' },
  'opencode/1.18.33/exited': { question: null, readiness: 'exited' },
  'opencode/1.18.33/first-start': { question: null, readiness: 'ready' },
  'opencode/1.18.33/idle-after-reply': { question: null, readiness: 'ready' },
  'opencode/1.18.33/idle-empty': { question: null, readiness: 'ready' },
  'opencode/1.18.33/key-dialog': { question: 'agent_dialog', readiness: 'parked' },
  'opencode/1.18.33/permission': { question: 'permission_prompt', readiness: 'parked' },
};

interface CorpusScreen {
  /** `<agent>/<version>/<name>` or `programs/<name>`. */
  id: string;
  agent: AgentKind | null;
  screen: AgentScreen;
  /** The row text alone, as a multiplexer that reports no cursor gives it. */
  rowsOnly: AgentScreen;
  asks: boolean;
  /** The indicator that describes the question; null when it asks nothing or no class describes it. */
  indicator: string | null;
  readiness?: Readiness;
}

function corpus(): CorpusScreen[] {
  const agents = AGENT_KINDS.flatMap((agent) =>
    screenFixtures(agent).map((fixture): CorpusScreen => {
      const id = `${agent}/${fixture.version}/${fixture.name}`;
      const verdict = AGENT_VERDICTS[id];
      assert.ok(verdict !== undefined, `no verdict for ${id}`);
      return { id, agent, screen: fixture.screen, rowsOnly: screenOfRows(fixture.capture), asks: verdict.question !== null, indicator: verdict.question, readiness: verdict.readiness };
    }),
  );
  const programs = programScreens().map(
    ({ name, meta, capture, screen }): CorpusScreen => ({ id: `programs/${name}`, agent: null, screen, rowsOnly: screenOfRows(capture), asks: meta.asks, indicator: meta.indicator }),
  );
  return [...agents, ...programs];
}

function candidate(entry: CorpusScreen): QuestionCandidate {
  return entry.agent === null ? { pane: '%0', agentState: 'waiting' } : { pane: '%0', agentState: null, agent: entry.agent, agentKind: entry.agent };
}

interface Score {
  found: string[];
  missed: string[];
  falseQuestions: string[];
  wrongIndicator: string[];
}

function score(entries: readonly CorpusScreen[], view: (entry: CorpusScreen) => AgentScreen): Score {
  const result: Score = { found: [], missed: [], falseQuestions: [], wrongIndicator: [] };
  for (const entry of entries) {
    const row = judgePaneScreen('%0', candidate(entry), view(entry));
    const reported = 'indicator' in row;
    if (reported && !entry.asks) result.falseQuestions.push(`${entry.id} (${row.indicator}: ${row.snippet.trim()})`);
    if (!reported && entry.asks) result.missed.push(`${entry.id} (${row.reason})`);
    if (reported && entry.asks) {
      result.found.push(entry.id);
      if (entry.indicator !== null && row.indicator !== entry.indicator) result.wrongIndicator.push(`${entry.id}: ${row.indicator}, not ${entry.indicator}`);
    }
  }
  return result;
}

function figures(entries: readonly CorpusScreen[], result: Score): string {
  const questions = entries.filter((entry) => entry.asks).length;
  const reported = result.found.length + result.falseQuestions.length;
  const precision = reported === 0 ? 1 : result.found.length / reported;
  const recall = questions === 0 ? 1 : result.found.length / questions;
  return `${entries.length} screens, ${questions} questions: ${reported} reported, ${result.found.length} found; precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)}`;
}

describe('the screen corpus through the question judgement', () => {
  const entries = corpus();

  it('has the agents’ screens and the programs’, each with a verdict', () => {
    const ids = new Set(entries.map((entry) => entry.id));
    assert.deepEqual(Object.keys(AGENT_VERDICTS).filter((id) => !ids.has(id)), [], 'verdicts of screens no longer recorded');
    assert.ok(entries.filter((entry) => entry.agent === null).length >= 40, 'the program screens are recorded');
    assert.ok(entries.some((entry) => entry.agent !== null && entry.asks), 'agent questions are in the corpus');
  });

  for (const [view, read] of [
    ['as tmux reports it, with the cursor', (entry: CorpusScreen) => entry.screen],
    ['as herdr and zellij report it, rows only', (entry: CorpusScreen) => entry.rowsOnly],
  ] as const) {
    it(`${view}: no false question, every agent question found, under its indicator`, (t) => {
      const result = score(entries, read);
      t.diagnostic(`${view}: ${figures(entries, result)}`);
      for (const miss of result.missed) t.diagnostic(`missed: ${miss}`);
      assert.deepEqual(result.falseQuestions, [], 'false questions');
      assert.deepEqual(
        result.missed.filter((id) => !id.startsWith('programs/')),
        [],
        'agent questions not found',
      );
      assert.deepEqual(result.wrongIndicator, []);
    });
  }

  it('reads each agent screen as the readiness it was recorded in', () => {
    for (const entry of entries.filter((item) => item.agent !== null)) {
      assert.equal(readinessOfReading(rulesFor(entry.agent!)!.read(entry.screen)).state, entry.readiness, entry.id);
    }
  });
});
