import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { after, before, describe, it } from 'node:test';
import { createInterface } from 'node:readline';
import { LongLivedChild } from '../../src/process/index.js';
import { createMuxPort, HerdrAdapter, HerdrClient, HerdrError } from '../../src/mux/index.js';
import { ratioStep } from '../../src/mux/adapters/herdr/layout.js';
import type { HerdrLayout } from '../../src/mux/adapters/herdr/protocol.js';
import { FakeHerdrServer } from '../fixtures/herdr/server.js';

/** Sends raw bytes on one connection and collects everything the server writes until it closes. */
function raw(socketPath: string, payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const chunks: Buffer[] = [];
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

describe('the fake herdr server is as strict as herdr', () => {
  let dir: string;
  let socketPath: string;
  const server = new FakeHerdrServer();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drover-herdr-'));
    socketPath = join(dir, 'herdr.sock');
    await server.start(socketPath);
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers one request per connection and ignores the rest', async () => {
    const reply = await raw(socketPath, '{"id":"a","method":"ping","params":{}}\n{"id":"b","method":"ping","params":{}}\n');
    const lines = reply.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.deepEqual(JSON.parse(lines[0]!), { id: 'a', result: { type: 'pong', version: '0.8.2-fake', protocol: 20, capabilities: { live_handoff: false } } });
  });

  it('refuses what does not parse with invalid_request and an empty id', async () => {
    for (const [line, message] of [
      ['not json', /^invalid request: /],
      ['{"id":1,"method":"ping","params":{}}', /invalid type: integer `1`, expected a string/],
      ['{"id":"x","method":"pane.explode","params":{}}', /unknown variant `pane.explode`/],
      ['{"id":"x","method":"ping"}', /missing field `params`/],
      ['{"id":"x","method":"pane.read","params":{"pane_id":"w1:p1"}}', /missing field `source`/],
      ['{"id":"x","method":"pane.read","params":{"pane_id":"w1:p1","source":"everything"}}', /unknown variant `everything`/],
      ['{"id":"x","method":"tab.rename","params":{"tab_id":"w1:t1","label":null}}', /invalid type: null, expected a string/],
      ['{"id":"x","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.agent_status_changed"}]}}', /missing field `pane_id`/],
    ] as const) {
      const reply = JSON.parse(await raw(socketPath, `${line}\n`)) as { id: string; error: { code: string; message: string } };
      assert.equal(reply.id, '');
      assert.equal(reply.error.code, 'invalid_request');
      assert.match(reply.error.message, message);
    }
  });

  it('closes an empty line without an answer', async () => {
    assert.equal(await raw(socketPath, '\n'), '');
  });

  it('answers a missing target with its not-found code, and a bad key after the pane lookup', async () => {
    const client = new HerdrClient({ socketPath });
    await assert.rejects(client.paneGet('w1:p99'), (error: unknown) => error instanceof HerdrError && error.code === 'pane_not_found' && error.reason === 'gone' && /pane w1:p99 not found/.test(error.message));
    await assert.rejects(client.tabClose('w1:t99'), (error: unknown) => error instanceof HerdrError && error.code === 'tab_not_found');
    await assert.rejects(client.paneSendKeys('w1:p99', ['PageUp']), (error: unknown) => error instanceof HerdrError && error.code === 'pane_not_found');
    for (const key of ['PageUp', 'Home', 'C-c', 'ctrl+pagedown']) {
      await assert.rejects(client.paneSendKeys('w1:p1', [key]), (error: unknown) => error instanceof HerdrError && error.code === 'invalid_key' && error.reason === 'refused');
    }
    await client.paneSendKeys('w1:p1', ['CTRL+c', 'enter', 'shift+tab', 'cmd+k', 'ctrl+plus']);
  });

  it('reads different depths for visible and recent, with SGR only in ansi', async () => {
    const client = new HerdrClient({ socketPath });
    const logs = (await client.paneList()).find((pane) => pane.cwd?.endsWith('/logs'))!;
    const visible = await client.paneRead(logs.pane_id, { source: 'visible' });
    const recent = await client.paneRead(logs.pane_id, { source: 'recent', lines: 30 });
    assert.ok(recent.text.split('\n').length > visible.text.split('\n').length);
    assert.equal(recent.text.split('\n').length, 30);
    assert.equal(recent.truncated, false);
    const ansi = await client.paneRead('w1:p1', { source: 'visible', format: 'ansi' });
    const text = await client.paneRead('w1:p1', { source: 'visible', format: 'text' });
    assert.match(ansi.text, /\u001b\[32m/);
    assert.doesNotMatch(text.text, /\u001b/);
  });

  it('acknowledges a subscription and streams events, and refuses one for a missing pane', async () => {
    const client = new HerdrClient({ socketPath });
    const events: string[] = [];
    let wake: () => void = () => undefined;
    const stream = await client.subscribe([{ type: 'tab.renamed' }, { type: 'pane.agent_status_changed', pane_id: 'w1:p1' }], {
      onEvent: (event) => {
        events.push(`${event.event}:${String(event.data.type)}`);
        wake();
      },
      onClose: () => undefined,
    });
    const arrived = new Promise<void>((resolve) => (wake = () => events.length >= 2 && resolve()));
    server.renameTab('w1:t1', 'renamed');
    server.setAgentStatus('w1:p1', 'blocked');
    await arrived;
    stream.close();
    assert.deepEqual(events, ['tab_renamed:tab_renamed', 'pane_agent_status_changed:pane_agent_status_changed']);
    await assert.rejects(
      client.subscribe([{ type: 'pane.agent_status_changed', pane_id: 'w1:p99' }], { onEvent: () => undefined, onClose: () => undefined }),
      (error: unknown) => error instanceof HerdrError && error.code === 'pane_not_found',
    );
  });
});

