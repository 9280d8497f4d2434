import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { changeFromStatusLink, displayStage, parseStatusFile, prNumberFromUrl, readFabState, type StageState } from '../../src/panes/index.js';

const STAGES = ['intake', 'apply', 'review', 'hydrate', 'ship', 'review-pr'];

function progress(...states: StageState[]): [string, StageState][] {
  return states.map((state, index) => [STAGES[index]!, state]);
}

describe('displayStage: the five tiers', () => {
  const cases: [string, [string, StageState][], { stage: string; state: StageState } | null][] = [
    ['the first active stage', progress('done', 'done', 'failed', 'active', 'pending', 'pending'), { stage: 'hydrate', state: 'active' }],
    ['else the first failed, over ready and done', progress('done', 'ready', 'failed', 'pending', 'pending', 'failed'), { stage: 'review', state: 'failed' }],
    ['else the first ready', progress('done', 'done', 'ready', 'pending', 'ready', 'pending'), { stage: 'review', state: 'ready' }],
    ['else the last done or skipped', progress('done', 'done', 'done', 'skipped', 'pending', 'pending'), { stage: 'hydrate', state: 'skipped' }],
    ['a shipped change stays on review-pr, done', progress('done', 'done', 'done', 'done', 'done', 'done'), { stage: 'review-pr', state: 'done' }],
    ['else the first pending', progress('pending', 'pending', 'pending', 'pending', 'pending', 'pending'), { stage: 'intake', state: 'pending' }],
    ['nothing for no stages', [], null],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(displayStage(input), expected));
  }
});

describe('status file pieces', () => {
  it('accepts only the fab pointer shape', () => {
    assert.equal(changeFromStatusLink('fab/changes/260417-ab12-tail-fix/.status.yaml'), '260417-ab12-tail-fix');
    for (const target of ['/abs/fab/changes/x/.status.yaml', 'fab/changes/a/b/.status.yaml', 'fab/changes//.status.yaml', 'fab/changes/x/status.yaml']) {
      assert.equal(changeFromStatusLink(target), null, target);
    }
  });

  it('reads PR numbers from a trailing /pull/<n>', () => {
    assert.equal(prNumberFromUrl('https://github.com/acme/app/pull/482'), 482);
    assert.equal(prNumberFromUrl('https://github.com/acme/app/pull/482/'), 482);
    assert.equal(prNumberFromUrl('https://github.com/acme/app/pull/482/files'), null);
    assert.equal(prNumberFromUrl('not a url'), null);
  });

  it('keeps stages in file order and ignores unknown states', () => {
    assert.deepEqual(parseStatusFile('progress:\n  review: done\n  intake: bogus\n  apply: active\nprs: [a, "", 3]\n'), {
      progress: [
        ['review', 'done'],
        ['apply', 'active'],
      ],
      prs: ['a'],
    });
    assert.equal(parseStatusFile('progress: [1, 2]'), undefined);
    assert.equal(parseStatusFile('{{{'), undefined);
  });
});

describe('readFabState', () => {
  let wt: string;
  const change = '260417-ab12-tail-fix';
  beforeEach(() => {
    wt = mkdtempSync(join(tmpdir(), 'drover-fab-'));
  });
  afterEach(() => rmSync(wt, { recursive: true, force: true }));

  function writeStatus(text: string): void {
    mkdirSync(join(wt, 'fab', 'changes', change), { recursive: true });
    writeFileSync(join(wt, 'fab', 'changes', change, '.status.yaml'), text);
    symlinkSync(`fab/changes/${change}/.status.yaml`, join(wt, '.fab-status.yaml'));
  }

  it('is undefined without a fab directory', () => {
    assert.equal(readFabState(wt), undefined);
  });

  it('has no change when the pointer is missing or malformed', () => {
    mkdirSync(join(wt, 'fab'));
    assert.deepEqual(readFabState(wt), { change: null, stage: null, displayState: null, prUrl: null, prNumber: null });
    symlinkSync('elsewhere/.status.yaml', join(wt, '.fab-status.yaml'));
    assert.equal(readFabState(wt)?.change, null);
  });

  it('reads change, stage, display state and the last PR', () => {
    writeStatus(
      [
        `id: ab12`,
        `name: ${change}`,
        'progress:',
        '  intake: done',
        '  apply: done',
        '  review: done',
        '  hydrate: done',
        '  ship: done',
        '  review-pr: active',
        'prs:',
        '  - https://github.com/acme/app/pull/7',
        '  - https://github.com/acme/app/pull/9',
      ].join('\n'),
    );
    assert.deepEqual(readFabState(wt), {
      change,
      stage: 'review-pr',
      displayState: 'active',
      prUrl: 'https://github.com/acme/app/pull/9',
      prNumber: 9,
    });
  });

  it('keeps a malformed PR URL but has no number for it', () => {
    writeStatus('progress:\n  intake: active\nprs:\n  - https://example.com/merge-requests/3\n');
    assert.deepEqual(readFabState(wt), { change, stage: 'intake', displayState: 'active', prUrl: 'https://example.com/merge-requests/3', prNumber: null });
  });

  it('keeps the change when the status file cannot be loaded', () => {
    writeStatus('progress: [oops');
    assert.deepEqual(readFabState(wt), { change, stage: null, displayState: null, prUrl: null, prNumber: null });
  });
});
