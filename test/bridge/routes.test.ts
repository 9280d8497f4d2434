/**
 * drover web's routes and middleware called as plain functions: no HTTP server, no terminal.
 * The multiplexer is the in-memory stub (stub-mux.ts), restarted by assigning it a new run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import {
  AuditLog,
  BridgeError,
  DeviceRegistry,
  errorResponse,
  eventRoutes,
  EventHub,
  hostAllowlist,
  HostAllowlist,
  MuxSupervisor,
  pairedDevice,
  PaneQueue,
  paneRoutes,
  RateLimiter,
  rateLimit,
  readOnly,
  Router,
  runChain,
  sameOrigin,
  topologyRoutes,
  audit,
  type ApiRequest,
  type ApiResponse,
  type Device,
  type Middleware,
  type ReplyReceipt,
  type Route,
  type RouteCall,
  type SnapshotView,
  type StreamSink,
} from '../../src/bridge/index.js';
import { eventually } from '../support/wait.js';
import { StubMux } from './stub-mux.js';

const HOST = '127.0.0.1:7717';
const ORIGIN = `http://${HOST}`;

function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'drover-web-routes-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A request as the page sends it: this page's Host, and for a POST its Origin and a JSON body. */
function request(method: 'GET' | 'POST', path: string, options: { body?: Record<string, unknown>; headers?: Record<string, string>; query?: string } = {}): ApiRequest {
  let reads = 0;
  return {
    method,
    path,
    query: new URLSearchParams(options.query ?? ''),
    headers: { host: HOST, ...(method === 'POST' ? { origin: ORIGIN } : {}), ...options.headers },
    remote: '127.0.0.1',
    body: async () => {
      reads += 1;
      if (reads > 1) throw new Error('the body was read twice');
      return options.body ?? {};
    },
  };
}

function callOf(router: Router, req: ApiRequest, device: Device | null = null): RouteCall {
  return { request: req, ...router.resolve(req.method, req.path), device, audit: { target: null, detail: {} } };
}

/** A route's answer, or its refusal as the API would answer it. */
async function answer(router: Router, req: ApiRequest, middleware: readonly Middleware[] = []): Promise<ApiResponse> {
  try {
    return await runChain(middleware, callOf(router, req));
  } catch (error) {
    return errorResponse(error);
  }
}

function body<T>(response: ApiResponse): T {
  assert.equal(response.kind, 'json');
  return (response as { body: T }).body;
}

function code(response: ApiResponse): string | undefined {
  return body<{ error?: { code: string } }>(response).error?.code;
}

/** A route that records whether it ran. */
function spyRoute(flags: Partial<Route> = {}): Route & { ran: number } {
  const route = {
    method: 'POST' as const,
    pattern: /^\/api\/spy$/,
    action: 'spy',
    write: true,
    ran: 0,
    ...flags,
    handle: async () => {
      route.ran += 1;
      return { kind: 'json', status: 200, body: { ok: true } } as ApiResponse;
    },
  };
  return route;
}

describe('the router', () => {
  const route = spyRoute({ method: 'GET', pattern: /^\/api\/panes\/([^/]+)\/grid$/, write: false });
  const router = new Router([route]);

  it('finds the route and decodes its parameters', () => {
    const found = router.resolve('GET', '/api/panes/local%3A%3Atmux%3A%3A1-2%3A%3A%250/grid');
    assert.equal(found.route, route);
    assert.deepEqual(found.params, ['local::tmux::1-2::%0']);
  });

  it('resolves what no route takes to a route that refuses it, open so that even an unpaired caller learns why', async () => {
    for (const [method, path, expected] of [
      ['GET', '/api/nothing', 'not_found'],
      ['POST', '/api/panes/p1/grid', 'method_not_allowed'],
      ['GET', '/api/panes/%E0%A4%A/grid', 'bad_request'],
    ] as const) {
      const found = router.resolve(method, path);
      assert.equal(found.route.open, true);
      await assert.rejects(found.route.handle(callOf(router, request(method, path))), (error) => error instanceof BridgeError && error.code === expected, path);
    }
    assert.equal(route.ran, 0);
  });
});

