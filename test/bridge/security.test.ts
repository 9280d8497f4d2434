import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { CONTENT_SECURITY_POLICY, DeviceRegistry, startBridge, type GridView } from '../../src/bridge/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type MuxPort } from '../../src/mux/index.js';
import type { Pane, Server } from '../../src/tmux/index.js';
import { screenShows } from '../panes/live.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';
import { request, startWebWorld, suiteTeardown, tempDirectory, type WebWorld } from './support.js';

/** Every write the API has, with a body that would pass its own checks. */
function writes(paneId: string, spaceId: string): [string, unknown][] {
  return [
    [`/api/panes/${encodeURIComponent(paneId)}/reply`, { text: 'should not arrive' }],
    [`/api/panes/${encodeURIComponent(paneId)}/keys`, { keys: ['x', 'Enter'] }],
    [`/api/panes/${encodeURIComponent(paneId)}/answer`, { question: 'q1-00000000', option: 0 }],
    [`/api/panes/${encodeURIComponent(paneId)}/rename`, { label: 'renamed' }],
    [`/api/panes/${encodeURIComponent(paneId)}/focus`, {}],
    [`/api/panes/${encodeURIComponent(paneId)}/close`, {}],
    ['/api/tabs', { space_id: spaceId }],
    ['/api/spaces', {}],
    ['/api/fleet/1/messages', { to: 2, text: 'hi' }],
    ['/api/fleet/1/ack', { message_id: 1 }],
  ];
}

