/**
 * drover web against the real Claude Code in its offline bed: a reply goes through drover's
 * verified delivery over the mux port, and its permission prompt is answered with the button
 * the page shows. The model mock's log is the proof.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PaneView, QuestionView, ReplyReceipt, SnapshotView } from '../../src/bridge/index.js';
import { tmuxAgentCensus } from '../../src/cli/commands/web.js';
import { createMuxPort, TmuxAdapter, tmuxIds } from '../../src/mux/index.js';
import { requireAgent, startAgentBed } from '../agents/bed.js';
import { TOOL_MARKER } from '../agents/mock/server.js';
import { arrivals, openAgent } from '../agents/scenario.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, type WebWorld } from './support.js';

async function paneView(world: WebWorld, paneId: string): Promise<PaneView> {
  return ((await world.call('/api/snapshot')).json as unknown as SnapshotView).panes.find((pane) => pane.pane_id === paneId)!;
}

describe('drover web with a real agent', () => {
  it('claude: a reply is verified on its screen, and its permission prompt is answered with a button', async (t) => {
    if (requireAgent(t, 'claude') === undefined) return;
    const bed = await startAgentBed('claude');
    t.after(() => bed.close());
    const pane = await openAgent(bed);
    const port = createMuxPort(new TmuxAdapter({ server: bed.server }));
    t.after(() => port.close());
    const world = await startWebWorld(t, { mux: port, census: tmuxAgentCensus(bed.server, bed.workdir) });
    const paneId = tmuxIds.pane(pane);

    const idle = await eventually('claude at its composer', async () => {
      const view = await paneView(world, paneId);
      return view.state === 'idle' ? view : undefined;
    });
    assert.deepEqual([idle.agent, idle.verifiable, idle.state_source], ['claude', true, 'screen'], 'named from its process tree, read by its screen rules');

    const text = 'Say hello in one word.';
    const answer = await world.post(`/api/panes/${encodeURIComponent(paneId)}/reply`, { text });
    const receipt = answer.json as unknown as ReplyReceipt;
    assert.equal(receipt.status, 'submitted', `${receipt.reason}`);
    assert.notEqual(receipt.evidence, null);
    const turns = await bed.mock.waitForTurns('the reply', (all) => arrivals(all, text) > 0, 30_000);
    assert.equal(arrivals(turns, text), 1, 'whole, once');

    await eventually('claude at its composer again', async () => (await paneView(world, paneId)).state === 'idle', 30_000);
    const ask = await world.post(`/api/panes/${encodeURIComponent(paneId)}/reply`, { text: `${TOOL_MARKER} run the check` });
    assert.equal((ask.json as unknown as ReplyReceipt).status, 'submitted', String(ask.json.reason));
    const question = await eventually(
      'the permission prompt as a question',
      async () => {
        const view = await paneView(world, paneId);
        return view.question ?? undefined;
      },
      30_000,
    );
    assert.equal(question.indicator, 'permission_prompt');
    assert.equal((await paneView(world, paneId)).group, 'needs_you');
    assert.deepEqual(
      question.options.map((option) => [option.label, option.keys]),
      [
        ['1. Yes', ['1', 'Enter']],
        ['2. No', ['2', 'Enter']],
      ],
    );
    const refused = await world.post(`/api/panes/${encodeURIComponent(paneId)}/reply`, { text: 'this must not be typed into the question' });
    assert.deepEqual([(refused.json as unknown as ReplyReceipt).status, (refused.json as unknown as ReplyReceipt).typed], ['failed', false]);

    const before = bed.mock.requests.length;
    const answered = await world.post(`/api/panes/${encodeURIComponent(paneId)}/answer`, { question: (question as QuestionView).id, option: 0 });
    assert.equal(answered.status, 200, answered.text);
    await eventually('the tool result to reach the model', () => bed.mock.requests.slice(before).some((request) => JSON.stringify(request.body).includes('drover-tool-ran')), 30_000);
    await eventually('the question to be gone', async () => (await paneView(world, paneId)).question === null, 30_000);
  });
});