/** A tab of 200×60 cells at (5,1): Director p1 left (ratio `left`), and a column split down by `ratios` on the right. */
function columnLayout(left: number, ratios: number[]): HerdrLayout {
  const area = { x: 5, y: 1, width: 200, height: 60 };
  const width = Math.round(area.width * left);
  const panes = [{ pane_id: 'p1', focused: true, rect: { x: area.x, y: area.y, width, height: area.height } }];
  const splits: HerdrLayout['splits'][number][] = [{ id: 's0', direction: 'right', ratio: left, rect: area }];
  let rect = { x: area.x + width, y: area.y, width: area.width - width, height: area.height };
  ratios.forEach((ratio, k) => {
    splits.push({ id: `s${k + 1}`, direction: 'down', ratio, rect });
    const height = Math.round(rect.height * ratio);
    panes.push({ pane_id: `m${k + 1}`, focused: false, rect: { ...rect, height } });
    rect = { ...rect, y: rect.y + height, height: rect.height - height };
  });
  panes.push({ pane_id: `m${ratios.length + 1}`, focused: false, rect });
  return { workspace_id: 'w1', tab_id: 'w1:t1', zoomed: false, area, focused_pane_id: 'p1', panes, splits };
}

describe("herdr's ratio layout in cells", () => {
  it('moves the innermost split holding the pane: its first part grows for a pane in it, shrinks for a pane after it', () => {
    const layout = columnLayout(0.5, [0.5, 0.5]);
    // m1 leads s1 (60 rows, 30 each): 20 rows is a ratio of 1/3.
    assert.deepEqual(ratioStep(layout, 'm1', 'height', 20), { direction: 'up', amount: 0.1667 });
    assert.deepEqual(ratioStep(layout, 'm1', 'height', 40), { direction: 'down', amount: 0.1667 });
    // m3 is the second part of s2 (30 rows, 15 each): growing it to 20 shrinks m2's part.
    assert.deepEqual(ratioStep(layout, 'm3', 'height', 20), { direction: 'up', amount: 0.1667 });
    // The Director leads the right split: the whole 200 columns is a ratio of 1.
    assert.deepEqual(ratioStep(layout, 'p1', 'width', 200), { direction: 'right', amount: 0.5 });
  });

  it('moves nothing for the size a pane has, along an axis no split divides, or for a pane the layout lacks', () => {
    const layout = columnLayout(0.5, [0.5]);
    assert.equal(ratioStep(layout, 'm1', 'height', 30), null);
    assert.equal(ratioStep(layout, 'p1', 'height', 20), null, 'no down split holds the Director: it is the whole height');
    assert.equal(ratioStep(layout, 'nowhere', 'height', 20), undefined);
  });
});