function auditLines(world: WebWorld): Record<string, unknown>[] {
  return readFileSync(world.bridge.auditPath, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('drover web security', { concurrency: 1 }, () => {
  const teardown = suiteTeardown();
  after(() => teardown.run());
  let tmux: Server;
  let port: MuxPort;
  let pane: Pane;
  let paneId: string;
  let spaceId: string;

  before(async () => {
    tmux = await startTestServer();
    teardown.after(() => tmux.close());
    // Pane text that looks like markup and carries escapes: it must stay text everywhere.
    const receipt = await tmux.newSession({
      name: 'guarded',
      width: 100,
      height: 20,
      command: ['sh', '-c', `printf '<script>window.pwned=1</script> <img src=x onerror=alert(1)> \\033]0;title\\007\\033[31mred\\033[0m\\n'; exec cat -v`],
      receipt: true,
    });
    pane = receipt.pane;
    await screenShows(pane, '<script>');
    port = createMuxPort(new TmuxAdapter({ server: tmux }));
    teardown.after(() => port.close());
    paneId = tmuxIds.pane(pane.id);
    spaceId = tmuxIds.space(receipt.session.id);
  });

  it('sends the strict headers on the page and the API', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    for (const path of ['/', '/api/snapshot', '/api/nothing']) {
      const answer = await world.call(path);
      assert.equal(answer.headers['content-security-policy'], CONTENT_SECURITY_POLICY, path);
      assert.equal(answer.headers['x-content-type-options'], 'nosniff');
      assert.equal(answer.headers['referrer-policy'], 'no-referrer');
      assert.equal(answer.headers['x-frame-options'], 'DENY');
    }
    assert.match(CONTENT_SECURITY_POLICY, /frame-ancestors 'none'/);
    assert.match(CONTENT_SECURITY_POLICY, /script-src 'self'/);
    assert.doesNotMatch(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
  });

  it('answers no foreign Host name, token or not (DNS rebinding)', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    for (const path of ['/', '/api/snapshot']) {
      const answer = await world.call(path, { headers: { Host: `evil.example:${world.bridge.port}` } });
      assert.equal(answer.status, 403, path);
      assert.equal(answer.json.error?.code, 'forbidden_host');
    }
    const allowed = await startWebWorld(t, { mux: port, allowHosts: ['box.tailnet.ts.net'] });
    assert.equal((await allowed.call('/api/snapshot', { headers: { Host: 'box.tailnet.ts.net' } })).status, 200, 'a name the operator allowed');
  });

  it('refuses writes and streams from another Origin, and writes without one', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    const before = (await pane.capture()).toString('utf8');
    const foreign = await world.post(`/api/panes/${encodeURIComponent(paneId)}/keys`, { keys: ['x'] }, { headers: { Origin: 'http://evil.example' } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.json.error?.code, 'forbidden_origin');
    const otherPort = await world.post(`/api/panes/${encodeURIComponent(paneId)}/keys`, { keys: ['x'] }, { headers: { Origin: 'http://127.0.0.1:1' } });
    assert.equal(otherPort.json.error?.code, 'forbidden_origin');
    const none = await world.call(`/api/panes/${encodeURIComponent(paneId)}/keys`, { method: 'POST', body: { keys: ['x'] } });
    assert.equal(none.json.error?.code, 'forbidden_origin', 'a write must say where it comes from');
    const pairing = await world.call('/api/pair', { method: 'POST', body: { code: 'AAAA-AAAA' }, headers: { Origin: 'http://evil.example' } });
    assert.equal(pairing.json.error?.code, 'forbidden_origin', 'another site cannot even try codes');
    assert.equal((await pane.capture()).toString('utf8'), before, 'nothing was typed');
    const stream = await world.stream({ headers: { Origin: 'http://evil.example' } });
    assert.equal(stream.status, 403);
    stream.close();
    const crossSite = await world.stream({ headers: { 'Sec-Fetch-Site': 'cross-site' } });
    assert.equal(crossSite.status, 403);
    crossSite.close();
    const sameOrigin = await world.stream({ headers: { Origin: world.origin } });
    assert.equal(sameOrigin.status, 200);
    sameOrigin.close();
    const refused = auditLines(world).filter((entry) => entry.code === 'forbidden_origin');
    assert.ok(refused.some((entry) => (entry.detail as { origin?: string }).origin === 'http://evil.example'), 'the audit log names the foreign origin');
  });

  it('needs a paired, unrevoked device for reads too, and cuts a revoked device off live', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    for (const path of ['/api/snapshot', '/api/config', `/api/panes/${encodeURIComponent(paneId)}/grid`, '/api/fleet', '/api/session']) {
      assert.equal((await world.call(path, { token: null })).json.error?.code, 'unauthorized', `${path} without a token`);
      assert.equal((await world.call(path, { token: 'dw_forged' })).json.error?.code, 'unauthorized', `${path} with a forged token`);
    }
    assert.equal((await world.stream({ token: null })).status, 401);
    assert.equal((await world.call('/', { token: null })).status, 200, 'the page itself (a pairing form) is public');
    const stream = await world.stream();
    assert.equal(stream.status, 200);
    const device = world.bridge.devices.authenticate(world.token)!;
    // Another process (drover web revoke) writes the revocation.
    new DeviceRegistry(world.stateDirectory).revoke(device.deviceId);
    assert.equal((await world.call('/api/snapshot')).json.error?.code, 'unauthorized');
    // Within seconds, not at the next 15 s heartbeat.
    await eventually('the open stream to be cut off', () => stream.ended, 4000);
    stream.close();
  });

  it('pairs through the API with an HttpOnly, SameSite=Strict cookie, and locks the code after five wrong tries', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    const { code } = world.bridge.devices.createPairingCode();
    const wrong = (attempt: number) => world.post('/api/pair', { code: `WRONG-${attempt}` }, { token: null });
    for (let attempt = 1; attempt <= 4; attempt += 1) assert.equal((await wrong(attempt)).json.error?.code, 'pairing_invalid');
    const fifth = await wrong(5);
    assert.equal(fifth.status, 429);
    assert.equal(fifth.json.error?.code, 'pairing_locked');
    assert.equal((await world.post('/api/pair', { code }, { token: null })).json.error?.code, 'pairing_locked', 'the right code is too late');
    const fresh = world.bridge.devices.createPairingCode();
    const paired = await world.post('/api/pair', { code: fresh.code, name: 'phone' }, { token: null });
    assert.equal(paired.status, 200);
    const cookie = String(paired.headers['set-cookie']);
    assert.match(cookie, /^drover_device=dw_[A-Za-z0-9_-]+;/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    const token = /^drover_device=([^;]+)/.exec(cookie)![1]!;
    const viaCookie = await world.call('/api/session', { token: null, headers: { Cookie: `drover_device=${token}` } });
    assert.equal((viaCookie.json.device as { name: string }).name, 'phone');
    const pairs = auditLines(world).filter((entry) => entry.action === 'pair');
    assert.deepEqual(
      pairs.map((entry) => entry.code),
      ['pairing_invalid', 'pairing_invalid', 'pairing_invalid', 'pairing_invalid', 'pairing_locked', 'pairing_locked', null],
    );
  });

  it('refuses to listen beyond loopback until pairing is set up', async (t) => {
    const stateDirectory = tempDirectory(t);
    await assert.rejects(
      startBridge({ mux: port, stateDirectory, host: '0.0.0.0', port: 0 }),
      (error: unknown) => (error as { code?: string }).code === 'pairing_required' && /drover web pair/.test((error as Error).message),
    );
    new DeviceRegistry(stateDirectory).createPairingCode();
    const bridge = await startBridge({ mux: port, stateDirectory, host: '0.0.0.0', port: 0 });
    t.after(() => bridge.close());
    assert.equal((await request(`http://127.0.0.1:${bridge.port}/api/snapshot`)).json.error?.code, 'unauthorized');
    assert.equal((await request(`http://127.0.0.1:${bridge.port}/`, { headers: { Host: 'evil.example' } })).json.error?.code, 'forbidden_host');
  });

  it('keeps markup and escapes in pane text as data', async (t) => {
    const world = await startWebWorld(t, { mux: port });
    const answer = await world.call(`/api/panes/${encodeURIComponent(paneId)}/grid`);
    // JSON that a browser will not sniff into a page; the page itself inserts it as text (the browser tests).
    assert.match(String(answer.headers['content-type']), /^application\/json/);
    assert.equal(answer.headers['x-content-type-options'], 'nosniff');
    const grid = answer.json as unknown as GridView;
    assert.match(grid.text, /<script>window\.pwned=1<\/script> <img src=x onerror=alert\(1\)>/, 'the text is carried whole, as a JSON string');
  });

  it('refuses every write in read-only mode, before anything is typed, and audits each', async (t) => {
    const world = await startWebWorld(t, { mux: port, readOnly: true });
    const before = (await pane.capture({ start: '-' })).toString('utf8');
    for (const [path, body] of writes(paneId, spaceId)) {
      const answer = await world.post(path, body);
      assert.equal(answer.status, 403, path);
      assert.equal(answer.json.error?.code, 'read_only', path);
    }
    assert.equal((await world.call('/api/snapshot')).status, 200, 'reads still work');
    assert.equal((await world.post('/api/refresh')).status, 200, 'looking again writes nothing');
    assert.equal((await world.call('/api/config')).json.read_only, true);
    assert.equal((await pane.capture({ start: '-' })).toString('utf8'), before);
    const snapshot = await world.call('/api/snapshot');
    assert.equal((snapshot.json.panes as { label: string | null }[])[0]?.label, null, 'nothing renamed');
    const audited = auditLines(world);
    assert.equal(audited.length, writes(paneId, spaceId).length);
    assert.ok(audited.every((entry) => entry.code === 'read_only' && entry.status === 403 && typeof entry.device === 'string'));
    assert.equal((statSync(world.bridge.auditPath).mode & 0o777).toString(8), '600');
  });

  it('limits the write rate per device and audits what it turned away', async (t) => {
    const world = await startWebWorld(t, { mux: port, writeRate: { burst: 2, perSecond: 0.2 } });
    const answers = [];
    const started = performance.now();
    for (let i = 0; i < 3; i += 1) answers.push(await world.post(`/api/panes/${encodeURIComponent(paneId)}/keys`, { keys: ['Escape'] }));
    const elapsedS = (performance.now() - started) / 1000;
    assert.deepEqual(
      answers.map((answer) => answer.status),
      [200, 200, 429],
    );
    assert.equal(answers[2]!.json.error?.code, 'rate_limited');
    // The next token comes 5 s after the bucket emptied, less what the three requests took.
    const retryAfter = Number(answers[2]!.headers['retry-after']);
    assert.ok(retryAfter <= 5 && retryAfter >= Math.ceil(5 - elapsedS), `Retry-After ${retryAfter} s after ${elapsedS.toFixed(2)} s of requests`);
    const audited = auditLines(world);
    assert.deepEqual(
      audited.map((entry) => [entry.action, entry.status]),
      [
        ['keys', 200],
        ['keys', 200],
        ['keys', 429],
      ],
    );
    assert.deepEqual((audited[0]!.detail as { keys: string[] }).keys, ['Escape']);
  });
});
