import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SqlBroker, SqliteStore } from '../../src/fleet/index.js';
import { LongLivedChild } from '../../src/process/index.js';
import { CLI_PATH } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { seedFleet } from '../fleet/support.js';
import { startSshd, sshdUnavailable } from '../fixtures/ssh/sshd.js';

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

/**
 * A hub beside a member host behind a real sshd: the hub's SQLite store with a seeded fleet,
 * and its config naming the host (`forwardBroker`: the socket path its entry names, if any).
 * Everything it starts ends when the test does: the hub's processes before the login they hold.
 */
async function hubAndHost(t: { after(fn: () => unknown): void }, forwardBroker?: (home: string) => string) {
  const sshd = await startSshd();
  const hubProcesses: LongLivedChild[] = [];
  t.after(async () => {
    for (const child of hubProcesses) await child.stop(2000);
    await sshd.stop();
  });
  const remoteDrover = sshd.installDrover(CLI_PATH);
  const hub = mkdtempSync(join(tmpdir(), 'drover-hub-'));
  t.after(() => rmSync(hub, { recursive: true, force: true }));
  // The hub's own store, with a fleet whose members the remote side sends as.
  const database = join(hub, 'drover.db');
  const seeding = new SqlBroker(SqliteStore.open({ path: database }));
  const members = await seedFleet(seeding);
  await seeding.close();
  const forwarded = forwardBroker?.(sshd.home);
  const config = join(hub, 'config.yaml');
  writeFileSync(config, `hosts:\n  box:\n    ssh: ${sshd.alias}\n    drover: ${remoteDrover}\n${forwarded === undefined ? '' : `    forward_broker: ${forwarded}\n`}`);
  const env: NodeJS.ProcessEnv = { ...process.env, DROVER_DB: database, DROVER_STATE_DIR: join(hub, 'state'), DROVER_CONFIG: config, DROVER_SSH_BIN: sshd.sshWrapper };
  for (const name of ['TMUX', 'TMUX_PANE', 'DROVER_BROKER']) delete env[name];
  const serve = async (): Promise<LongLivedChild> => {
    const child = await LongLivedChild.start([process.execPath, CLI_PATH, 'broker', 'serve'], { env, stderrBytes: 16 * 1024 });
    hubProcesses.push(child);
    return child;
  };
  return { sshd, remoteDrover, hub, database, forwarded, serve, ...members };
}

describe("a member on another host reaches the hub's broker through its host link", { skip }, () => {
  it('stores a message that `drover message send` there sends through the forwarded socket in the hub store', async (t) => {
    // The member host's socket path: in the login's home, which sshd binds as that user.
    const { sshd, remoteDrover, hub, database, forwarded, serve: startServe, alice, bob } = await hubAndHost(t, (home) => join(home, 'hub-broker.sock'));
    const serve = await startServe();
    assert.ok(forwarded !== undefined);
    const local = join(hub, 'state', 'broker', 'broker.sock');
    await eventually('the hub socket', () => statSync(local, { throwIfNoEntry: false })?.isSocket());
    assert.equal(statSync(local).mode & 0o777, 0o600);
    assert.equal(statSync(join(hub, 'state', 'broker')).mode & 0o777, 0o700);

    await eventually(
      'the socket forwarded to the member host',
      () => sshd.exec(`test -S '${forwarded}' && echo forwarded`).then((out) => out.trim() === 'forwarded', () => false),
      60_000,
    );
    const member = `DROVER_BROKER='drover+unix://${forwarded}' '${remoteDrover}'`;
    const sent = JSON.parse(await sshd.exec(`${member} message send --from ${alice.memberId} --to ${bob.memberId} --json 'from the member host'`)) as {
      message: { message_id: number; text: string };
      notification_sent: boolean;
    };
    assert.equal(sent.message.text, 'from the member host');
    assert.equal(sent.notification_sent, false, "the hub's panes are not the member host's to type into");

    const polled = JSON.parse(await sshd.exec(`${member} message poll --member ${bob.memberId} --json`)) as { message_id: number }[];
    assert.deepEqual(polled.map((m) => m.message_id), [sent.message.message_id]);

    // The link is cut with the member host's end killed outright: its socket file stays behind
    // until the link, back by itself, forwards a fresh one in its place.
    assert.ok((await sshd.dropLogins()) > 0, 'the link was up');
    const again = await eventually(
      'a send through the socket of the reconnected link',
      () =>
        sshd
          .exec(`${member} message send --from ${alice.memberId} --to ${bob.memberId} --json 'after the link came back'`)
          .then((out) => JSON.parse(out) as { message: { message_id: number } }, () => undefined),
      90_000,
    );
    const resent = await sshd.exec(`${member} message poll --member ${bob.memberId} --json`);
    assert.deepEqual((JSON.parse(resent) as { message_id: number }[]).map((m) => m.message_id).sort(), [sent.message.message_id, again.message.message_id].sort());

    const reading = new SqlBroker(SqliteStore.open({ path: database }));
    t.after(() => reading.close());
    assert.deepEqual(
      (await reading.pollMessages(bob.memberId)).map((m) => [m.messageId, m.text]).sort(),
      [
        [sent.message.message_id, 'from the member host'],
        [again.message.message_id, 'after the link came back'],
      ].sort(),
    );

    // Stopped as a service manager stops it: it ends its links and removes its socket.
    const exit = await serve.stop(5000);
    assert.equal(exit.exitCode, 0, serve.stderr().tail.toString('utf8'));
    assert.equal(statSync(local, { throwIfNoEntry: false }), undefined);
  });

  it('forwards the socket where drover there takes it, when the host entry names no place', async (t) => {
    const { sshd, remoteDrover, database, serve: startServe, alice, bob } = await hubAndHost(t);
    // Where drover there says it takes a hub's broker: the first line it speaks.
    const offered = (JSON.parse((await sshd.exec(`'${remoteDrover}' rpc --stdio < /dev/null | head -n 1`)).trim()) as { broker_socket: string }).broker_socket;
    assert.match(offered, /^\/.*\/broker\/hub\.sock$/);
    const serve = await startServe();
    await eventually(
      'the socket forwarded where drover there takes it',
      () => sshd.exec(`test -S '${offered}' && echo forwarded`).then((out) => out.trim() === 'forwarded', () => false),
      60_000,
    );
    const sent = JSON.parse(await sshd.exec(`DROVER_BROKER='drover+unix://${offered}' '${remoteDrover}' message send --from ${alice.memberId} --to ${bob.memberId} --json 'by the announced socket'`)) as {
      message: { message_id: number };
    };
    const reading = new SqlBroker(SqliteStore.open({ path: database }));
    t.after(() => reading.close());
    assert.deepEqual(
      (await reading.pollMessages(bob.memberId)).map((m) => [m.messageId, m.text]),
      [[sent.message.message_id, 'by the announced socket']],
    );
    const exit = await serve.stop(5000);
    assert.equal(exit.exitCode, 0, serve.stderr().tail.toString('utf8'));
  });
});