describe('the herdr client', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-herdr-client-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  async function listen(name: string, onConnection: (socket: Socket) => void): Promise<{ path: string; server: Server }> {
    const path = join(dir, name);
    const server = createServer(onConnection);
    await new Promise<void>((resolve) => server.listen(path, resolve));
    return { path, server };
  }

  it('answers unreachable when nothing listens', async () => {
    const client = new HerdrClient({ socketPath: join(dir, 'nobody.sock') });
    await assert.rejects(client.ping(), (error: unknown) => error instanceof HerdrError && error.reason === 'unreachable' && error.delivery === 'not_sent' && /cannot connect to herdr/.test(error.message));
  });

  it('answers unreachable when herdr never answers, within the deadline', async () => {
    const { path, server } = await listen('silent.sock', () => undefined);
    try {
      const client = new HerdrClient({ socketPath: path, timeoutMs: 200 });
      await assert.rejects(client.ping(), (error: unknown) => error instanceof HerdrError && error.reason === 'unreachable' && /did not answer ping within 200 ms/.test(error.message));
    } finally {
      server.close();
    }
  });

  it('answers unreachable, not refused, when the connection dies mid-call', async () => {
    const { path, server } = await listen('dies.sock', (socket) => socket.once('data', () => socket.destroy()));
    try {
      const port = createMuxPort(new HerdrAdapter({ socketPath: path, configRoot: dir }));
      const outcome = await port.typeText('w1:p1', 'hello');
      assert.equal(outcome.ok, false);
      assert.equal(!outcome.ok && outcome.reason, 'unreachable');
      assert.match(!outcome.ok ? outcome.detail : '', /closed the connection before answering pane.send_text/);
    } finally {
      server.close();
    }
  });

  it('refuses an answer larger than its cap', async () => {
    const { path, server } = await listen('huge.sock', (socket) => socket.once('data', () => socket.write('x'.repeat(64 * 1024))));
    try {
      const client = new HerdrClient({ socketPath: path, maxResponseBytes: 16 * 1024 });
      await assert.rejects(client.ping(), (error: unknown) => error instanceof HerdrError && /exceeded 16384 bytes/.test(error.message));
    } finally {
      server.close();
    }
  });

  it('drives the pane operations a fleet needs', async () => {
    const server = new FakeHerdrServer();
    const socketPath = join(dir, 'fleet.sock');
    await server.start(socketPath);
    try {
      const client = new HerdrClient({ socketPath });
      const director = (await client.paneList()).find((pane) => pane.pane_id === 'w1:p1')!;
      const first = await client.paneSplit({ target_pane_id: director.pane_id, direction: 'right', cwd: '/srv/fleet', env: { DROVER_DB: '/srv/db' } });
      const second = await client.paneSplit({ target_pane_id: first.pane_id, direction: 'down', cwd: '/srv/fleet' });
      assert.equal(first.cwd, '/srv/fleet');
      assert.equal(first.tab_id, director.tab_id);
      assert.equal(first.focused, false);
      await client.paneRun(first.pane_id, 'claude --model opus');
      await client.paneSendText(second.pane_id, 'hello');
      await client.paneSendKeys(second.pane_id, ['escape', 'enter']);
      assert.deepEqual(server.inputs().slice(-4), [
        { paneId: first.pane_id, kind: 'text', payload: ['claude --model opus'] },
        { paneId: first.pane_id, kind: 'keys', payload: ['enter'] },
        { paneId: second.pane_id, kind: 'text', payload: ['hello'] },
        { paneId: second.pane_id, kind: 'keys', payload: ['escape', 'enter'] },
      ]);
      assert.match((await client.paneRead(first.pane_id, { source: 'recent', lines: 5 })).text, /claude --model opus/);
      const layout = await client.paneLayout(director.pane_id);
      assert.equal(layout.tab_id, director.tab_id);
      assert.equal(layout.panes.length, 4);
      const column = layout.splits.find((split) => split.direction === 'down')!;
      const resized = await client.paneResize(first.pane_id, 'down', -0.1);
      assert.ok(Math.abs(resized.splits.find((split) => split.id === column.id)!.ratio - (column.ratio - 0.1)) < 1e-9);
      await client.paneClose(second.pane_id);
      assert.equal((await client.paneLayout(director.pane_id)).panes.length, 3);
      await assert.rejects(client.paneGet(second.pane_id), /pane_not_found/);
    } finally {
      await server.stop();
    }
  });

  it('reads a screen, splits a pane with its program typed into its shell, and closes it', async () => {
    const server = new FakeHerdrServer();
    const socketPath = join(dir, 'channel.sock');
    await server.start(socketPath);
    const port = createMuxPort(new HerdrAdapter({ socketPath, configRoot: dir }));
    try {
      const screen = await port.readScreen('w1:p1');
      assert.ok(screen.ok);
      assert.equal(screen.value.cursor, null, 'herdr reports no cursor');
      assert.equal(screen.value.rows.length, screen.value.height);
      const visible = (await new HerdrClient({ socketPath }).paneRead('w1:p1', { source: 'visible', format: 'text' })).text;
      assert.deepEqual(screen.value.lines, visible.split('\n').map((line) => line.trimEnd()));
      const kept = await port.splitPane({ besidePaneId: 'w1:p1', direction: 'below', cwd: '/srv/work', env: { ROLE: 'reviewer' }, command: ['claude', '--model', 'opus 4'], keepOnExit: true });
      assert.ok(kept.ok, JSON.stringify(kept));
      const ended = await port.splitPane({ besidePaneId: 'w1:p1', direction: 'right', command: ['sleep', '1'] });
      assert.ok(ended.ok, JSON.stringify(ended));
      assert.deepEqual(
        server.inputs().filter((input) => input.kind === 'text').slice(-2),
        [
          { paneId: kept.value.paneId, kind: 'text', payload: ["claude --model 'opus 4'"] },
          { paneId: ended.value.paneId, kind: 'text', payload: ['exec sleep 1'] },
        ],
      );
      const snapshot = await port.snapshot();
      const placed = snapshot.panes.find((pane) => pane.paneId === kept.value.paneId);
      assert.deepEqual([placed?.tabId, placed?.cwd, kept.value.spaceId], ['w1:t1', '/srv/work', 'w1']);
      assert.equal((await port.closePane(kept.value.paneId)).ok, true);
      const again = await port.closePane(kept.value.paneId);
      assert.equal(!again.ok && again.reason, 'gone');
      const process = await port.readProcess('w1:p1');
      assert.equal(!process.ok && process.reason, 'unsupported');
    } finally {
      await port.close();
      await server.stop();
    }
  });

  it("publishes each pane's place in its tab from herdr's layouts, and resizes a pane to a size in cells", async () => {
    const server = new FakeHerdrServer();
    const socketPath = join(dir, 'geometry.sock');
    await server.start(socketPath);
    const port = createMuxPort(new HerdrAdapter({ socketPath, configRoot: dir }));
    try {
      const below = await port.splitPane({ besidePaneId: 'w1:p1', direction: 'below' });
      assert.ok(below.ok, JSON.stringify(below));
      const client = new HerdrClient({ socketPath });
      const layout = await client.paneLayout('w1:p1');
      const snapshot = await port.snapshot();
      assert.deepEqual(snapshot.tabs.find((tab) => tab.tabId === layout.tab_id)?.size, { width: layout.area.width, height: layout.area.height });
      for (const placed of layout.panes) {
        const { x, y, width, height } = placed.rect;
        assert.deepEqual(snapshot.panes.find((pane) => pane.paneId === placed.pane_id)?.geometry, { x: x - layout.area.x, y: y - layout.area.y, width, height });
      }
      const height = async (paneId: string) => (await port.snapshot()).panes.find((pane) => pane.paneId === paneId)!.geometry!.height;
      const together = (await height('w1:p1')) + (await height(below.value.paneId));
      assert.deepEqual(await port.resizePane(below.value.paneId, { height: 12 }, { timeoutMs: 2000 }), { ok: true, value: undefined });
      assert.deepEqual([await height(below.value.paneId), await height('w1:p1')], [12, together - 12]);
      const gone = await port.resizePane('w1:p404', { height: 12 });
      assert.equal(!gone.ok && gone.reason, 'gone');
    } finally {
      await port.close();
      await server.stop();
    }
  });

  it('names the same session before and after a restart, and another session otherwise, asking herdr nothing', async () => {
    const server = new FakeHerdrServer();
    const socketPath = join(dir, 'restart.sock');
    await server.start(socketPath);
    try {
      const port = createMuxPort(new HerdrAdapter({ socketPath, configRoot: dir }));
      const before = server.requestCount;
      const incarnation = await port.serverIncarnation();
      assert.equal(server.requestCount, before);
      const first = await port.snapshot();
      await server.restart();
      const second = await port.snapshot();
      assert.equal(second.incarnation, first.incarnation);
      assert.equal(first.incarnation, incarnation);
      assert.deepEqual(second.panes.map((pane) => pane.paneId), first.panes.map((pane) => pane.paneId));
      assert.notEqual(await createMuxPort(new HerdrAdapter({ socketPath: join(dir, 'another.sock'), configRoot: dir })).serverIncarnation(), incarnation);
      assert.equal(await createMuxPort(new HerdrAdapter({ socketPath: join(dir, '.', 'restart.sock'), configRoot: dir })).serverIncarnation(), incarnation);
    } finally {
      await server.stop();
    }
  });

  it('holds a split to one budget over its requests', async () => {
    // Answers the split after 200 ms, and never the run that follows it.
    const { path, server } = await listen('slow-split.sock', (socket) =>
      socket.once('data', (chunk: Buffer) => {
        const request = JSON.parse(chunk.toString('utf8')) as { id: string; method: string };
        if (request.method !== 'pane.split') return;
        setTimeout(() => socket.end(`${JSON.stringify({ id: request.id, result: { type: 'pane_info', pane: { pane_id: 'w1:p9', workspace_id: 'w1', tab_id: 'w1:t1' } } })}\n`), 200);
      }),
    );
    try {
      const port = createMuxPort(new HerdrAdapter({ socketPath: path, configRoot: dir }));
      const started = performance.now();
      const outcome = await port.splitPane({ besidePaneId: 'w1:p1', direction: 'right', command: ['true'] }, { timeoutMs: 300 });
      assert.equal(!outcome.ok && outcome.reason, 'unreachable');
      assert.ok(performance.now() - started < 300 + 200, `the split took ${Math.round(performance.now() - started)} ms`);
    } finally {
      server.close();
    }
  });

  it('lists sessions from the config root, off the socket', async () => {
    const root = join(dir, 'config-root');
    mkdirSync(join(root, 'sessions', 'work'), { recursive: true });
    mkdirSync(join(root, 'sessions', 'stopped'), { recursive: true });
    const defaultServer = new FakeHerdrServer({ seed: 'empty' });
    const workServer = new FakeHerdrServer({ seed: 'empty' });
    await defaultServer.start(join(root, 'herdr.sock'));
    await workServer.start(join(root, 'sessions', 'work', 'herdr.sock'));
    try {
      const port = createMuxPort(new HerdrAdapter({ socketPath: join(root, 'herdr.sock'), configRoot: root }));
      const before = defaultServer.requestCount + workServer.requestCount;
      const outcome = await port.listSessions();
      assert.deepEqual(outcome, {
        ok: true,
        value: [
          { name: 'default', endpoint: join(root, 'herdr.sock'), current: true },
          { name: 'work', endpoint: join(root, 'sessions', 'work', 'herdr.sock'), current: false },
        ],
      });
      assert.equal(defaultServer.requestCount + workServer.requestCount, before);
    } finally {
      await defaultServer.stop();
      await workServer.stop();
    }
  });
});

