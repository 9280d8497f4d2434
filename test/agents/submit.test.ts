import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  agentScreen,
  submitToAgent,
  type AgentInputPort,
  type AgentScreen,
  type AgentScreenRules,
  type ScreenPhase,
  type SubmitClock,
} from '../../src/agents/index.js';

/**
 * A scripted agent: its state is written on three screen lines the scripted rules read back,
 * so the choreography is tested on its decisions alone. Knobs make it misbehave the ways real
 * agents did: a completion menu that takes Enter, a paste that never shows, an Enter that
 * does nothing, a turn that runs for a while.
 */
class ScriptedAgent implements AgentInputPort {
  phase: ScreenPhase = 'composer';
  composer = '';
  completion = false;
  readonly calls: string[] = [];
  readonly submitted: string[] = [];
  /** What the composer shows after a paste: the text, the agent's placeholder, or nothing. */
  pasteShows: 'text' | 'placeholder' | 'nothing' = 'text';
  /** What Enter on a filled composer leads to. */
  afterEnter: ScreenPhase | 'nothing' = 'busy';
  /** Reads a busy agent stays busy before its turn ends. */
  busyReads = 0;

  async read(): Promise<AgentScreen> {
    this.calls.push('read');
    if (this.phase === 'busy' && this.busyReads > 0 && --this.busyReads === 0) this.phase = 'composer';
    return agentScreen([`phase ${this.phase}`, `composer ${JSON.stringify(this.composer)}`, `completion ${this.completion}`].join('\n'), { width: 80, height: 3, cursor: null });
  }

  /** `sent` is what the caller pasted, when only part of it lands. */
  async paste(text: string, sent = text): Promise<void> {
    this.calls.push(`paste ${sent}`);
    if (this.pasteShows === 'nothing') return;
    this.composer += this.pasteShows === 'text' ? text : `[Pasted ${text.length} chars]`;
    if (/@\S+$/.test(text)) this.completion = true;
  }

  async keys(keys: readonly string[]): Promise<void> {
    this.calls.push(`keys ${keys.join(' ')}`);
    for (const key of keys) {
      if (key === 'C-u') this.composer = '';
      else if (key === 'Escape') this.completion = false;
      else if (key === 'Enter') {
        if (this.completion) this.completion = false;
        else if (this.composer !== '' && this.afterEnter !== 'nothing') {
          this.submitted.push(this.composer);
          this.composer = '';
          this.phase = this.afterEnter;
        }
      }
    }
  }
}

const rules: AgentScreenRules = {
  agent: 'claude',
  read(screen) {
    const phase = screen.lines[0]!.slice('phase '.length) as ScreenPhase;
    const composer = JSON.parse(screen.lines[1]!.slice('composer '.length)) as string;
    return {
      phase,
      rule: `scripted.${phase}`,
      detail: `a scripted ${phase}`,
      composer: phase === 'composer' || phase === 'busy' ? { text: composer } : null,
      completion: screen.lines[2] === 'completion true',
      question: phase === 'permission' ? { snippet: 'Allow the tool?' } : null,
    };
  },
  composerShows: (shown, typed) => shown === typed || shown === `[Pasted ${typed.length} chars]`,
  clearKeys: ['C-u'],
  dismissCompletionKeys: ['Escape'],
};

function fakeClock(): SubmitClock {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
}

function submit(agent: ScriptedAgent, text: string, composerWaitMs = 0) {
  return submitToAgent(agent, text, { rules, clock: fakeClock(), deadline: 60_000, composerWaitMs });
}

const typing = (agent: ScriptedAgent): string[] => agent.calls.filter((call) => call !== 'read');

