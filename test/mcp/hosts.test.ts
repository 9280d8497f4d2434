import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { run } from '../../src/process/index.js';
import type { Server } from '../../src/tmux/index.js';
import { createFakeSsh, type FakeSsh } from '../fixtures/ssh/fake-ssh.js';
import { startSshd, sshdUnavailable, type FlakyAlias, type TestSshd } from '../fixtures/ssh/sshd.js';
import { eventually } from '../panes/live.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { killTmuxServer, startTestServer } from '../support/tmux.js';

function ok(result: unknown): Record<string, unknown> {
  const call = result as CallToolResult;
  assert.notEqual(call.isError, true, JSON.stringify(call.content));
  return call.structuredContent as Record<string, unknown>;
}

function refusal(result: unknown): Record<string, unknown> {
  const call = result as CallToolResult;
  assert.equal(call.isError, true, JSON.stringify(call.structuredContent));
  return (JSON.parse((call.content[0] as { text: string }).text) as { error: Record<string, unknown> }).error;
}

interface Row {
  host: string;
  pane_id: string;
  pane_key: string;
  stale: boolean;
}

describe('drover mcp on a pane of another host (a fake ssh on PATH)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  let remoteEnv: NodeJS.ProcessEnv;
  let local: Server;
  let session: McpSession;
  const remoteTmux = (...args: string[]) => run(['tmux', ...args], { env: remoteEnv });
  const remoteScreens = async (): Promise<string> => {
    const panes = (await remoteTmux('list-panes', '-a', '-F', '#{pane_id}')).text().trim().split('\n');
    return (await Promise.all(panes.map(async (pane) => (await remoteTmux('capture-pane', '-p', '-t', pane)).text()))).join('\n');
  };

  before(async () => {
    ssh = createFakeSsh();
    const remote = ssh.remote('gpu-box');
    remote.installDrover('.local/bin/drover');
    remoteEnv = remote.env;
    // The host's own default server: a host answers for the server its environment selects.
    assert.equal((await remoteTmux('new-session', '-d', '-s', 'remote', '-x', '80', '-y', '24', 'cat')).exitCode, 0);
    local = await startTestServer();
    await local.newSession({ name: 'here' });
    const env = { ...sandbox.env, ...ssh.env, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' };
    const added = await sandbox.drover(['host', 'add', 'gpu', '--ssh', 'gpu-box'], { env });
    assert.equal(added.exitCode, 0, added.stderrText());
    session = await connectMcp(['-S', local.endpoint.socketPath, '--tier', 'destructive', '--timeout-ms', '60000'], env);
  });
  after(async () => {
    await session?.close();
    await local?.close();
    await remoteTmux('kill-server');
    ssh.cleanup();
  });

  it('maps every machine with all_hosts, and captures, probes and reads the process of a host’s pane by HOST::ID and by its key', async () => {
    const remotePane = (await remoteTmux('display-message', '-p', '-t', 'remote', '#{pane_id}')).text().trim();
    await remoteTmux('send-keys', '-t', remotePane, 'remote-marker-7', 'Enter');
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: { all_hosts: true } })) as { panes: Row[]; hosts: { name: string; answered: boolean }[] };
    assert.deepEqual(map.hosts.map((host) => [host.name, host.answered]), [['local', true], ['gpu', true]]);
    const there = map.panes.filter((row) => row.host === 'gpu');
    assert.deepEqual(there.map((row) => [row.pane_id, row.stale]), [[remotePane, false]]);
    const key = there[0]!.pane_key;
    assert.match(key, new RegExp(`^gpu::tmux::[^:]+::${remotePane}$`));
    assert.ok(map.panes.some((row) => row.host === 'local' && row.pane_key.startsWith('local::tmux::')), 'this machine’s rows too');
    const plain = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: Record<string, unknown>[]; hosts?: unknown };
    assert.equal(plain.hosts, undefined, 'without all_hosts the map is this machine’s, as before');
    assert.ok(plain.panes.every((row) => !('host' in row)));

    const byId = ok(await session.client.callTool({ name: 'capture', arguments: { pane_id: `gpu::${remotePane}`, lines: 20 } }));
    assert.deepEqual([byId.host, byId.pane_id, byId.pane_key], ['gpu', remotePane, key], 'the key names the host, as the merged map does');
    assert.match(String(byId.content), /remote-marker-7/);
    const byKey = ok(await session.client.callTool({ name: 'capture', arguments: { pane_key: key } }));
    assert.equal(byKey.host, 'gpu');
    assert.match(String(byKey.content), /remote-marker-7/);
    const since = refusal(await session.client.callTool({ name: 'capture', arguments: { pane_key: key, since: 'c1' } }));
    assert.equal(since.code, 'usage');

    const ready = ok(await session.client.callTool({ name: 'ready', arguments: { pane_key: key } }));
    assert.deepEqual([ready.host, ready.pane_id, ready.pane_key], ['gpu', remotePane, key]);
    const processes = ok(await session.client.callTool({ name: 'pane_process', arguments: { pane_id: `gpu::${remotePane}` } })) as { host: string; processes: { comm: string }[] };
    assert.equal(processes.host, 'gpu');
    assert.deepEqual(processes.processes.map((process) => process.comm), ['cat']);

    const sweep = ok(await session.client.callTool({ name: 'questions', arguments: { panes: [key] } })) as { host: string; skipped: { pane_key: string }[] };
    assert.equal(sweep.host, 'gpu');
    assert.deepEqual(sweep.skipped.map((row) => row.pane_key), [key]);
    const everywhere = ok(await session.client.callTool({ name: 'questions', arguments: { all_hosts: true } })) as { hosts: { name: string; answered: boolean }[] };
    assert.deepEqual(everywhere.hosts.map((host) => [host.name, host.answered]), [['local', true], ['gpu', true]]);
    const mixed = refusal(await session.client.callTool({ name: 'questions', arguments: { panes: [key, '%0'] } }));
    assert.match(String(mixed.message), /name panes of one machine per call/);
  });

  it('delivers to and kills a host’s pane there, and refuses a key of a replaced server with nothing typed', async () => {
    const remotePane = (await remoteTmux('display-message', '-p', '-t', 'remote', '#{pane_id}')).text().trim();
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: { all_hosts: true } })) as { panes: Row[] };
    const key = map.panes.find((row) => row.host === 'gpu' && row.pane_id === remotePane)!.pane_key;

    const receipt = ok(await session.client.callTool({ name: 'deliver', arguments: { pane_key: key, text: 'hello-from-mcp-3' } }));
    assert.equal(receipt.host, 'gpu');
    assert.match(String(receipt.delivery_id), /^dlv-/, 'the host remembers it by an id');
    assert.ok(['submitted', 'staged_unconfirmed'].includes(String(receipt.status)), JSON.stringify(receipt));
    const typed = (screens: string): number => screens.split('hello-from-mcp-3').length - 1;
    await eventually('the text on the host’s pane', async () => (typed(await remoteScreens()) > 0 ? true : undefined));
    const before = typed(await remoteScreens());
    const again = ok(await session.client.callTool({ name: 'deliver', arguments: { pane_key: key, text: 'hello-from-mcp-3', delivery_id: String(receipt.delivery_id) } }));
    assert.equal(again.replayed, true, 'a resend with the same id is answered from the host’s record');
    assert.equal(typed(await remoteScreens()), before, 'not typed again');

    // Another run of the host's tmux server: the key's pane is gone, whatever its id names there now.
    await killTmuxServer(remoteTmux);
    assert.equal((await remoteTmux('new-session', '-d', '-s', 'remote', '-x', '80', '-y', '24', 'cat')).exitCode, 0);
    for (let split = 0; split < 2; split += 1) assert.equal((await remoteTmux('split-window', '-d', '-t', 'remote', 'cat')).exitCode, 0);
    for (const [name, args] of [
      ['deliver', { pane_key: key, text: 'never-typed-9' }],
      ['kill_pane', { pane_key: key }],
    ] as const) {
      const error = refusal(await session.client.callTool({ name, arguments: args }));
      assert.deepEqual([error.code, error.host, error.delivery], ['server_replaced', 'gpu', 'not_sent'], name);
    }
    assert.doesNotMatch(await remoteScreens(), /never-typed-9/);
    assert.equal((await remoteTmux('list-panes', '-a', '-F', '#{pane_id}')).text().trim().split('\n').length, 3, 'no pane killed');

    const victim = (await remoteTmux('list-panes', '-a', '-F', '#{pane_id}')).text().trim().split('\n')[2]!;
    const killed = ok(await session.client.callTool({ name: 'kill_pane', arguments: { pane_id: `gpu::${victim}` } }));
    assert.deepEqual([killed.host, killed.pane_id], ['gpu', victim]);
    assert.doesNotMatch((await remoteTmux('list-panes', '-a', '-F', '#{pane_id}')).text(), new RegExp(`${victim}\\b`));

    const unknown = refusal(await session.client.callTool({ name: 'capture', arguments: { pane_id: 'nowhere::%0' } }));
    assert.deepEqual([unknown.code, unknown.host], ['not_found', 'nowhere']);
    const malformed = refusal(await session.client.callTool({ name: 'capture', arguments: { pane_key: 'gpu::tmux::a b::%0' } }));
    assert.equal(malformed.code, 'usage');
  });
});

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');