describe('the fake herdr server as a process', () => {
  it('starts, answers on its socket, takes perturbations on stdin and cleans up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-herdr-proc-'));
    const socketPath = join(dir, 'herdr.sock');
    const script = fileURLToPath(new URL('../fixtures/herdr/main.js', import.meta.url));
    const child = await LongLivedChild.start([process.execPath, script, '--socket', socketPath]);
    try {
      const lines = createInterface({ input: child.stdout });
      const next = (): Promise<unknown> => new Promise((resolve) => lines.once('line', (line) => resolve(JSON.parse(line))));
      assert.deepEqual(await next(), { ready: true, socket: socketPath });
      const client = new HerdrClient({ socketPath });
      assert.equal((await client.ping()).protocol, 20);
      child.stdin.write('{"op":"endPane","args":["w1:p2"]}\n');
      assert.deepEqual(await next(), { ok: true, value: null });
      await assert.rejects(client.paneGet('w1:p2'), /pane_not_found/);
      child.stdin.write('{"op":"explode"}\n');
      assert.match(String(((await next()) as { error: string }).error), /unknown op "explode"/);
      child.stdin.end();
      assert.deepEqual(await child.exited, { exitCode: 0, signal: null });
      await assert.rejects(client.ping(), /cannot connect to herdr/);
    } finally {
      await child.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
