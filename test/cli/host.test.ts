import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { packageVersion } from '../../src/cli/version.js';
import { run } from '../../src/process/index.js';
import { cliSandbox } from '../support/cli.js';
import { killTmuxServer } from '../support/tmux.js';
import { createFakeSsh, type FakeSsh } from '../fixtures/ssh/fake-ssh.js';

interface HealthJson {
  name: string;
  reachable: boolean;
  link_state: string;
  last_seen_at: string | null;
  latency_ms: number | null;
  version: string | null;
  problem: string | null;
}

describe('drover host add, list, check, remove (a fake ssh on PATH)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  const configPath = (): string => join(sandbox.dir, '.config', 'drover', 'config.yaml');
  const drover = (args: readonly string[]) => sandbox.drover(args, { env: { ...ssh.env, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' }, timeoutMs: 60_000 });

  before(() => {
    ssh = createFakeSsh();
    // The fake remotes: one with drover on its PATH, one with drover only under a path with a blank in it, one without drover.
    ssh.remote('gpu-box').installDrover('.local/bin/drover');
    ssh.remote('build').installDrover('tools/my drover');
    ssh.remote('bare');
  });
  after(() => ssh.cleanup());

  it('refuses an ssh destination ssh would read as an option, before anything is written or run', async () => {
    for (const destination of ['-oProxyCommand=touch pwned', '-p2222', 'gpu box', 'gpu\nbox']) {
      const result = await drover(['host', 'add', 'evil', `--ssh=${destination}`]);
      assert.equal(result.exitCode, 2, result.stderrText());
      assert.match(result.stderrText(), /--ssh: the ssh destination/);
    }
    assert.equal(existsSync(configPath()), false, 'no config file was written');
    assert.deepEqual(ssh.invocations(), [], 'ssh never ran');
    const local = await drover(['host', 'add', 'local', '--ssh', 'gpu-box']);
    assert.equal(local.exitCode, 2);
    assert.match(local.stderrText(), /"local" is reserved/);
  });

  it('keeps hosts in the config file beside the user’s own comments and keys', async () => {
    mkdirSync(join(sandbox.dir, '.config', 'drover'), { recursive: true });
    writeFileSync(configPath(), '# my drover settings\ntheme: dark # keep me\n');
    const added = await drover(['host', 'add', 'gpu', '--ssh', 'gpu-box']);
    assert.equal(added.exitCode, 0, added.stderrText());
    assert.match(added.text(), /added host gpu \(ssh gpu-box\)/);
    const build = await drover(['host', 'add', 'build', '--ssh', 'build', '--drover', '~/tools/my drover', '--json']);
    assert.equal(build.exitCode, 0, build.stderrText());
    assert.deepEqual(JSON.parse(build.text()), { host: { name: 'build', ssh: 'build', drover: '~/tools/my drover', forward_broker: null }, config_path: configPath(), added: true, install: null, health: null });
    const again = await drover(['host', 'add', 'gpu', '--ssh', 'other']);
    assert.equal(again.exitCode, 2, 'another destination for a stored host is refused');
    assert.match(again.stderrText(), /host gpu is already there \(ssh gpu-box\); remove it first/);
    const farm = await drover(['host', 'add', 'farm', '--forward-broker', '/home/me/hub.sock']);
    assert.equal(farm.exitCode, 0, farm.stderrText());
    assert.match(farm.text(), /added host farm \(ssh farm, broker forwarded to \/home\/me\/hub.sock\)/);
    const relative = await drover(['host', 'add', 'farm2', '--forward-broker', '~/hub.sock']);
    assert.equal(relative.exitCode, 2);
    assert.match(relative.stderrText(), /--forward-broker: the socket path "~\/hub.sock" is not an absolute path/);
    const text = readFileSync(configPath(), 'utf8');
    assert.match(text, /^ {4}forward_broker: \/home\/me\/hub.sock$/m);
    assert.match(text, /^# my drover settings$/m);
    assert.match(text, /^theme: dark # keep me$/m);
    const list = await drover(['host', 'list', '--json']);
    assert.deepEqual(JSON.parse(list.text()), {
      config_path: configPath(),
      hosts: [
        { name: 'gpu', ssh: 'gpu-box', drover: null, forward_broker: null },
        { name: 'build', ssh: 'build', drover: '~/tools/my drover', forward_broker: null },
        { name: 'farm', ssh: 'farm', drover: null, forward_broker: '/home/me/hub.sock' },
      ],
    });
    assert.equal((await drover(['host', 'remove', 'farm'])).exitCode, 0, 'the later tests know the file without it');
    assert.deepEqual(ssh.invocations(), [], 'adding a host runs nothing on it');
  });

  it('checks a host over one ssh that never asks, runs `drover rpc --stdio` there, and reports its health', async () => {
    const result = await drover(['host', 'check', 'gpu', 'build', '--json']);
    assert.equal(result.exitCode, 0, result.stderrText() + result.text());
    const { hosts } = JSON.parse(result.text()) as { hosts: HealthJson[] };
    assert.deepEqual(
      hosts.map((host) => [host.name, host.reachable, host.link_state, host.version, host.problem]),
      [
        ['gpu', true, 'up', packageVersion(), null],
        ['build', true, 'up', packageVersion(), null],
      ],
    );
    for (const host of hosts) {
      assert.equal(typeof host.latency_ms, 'number');
      assert.match(host.last_seen_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
    }
    const argvs = ssh.invocations();
    const options = ['-T', '-o', 'BatchMode=yes', '-o', 'ConnectTimeout=10', '-o', 'ServerAliveInterval=15', '-o', 'ServerAliveCountMax=4', '-o', 'ControlMaster=no', '--'];
    assert.deepEqual(argvs.find((argv) => argv.includes('gpu-box')), [...options, 'gpu-box', 'drover rpc --stdio']);
    // The blank is quoted for the remote shell and ~/ left for it to expand: the remote's HOME, not this one's.
    assert.deepEqual(argvs.find((argv) => argv.includes('build')), [...options, 'build', "~/'tools/my drover' rpc --stdio"]);
  });

  it('says what stops a host: no drover there, a refused login, no such host, each without retrying', async () => {
    for (const [name, destination] of [
      ['bare', 'bare'],
      ['locked', 'denied'],
      ['gone', 'nowhere'],
    ]) {
      const added = await drover(['host', 'add', name!, '--ssh', destination!]);
      assert.equal(added.exitCode, 0, added.stderrText());
    }
    const before = ssh.invocations().length;
    const result = await drover(['host', 'check', 'bare', 'locked', 'gone', '--json']);
    assert.equal(result.exitCode, 1, 'a host that is not up fails the check');
    const hosts = new Map((JSON.parse(result.text()) as { hosts: HealthJson[] }).hosts.map((host) => [host.name, host]));
    assert.equal(hosts.get('bare')!.link_state, 'incompatible');
    assert.match(hosts.get('bare')!.problem!, /no drover to run on bare .*host add bare --install`, or name the drover program there: `[^`]*host remove bare`, then `[^`]*host add bare --ssh bare --drover PATH`$/);
    assert.equal(hosts.get('locked')!.link_state, 'auth_required');
    assert.match(hosts.get('locked')!.problem!, /could not log in to denied \(denied: Permission denied \(publickey\)\.\); drover never prompts: run `ssh denied` once by hand/);
    assert.equal(hosts.get('gone')!.link_state, 'down');
    assert.match(hosts.get('gone')!.problem!, /Could not resolve hostname nowhere/);
    for (const host of hosts.values()) {
      assert.equal(host.reachable, false);
      assert.equal(host.last_seen_at, null, 'never seen');
      assert.equal(host.version, null);
    }
    assert.equal(ssh.invocations().length - before, 3, 'one ssh per host: a check does not retry');
  });

  it('removes a host from the file and nothing else; an unknown host is not found', async () => {
    const removed = await drover(['host', 'remove', 'gone', '--json']);
    assert.equal(removed.exitCode, 0, removed.stderrText());
    assert.deepEqual(JSON.parse(removed.text()), { removed: { name: 'gone', ssh: 'nowhere', drover: null, forward_broker: null }, config_path: configPath() });
    assert.match(readFileSync(configPath(), 'utf8'), /^theme: dark # keep me$/m);
    const missing = await drover(['host', 'check', 'gone']);
    assert.equal(missing.exitCode, 2);
    assert.match(missing.stderrText(), /no host "gone" in .*; it has gpu, build, bare, locked/);
    const again = await drover(['host', 'remove', 'gone']);
    assert.equal(again.exitCode, 2);
  });
});

describe('pane verbs on HOST::PANE (a fake ssh on PATH)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  let socket: string;
  let remoteEnv: NodeJS.ProcessEnv;
  const drover = (args: readonly string[]) => sandbox.drover(args, { env: { ...ssh.env, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' }, timeoutMs: 60_000 });

  before(async () => {
    ssh = createFakeSsh();
    const remote = ssh.remote('gpu-box');
    remote.installDrover('.local/bin/drover');
    remoteEnv = remote.env;
    socket = join(remote.home, 'tmux', 'remote.sock');
    const started = await run(['tmux', '-S', socket, 'new-session', '-d', '-s', 'remote', '-x', '80', '-y', '24', 'cat'], { env: remoteEnv });
    assert.equal(started.exitCode, 0, started.stderrText());
    assert.equal((await drover(['host', 'add', 'gpu', '--ssh', 'gpu-box'])).exitCode, 0);
  });
  after(async () => {
    await run(['tmux', '-S', socket, 'kill-server'], { env: remoteEnv });
    ssh.cleanup();
  });

  it('refuses a host that is not configured, and takes local:: as this machine', async () => {
    const unknown = await drover(['pane', 'capture', 'nowhere::%0', '--json']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderrText(), /no host "nowhere"/);
    const local = await drover(['-S', socket, 'pane', 'capture', 'local::%999', '--json']);
    assert.equal(local.exitCode, 2);
    assert.equal((JSON.parse(local.text()) as { error: { code: string; host?: string } }).error.host, undefined, 'answered here, not by a host');
  });

  it('captures, delivers to and kills a pane on the host, answering with its documents and the link’s figures', async () => {
    const paneId = (await run(['tmux', '-S', socket, 'display-message', '-p', '-t', 'remote', '#{pane_id}'], { env: remoteEnv })).text().trim();
    const capture = await drover(['-S', socket, 'pane', 'capture', `gpu::${paneId}`, '--json']);
    assert.equal(capture.exitCode, 0, capture.stderrText());
    const captured = JSON.parse(capture.text()) as { pane_id: string; host: string; link: { host: string; latency_ms: number; host_budget_ms: number; hub_budget_ms: number } };
    assert.equal(captured.pane_id, paneId);
    assert.equal(captured.host, 'gpu');
    assert.equal(captured.link.hub_budget_ms, Math.ceil(captured.link.host_budget_ms + captured.link.latency_ms), 'the hub waits the host’s budget plus the link’s latency');

    const deliver = await drover(['-S', socket, 'pane', 'deliver', `gpu::${paneId}`, '--text', 'hello from the hub', '--json']);
    const receipt = JSON.parse(deliver.text()) as { status: string; host: string };
    assert.equal(receipt.host, 'gpu');
    assert.ok(['submitted', 'staged_unconfirmed'].includes(receipt.status), deliver.text());
    const screen = await run(['tmux', '-S', socket, 'capture-pane', '-p', '-t', paneId], { env: remoteEnv });
    assert.match(screen.text(), /hello from the hub/, 'typed on the host’s pane');

    const missing = await drover(['-S', socket, 'pane', 'capture', 'gpu::%999', '--json']);
    assert.equal(missing.exitCode, 2, 'the host’s own exit status');
    assert.equal((JSON.parse(missing.text()) as { error: { code: string; host: string } }).error.code, 'pane_not_found');

    const kill = await drover(['-S', socket, 'pane', 'kill', `gpu::${paneId}`, '--json']);
    assert.equal(kill.exitCode, 0, kill.stderrText());
    assert.equal((JSON.parse(kill.text()) as { killed: boolean }).killed, true);
  });

  it('takes the full pane key the merged map prints, checked by the host against its own server run', async (t) => {
    // The merged map asks each host for its own default server (-S names this machine's), so the host's pane lives there.
    const remoteTmux = (...args: string[]) => run(['tmux', ...args], { env: remoteEnv });
    t.after(() => remoteTmux('kill-server'));
    assert.equal((await remoteTmux('new-session', '-d', '-s', 'keyed', '-x', '80', '-y', '24', 'cat')).exitCode, 0);
    const map = await drover(['pane', 'map', '--all-hosts', '--json']);
    const rows = (JSON.parse(map.text()) as { rows: { host: string; pane_id: string; pane_key: string }[] }).rows.filter((row) => row.host === 'gpu');
    assert.equal(rows.length, 1, map.text());
    const { pane_id: paneId, pane_key: paneKey } = rows[0]!;
    assert.match(paneKey, /^gpu::tmux::[^:]+::%\d+$/);

    const capture = await drover(['pane', 'capture', paneKey, '--json']);
    assert.equal(capture.exitCode, 0, capture.stderrText());
    const captured = JSON.parse(capture.text()) as { pane_id: string; pane_key: string; host: string };
    assert.deepEqual([captured.pane_id, captured.host], [paneId, 'gpu']);
    assert.equal(captured.pane_key, paneKey, 'the key names the host, as the merged map does: the host’s own key would say local, which here is this machine');

    // Another run of the host's tmux server: the key's pane is gone, whatever its %id names there now.
    await killTmuxServer(remoteTmux);
    const restarted = await remoteTmux('new-session', '-d', '-s', 'keyed', '-x', '80', '-y', '24', 'cat');
    assert.equal(restarted.exitCode, 0, restarted.stderrText());
    for (let split = 0; split < 3; split += 1) assert.equal((await remoteTmux('split-window', '-d', '-t', 'keyed', 'cat')).exitCode, 0);
    const stale = await drover(['pane', 'deliver', paneKey, '--text', 'never-typed-42', '--json']);
    assert.equal(stale.exitCode, 6, stale.stderrText());
    const error = (JSON.parse(stale.text()) as { error: { code: string; host: string } }).error;
    assert.deepEqual([error.code, error.host], ['server_replaced', 'gpu']);
    const staleCapture = await drover(['pane', 'capture', paneKey, '--json']);
    assert.equal(staleCapture.exitCode, 6, staleCapture.stderrText());
    for (const pane of (await remoteTmux('list-panes', '-a', '-F', '#{pane_id}')).text().trim().split('\n')) {
      assert.doesNotMatch((await remoteTmux('capture-pane', '-p', '-t', pane)).text(), /never-typed-42/, `nothing typed into ${pane}`);
    }

    const malformed = await drover(['pane', 'capture', 'gpu::tmux::%3', '--json']);
    assert.equal(malformed.exitCode, 2);
    assert.match(malformed.stderrText(), /neither HOST::PANE .* nor a pane key HOST::MUX::INCARNATION::PANE/);
  });
});