describe('the middleware chain, one step at a time', () => {
  function world(t: TestContext, options: { readOnly?: boolean; burst?: number } = {}) {
    const dir = tempDir(t);
    const devices = new DeviceRegistry(dir);
    const { device, token } = devices.redeem(devices.createPairingCode().code, 'test');
    const log = new AuditLog(join(dir, 'audit.log'));
    const chain: Middleware[] = [
      hostAllowlist(new HostAllowlist([], [])),
      audit(log, (line) => assert.fail(line)),
      sameOrigin,
      pairedDevice(devices),
      readOnly(options.readOnly === true),
      rateLimit(new RateLimiter({ burst: options.burst ?? 30, perSecond: 0.1 })),
    ];
    const audited = (): Record<string, unknown>[] =>
      readFileSync(log.path, 'utf8')
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { chain, device, token, audited };
  }

  it('refuses a foreign Host before anything else runs', async (t) => {
    const { chain, token } = world(t);
    const spy = spyRoute();
    const refused = await answer(new Router([spy]), request('POST', '/api/spy', { headers: { host: 'evil.example', authorization: `Bearer ${token}` } }), chain);
    assert.equal(code(refused), 'forbidden_host');
    assert.equal(spy.ran, 0);
  });

  it('refuses a write from another Origin, and audits it with that Origin', async (t) => {
    const { chain, token, audited } = world(t);
    const spy = spyRoute();
    const refused = await answer(new Router([spy]), request('POST', '/api/spy', { headers: { origin: 'http://evil.example', authorization: `Bearer ${token}` } }), chain);
    assert.equal(code(refused), 'forbidden_origin');
    assert.equal(spy.ran, 0);
    assert.deepEqual(
      audited().map((entry) => [entry.action, entry.status, entry.code, (entry.detail as { origin?: string }).origin]),
      [['spy', 403, 'forbidden_origin', 'http://evil.example']],
    );
  });

  it('needs a paired device except on an open route, and tells the route which device it is', async (t) => {
    const { chain, token, device } = world(t);
    const read = spyRoute({ method: 'GET', write: false });
    assert.equal(code(await answer(new Router([read]), request('GET', '/api/spy'), chain)), 'unauthorized');
    assert.equal(read.ran, 0);
    const open = spyRoute({ method: 'GET', write: false, open: true });
    assert.equal((await answer(new Router([open]), request('GET', '/api/spy'), chain)).status, 200);
    let seen: Device | null = null;
    const who: Route = { method: 'GET', pattern: /^\/api\/spy$/, action: 'who', handle: async (call) => ((seen = call.device), { kind: 'json', status: 200, body: {} }) };
    await answer(new Router([who]), request('GET', '/api/spy', { headers: { cookie: `other=1; drover_device=${token}` } }), chain);
    assert.deepEqual(seen, device);
  });

  it('refuses every write read-only, and lets reads through', async (t) => {
    const { chain, token, audited } = world(t, { readOnly: true });
    const write = spyRoute();
    assert.equal(code(await answer(new Router([write]), request('POST', '/api/spy', { headers: { authorization: `Bearer ${token}` } }), chain)), 'read_only');
    const read = spyRoute({ method: 'GET', write: false });
    assert.equal((await answer(new Router([read]), request('GET', '/api/spy', { headers: { authorization: `Bearer ${token}` } }), chain)).status, 200);
    assert.deepEqual([write.ran, read.ran], [0, 1]);
    assert.deepEqual(
      audited().map((entry) => [entry.code, typeof entry.device]),
      [['read_only', 'string']],
      'the refused write is audited with its device; the read is not audited',
    );
  });

  it('limits writes per device and says when to come back', async (t) => {
    const { chain, token } = world(t, { burst: 1 });
    const spy = spyRoute();
    const router = new Router([spy]);
    const headers = { authorization: `Bearer ${token}` };
    assert.equal((await answer(router, request('POST', '/api/spy', { headers }), chain)).status, 200);
    const limited = await answer(router, request('POST', '/api/spy', { headers }), chain);
    assert.equal(code(limited), 'rate_limited');
    assert.equal(limited.status, 429);
    assert.deepEqual((limited as { headers?: Record<string, string> }).headers, { 'Retry-After': '10' });
    assert.equal(spy.ran, 1);
  });
});

/** The topology and pane routes over the stub multiplexer, with a supervisor that can open a new port. */
async function paneWorld(t: TestContext, options: { reopen?: boolean } = {}) {
  const stub = new StubMux();
  const hub = new EventHub();
  const mux = await MuxSupervisor.start(options.reopen === false ? { hub, port: stub.openPort() } : { hub, open: async () => stub.link() });
  t.after(() => mux.close());
  const router = new Router([...topologyRoutes({ mux, readOnly: false, version: 'test', fleetUnavailable: () => null }), ...paneRoutes({ mux, queue: new PaneQueue((_paneId, write) => write()) })]);
  const snapshot = async (): Promise<SnapshotView> => body<SnapshotView>(await answer(router, request('GET', '/api/snapshot')));
  const reply = (pane: string, text: string) => answer(router, request('POST', `/api/panes/${encodeURIComponent(pane)}/reply`, { body: { text } }));
  return { stub, hub, mux, router, snapshot, reply };
}

