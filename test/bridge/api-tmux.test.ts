import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { GridView, PaneView, ReplyReceipt, SnapshotView } from '../../src/bridge/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type MuxPort } from '../../src/mux/index.js';
import { Server, type Pane, type Session } from '../../src/tmux/index.js';
import { FAKE_AGENT, screenShows } from '../panes/live.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { startWebWorld, suiteTeardown, type WebWorld } from './support.js';

/** The pane's whole history: what it printed and what was typed into it. */
async function history(pane: Pane): Promise<string> {
  return (await pane.capture({ start: '-', join: true })).toString('utf8');
}

describe('drover web over tmux: the API', { concurrency: 1 }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  let tmux: Server;
  let port: MuxPort;
  let world: WebWorld;
  let work: Session;
  let agent: Pane;
  let cat: Pane;
  let agentId: string;
  let catId: string;

  before(async () => {
    tmux = await startTestServer();
    teardown.after(() => tmux.close());
    const first = await tmux.newSession({ name: 'work', width: 100, height: 30, command: ['node', FAKE_AGENT, '--busy-ms', '200'], receipt: true });
    work = first.session;
    agent = first.pane;
    await screenShows(agent, '╭');
    // A program that is not a shell: it prints a coloured line and 200 more, then echoes what it is sent, visibly.
    const second = await first.session.newWindow({ name: 'log', command: ['sh', '-c', "printf '\\033[1;31mred\\033[0m plain\\n'; seq 1 200; exec cat -v"], receipt: true });
    cat = second.pane;
    await screenShows(cat, '200');
    const binding = await Server.open(tmux.endpoint, { transport: 'control' });
    teardown.after(() => binding.close());
    port = createMuxPort(new TmuxAdapter({ server: binding }));
    teardown.after(() => port.close());
    world = await startWebWorld(teardown, { mux: port });
    agentId = tmuxIds.pane(agent.id);
    catId = tmuxIds.pane(cat.id);
  });

  async function snapshot(): Promise<SnapshotView> {
    const answer = await world.call('/api/snapshot');
    assert.equal(answer.status, 200, answer.text);
    return answer.json as unknown as SnapshotView;
  }

  async function paneView(paneId: string): Promise<PaneView> {
    return (await snapshot()).panes.find((pane) => pane.pane_id === paneId)!;
  }

  it('publishes the declaration the page follows', async () => {
    const config = (await world.call('/api/config')).json;
    assert.equal(config.mux, 'tmux');
    assert.equal((config.supports as Record<string, boolean>).setFocus, true);
    assert.equal((config.supports as Record<string, boolean>).agentDetection, false);
    assert.match(String((config.notes as Record<string, string>).agentDetection), /foreground command/);
    const tray = config.keys_tray as { key: string; refused: string | null }[];
    assert.deepEqual(tray.map((entry) => entry.key).slice(0, 8), ['Escape', 'ctrl+c', 'Up', 'Down', 'Left', 'Right', 'Tab', 'Enter']);
    assert.ok(tray.every((entry) => entry.refused === null));
  });

  it('lists spaces, tabs and panes with counts and focus', async () => {
    const view = await snapshot();
    assert.deepEqual(
      view.spaces.map((space) => [space.label, space.tab_count, space.pane_count]),
      [['work', 2, 2]],
    );
    assert.equal(view.tabs[1]?.label, 'log');
    assert.deepEqual(new Set(view.panes.map((pane) => pane.pane_id)), new Set([agentId, catId]));
    assert.deepEqual(view.panes.filter((pane) => pane.focused), [], 'no terminal is attached, so no pane is on anyone\'s screen');
    assert.deepEqual(view.panes.map((pane) => pane.pane_id).sort(), [agent.id, cat.id].sort(), "tmux's own pane ids");
    assert.equal(view.triage.length, 2);
    assert.match(view.event_id, /^[0-9a-f]+\.\d+$/);
  });

  it('says every pane is on this machine when no host is configured, and refuses a key naming another host', async () => {
    const view = await snapshot();
    assert.deepEqual(view.hosts, []);
    assert.deepEqual(new Set(view.panes.map((pane) => [pane.host, pane.stale, pane.stale_age_ms].join(' '))), new Set(['local false ']));
    const byId = new Map(view.panes.map((pane) => [pane.pane_id, pane.pane_key]));
    assert.deepEqual(view.triage_keys, view.triage.map((id) => byId.get(id)), 'the triage by key is the triage by id');
    const remoteKey = encodeURIComponent('gpu::tmux::1-1::%3');
    const refused = await world.post(`/api/panes/${remoteKey}/reply`, { text: 'hello' });
    assert.equal(refused.status, 400, refused.text);
    assert.match(refused.json.error?.message ?? '', /names a pane on gpu, and drover web reads no other host/);
  });

  it('puts a pane that asks first, with its question as buttons, and announces it on the stream', async () => {
    const stream = await world.stream();
    try {
      await agent.sendText('ask:yes_no');
      await agent.sendKeys(['Enter']);
      const asked = await stream.next('a question event', (event) => event.kind === 'question' && event.data.pane_id === agentId && event.data.question !== null);
      const question = asked.data.question as { id: string; snippet: string; options: { label: string; keys: string[] }[] };
      assert.equal(question.snippet, 'Apply the edit to src/app.ts? [y/n]');
      assert.deepEqual(question.options.map((option) => option.keys), [['y'], ['n']]);
      const view = await snapshot();
      assert.equal(view.triage[0], agentId, 'needs you comes first');
      assert.equal(view.counts.needs_you, 1);
      const pane = view.panes.find((candidate) => candidate.pane_id === agentId)!;
      assert.equal(pane.state, 'blocked');
      assert.equal(pane.group, 'needs_you');
      assert.equal(pane.question?.id, question.id);
      assert.equal(pane.verifiable, false, 'the fake agent is no agent drover has screen rules for');
    } finally {
      stream.close();
    }
  });

  it('refuses an answer meant for another question, then delivers the right one', async () => {
    const current = (await paneView(agentId)).question!;
    const stale = await world.post(`/api/panes/${encodeURIComponent(agentId)}/answer`, { question: 'q0-00000000', option: 0 });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.error?.code, 'question_changed');
    assert.equal((stale.json.error?.current as { id: string }).id, current.id, 'the refusal carries the question now on screen');
    assert.doesNotMatch(await history(agent), /answer: /, 'nothing was typed');
    const wrongOption = await world.post(`/api/panes/${encodeURIComponent(agentId)}/answer`, { question: current.id, option: 7 });
    assert.equal(wrongOption.json.error?.code, 'bad_request');
    const answered = await world.post(`/api/panes/${encodeURIComponent(agentId)}/answer`, { question: current.id, option: 1 });
    assert.equal(answered.status, 200, answered.text);
    assert.deepEqual(answered.json.keys, ['n']);
    await screenShows(agent, 'answer: n');
    await eventually('the question to leave the snapshot', async () => (await paneView(agentId)).question === null);
    const again = await world.post(`/api/panes/${encodeURIComponent(agentId)}/answer`, { question: current.id, option: 0 });
    assert.equal(again.json.error?.code, 'question_changed', 'the same answer twice does not reach the next screen');
  });

  it('serves a grid with its SGR styling, a 304 for an unchanged revision, and scrollback on request', async () => {
    const viewport = await world.call(`/api/panes/${encodeURIComponent(catId)}/grid`);
    assert.equal(viewport.status, 200);
    const grid = viewport.json as unknown as GridView;
    assert.equal(grid.scope, 'viewport');
    assert.ok(grid.text.split('\n').length <= 30);
    const etag = String(viewport.headers.etag);
    assert.equal(etag, `"${grid.revision}"`);
    const unchanged = await world.call(`/api/panes/${encodeURIComponent(catId)}/grid`, { headers: { 'If-None-Match': etag } });
    assert.equal(unchanged.status, 304);
    const recent = (await world.call(`/api/panes/${encodeURIComponent(catId)}/grid?lines=150`)).json as unknown as GridView;
    assert.equal(recent.scope, 'recent');
    assert.ok(recent.text.split('\n').length > 100, 'scrollback reaches beyond the screen');
    const top = (await world.call(`/api/panes/${encodeURIComponent(catId)}/grid?lines=1000`)).json as unknown as GridView;
    assert.match(top.text, /\x1b\[[0-9;]*31m/, 'the colour escape is kept for the mirror');
    assert.equal((await world.call(`/api/panes/${encodeURIComponent(catId)}/grid?lines=0`)).json.error?.code, 'bad_request');
    assert.equal((await world.call('/api/panes/p999/grid')).json.error?.code, 'gone');
  });

  it('names every refused key and sends nothing, then sends keys in the neutral grammar', async () => {
    const before = await history(cat);
    const refused = await world.post(`/api/panes/${encodeURIComponent(catId)}/keys`, { keys: ['x', 'ctrl+Enter', 'C-c', 'Enter'] });
    assert.equal(refused.status, 422);
    assert.equal(refused.json.error?.code, 'key_refused');
    assert.deepEqual(
      (refused.json.error?.refused as { key: string; reason: string }[]).map((entry) => entry.key),
      ['ctrl+Enter', 'C-c'],
    );
    assert.match(String(refused.json.error?.message), /nothing was sent/);
    assert.equal(await history(cat), before);
    const sent = await world.post(`/api/panes/${encodeURIComponent(catId)}/keys`, { keys: ['k', 'e', 'y', 's', 'Enter'] });
    assert.equal(sent.status, 200, sent.text);
    await eventually('the keys to arrive', async () => /^keys$/m.test(await history(cat)));
  });

  it('types a reply to a program it cannot verify and says so in the receipt', async () => {
    const answer = await world.post(`/api/panes/${encodeURIComponent(catId)}/reply`, { text: 'hello from the web' });
    assert.equal(answer.status, 200, answer.text);
    const receipt = answer.json as unknown as ReplyReceipt;
    assert.equal(receipt.status, 'not_verifiable');
    // The page shows `status: reason`, so the reason says why without saying the status again.
    assert.match(receipt.reason, /^drover has no screen rules for .+, so the text was typed and Enter pressed without a check$/);
    assert.equal(receipt.typed, true);
    assert.equal(receipt.submitted, false);
    await eventually('the reply to arrive', async () => /^hello from the web$/m.test(await history(cat)));
    // tmux declares pasteText, so a reply may hold line breaks: pasted, then Enter.
    const multiline = await world.post(`/api/panes/${encodeURIComponent(catId)}/reply`, { text: 'first of two\nsecond of two' });
    assert.equal(multiline.status, 200, multiline.text);
    assert.equal((multiline.json as unknown as ReplyReceipt).chars, 'first of two\nsecond of two'.length);
    await eventually('both lines of the reply to arrive', async () => /^first of two$[\s\S]*^second of two$/m.test(await history(cat)));
    assert.deepEqual(await tmux.buffers().list(), [], 'the paste leaves no buffer behind');
    const guarded = await world.post(`/api/panes/${encodeURIComponent(agentId)}/reply`, { text: 'main', question: 'q0-00000000' });
    assert.equal(guarded.json.error?.code, 'question_changed', 'a reply meant for a question that is gone is refused');
  });

  it('sends a pane change to the stream with its revision, and resumes from Last-Event-ID', async () => {
    const stream = await world.stream();
    let resumed: Awaited<ReturnType<WebWorld['stream']>> | undefined;
    try {
      await cat.sendText('live-1');
      await cat.sendKeys(['Enter']);
      const first = await stream.next('a pane event', (event) => event.kind === 'pane' && event.data.pane_id === catId);
      assert.equal(typeof first.data.revision, 'string');
      const grid = (await world.call(`/api/panes/${encodeURIComponent(catId)}/grid`)).json as unknown as GridView;
      await eventually('the stream to carry the grid revision', () => stream.events.some((event) => event.kind === 'pane' && event.data.revision === grid.revision));
      stream.close();
      await cat.sendText('live-2');
      await cat.sendKeys(['Enter']);
      const missedAfter = stream.events.at(-1)!;
      const later = await eventually('a pane event while the client was away', () => {
        const since = world.bridge.hub.since(missedAfter.id)!;
        return since.some((event) => event.kind === 'pane' && (event.data as { pane_id: string }).pane_id === catId) ? since : undefined;
      });
      resumed = await world.stream({ lastEventId: missedAfter.id });
      await resumed.next('the missed events', () => resumed!.events.length >= later.length);
      assert.deepEqual(
        resumed.events.slice(0, later.length).map((event) => event.id),
        later.map((event) => event.id),
        'exactly the missed events, in order',
      );
      const ids = resumed.events.map((event) => Number(event.id.split('.')[1]));
      assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
      const foreign = await world.stream({ lastEventId: 'deadbeef.3' });
      try {
        const resync = await foreign.next('a resync', () => true);
        assert.equal(resync.kind, 'resync');
      } finally {
        foreign.close();
      }
    } finally {
      stream.close();
      resumed?.close();
    }
  });

  it('renames, focuses, opens a tab and a space, closes a pane, and says so on the stream', async () => {
    const stream = await world.stream();
    try {
      assert.equal((await world.post(`/api/panes/${encodeURIComponent(catId)}/rename`, { label: 'build log' })).status, 200);
      assert.equal((await paneView(catId)).label, 'build log');
      assert.equal((await world.post(`/api/panes/${encodeURIComponent(catId)}/rename`, { label: 42 })).json.error?.code, 'bad_request');
      assert.equal((await world.post(`/api/panes/${encodeURIComponent(catId)}/focus`)).status, 200);
      assert.equal((await cat.display('#{pane_active}#{window_active}')).toString('utf8').trim(), '11', 'its window and pane are the active ones');
      const spaceId = (await snapshot()).spaces[0]!.space_id;
      const tab = await world.post('/api/tabs', { space_id: spaceId, label: 'extra' });
      assert.equal(tab.status, 200, tab.text);
      await stream.next('a topology event', (event) => event.kind === 'topology');
      const space = await world.post('/api/spaces', { label: 'second' });
      assert.equal(space.status, 200, space.text);
      const created = String(tab.json.pane_id);
      await eventually('the new tab in the snapshot', async () => (await snapshot()).panes.some((pane) => pane.pane_id === created));
      assert.equal((await world.post(`/api/panes/${encodeURIComponent(created)}/close`)).status, 200);
      await eventually('the closed pane to leave the snapshot', async () => !(await snapshot()).panes.some((pane) => pane.pane_id === created));
      assert.deepEqual(new Set((await snapshot()).spaces.map((entry) => entry.label)), new Set(['work', 'second']));
    } finally {
      stream.close();
    }
  });

  it('marks a title stale once the program that wrote it has exited, and keeps a title current while it runs', async () => {
    const shell = (await work.newWindow({ name: 'titled', command: ['sh'], receipt: true })).pane;
    const paneId = tmuxIds.pane(shell.id);
    await eventually('the shell prompt', async () => (await shell.capture()).toString('utf8').trim() !== '');
    // node sets the terminal title and keeps running in the foreground, until Ctrl-C.
    await shell.sendText(`node -e "process.stdout.write('\\x1b]2;editing notes\\x07'); setInterval(() => {}, 1000)"`);
    await shell.sendKeys(['Enter']);
    const running = await eventually('the title under node', async () => {
      const pane = await paneView(paneId);
      return pane?.title === 'editing notes' && pane.foreground === 'node' ? pane : undefined;
    });
    assert.equal(running.title_stale, false);
    await shell.sendKeys(['C-c']);
    const exited = await eventually('the shell back in the foreground', async () => {
      const pane = await paneView(paneId);
      return pane?.foreground === 'sh' ? pane : undefined;
    });
    assert.equal(exited.title, 'editing notes', 'tmux keeps the title after its program exits');
    assert.equal(exited.title_stale, true);
  });

  it('looks again on request, as a read that needs this page’s Origin', async () => {
    assert.deepEqual((await world.post('/api/refresh')).json, { refreshed: true });
    assert.equal((await world.post('/api/refresh', {}, { headers: { Origin: 'http://evil.example' } })).json.error?.code, 'forbidden_origin');
  });

  it('answers unknown routes and methods with their codes', async () => {
    assert.equal((await world.call('/api/nothing')).json.error?.code, 'not_found');
    assert.equal((await world.call('/api/snapshot', { method: 'POST', body: {}, headers: { Origin: world.origin } })).json.error?.code, 'method_not_allowed');
    const notJson = await world.call(`/api/panes/${encodeURIComponent(catId)}/keys`, { method: 'POST', body: 'keys=Enter', headers: { Origin: world.origin, 'Content-Type': 'application/x-www-form-urlencoded' } });
    assert.equal(notJson.json.error?.code, 'unsupported_media_type', 'a form post (what a cross-site form can send) is refused');
    assert.equal((await world.call('/api/panes/%E0%A4%A/grid')).json.error?.code, 'bad_request');
  });

  it('reads the question of a program that took over its window from the shell that started it', async () => {
    // The listing sees sh while it waits; python3 asks once sh has exec'd it, and nothing else changes after.
    const script = 'input("Deploy now? [y/n] "); import time; time.sleep(600)';
    const { pane: asker } = await work.newWindow({ name: 'handed-over', command: ['sh', '-c', `sleep 1; exec python3 -c '${script}'`], receipt: true });
    try {
      const askerId = tmuxIds.pane(asker.id);
      await eventually('the window in the listing, under sh', async () => (await paneView(askerId))?.foreground === 'sh');
      await screenShows(asker, '[y/n]');
      const question = await eventually('the question to show', async () => (await paneView(askerId))?.question ?? undefined).catch(async (error: Error) => assert.fail(`${error.message}: ${JSON.stringify(await paneView(askerId))}`));
      assert.match(question.snippet, /Deploy now\? \[y\/n\]/);
    } finally {
      await asker.kill();
    }
  });

  it('answers a [y/n] asked by a program that reads a whole line with the key and Enter, which it needs', async () => {
    const script = 'answer = input("Overwrite file? [y/n] "); print("got", answer); import time; time.sleep(600)';
    const { pane: asker } = await work.newWindow({ name: 'asker', command: ['sh'], receipt: true });
    try {
      const askerId = tmuxIds.pane(asker.id);
      await asker.sendText(`exec python3 -c '${script}'`);
      await asker.sendKeys(['Enter']);
      await screenShows(asker, '[y/n]');
      const question = await eventually('the question to show', async () => (await paneView(askerId))?.question ?? undefined).catch(async (error: Error) => assert.fail(`${error.message}: ${JSON.stringify(await paneView(askerId))}`));
      assert.deepEqual(question.options.map((option) => option.keys), [['y'], ['n']]);
      const answered = await world.post(`/api/panes/${encodeURIComponent(askerId)}/answer`, { question: question.id, option: 0 });
      assert.equal(answered.status, 200, answered.text);
      assert.deepEqual(answered.json.keys, ['y', 'Enter'], 'the line it waits for is ended');
      await screenShows(asker, 'got y');
    } finally {
      await asker.kill();
    }
  });
});
