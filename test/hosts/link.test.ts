import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gatherHostViews, HostLink, Hosts, RememberedRowsStore, RPC_GLANCE_SINCE, RPC_PROTOCOL, RPC_VERSION, type HostHealth, type LinkState } from '../../src/hosts/index.js';
import { packageVersion } from '../../src/cli/version.js';
import { CLI_PATH } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { createFakeSsh, type FakeSsh } from '../fixtures/ssh/fake-ssh.js';

/** Short timings, so a stall and a backoff are seen in a test's time; the states are the same. */
const FAST = { connectTimeoutMs: 5000, handshakeTimeoutMs: 20_000, pingIntervalMs: 200, pingTimeoutMs: 1500, backoffBaseMs: 100, backoffCapMs: 400, downAfterFailures: 2 };

function recordStates(link: HostLink): LinkState[] {
  const states: LinkState[] = [];
  link.onHealth((health: HostHealth) => {
    if (states.at(-1) !== health.linkState) states.push(health.linkState);
  });
  return states;
}

describe('a host link over ssh (a fake ssh on PATH)', () => {
  let ssh: FakeSsh;
  let env: NodeJS.ProcessEnv;
  let pidFile: string;

  before(() => {
    ssh = createFakeSsh();
    env = { ...process.env, ...ssh.env };
    const home = ssh.remote('gpu').home;
    pidFile = join(home, 'drover.pid');
    // The drover there says which process it is, so the test can end it as a crash or a dropped link would.
    writeFileSync(join(home, 'drover'), `#!/bin/sh\necho $$ > '${pidFile}'\nexec '${process.execPath}' '${CLI_PATH}' "$@"\n`, { mode: 0o755 });
    // A drover that greets and then never answers: a link open but silent.
    const stalled = ssh.remote('stalled').home;
    const handshake = JSON.stringify({ protocol: RPC_PROTOCOL, version: RPC_VERSION, drover_version: '0.0.0', muxes: [], capabilities: ['ping'] });
    writeFileSync(join(stalled, 'drover'), `#!/bin/sh\nprintf '%s\\n' '${handshake}'\nexec sleep 600\n`, { mode: 0o755 });
    // Drovers of two protocol versions whose pane map answers with the params it was given.
    for (const [name, version] of [['older', '1.1'], ['newer', RPC_GLANCE_SINCE]] as const) {
      const greeting = JSON.stringify({ protocol: RPC_PROTOCOL, version, drover_version: '0.0.0', muxes: [], capabilities: ['ping', 'pane.map'] });
      const answer = `process.stdin.setEncoding('utf8'); let rest = ''; process.stdin.on('data', (chunk) => { rest += chunk; let at; while ((at = rest.indexOf('\\n')) >= 0) { const request = JSON.parse(rest.slice(0, at)); rest = rest.slice(at + 1); process.stdout.write(JSON.stringify({ id: request.id, result: request.method === 'ping' ? {} : [request.params], exit_status: 0 }) + '\\n'); } });`;
      writeFileSync(join(ssh.remote(name).home, 'drover'), `#!/bin/sh\nprintf '%s\\n' '${greeting}'\nexec '${process.execPath}' -e "${answer}"\n`, { mode: 0o755 });
    }
  });
  after(() => ssh.cleanup());

  it('comes up with its latency and version, and comes back by itself when the link drops', async () => {
    const link = new HostLink({ name: 'gpu', ssh: 'gpu', drover: '~/drover' }, { env, timings: FAST });
    after(() => link.close());
    const states = recordStates(link);
    const first = await link.whenUp({ timeoutMs: 30_000 });
    const up = link.health;
    assert.equal(up.reachable, true);
    assert.equal(up.version, packageVersion());
    assert.equal(typeof up.latencyMs, 'number');
    const firstPid = Number(readFileSync(pidFile, 'utf8'));
    process.kill(firstPid, 'SIGKILL');
    await eventually('the link to come back', () => link.client !== undefined && link.client !== first && link.health.linkState === 'up', 30_000);
    assert.notEqual(Number(readFileSync(pidFile, 'utf8')), firstPid, 'a new ssh and a new drover there');
    assert.deepEqual(states, ['up', 'reconnecting', 'up']);
    assert.ok(link.health.lastSeenAt! > up.lastSeenAt!, 'seen again after the drop');
    const reply = await link.request('ping', {}, { timeoutMs: 5000 });
    assert.equal(reply.exit_status, 0);
  });

  it('sends the params a newer protocol added only to hosts that speak it', async () => {
    const hosts = Hosts.of(
      ['older', 'newer'].map((name) => ({ name, ssh: name, drover: '~/drover' })),
      { env, timings: FAST },
    );
    after(() => hosts.close());
    const rows = mkdtempSync(join(tmpdir(), 'drover-rows-'));
    after(() => rmSync(rows, { recursive: true, force: true }));
    const store = new RememberedRowsStore(rows);
    const request = { method: 'pane.map', params: { all_sessions: true }, paramsSince: { version: RPC_GLANCE_SINCE, params: { glance: true } }, hostBudgetMs: 5000, listNames: ['rows'] };
    const answers = await gatherHostViews(hosts, request, store);
    const sent = Object.fromEntries(answers.map((answer) => [answer.host, answer.fetched.kind === 'answered' ? answer.fetched.lists.rows : answer.fetched]));
    assert.deepEqual(sent, { older: [{ all_sessions: true }], newer: [{ all_sessions: true, glance: true }] });
  });

  it('takes a link that stops answering for stalled, retries with backoff, and calls the host down, never up', async () => {
    const link = new HostLink({ name: 'stalled', ssh: 'stalled', drover: '~/drover' }, { env, timings: FAST });
    after(() => link.close());
    const states = recordStates(link);
    link.start();
    const health = await eventually('the host to be down', () => (link.health.linkState === 'down' ? link.health : undefined), 30_000);
    assert.deepEqual(states, ['reconnecting', 'down']);
    assert.equal(health.reachable, false);
    assert.match(health.problem!, /no answer to a ping within 1500 ms: the link stalled/);
    assert.ok(health.nextAttemptAt !== undefined, 'down still retries');
    assert.ok(ssh.invocations().filter((argv) => argv.includes('stalled')).length >= 2, 'each attempt is a fresh ssh');
  });
});