// Without sshd the test is skipped, except in CI, which installs it: there it must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

describe('drover mcp delivering to a host through a flaky proxy in front of a real OpenSSH server', { skip }, () => {
  const sandbox = cliSandbox();
  let sshd: TestSshd;
  let flaky: FlakyAlias;
  let local: Server;
  let session: McpSession;

  before(async () => {
    sshd = await startSshd();
    flaky = sshd.flakyAlias('flaky');
    const config = join(sandbox.dir, 'config.yaml');
    writeFileSync(config, `hosts:\n  box:\n    ssh: flaky\n    drover: '${sshd.installDrover(CLI_PATH)}'\n`);
    local = await startTestServer();
    session = await connectMcp(['-S', local.endpoint.socketPath, '--tier', 'mutating', '--timeout-ms', '120000'], { ...sandbox.env, DROVER_SSH_BIN: sshd.sshWrapper, DROVER_CONFIG: config });
  });
  after(async () => {
    await session?.close();
    await local?.close();
    // The host's own default server: the drover installed there keeps tmux's sockets in its home.
    await sshd?.exec(`TMUX_TMPDIR='${sshd.home}' tmux kill-server`).catch(() => undefined);
    await sshd?.stop();
  });

  it('answers possibly_sent with the delivery id when the link is cut mid-delivery, and the same call with that id is typed once', async () => {
    const received = join(sshd.home, 'received.txt');
    const pane = (
      await sshd.exec(`TMUX_TMPDIR='${sshd.home}' tmux new-session -d -s sink -x 80 -y 24 -P -F '#{pane_id}' '${sshd.node}' '${join(FIXTURES, 'line-sink.js')}' '${received}'`)
    ).trim();
    await eventually('the sink to show its prompt', async () => ((await sshd.exec(`TMUX_TMPDIR='${sshd.home}' tmux capture-pane -p -t '${pane}'`)).includes('>') ? true : undefined));
    const lines = (): string[] => (existsSync(received) ? readFileSync(received, 'utf8').split('\n').filter((line) => line !== '') : []);

    // The server's link comes up (the pane read through it), then the host's answers are held in
    // the network before the delivery is even asked for: its receipt cannot reach the server, and
    // the cut below comes after the prompt was typed and before the server heard of it.
    assert.match(String(ok(await session.client.callTool({ name: 'capture', arguments: { pane_id: `box::${pane}` } })).content), />/);
    flaky.network({ mode: 'stall', direction: 'to_client' });
    const delivering = session.client.callTool({ name: 'deliver', arguments: { pane_id: `box::${pane}`, text: 'typed exactly once' } }, undefined, { timeout: 180_000 });
    await eventually('the prompt to reach the pane', async () => (lines().length > 0 ? true : undefined), 60_000);
    flaky.network({ mode: 'cut' });
    const error = refusal(await delivering);
    assert.deepEqual([error.code, error.delivery, error.host], ['possibly_sent', 'possibly_sent', 'box']);
    assert.match(String(error.delivery_id), /^dlv-/);
    assert.match(String(error.message), /call deliver again with the same pane, text and delivery_id/);

    flaky.network({ mode: 'pass' });
    const receipt = ok(
      await session.client.callTool({ name: 'deliver', arguments: { pane_id: `box::${pane}`, text: 'typed exactly once', delivery_id: error.delivery_id } }, undefined, { timeout: 180_000 }),
    );
    assert.deepEqual([receipt.status, receipt.delivery_id, receipt.replayed, receipt.host], ['submitted', error.delivery_id, true, 'box']);
    assert.deepEqual(lines(), ['typed exactly once'], 'the pane received the prompt once');
  });
});