describe('the pane and topology routes, called directly', () => {
  it('gives every pane its key, and a reply to the key a receipt that names it', async (t) => {
    const { stub, snapshot, reply } = await paneWorld(t);
    const view = await snapshot();
    assert.deepEqual(view.server, { incarnation: stub.run.incarnation, restarted: null });
    assert.deepEqual(
      view.panes.map((pane) => pane.pane_key),
      ['p0', 'p1'].map((id) => `local::tmux::${stub.run.incarnation}::${id}`),
    );
    const receipt = body<ReplyReceipt>(await reply(view.panes[0]!.pane_key, 'hello'));
    assert.equal(receipt.status, 'not_verifiable');
    assert.equal(receipt.pane_key, view.panes[0]!.pane_key);
    assert.deepEqual(stub.received(stub.run, 'p0'), ['text:hello', 'keys:Enter']);
    const malformed = await reply(`local::screen::${stub.run.incarnation}::p0`, 'x');
    assert.equal(code(malformed), 'bad_request');
    assert.match(body<{ error: { message: string } }>(malformed).error.message, /"screen" is not a multiplexer drover drives/);
    assert.equal(code(await reply('not a pane', 'x')), 'bad_request', 'neither a key nor an id');
  });

  it('after a restart shows the new run with the restart, refuses a key of the old run, and types into the new run only by its own key', async (t) => {
    const { stub, hub, snapshot, reply } = await paneWorld(t);
    const before = await snapshot();
    const oldRun = stub.run;
    const oldKey = before.panes[0]!.pane_key;
    const newRun = stub.restart();

    const after = await snapshot();
    assert.equal(after.server.incarnation, newRun.incarnation);
    assert.equal(after.server.restarted?.previous_incarnation, oldRun.incarnation);
    assert.equal(after.server.restarted?.incarnation, newRun.incarnation);
    assert.ok(hub.since(before.event_id)?.some((event) => event.kind === 'restart'), 'the stream announced it');
    const newKey = after.panes.find((pane) => pane.pane_id === 'p0')!.pane_key;
    assert.notEqual(newKey, oldKey, 'the same id on another run is another key');

    const refused = await reply(oldKey, 'meant for the old p0');
    assert.equal(refused.status, 409);
    assert.equal(code(refused), 'server_replaced');
    assert.match(body<{ error: { message: string } }>(refused).error.message, /earlier run of the tmux server, which was replaced \(restarted at .*\); nothing was sent/);
    assert.deepEqual(stub.received(newRun, 'p0'), [], 'nothing reached the new run');

    assert.equal((await reply(newKey, 'meant for the new p0')).status, 200);
    assert.deepEqual(stub.received(newRun, 'p0'), ['text:meant for the new p0', 'keys:Enter']);
    assert.deepEqual(stub.received(oldRun, 'p0'), []);
  });

  it('refuses a write the old port catches before the bridge noticed the restart, and switches to the new run', async (t) => {
    const { stub, mux, reply, snapshot } = await paneWorld(t);
    await snapshot();
    const newRun = stub.restart();
    // A bare id means "that id on the run served now", and the run served is still the old one.
    const refused = await reply('p1', 'typed as the server restarts');
    assert.equal(code(refused), 'server_replaced');
    assert.deepEqual(stub.received(newRun, 'p1'), []);
    await mux.replaced(mux.port);
    assert.equal(mux.incarnation, newRun.incarnation);
  });

  it('answers unreachable while the new run cannot be opened, follows it once it can, and switches only once', async (t) => {
    // The retry is a timer: ticked by the test, so whether it runs is seen, not waited for.
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const stub = new StubMux();
    const hub = new EventHub();
    let refusals = 0;
    let opened = 0;
    const mux = await MuxSupervisor.start({
      hub,
      retryMs: 50,
      open: async () => {
        opened += 1;
        if (refusals > 0) {
          refusals -= 1;
          throw new Error('no server at the socket yet');
        }
        return stub.link();
      },
    });
    t.after(() => mux.close());
    const router = new Router(topologyRoutes({ mux, readOnly: false, version: 'test', fleetUnavailable: () => null }));
    const from = hub.lastId();
    const newRun = stub.restart();
    // The port's own report and the snapshot's retry both find nothing yet.
    refusals = 2;
    const down = await answer(router, request('GET', '/api/snapshot'));
    assert.equal(code(down), 'unreachable');
    assert.match(body<{ error: { message: string } }>(down).error.message, /the new one cannot be read yet \(no server at the socket yet\)/);
    const up = body<SnapshotView>(await answer(router, request('GET', '/api/snapshot')));
    assert.equal(up.server.incarnation, newRun.incarnation);
    // The retry the failed attempt scheduled comes due: it must not leave the run just reached.
    const before = opened;
    t.mock.timers.tick(1000);
    assert.equal(opened, before, 'no port is opened after the new run was reached');
    assert.equal(mux.incarnation, newRun.incarnation);
    assert.deepEqual(
      hub.since(from)!.filter((event) => event.kind === 'restart').length,
      1,
    );
  });

  it('without a way to open a port, refuses the replaced run for good and says how to see the new one', async (t) => {
    const { stub, snapshot, reply } = await paneWorld(t, { reopen: false });
    const key = (await snapshot()).panes[0]!.pane_key;
    const newRun = stub.restart();
    assert.equal(code(await reply('p0', 'x')), 'server_replaced');
    const refused = await reply(key, 'x');
    assert.equal(code(refused), 'server_replaced');
    assert.match(body<{ error: { message: string } }>(refused).error.message, /start drover web again/);
    assert.deepEqual(stub.received(newRun, 'p0'), []);
  });

  it('names every key a multiplexer cannot send, and sends none of them', async (t) => {
    const { stub, router, snapshot } = await paneWorld(t);
    const key = (await snapshot()).panes[1]!.pane_key;
    const refused = await answer(router, request('POST', `/api/panes/${encodeURIComponent(key)}/keys`, { body: { keys: ['Escape', 'nonsense+x'] } }));
    assert.equal(code(refused), 'key_refused');
    assert.deepEqual(
      body<{ error: { refused: { key: string }[] } }>(refused).error.refused.map((entry) => entry.key),
      ['nonsense+x'],
    );
    assert.deepEqual(stub.received(stub.run, 'p1'), []);
  });

  it('answers the session list as unavailable, with the reason, where the multiplexer keeps one session', async (t) => {
    const { router } = await paneWorld(t);
    const view = body<{ available: boolean; reason: string; sessions: unknown[] }>(await answer(router, request('GET', '/api/sessions')));
    assert.deepEqual(view, { available: false, reason: 'tmux does not support listSessions', sessions: [] });
  });
});

