import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HostLink } from '../../src/hosts/index.js';
import { packageVersion } from '../../src/cli/version.js';
import { CLI_PATH } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { startSshd, sshdUnavailable, type TestSshd } from '../fixtures/ssh/sshd.js';
import { testEnvironment } from '../support/tmux.js';

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

describe('a host link through a real OpenSSH server on loopback', { skip }, () => {
  let sshd: TestSshd;
  let link: HostLink;
  let socket: string;

  before(async () => {
    sshd = await startSshd();
    // The other machine's own tmux server and drover (this build), with their state in the login's home.
    socket = join(sshd.home, 'tmux.sock');
    await sshd.exec(`tmux -S '${socket}' new-session -d -s remote -x 80 -y 24`);
    const remoteDrover = sshd.installDrover(CLI_PATH);
    const env = testEnvironment({ ...process.env, DROVER_SSH_BIN: sshd.sshWrapper });
    link = new HostLink({ name: 'box', ssh: sshd.alias, drover: remoteDrover }, { env, timings: { backoffBaseMs: 200, backoffCapMs: 1000, pingIntervalMs: 500 } });
  });
  after(async () => {
    await link?.close();
    await sshd?.exec(`tmux -S '${socket}' kill-server`).catch(() => undefined);
    await sshd?.stop();
  });

  it('comes up over ssh and answers a pane map from the other side', async () => {
    await link.whenUp({ timeoutMs: 30_000 });
    const health = link.health;
    assert.equal(health.reachable, true);
    assert.equal(health.version, packageVersion());
    assert.ok(typeof health.latencyMs === 'number' && health.latencyMs >= 0);
    const reply = await link.request('pane.map', { socket_path: socket, all_sessions: true }, { timeoutMs: 30_000 });
    assert.ok('result' in reply, JSON.stringify(reply));
    const rows = reply.result as { session: string; pane_id: string }[];
    assert.deepEqual(
      rows.map((row) => row.session),
      ['remote'],
    );
    assert.equal((await sshd.sessions()).length, 1, 'one long-lived login');
  });

  it('reconnects by itself after the sshd serving the link is killed', async () => {
    const before = link.client;
    const [session] = await sshd.sessions();
    assert.ok((await sshd.dropLogins()) >= 1);
    await eventually('the link to be reconnecting', () => link.health.linkState === 'reconnecting' || (link.client !== undefined && link.client !== before), 20_000);
    await eventually('the link to be up again', () => link.client !== undefined && link.client !== before, 30_000);
    const [again] = await sshd.sessions();
    assert.notEqual(again, session, 'a new login');
    const reply = await link.request('ping', {}, { timeoutMs: 10_000 });
    assert.equal(reply.exit_status, 0);
  });
});
