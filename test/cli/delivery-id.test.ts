import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/process/index.js';
import { cliSandbox } from '../support/cli.js';
import { createFakeSsh, type FakeSsh } from '../fixtures/ssh/fake-ssh.js';
import { eventually } from '../support/wait.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const LINE_SINK = join(FIXTURES, 'line-sink.js');

describe('drover pane deliver --delivery-id on this machine', () => {
  const sandbox = cliSandbox();
  const socket = join(sandbox.dir, 'tmux.sock');
  const received = join(sandbox.dir, 'received.txt');
  let pane: string;

  before(async () => {
    const started = await run(['tmux', '-S', socket, 'new-session', '-d', '-s', 'sink', '-x', '80', '-y', '24', '-P', '-F', '#{pane_id}', process.execPath, LINE_SINK, received], { env: sandbox.env, timeoutMs: 20_000 });
    assert.equal(started.exitCode, 0, started.stderrText());
    pane = started.text().trim();
    await eventually('the sink to show its prompt', async () => (await run(['tmux', '-S', socket, 'capture-pane', '-p', '-t', pane], { env: sandbox.env, timeoutMs: 10_000 })).text().includes('>'));
  });
  after(async () => {
    await run(['tmux', '-S', socket, 'kill-server'], { env: sandbox.env, timeoutMs: 10_000 });
  });

  const lines = (): string[] => (existsSync(received) ? readFileSync(received, 'utf8').split('\n').filter((line) => line !== '') : []);

  it('types a delivery once, and answers its resend from the record', async () => {
    const deliver = () => sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'only once please', '--delivery-id', 'job-7', '--json'], { timeoutMs: 60_000 });
    const first = await deliver();
    assert.equal(first.exitCode, 0, first.stderrText());
    const receipt = JSON.parse(first.text()) as { status: string; delivery_id: string; replayed?: boolean };
    assert.deepEqual([receipt.status, receipt.delivery_id, receipt.replayed], ['submitted', 'job-7', undefined]);
    const second = await deliver();
    assert.equal(second.exitCode, 0, second.stderrText());
    const replay = JSON.parse(second.text()) as Record<string, unknown>;
    assert.equal(replay.replayed, true);
    assert.deepEqual({ ...replay, replayed: undefined }, { ...receipt, replayed: undefined }, 'the recorded receipt, as it was');
    assert.deepEqual(lines(), ['only once please'], 'the pane got it once');
    const text = await sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'only once please', '--delivery-id', 'job-7']);
    assert.match(text.stdout.toString(), /^submitted %\d+: .* \(delivery job-7 was made before; answered from its record, not typed again\)\n$/);
  });

  it('types once when two deliveries of one id race: the second waits for the first and answers its receipt', async () => {
    const before = lines();
    const deliver = () => sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'raced', '--delivery-id', 'job-race', '--json'], { timeoutMs: 60_000 });
    const answers = await Promise.all([deliver(), deliver()]);
    for (const answer of answers) assert.equal(answer.exitCode, 0, answer.stderrText());
    const receipts = answers.map((answer) => JSON.parse(answer.text()) as { status: string; replayed?: boolean });
    assert.deepEqual(receipts.map((receipt) => receipt.status), ['submitted', 'submitted']);
    assert.deepEqual(receipts.map((receipt) => receipt.replayed === true).sort(), [false, true], 'one typed it, the other was answered from the record');
    assert.deepEqual(lines(), [...before, 'raced']);
  });

  it('answers possibly_sent, typing nothing, for an id whose delivery was cut off mid-way', async () => {
    const gone = await run([process.execPath, '-e', 'process.stdout.write(String(process.pid))'], { timeoutMs: 20_000 });
    const ledger = join(sandbox.env.DROVER_STATE_DIR!, 'deliveries');
    mkdirSync(ledger, { recursive: true });
    writeFileSync(join(ledger, 'job-cut.json'), JSON.stringify({ delivery_id: 'job-cut', state: 'started', pane, pid: Number(gone.text()), started_at: '2026-01-01T00:00:00.000000Z' }));
    const before = lines();
    const resend = await sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'never typed', '--delivery-id', 'job-cut', '--json']);
    assert.equal(resend.exitCode, 4, resend.stderrText());
    const error = (JSON.parse(resend.text()) as { error: { code: string; delivery_id: string; delivery_state: string } }).error;
    assert.deepEqual([error.code, error.delivery_id, error.delivery_state], ['possibly_sent', 'job-cut', 'cut_off']);
    assert.match(resend.stderrText(), /may have been typed, and is never typed again under this id/);
    assert.deepEqual(lines(), before);
  });

  it('refuses an id reused for other text or another pane, typing nothing and keeping the first record', async () => {
    const first = await sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'the first', '--delivery-id', 'job-once', '--json'], { timeoutMs: 60_000 });
    assert.equal(first.exitCode, 0, first.stderrText());
    const before = lines();
    for (const [target, text, what] of [[pane, 'another text', 'other text'], ['%999', 'the first', `pane ${pane}`]] as const) {
      const reused = await sandbox.drover(['-S', socket, 'pane', 'deliver', target, '--text', text, '--delivery-id', 'job-once', '--json']);
      assert.equal(reused.exitCode, 2, reused.stderrText());
      assert.equal((JSON.parse(reused.text()) as { error: { code: string } }).error.code, 'usage');
      assert.match(reused.stderrText(), new RegExp(`delivery id job-once was used at .* for ${what}; .*pick a new id`));
    }
    assert.deepEqual(lines(), before, 'nothing typed');
    const replay = await sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'the first', '--delivery-id', 'job-once', '--json']);
    assert.equal((JSON.parse(replay.text()) as { replayed?: boolean }).replayed, true, 'the same pane and text still get the receipt');
  });

  it('refuses an id that is not one, before touching the pane', async () => {
    const bad = await sandbox.drover(['-S', socket, 'pane', 'deliver', pane, '--text', 'x', '--delivery-id', '../up', '--json']);
    assert.equal(bad.exitCode, 2);
    assert.match(bad.stderrText(), /--delivery-id: "..\/up" is not a delivery id/);
  });
});

