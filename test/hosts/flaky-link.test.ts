import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { HostLink, type LinkState } from '../../src/hosts/index.js';
import { LongLivedChild } from '../../src/process/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { startSshd, sshdUnavailable, type FlakyAlias, type TestSshd } from '../fixtures/ssh/sshd.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const LINE_SINK = join(FIXTURES, 'line-sink.js');

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

describe('a host link through a flaky proxy in front of a real OpenSSH server on loopback', { skip }, () => {
  const sandbox = cliSandbox();
  let sshd: TestSshd;
  let flaky: FlakyAlias;
  let remoteDrover: string;
  let env: NodeJS.ProcessEnv;
  let socket: string;


  before(async () => {
    sshd = await startSshd();
    flaky = sshd.flakyAlias('flaky');
    remoteDrover = sshd.installDrover(CLI_PATH);
    socket = join(sshd.home, 'tmux.sock');
    env = { ...sandbox.env, DROVER_SSH_BIN: sshd.sshWrapper };
  });
  after(async () => {
    await sshd?.exec(`tmux -S '${socket}' kill-server`).catch(() => undefined);
    await sshd?.stop();
  });

  it('goes reconnecting then down while the proxy stalls, and comes back when it relays again', async () => {
    const link = new HostLink(
      { name: 'box', ssh: 'flaky', drover: remoteDrover },
      { env, timings: { pingIntervalMs: 300, pingTimeoutMs: 1500, connectTimeoutMs: 3000, handshakeTimeoutMs: 15_000, backoffBaseMs: 200, backoffCapMs: 500, downAfterFailures: 2 } },
    );
    try {
      await link.whenUp({ timeoutMs: 30_000 });
      flaky.network({ mode: 'delay', delay_ms: 400 });
      const started = performance.now();
      await link.request('ping', {}, { timeoutMs: 10_000 });
      assert.ok(performance.now() - started >= 800, 'a ping waits out the delay both ways');

      const states: LinkState[] = [];
      link.onHealth((health) => {
        if (states.at(-1) !== health.linkState) states.push(health.linkState);
      });
      flaky.network({ mode: 'stall' });
      await eventually('the link to be down', () => link.health.linkState === 'down', 40_000);
      const reconnecting = states.indexOf('reconnecting');
      assert.ok(reconnecting >= 0 && reconnecting < states.indexOf('down'), `a silent link is found stalled and retried before it is down: ${states.join(' → ')}`);
      assert.equal(link.health.reachable, false);
      assert.match(link.health.problem ?? '', /stalled|banner|timed out/i);

      // A host that is down is still tried, at its backoff's pace.
      flaky.network({ mode: 'pass' });
      await eventually('the link to be up again', () => link.health.linkState === 'up', 40_000);
      assert.equal(link.health.reachable, true);
      assert.equal((await link.request('ping', {}, { timeoutMs: 10_000 })).exit_status, 0);
    } finally {
      await link.close();
    }
  });

  it('answers possibly_sent with the delivery id when the link is cut mid-delivery, and the resend is typed once', async () => {
    const hosts = join(sandbox.dir, 'config.yaml');
    writeFileSync(hosts, `hosts:\n  box:\n    ssh: flaky\n    drover: '${remoteDrover}'\n`);
    const drover = (args: readonly string[]) => sandbox.drover(['-S', socket, ...args], { env: { ...env, DROVER_CONFIG: hosts }, timeoutMs: 120_000 });
    const received = join(sshd.home, 'received.txt');
    // When the delivery's Enter reaches the pane, the host's answer is held in the network, so
    // the cut below comes after the prompt was typed and before the hub heard of it.
    const holdAnswers = JSON.stringify({ mode: 'stall', direction: 'to_client' });
    const pane = (
      await sshd.exec(`tmux -S '${socket}' new-session -d -s sink -x 80 -y 24 -P -F '#{pane_id}' '${sshd.node}' '${LINE_SINK}' '${received}' '${flaky.control}' '${holdAnswers}'`)
    ).trim();
    await eventually('the sink to show its prompt', async () => (await sshd.exec(`tmux -S '${socket}' capture-pane -p -t '${pane}'`)).includes('>'));
    const lines = (): string[] => (existsSync(received) ? readFileSync(received, 'utf8').split('\n').filter((line) => line !== '') : []);

    flaky.network({ mode: 'pass' });
    const delivering = drover(['pane', 'deliver', `box::${pane}`, '--text', 'typed exactly once', '--json']);
    await eventually('the prompt to reach the pane', () => lines().length > 0, 60_000);
    flaky.network({ mode: 'cut' });
    const cut = await delivering;
    assert.equal(cut.exitCode, 4, cut.stderrText());
    const error = (JSON.parse(cut.text()) as { error: { code: string; delivery: string; delivery_id: string; resend: string; host: string } }).error;
    assert.deepEqual([error.code, error.delivery, error.host], ['possibly_sent', 'possibly_sent', 'box']);
    assert.match(error.delivery_id, /^dlv-/);
    assert.match(error.resend, new RegExp(` -S ${socket.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} pane deliver box::%\\d+ --delivery-id ${error.delivery_id} --text 'typed exactly once' --json$`));
    assert.match(cut.stderrText(), /resend it with its delivery id/);

    flaky.network({ mode: 'pass' });
    const resent = await drover(['pane', 'deliver', `box::${pane}`, '--delivery-id', error.delivery_id, '--text', 'typed exactly once', '--json']);
    assert.equal(resent.exitCode, 0, resent.stderrText());
    const receipt = JSON.parse(resent.text()) as { status: string; delivery_id: string; replayed: boolean; host: string };
    assert.deepEqual([receipt.status, receipt.delivery_id, receipt.replayed, receipt.host], ['submitted', error.delivery_id, true, 'box']);
    assert.deepEqual(lines(), ['typed exactly once'], 'the pane received the prompt once');

    // Interrupted while the answer is held: the same id and resend, exit 130, and still once.
    const interrupted = await LongLivedChild.start([process.execPath, CLI_PATH, '-S', socket, 'pane', 'deliver', `box::${pane}`, '--text', 'interrupted once', '--json'], {
      env: { ...env, DROVER_CONFIG: hosts },
      cwd: sandbox.dir,
    });
    const output: Buffer[] = [];
    interrupted.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    await eventually('the second prompt to reach the pane', () => lines().length > 1, 60_000);
    process.kill(interrupted.pid, 'SIGINT');
    const exit = await interrupted.exited;
    assert.equal(exit.exitCode, 130, interrupted.stderr().tail.toString('utf8'));
    const stopped = (JSON.parse(Buffer.concat(output).toString('utf8')) as { error: { code: string; delivery: string; delivery_id: string; resend: string } }).error;
    assert.deepEqual([stopped.code, stopped.delivery], ['interrupted', 'possibly_sent']);
    assert.ok(stopped.resend.endsWith(`--delivery-id ${stopped.delivery_id} --text 'interrupted once' --json`), stopped.resend);
    flaky.network({ mode: 'pass' });
    const again = await drover(['pane', 'deliver', `box::${pane}`, '--delivery-id', stopped.delivery_id, '--text', 'interrupted once', '--json']);
    assert.equal(again.exitCode, 0, again.stderrText());
    assert.equal((JSON.parse(again.text()) as { replayed: boolean }).replayed, true);
    assert.deepEqual(lines(), ['typed exactly once', 'interrupted once']);
  });
});
