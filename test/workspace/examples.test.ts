import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadWorkspaceFile, planWorkspace } from '../../src/workspace/index.js';
import { HOME, REPO_ROOT } from './helpers.js';

const EXAMPLES = `${REPO_ROOT}examples`;

/** What each shipped example declares: per window, its name, layout and pane count. */
const EXPECTED = {
  'agent-fleet.yaml': [['fleet', 'main-vertical', 4]],
  'review.yaml': [
    ['agents', 'even-horizontal', 2],
    ['watch', 'main-horizontal', 2],
  ],
  'tiled-fleet.json': [
    ['agents', 'tiled', 4],
    ['shell', null, 1],
  ],
} as const;

describe('examples/', () => {
  for (const [file, windows] of Object.entries(EXPECTED)) {
    it(`${file} loads and plans the layout it describes`, async () => {
      const doc = await loadWorkspaceFile(`${EXAMPLES}/${file}`, { homeDir: HOME });
      assert.deepEqual(
        doc.windows.map((window) => [window.name, window.layout, window.panes.length]),
        windows,
      );
      assert.equal(doc.startDirectory, EXAMPLES.replace(/\/$/, ''));
      const plan = planWorkspace(doc);
      assert.equal(plan.conflicts.length, 0);
      assert.equal(plan.steps.filter((step) => step.op === 'send-keys').length, doc.windows.flatMap((w) => w.panes).flatMap((p) => p.commands).length);
    });
  }

  it('gives each agent pane its role in its environment', async () => {
    const doc = await loadWorkspaceFile(`${EXAMPLES}/agent-fleet.yaml`, { homeDir: HOME });
    assert.deepEqual(
      doc.windows[0]?.panes.map((pane) => pane.environment.DROVER_ROLE),
      ['director', 'agent-1', 'agent-2', 'agent-3'],
    );
  });
});