describe('drover pane deliver to a host whose drover predates delivery ids (a fake ssh on PATH)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  let requests: string;

  before(() => {
    ssh = createFakeSsh();
    const remote = ssh.remote('old-box');
    requests = join(remote.home, 'requests.log');
    mkdirSync(join(remote.home, '.local', 'bin'), { recursive: true });
    writeFileSync(join(remote.home, '.local', 'bin', 'drover'), `#!/bin/sh\nexec '${process.execPath}' '${join(FIXTURES, 'ssh', 'old-drover.js')}' '${requests}'\n`, { mode: 0o755 });
    // One that remembers delivery ids but predates --to-shell.
    const older = ssh.remote('older-box');
    mkdirSync(join(older.home, '.local', 'bin'), { recursive: true });
    writeFileSync(join(older.home, '.local', 'bin', 'drover'), `#!/bin/sh\nexec '${process.execPath}' '${join(FIXTURES, 'ssh', 'old-drover.js')}' '${requests}' 1.2\n`, { mode: 0o755 });
    writeFileSync(join(sandbox.dir, 'config.yaml'), 'hosts:\n  old:\n    ssh: old-box\n  older:\n    ssh: older-box\n');
  });
  after(() => ssh.cleanup());

  it('sends it nothing, since it would type a resend again, and names the fix', async () => {
    const answer = await sandbox.drover(['pane', 'deliver', 'old::%1', '--text', 'hello', '--json'], { env: { ...ssh.env, DROVER_CONFIG: join(sandbox.dir, 'config.yaml') }, timeoutMs: 60_000 });
    assert.equal(answer.exitCode, 1, answer.stderrText());
    const error = (JSON.parse(answer.text()) as { error: { code: string; delivery: string; host: string; delivery_id: string } }).error;
    assert.deepEqual([error.code, error.delivery, error.host], ['host_incompatible', 'not_sent', 'old']);
    assert.match(error.delivery_id, /^dlv-/);
    assert.match(answer.stderrText(), /runs drover 0\.0\.1-old \(drover-rpc 1\.0\), which does not remember delivery ids; nothing was sent: install this drover's release there with `.* host add old --install`/);
    assert.equal(existsSync(requests), false, 'no request but pings reached it');
  });

  it('sends a host older than --to-shell nothing for a shell, and names the fix', async () => {
    const answer = await sandbox.drover(['pane', 'deliver', 'older::%1', '--text', 'make test', '--to-shell', '--json'], { env: { ...ssh.env, DROVER_CONFIG: join(sandbox.dir, 'config.yaml') }, timeoutMs: 60_000 });
    assert.equal(answer.exitCode, 1, answer.stderrText());
    const error = (JSON.parse(answer.text()) as { error: { code: string; delivery: string; host: string } }).error;
    assert.deepEqual([error.code, error.delivery, error.host], ['host_incompatible', 'not_sent', 'older']);
    assert.match(answer.stderrText(), /runs drover 0\.0\.1-old \(drover-rpc 1\.2\), which cannot type a line at a shell's prompt; nothing was sent: install this drover's release there with `.* host add older --install`/);
    assert.equal(existsSync(requests), false, 'no request but pings reached it');
  });
});
