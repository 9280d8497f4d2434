import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { SqlBroker, SqliteStore } from '../../src/fleet/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { startSshd, sshdUnavailable, type FlakyAlias, type TestSshd } from '../fixtures/ssh/sshd.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const LINE_SINK = join(FIXTURES, 'line-sink.js');

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

interface SendJson {
  message: { message_id: number; notified_at: string | null };
  notification_sent: boolean;
}

describe('a fleet member on another host, through a real OpenSSH server behind a flaky proxy', { skip }, () => {
  const sandbox = cliSandbox();
  let sshd: TestSshd;
  let flaky: FlakyAlias;
  let trigger: string;
  let received: string;
  let remoteTmux: string;
  let remoteDrover: string;
  let env: NodeJS.ProcessEnv;
  let fleetId: number;
  let directorId: number;

  /** Where the member's program writes at each Enter: nowhere that matters, or the network's control (to hold the answer back). */
  const onEnter = (target: string): void => {
    rmSync(trigger, { force: true });
    symlinkSync(target, trigger);
  };
  const lines = (): string[] => (existsSync(received) ? readFileSync(received, 'utf8').split('\n').filter((line) => line !== '') : []);
  const drover = (args: readonly string[]) => sandbox.drover(args, { env, timeoutMs: 120_000 });

  before(async () => {
    sshd = await startSshd();
    flaky = sshd.flakyAlias('flaky');
    const ignored = join(sshd.dir, 'ignored');
    writeFileSync(ignored, '', { mode: 0o666 });
    chmodSync(ignored, 0o666);
    trigger = join(sshd.dir, 'on-enter');
    onEnter(ignored);
    remoteDrover = sshd.installDrover(CLI_PATH);
    received = join(sshd.home, 'received.txt');
    // The member's program on the other machine: a sink that writes down each line it gets.
    const sink = join(sshd.dir, 'member-sink');
    writeFileSync(sink, `#!/bin/sh\nexec '${sshd.node}' '${LINE_SINK}' '${received}' '${trigger}' '${JSON.stringify({ mode: 'stall', direction: 'to_client' })}'\n`, { mode: 0o755 });
    chmodSync(sink, 0o755);
    // That host's drover reaches its own default tmux server (its TMUX_TMPDIR is the login's home).
    remoteTmux = `TMUX_TMPDIR='${sshd.home}' tmux`;
    await sshd.exec(`${remoteTmux} new-session -d -s remote -x 160 -y 50`);
    const hosts = join(sandbox.dir, 'config.yaml');
    writeFileSync(hosts, `hosts:\n  box:\n    ssh: flaky\n    drover: '${remoteDrover}'\n`);
    // SHELL names the member's program (a shell member runs $SHELL); ssh runs its ProxyCommand with a real one.
    const ssh = join(sshd.dir, 'ssh-with-sh');
    writeFileSync(ssh, `#!/bin/sh\nSHELL=/bin/sh exec '${sshd.sshWrapper}' "$@"\n`, { mode: 0o755 });
    env = { ...sandbox.env, DROVER_SSH_BIN: ssh, DROVER_CONFIG: hosts, SHELL: sink };
    // The hub's fleet: its Director's pane is on this machine and is never touched here.
    const store = SqliteStore.open({ path: sandbox.env.DROVER_DB! });
    const broker = new SqlBroker(store);
    const created = await broker.createFleet({ name: 'hub', codingAgent: 'shell', directorPlacement: { backend: 'tmux', session: '$0', window: '@0', pane: '%0' } });
    await broker.close();
    fleetId = created.fleet.fleetId;
    directorId = created.director.memberId;
  });
  after(async () => {
    await sshd?.exec(`${remoteTmux} kill-server`).catch(() => undefined);
    await sshd?.stop();
  });

  it('places the member beside a pane there, delivers and stamps; a cut link leaves messages pending, and the retry types each line once', async () => {
    const beside = (await sshd.exec(`${remoteTmux} display-message -p -t remote '#{pane_id}'`)).trim();
    const create = await drover(['member', 'create', '--fleet', String(fleetId), '--name', 'far', '--agent', 'shell', '--host', 'box', '--beside', beside, '--json']);
    assert.equal(create.exitCode, 0, create.stderrText());
    assert.doesNotMatch(create.stderrText(), /cannot send or acknowledge/, 'drover there names where the hub’s broker is forwarded');
    const member = (JSON.parse(create.text()) as { member: { member_id: number; placement: { host: string; pane_id: string; server: string } } }).member;
    const handshake = JSON.parse((await sshd.exec(`'${remoteDrover}' rpc --stdio < /dev/null | head -n 1`)).trim()) as { broker_socket?: string };
    assert.match(handshake.broker_socket ?? '', /^\/.*\/broker\/hub\.sock$/);
    const panePid = (await sshd.exec(`${remoteTmux} display-message -p -t '${member.placement.pane_id}' '#{pane_pid}'`)).trim();
    const paneEnv = (await sshd.exec(`tr '\\0' '\\n' < /proc/${panePid}/environ`)).split('\n');
    assert.ok(paneEnv.includes(`DROVER_BROKER=drover+unix://${handshake.broker_socket}`), 'the member reaches the hub’s store through the socket forwarded there');
    assert.equal(member.placement.host, 'box');
    const panes = (await sshd.exec(`${remoteTmux} list-panes -t remote -F '#{pane_id}'`)).trim().split('\n');
    assert.deepEqual(panes, [beside, member.placement.pane_id], "the member's pane was split off the one named, on that host's tmux");
    await eventually('the sink to show its prompt', async () => (await sshd.exec(`${remoteTmux} capture-pane -p -t '${member.placement.pane_id}'`)).includes('>'));
    const send = async (text: string): Promise<{ sent: SendJson; stderr: string }> => {
      const result = await drover(['message', 'send', '--from', String(directorId), '--to', String(member.member_id), text, '--json']);
      assert.equal(result.exitCode, 0, result.stderrText());
      return { sent: JSON.parse(result.text()) as SendJson, stderr: result.stderrText() };
    };
    const notifiedAt = async (id: number): Promise<string | null> => (JSON.parse((await drover(['message', 'show', String(id), '--json'])).text()) as { notified_at: string | null }).notified_at;
    const tagged = (id: number): string[] => lines().filter((line) => line.startsWith(`: '[drover msg ${id} `));

    // Up: typed there once, stamped here.
    const first = await send('first over the link');
    assert.equal(first.sent.notification_sent, true, first.stderr);
    assert.equal(tagged(first.sent.message.message_id).length, 1);
    assert.ok(await notifiedAt(first.sent.message.message_id));

    // Down: stored, pending, never stamped, and the diagnostic names the host.
    flaky.network({ mode: 'cut' });
    const down = await send('second while down');
    assert.equal(down.sent.notification_sent, false);
    assert.match(down.stderr, new RegExp(`message ${down.sent.message.message_id} was not notified to member ${member.member_id}: host box: `));
    assert.equal(await notifiedAt(down.sent.message.message_id), null);
    assert.deepEqual(tagged(down.sent.message.message_id), []);

    // Back up, and cut again the moment the pending line's Enter lands there, before the hub hears.
    flaky.network({ mode: 'pass' });
    onEnter(flaky.control);
    const cutting = send('third, cut mid-delivery');
    await eventually('the pending line to reach the pane', () => tagged(down.sent.message.message_id).length > 0, 60_000);
    flaky.network({ mode: 'cut' });
    const cut = await cutting;
    assert.match(cut.stderr, new RegExp(`message ${down.sent.message.message_id} was not notified to member ${member.member_id}: host box: `));
    assert.equal(await notifiedAt(down.sent.message.message_id), null, 'no receipt came back: not stamped');

    // The retry asks again under the same delivery id: answered from the host's record, not typed again.
    onEnter(join(sshd.dir, 'ignored'));
    flaky.network({ mode: 'pass' });
    let retries = 0;
    while ((await notifiedAt(cut.sent.message.message_id)) === null && retries < 5) {
      retries += 1;
      const waited = await drover(['message', 'send', '--from', String(directorId), '--to', String(member.member_id), `retry ${retries}`, '--json']);
      assert.equal(waited.exitCode, 0, waited.stderrText());
    }
    assert.ok(await notifiedAt(down.sent.message.message_id), 'the line typed before the cut is stamped on the replayed receipt');
    assert.ok(await notifiedAt(cut.sent.message.message_id));
    assert.equal(tagged(down.sent.message.message_id).length, 1, 'typed before the cut, never again');
    assert.equal(tagged(cut.sent.message.message_id).length, 1);
  });

  it("prompts and reads the member through the host, and refuses both once the host's tmux is another run", async () => {
    const beside = (await sshd.exec(`${remoteTmux} display-message -p -t remote '#{pane_id}'`)).trim();
    const create = await drover(['member', 'create', '--fleet', String(fleetId), '--name', 'prompted', '--agent', 'shell', '--host', 'box', '--beside', beside, '--json']);
    assert.equal(create.exitCode, 0, create.stderrText());
    const member = (JSON.parse(create.text()) as { member: { member_id: number; placement: { pane_id: string } } }).member;
    const id = String(member.member_id);
    await eventually('the sink to show its prompt', async () => (await sshd.exec(`${remoteTmux} capture-pane -p -t '${member.placement.pane_id}'`)).includes('>'));

    const prompt = await drover(['member', 'prompt', id, 'a prompt over the link', '--json']);
    assert.equal(prompt.exitCode, 0, prompt.stderrText());
    assert.ok(lines().includes('a prompt over the link'), 'the member received it');
    const capture = await drover(['member', 'capture', id, '--lines', '5', '--json']);
    assert.equal(capture.exitCode, 0, capture.stderrText());
    assert.match((JSON.parse(capture.text()) as { content: string }).content, /a prompt over the link/);

    // The host's tmux goes and another starts, with a pane of the member's id running something else.
    await sshd.exec(`pid=$(${remoteTmux} display-message -p '#{pid}'); ${remoteTmux} kill-server; while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done`);
    await sshd.exec(`${remoteTmux} new-session -d -s remote -x 80 -y 24 cat`);
    const paneNumber = Number(member.placement.pane_id.slice(1));
    for (let split = 0; split < paneNumber; split += 1) await sshd.exec(`${remoteTmux} split-window -d -t remote cat`);
    assert.match(await sshd.exec(`${remoteTmux} list-panes -a -F '#{pane_id}'`), new RegExp(`^${member.placement.pane_id}$`, 'm'));

    const received = lines().length;
    const stale = await drover(['member', 'prompt', id, 'never typed into the new run', '--json']);
    assert.notEqual(stale.exitCode, 0);
    assert.match(stale.stderrText(), /lived on a tmux server that is gone/);
    const staleCapture = await drover(['member', 'capture', id, '--json']);
    assert.notEqual(staleCapture.exitCode, 0);
    assert.equal(lines().length, received);
    for (const pane of (await sshd.exec(`${remoteTmux} list-panes -a -F '#{pane_id}'`)).trim().split('\n')) {
      assert.doesNotMatch(await sshd.exec(`${remoteTmux} capture-pane -p -t '${pane}'`), /never typed/, `nothing typed into ${pane} of the new run`);
    }
    const deleted = await drover(['member', 'delete', id, '--json']);
    assert.equal(deleted.exitCode, 0, deleted.stderrText());
    assert.equal((JSON.parse(deleted.text()) as { status: string }).status, 'stale');
    assert.match(await sshd.exec(`${remoteTmux} list-panes -a -F '#{pane_id}'`), new RegExp(`^${member.placement.pane_id}$`, 'm'), "the new run's pane is left alone");
  });

  it("types a message at a real shell's prompt there, after ctrl+c, and nothing in it or left at the prompt runs", async () => {
    const beside = (await sshd.exec(`${remoteTmux} display-message -p -t remote '#{pane_id}'`)).trim();
    // The member's program is the path in this machine's $SHELL: a real bash this time.
    const create = await sandbox.drover(['member', 'create', '--fleet', String(fleetId), '--name', 'bash-there', '--agent', 'shell', '--host', 'box', '--beside', beside, '--json'], {
      env: { ...env, SHELL: '/bin/bash' },
      timeoutMs: 120_000,
    });
    assert.equal(create.exitCode, 0, create.stderrText());
    const member = (JSON.parse(create.text()) as { member: { member_id: number; placement: { pane_id: string } } }).member;
    const pane = member.placement.pane_id;
    const screen = (): Promise<string> => sshd.exec(`${remoteTmux} capture-pane -p -J -S - -t '${pane}'`);
    await eventually('bash to show its prompt there', async () => /[$#] $/m.test(await screen()));
    assert.equal((await sshd.exec(`${remoteTmux} display-message -p -t '${pane}' '#{pane_current_command}'`)).trim(), 'bash');
    // Someone left a command half-typed at that prompt; the message would run one of its own if it were typed bare.
    await sshd.exec(`${remoteTmux} send-keys -t '${pane}' -l 'touch ${sshd.home}/left-at-prompt '`);
    const sent = await drover(['message', 'send', '--from', String(directorId), '--to', String(member.member_id), `$(touch ${sshd.home}/from-message) done`, '--json']);
    assert.equal(sent.exitCode, 0, sent.stderrText());
    const result = JSON.parse(sent.text()) as SendJson;
    assert.equal(result.notification_sent, true, sent.stderrText());
    const shown = await screen();
    assert.equal(shown.split(`: '[drover msg ${result.message.message_id} `).length - 1, 1, shown);
    assert.equal((await sshd.exec(`ls ${sshd.home}`)).match(/left-at-prompt|from-message/g), null, 'nothing ran there');
  });

  it('deregisters a member whose pane there is already gone', async () => {
    const beside = (await sshd.exec(`${remoteTmux} display-message -p -t remote '#{pane_id}'`)).trim();
    const create = await drover(['member', 'create', '--fleet', String(fleetId), '--name', 'short-lived', '--agent', 'shell', '--host', 'box', '--beside', beside, '--json']);
    assert.equal(create.exitCode, 0, create.stderrText());
    const member = (JSON.parse(create.text()) as { member: { member_id: number; placement: { pane_id: string } } }).member;
    await sshd.exec(`${remoteTmux} kill-pane -t '${member.placement.pane_id}'`);
    const deleted = await drover(['member', 'delete', String(member.member_id), '--json']);
    assert.equal(deleted.exitCode, 0, deleted.stderrText());
    const listed = await drover(['member', 'list', '--fleet', String(fleetId), '--json']);
    assert.doesNotMatch(listed.text(), /short-lived/);
  });
});
