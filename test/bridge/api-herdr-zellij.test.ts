import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ConfigView, PaneView, ReplyReceipt, SessionsView, SnapshotView } from '../../src/bridge/index.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, type WebWorld } from './support.js';

async function snapshot(world: WebWorld): Promise<SnapshotView> {
  const answer = await world.call('/api/snapshot');
  assert.equal(answer.status, 200, answer.text);
  return answer.json as unknown as SnapshotView;
}

async function pane(world: WebWorld, paneId: string): Promise<PaneView> {
  return (await snapshot(world)).panes.find((candidate) => candidate.pane_id === paneId)!;
}

describe('drover web over herdr (the fake herdr server)', () => {
  it('shows the agents herdr detects, follows their status live, and orders them for triage', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const world = await startWebWorld(t, { mux: herdr.port });
    const config = (await world.call('/api/config')).json as unknown as ConfigView;
    assert.equal(config.supports.agentDetection, true, 'the page is told herdr names agents');
    const first = await snapshot(world);
    assert.deepEqual(
      first.spaces.map((space) => [space.label, space.tab_count, space.pane_count]),
      [
        ['agents', 2, 3],
        ['scratch', 1, 1],
      ],
    );
    const claude = first.panes.find((candidate) => candidate.agent === 'claude')!;
    assert.equal(claude.state, 'working');
    assert.equal(claude.state_source, 'mux');
    assert.equal(claude.verifiable, true, 'drover has screen rules for claude');
    assert.equal(claude.group, 'working');
    assert.equal(first.panes.find((candidate) => candidate.label === 'reviewer')?.agent, null);

    const stream = await world.stream();
    t.after(() => stream.close());
    herdr.server.setAgentStatus(claude.pane_id, 'blocked');
    await stream.next('the agent event', (event) => event.kind === 'agent' && event.data.pane_id === claude.pane_id && event.data.state === 'blocked');
    const blocked = await snapshot(world);
    assert.equal(blocked.triage[0], claude.pane_id);
    assert.equal(blocked.panes.find((candidate) => candidate.pane_id === claude.pane_id)?.group, 'needs_you');

    herdr.server.setAgentStatus(claude.pane_id, 'working');
    await eventually('working again', async () => (await pane(world, claude.pane_id)).state === 'working');
    herdr.server.setAgentStatus(claude.pane_id, 'done');
    const finished = await eventually('a finished turn nobody has seen', async () => {
      const view = await pane(world, claude.pane_id);
      return view.finished_unseen ? view : undefined;
    });
    assert.equal(finished.group, 'finished');
    assert.equal((await world.call(`/api/panes/${encodeURIComponent(claude.pane_id)}/grid`)).status, 200);
    const seen = await pane(world, claude.pane_id);
    assert.equal(seen.finished_unseen, false, 'opening the pane marks the turn seen');
    assert.equal(seen.group, 'idle');
  });

  it('does not type into a known agent whose screen it cannot read, and names the keys herdr lacks', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const world = await startWebWorld(t, { mux: herdr.port });
    const claude = (await snapshot(world)).panes.find((candidate) => candidate.agent === 'claude')!;
    const before = herdr.server.inputs().length;
    const answer = await world.post(`/api/panes/${encodeURIComponent(claude.pane_id)}/reply`, { text: 'carry on' });
    assert.equal(answer.status, 200, answer.text);
    const receipt = answer.json as unknown as ReplyReceipt;
    assert.equal(receipt.status, 'failed');
    assert.equal(receipt.typed, false);
    assert.match(receipt.reason, /the agent has exited \(a shell prompt and no Claude Code frame/, 'the fake herdr pane shows a shell, which claude\'s rules read as claude gone');
    assert.equal(herdr.server.inputs().length, before, 'nothing reached the pane');
    const keys = await world.post(`/api/panes/${encodeURIComponent(claude.pane_id)}/keys`, { keys: ['PageUp', 'Enter'] });
    assert.equal(keys.json.error?.code, 'key_refused');
    assert.match(String((keys.json.error?.refused as { reason: string }[])[0]?.reason), /herdr has no key names for PageUp/);
    const multiline = await world.post(`/api/panes/${encodeURIComponent(claude.pane_id)}/reply`, { text: 'one\ntwo' });
    assert.equal(multiline.status, 422);
    assert.equal(multiline.json.error?.code, 'multiline_unsupported');
    assert.match(String(multiline.json.error?.message), /herdr's socket offers no paste/);
    assert.equal(herdr.server.inputs().length, before, 'nothing reached the pane');
  });
});

describe('drover web over herdr: its sessions', () => {
  it('lists the sessions herdr keeps, saying which one this page shows', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    mkdirSync(join(herdr.dir, 'sessions', 'review'), { recursive: true });
    const review = new FakeHerdrServer({ seed: 'empty' });
    await review.start(join(herdr.dir, 'sessions', 'review', 'herdr.sock'));
    t.after(() => review.stop());
    const world = await startWebWorld(t, { mux: herdr.port });
    const answer = await world.call('/api/sessions');
    assert.equal(answer.status, 200, answer.text);
    assert.deepEqual(answer.json as unknown as SessionsView, {
      available: true,
      reason: null,
      sessions: [
        { name: 'default', current: true },
        { name: 'review', current: false },
      ],
    });
  });
});

describe('drover web over zellij (the fake zellij)', () => {
  it('explains what zellij does not declare instead of failing, and streams pane changes', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const world = await startWebWorld(t, { mux: zellij.port });
    const config = (await world.call('/api/config')).json as unknown as ConfigView;
    assert.equal(config.supports.setFocus, false);
    assert.equal(config.spaces, 'one');
    const sessions = (await world.call('/api/sessions')).json as unknown as SessionsView;
    assert.deepEqual(sessions, { available: false, reason: 'zellij does not support listSessions: one drover mux instance drives exactly one zellij session.', sessions: [] });
    assert.match(String(config.notes.setFocus), /focus-pane-id does nothing/);
    const view = await snapshot(world);
    assert.deepEqual(view.tabs.map((tab) => tab.label), ['agents', 'scratch']);
    const target = view.panes[0]!.pane_id;

    const focus = await world.post(`/api/panes/${encodeURIComponent(target)}/focus`);
    assert.equal(focus.status, 501);
    assert.equal(focus.json.error?.code, 'unsupported');
    assert.equal(focus.json.error?.capability, 'setFocus');
    assert.match(String(focus.json.error?.message), /zellij does not support setFocus: zellij's focus-pane-id does nothing/);
    const space = await world.post('/api/spaces', {});
    assert.equal(space.json.error?.code, 'unsupported');
    assert.equal(space.json.error?.capability, 'createSpace');

    const stream = await world.stream();
    t.after(() => stream.close());
    await zellij.changePane(target);
    const changed = await stream.next('a pane event', (event) => event.kind === 'pane' && event.data.pane_id === target);
    const grid = await world.call(`/api/panes/${encodeURIComponent(target)}/grid`);
    assert.equal(grid.json.revision, changed.data.revision);
    assert.match(String(grid.json.text), /printed line/);
  });
});