describe('submitToAgent', () => {
  it('pastes at an empty composer, presses Enter, and reports the agent turning busy as the evidence', async () => {
    const agent = new ScriptedAgent();
    const outcome = await submit(agent, 'explain this repository');
    assert.deepEqual([outcome.status, outcome.evidence, outcome.stage], ['submitted', 'agent_busy', 'entered']);
    assert.deepEqual(typing(agent), ['paste explain this repository', 'keys Enter']);
    assert.deepEqual(agent.submitted, ['explain this repository']);
  });

  it('accepts the agent’s paste placeholder as the echo', async () => {
    const agent = new ScriptedAgent();
    agent.pasteShows = 'placeholder';
    const outcome = await submit(agent, 'x'.repeat(2000));
    assert.equal(outcome.status, 'submitted');
  });

  it('clears a draft first, so the prompt is not glued to it, and reports the draft', async () => {
    const agent = new ScriptedAgent();
    agent.composer = 'half a thought';
    const outcome = await submit(agent, 'the real prompt');
    assert.equal(outcome.status, 'submitted');
    assert.equal(outcome.draftCleared, 'half a thought');
    assert.deepEqual(agent.submitted, ['the real prompt']);
  });

  it('closes a completion menu opened by a trailing @mention before Enter, so Enter submits', async () => {
    const agent = new ScriptedAgent();
    const outcome = await submit(agent, 'look at @notes.txt');
    assert.equal(outcome.status, 'submitted');
    assert.deepEqual(typing(agent), ['paste look at @notes.txt', 'keys Escape', 'keys Enter']);
    assert.deepEqual(agent.submitted, ['look at @notes.txt']);
  });

  for (const phase of ['dialog', 'permission', 'exited'] as const) {
    it(`types nothing while the agent shows ${phase === 'exited' ? 'that it exited' : `a ${phase}`}`, async () => {
      const agent = new ScriptedAgent();
      agent.phase = phase;
      const outcome = await submit(agent, 'hello', 5000);
      assert.deepEqual([outcome.status, outcome.stage, outcome.evidence], ['failed', 'not_typed', null]);
      assert.deepEqual(typing(agent), []);
    });
  }

  it('waits for a busy agent’s turn to end when allowed, else fails without typing', async () => {
    const busy = new ScriptedAgent();
    busy.phase = 'busy';
    const refused = await submit(busy, 'hello');
    assert.equal(refused.status, 'failed');
    assert.match(refused.reason, /the agent is busy/);
    assert.deepEqual(typing(busy), []);

    const waiting = new ScriptedAgent();
    waiting.phase = 'busy';
    waiting.busyReads = 5;
    const outcome = await submit(waiting, 'hello', 5000);
    assert.equal(outcome.status, 'submitted');
    assert.deepEqual(waiting.submitted, ['hello']);
  });

  it('fails before Enter when the paste never shows, and sends no clear keys to an empty composer', async () => {
    const agent = new ScriptedAgent();
    agent.pasteShows = 'nothing';
    const outcome = await submit(agent, 'hello');
    assert.deepEqual([outcome.status, outcome.stage], ['failed', 'typed']);
    assert.deepEqual(typing(agent), ['paste hello'], 'on an empty composer clear keys can open a menu (Claude Code: Rewind)');
  });

  it('clears a paste that landed only in part', async () => {
    const agent = new ScriptedAgent();
    const paste = agent.paste.bind(agent);
    agent.paste = async (text) => paste(text.slice(0, 3), text);
    const outcome = await submit(agent, 'hello');
    assert.deepEqual([outcome.status, outcome.stage], ['failed', 'typed']);
    assert.match(outcome.reason, /it showed "hel"\); what landed was cleared/);
    assert.deepEqual(typing(agent), ['paste hello', 'keys C-u']);
    assert.equal(agent.composer, '');
  });

  it('fails when the composer still holds the text after Enter, and clears it', async () => {
    const agent = new ScriptedAgent();
    agent.afterEnter = 'nothing';
    const outcome = await submit(agent, 'hello');
    assert.deepEqual([outcome.status, outcome.stage], ['failed', 'entered']);
    assert.match(outcome.reason, /still held the text after Enter/);
    assert.equal(agent.composer, '');
    assert.deepEqual(agent.submitted, []);
  });

  it('counts an emptied composer and a permission question as evidence, and says so', async () => {
    const cleared = new ScriptedAgent();
    cleared.afterEnter = 'composer';
    assert.equal((await submit(cleared, 'hello')).evidence, 'composer_cleared');
    const asking = new ScriptedAgent();
    asking.afterEnter = 'permission';
    assert.equal((await submit(asking, 'DROVER-TOOL')).evidence, 'agent_asking');
  });

  it('does not claim success when the screen after Enter says nothing', async () => {
    const agent = new ScriptedAgent();
    agent.afterEnter = 'unknown';
    const outcome = await submit(agent, 'hello');
    assert.deepEqual([outcome.status, outcome.evidence], ['staged_unconfirmed', null]);
  });
});