/** A stream's far end, kept in memory. */
function memorySink(): StreamSink & { chunks: string[]; ended: boolean; closeNow(): void } {
  const listeners: (() => void)[] = [];
  const sink = {
    chunks: [] as string[],
    ended: false,
    backlog: 0,
    write: (chunk: string) => void sink.chunks.push(chunk),
    end: () => {
      sink.ended = true;
      sink.closeNow();
    },
    destroy: () => sink.end(),
    onClose: (listener: () => void) => void listeners.push(listener),
    closeNow: () => listeners.splice(0).forEach((listener) => listener()),
  };
  return sink;
}

describe('the event stream route, called directly', () => {
  it('replays what a reconnecting browser missed, passes on what follows, and ends when its device is revoked', async (t) => {
    const dir = tempDir(t);
    const devices = new DeviceRegistry(dir);
    const { device, token } = devices.redeem(devices.createPairingCode().code, 'phone');
    const hub = new EventHub();
    const seen = hub.publish('topology', {});
    const missed = hub.publish('fleet', { fleet_id: 1, message_id: 2, change: 'message' });
    const events = eventRoutes({ hub, devices, heartbeatMs: 20 });
    const router = new Router(events.routes);
    const response = await router.resolve('GET', '/api/events').route.handle(callOf(router, request('GET', '/api/events', { headers: { authorization: `Bearer ${token}`, 'last-event-id': seen.id } }), device));
    assert.equal(response.kind, 'stream');
    const sink = memorySink();
    if (response.kind === 'stream') response.open(sink);
    const live = hub.publish('topology', {});
    assert.deepEqual(
      sink.chunks.filter((chunk) => chunk.startsWith('id:')).map((chunk) => chunk.split('\n')[0]),
      [`id: ${missed.id}`, `id: ${live.id}`],
    );
    assert.equal(hub.subscribers, 1);
    devices.revoke(device.deviceId);
    await eventually('the revoked device to lose its stream at a heartbeat', () => sink.ended, 5000);
    assert.equal(hub.subscribers, 0, 'and stopped listening');
  });
});
