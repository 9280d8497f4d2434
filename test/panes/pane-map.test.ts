import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentScreen, rulesFor } from '../../src/agents/index.js';
import type { MuxOutcome, MuxScreen } from '../../src/mux/index.js';
import { judgeAgentScreen } from '../../src/panes/index.js';
import { loadScreenFixture } from '../agents/screens/fixtures.js';

const codex = rulesFor('codex')!;
const busy = loadScreenFixture('codex', '0.171.0', 'busy').screen;
/** Half a frame: the agent had cleared its screen and drawn one row when it was read. */
const midFrame = agentScreen('  thinking about it\n', { width: 80, height: 24, cursor: null });

function outcome(screen: typeof busy): MuxOutcome<MuxScreen> {
  return { ok: true, value: { paneId: '%1', ...screen } };
}

describe("the map's reading of an agent's screen", () => {
  it('takes a recognised screen at once', async () => {
    let reads = 0;
    const judged = await judgeAgentScreen(outcome(busy), async () => (reads += 1, outcome(busy)), codex, 0);
    assert.equal(judged.state, 'active');
    assert.equal(reads, 0, 'no second look');
  });

  it('looks once more at a screen no rule recognised, and takes what that look shows', async () => {
    assert.equal(codex.read(midFrame).phase, 'unknown', 'the half frame matches no rule');
    let reads = 0;
    const judged = await judgeAgentScreen(outcome(midFrame), async () => (reads += 1, outcome(busy)), codex, 0);
    assert.deepEqual([judged.state, reads], ['active', 1]);
    assert.ok(judged.screen.ok && judged.screen.value.lines === busy.lines, 'the second look is the screen the row shows');
  });

  it('leaves the state unknown when the second look is no clearer, or fails', async () => {
    assert.equal((await judgeAgentScreen(outcome(midFrame), async () => outcome(midFrame), codex, 0)).state, null);
    const failed: MuxOutcome<MuxScreen> = { ok: false, reason: 'gone', detail: 'the pane is gone' };
    const judged = await judgeAgentScreen(outcome(midFrame), async () => failed, codex, 0);
    assert.equal(judged.state, null);
    assert.ok(judged.screen.ok, 'the screen that was read stands for the glance');
  });
});
