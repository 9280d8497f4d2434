import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parsePaneKey, sameZellijRun } from '../../src/mux/index.js';
import { run } from '../../src/process/index.js';
import { createFakeSsh, type FakeRemote, type FakeSsh } from '../fixtures/ssh/fake-ssh.js';
import { startSshd, sshdUnavailable, type TestSshd } from '../fixtures/ssh/sshd.js';
import { STATE_ENV as ZELLIJ_STATE_ENV } from '../fixtures/zellij/state.js';
import { openZellijWorld, type ZellijWorld } from '../fixtures/zellij/world.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { eventually } from '../support/wait.js';

interface MergedRowJson {
  host: string;
  pane_id: string;
  pane_key: string;
  session?: string;
  stale: boolean;
  stale_age_ms: number | null;
  seen_at: string;
}

interface HostStatusJson {
  name: string;
  reachable: boolean;
  link_state: string | null;
  last_seen_at: string | null;
  latency_ms: number | null;
  answered: boolean;
  stale: boolean;
  stale_age_ms: number | null;
  error: string | null;
}

describe('views across hosts: --all-hosts (a fake ssh on PATH)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  let gpu: FakeRemote;
  const drover = (args: readonly string[]) => sandbox.drover(args, { env: { ...ssh.env, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' }, timeoutMs: 90_000 });
  const tmux = (env: NodeJS.ProcessEnv, args: readonly string[]) => run(['tmux', ...args], { env });
  const map = async (): Promise<{ exitCode: number | null; rows: MergedRowJson[]; hosts: Map<string, HostStatusJson>; stderr: string }> => {
    const result = await drover(['pane', 'map', '--all-hosts', '--json']);
    const document = JSON.parse(result.text()) as { rows: MergedRowJson[]; hosts: HostStatusJson[] };
    return { exitCode: result.exitCode, rows: document.rows, hosts: new Map(document.hosts.map((host) => [host.name, host])), stderr: result.stderrText() };
  };

  before(async () => {
    ssh = createFakeSsh();
    gpu = ssh.remote('gpu-box');
    gpu.installDrover('.local/bin/drover');
    // Each machine's own default tmux server: this one's in the sandbox, the host's under its HOME.
    for (const [env, session] of [
      [sandbox.env, 'here'],
      [gpu.env, 'there'],
    ] as const) {
      const started = await tmux(env, ['new-session', '-d', '-s', session, '-x', '80', '-y', '24', 'cat']);
      assert.equal(started.exitCode, 0, started.stderrText());
    }
    for (const [name, destination] of [
      ['gpu', 'gpu-box'],
      ['never', 'nowhere'],
    ]) {
      const added = await drover(['host', 'add', name!, '--ssh', destination!]);
      assert.equal(added.exitCode, 0, added.stderrText());
    }
  });
  after(async () => {
    await tmux(sandbox.env, ['kill-server']);
    await tmux(gpu.env, ['kill-server']);
    ssh.cleanup();
  });

  it('merges this machine’s panes and a host’s, each with its host and a pane key naming it; a host never reached has only its health', async () => {
    const { exitCode, rows, hosts, stderr } = await map();
    assert.equal(exitCode, 0, stderr);
    assert.deepEqual(
      rows.map((row) => [row.host, row.session, row.stale, row.stale_age_ms]),
      [
        ['local', 'here', false, null],
        ['gpu', 'there', false, null],
      ],
    );
    const [here, there] = rows as [MergedRowJson, MergedRowJson];
    assert.match(here.pane_key, /^local::tmux::[^:]+::%\d+$/);
    assert.match(there.pane_key, /^gpu::tmux::[^:]+::%\d+$/, 'the host’s own key says local; the merged view names the host');
    assert.equal(there.pane_key.split('::').at(-1), there.pane_id);
    assert.deepEqual([...hosts.keys()], ['local', 'gpu', 'never']);
    assert.equal(hosts.get('gpu')!.reachable, true);
    assert.equal(hosts.get('gpu')!.link_state, 'up');
    assert.equal(typeof hosts.get('gpu')!.latency_ms, 'number');
    const never = hosts.get('never')!;
    assert.deepEqual([never.reachable, never.link_state, never.last_seen_at, never.answered, never.stale], [false, 'down', null, false, false]);
    assert.match(never.error!, /Could not resolve hostname nowhere/);
    assert.ok(existsSync(join(sandbox.dir, 'state', 'hosts', 'gpu')), 'the host’s rows are remembered in the state directory');
    assert.deepEqual(readdirSync(join(sandbox.dir, 'state', 'hosts')), ['gpu'], 'nothing is remembered for a host never reached');
  });

  it('glances at every pane on each machine when asked: branch, last line and screen digest', async () => {
    for (const [env, text] of [
      [sandbox.env, 'typed here'],
      [gpu.env, 'typed there'],
    ] as const) {
      const typed = await tmux(env, ['send-keys', '-t', ':0.0', '-l', text]);
      assert.equal(typed.exitCode, 0, typed.stderrText());
    }
    const result = await eventually('both screens in the glance', async () => {
      const answered = await drover(['pane', 'map', '--all-hosts', '--glance', '--json']);
      const rows = (JSON.parse(answered.text()) as { rows: (MergedRowJson & { last_line?: string | null })[] }).rows;
      return rows.map((row) => row.last_line).join('|') === 'typed here|typed there' && rows;
    });
    for (const row of result as (MergedRowJson & { branch?: unknown; screen_digest?: unknown })[]) {
      // Each cat runs wherever the tests run: in a checkout, or outside git.
      assert.ok(row.branch === null || typeof row.branch === 'string', `${row.host}: ${JSON.stringify(row.branch)}`);
      assert.match(String(row.screen_digest), /^[0-9a-f]{16}$/, row.host);
    }
    const table = (await drover(['pane', 'map', '--all-hosts', '--glance'])).text();
    assert.match(table, /Branch +Last line\n/);
    assert.match(table, /typed there\n/);
    const plain = (await map()).rows as unknown as Record<string, unknown>[];
    assert.ok(plain.every((row) => !('last_line' in row)), 'no glance unless asked');
  });

  it('keeps an unreachable host’s panes, marked stale with their age, and says it is unreachable', async () => {
    const live = await map();
    const liveRow = live.rows.find((row) => row.host === 'gpu')!;
    gpu.setReachable(false);
    after(() => gpu.setReachable(true));
    const { exitCode, rows, hosts, stderr } = await map();
    assert.equal(exitCode, 0, `an unreachable host does not fail the view: ${stderr}`);
    const stale = rows.filter((row) => row.host === 'gpu');
    assert.deepEqual(
      stale.map((row) => [row.pane_key, row.session, row.stale, row.seen_at]),
      [[liveRow.pane_key, 'there', true, liveRow.seen_at]],
      'the rows of the last answer, never shown as live',
    );
    const ageMs = Date.now() - Date.parse(liveRow.seen_at);
    assert.ok(stale[0]!.stale_age_ms! > 0 && stale[0]!.stale_age_ms! <= ageMs, `age ${stale[0]!.stale_age_ms} ms, at most ${ageMs} ms`);
    assert.deepEqual(
      rows.filter((row) => row.host === 'local').map((row) => row.stale),
      [false],
    );
    const health = hosts.get('gpu')!;
    assert.deepEqual([health.reachable, health.link_state, health.answered, health.stale, health.last_seen_at], [false, 'down', false, true, liveRow.seen_at]);
    assert.match(health.error!, /Connection refused/);

    const human = await drover(['pane', 'map', '--all-hosts']);
    assert.equal(human.exitCode, 0, human.stderrText());
    const text = human.text();
    assert.match(text, /^Host\s+Session\s+Pane/m);
    assert.match(text, /^local\s+here\s+%\d+/m);
    assert.match(text, /^gpu \(stale, \d+s ago\)\s+there\s+%\d+/m);
    assert.match(text, /^gpu: unreachable \(down\), last seen \d+s ago; its rows are from \d+s ago: .*Connection refused/m);
    assert.match(text, /^never: unreachable \(down\), never seen; no rows known: /m);
  });

  it('comes back live once the host answers again', async () => {
    const { rows, hosts } = await map();
    assert.deepEqual(
      rows.map((row) => [row.host, row.stale]),
      [
        ['local', false],
        ['gpu', false],
      ],
    );
    assert.equal(hosts.get('gpu')!.reachable, true);
  });

  it('merges mux snapshots and question sweeps the same way', async () => {
    const snapshot = await drover(['mux', 'snapshot', '--all-hosts', '--json']);
    assert.equal(snapshot.exitCode, 0, snapshot.stderrText());
    const merged = JSON.parse(snapshot.text()) as { spaces: { host: string; label: string }[]; panes: MergedRowJson[]; hosts: HostStatusJson[] };
    assert.deepEqual(
      merged.spaces.map((space) => [space.host, space.label]),
      [
        ['local', 'here'],
        ['gpu', 'there'],
      ],
    );
    assert.deepEqual(
      merged.panes.map((pane) => [pane.host, pane.pane_key.split('::')[0], pane.stale]),
      [
        ['local', 'local', false],
        ['gpu', 'gpu', false],
      ],
    );
    const table = await drover(['mux', 'snapshot', '--all-hosts']);
    assert.equal(table.exitCode, 0, table.stderrText());
    assert.match(table.text(), /^Panes\nHost\s+Space\s+Pane\s+Agent\s+Cwd\n/m);
    assert.match(table.text(), /^gpu\s+there\s+%\d+\s+/m);
    assert.match(table.text(), /^never: unreachable \(down\), never seen; no rows known: /m);
    const sweep = await drover(['pane', 'questions', '--all-hosts', '--json']);
    assert.equal(sweep.exitCode, 0, sweep.stderrText());
    const questions = JSON.parse(sweep.text()) as { matches: unknown[]; skipped: unknown[]; hosts: HostStatusJson[] };
    assert.ok(Array.isArray(questions.matches) && Array.isArray(questions.skipped));
    assert.deepEqual(
      questions.hosts.map((host) => [host.name, host.answered]),
      [
        ['local', true],
        ['gpu', true],
        ['never', false],
      ],
    );
  });

  it('fails (exit 1) when a host is reached and its command fails, still listing the others', async () => {
    ssh.remote('bare-tmux').installDrover('.local/bin/drover');
    assert.equal((await drover(['host', 'add', 'empty', '--ssh', 'bare-tmux'])).exitCode, 0);
    after(async () => drover(['host', 'remove', 'empty']));
    const { exitCode, rows, hosts } = await map();
    assert.equal(exitCode, 1);
    assert.deepEqual(
      rows.map((row) => row.host),
      ['local', 'gpu'],
    );
    const empty = hosts.get('empty')!;
    assert.deepEqual([empty.reachable, empty.answered], [true, false]);
    assert.match(empty.error!, /pane\.map on empty failed/);
    const human = await drover(['pane', 'map', '--all-hosts']);
    assert.equal(human.exitCode, 1);
    assert.match(human.text(), /^empty: failed \(link up\), last seen \d+s ago; no rows known: pane\.map on empty failed/m);
  });
});

/**
 * Two keys of one pane on a zellij host. zellij tells a session's run by when it was created,
 * which it reports to the second, so each reading of the run is a span, and two keys name the
 * same run when their spans meet (the rule drover itself applies): equal text is not required.
 */
function assertSamePane(actual: string, expected: string): void {
  const [got, want] = [parsePaneKey(actual), parsePaneKey(expected)];
  assert.ok(got.ok && want.ok, `${actual} and ${expected} are pane keys`);
  assert.deepEqual([got.key.host, got.key.mux, got.key.paneId], [want.key.host, want.key.mux, want.key.paneId]);
  assert.ok(sameZellijRun(got.key.incarnation, want.key.incarnation), `${actual} names the run of ${expected}`);
}

describe('a host whose drover runs on zellij (a fake ssh, and the fake zellij there)', () => {
  const sandbox = cliSandbox();
  let ssh: FakeSsh;
  let zellij: ZellijWorld;
  const drover = (args: readonly string[]) => sandbox.drover(args, { env: { ...ssh.env, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' }, timeoutMs: 90_000 });

  before(async () => {
    ssh = createFakeSsh();
    zellij = await openZellijWorld();
    const box = ssh.remote('zj-box');
    // That machine's drover chooses zellij and finds the fake on its PATH, as a user's would find zellij.
    const path = `${join(zellij.fake.dir, 'bin')}:${join(box.home, '.local', 'bin')}:${dirname(process.execPath)}:/usr/bin:/bin`;
    box.installDrover('.local/bin/drover', { DROVER_MUX: 'zellij', PATH: path, [ZELLIJ_STATE_ENV]: zellij.fake.statePath });
    const added = await drover(['host', 'add', 'zj', '--ssh', 'zj-box']);
    assert.equal(added.exitCode, 0, added.stderrText());
  });
  after(async () => {
    await zellij.close();
    ssh.cleanup();
  });

  it("names its panes by the host's zellij keys, reads and types through them, and refuses a key of the session's earlier run", async () => {
    await zellij.runFakeAgent('terminal_1');
    const listed = await drover(['pane', 'map', '--all-hosts', '--json']);
    const rows = (JSON.parse(listed.text()) as { rows: MergedRowJson[] }).rows.filter((row) => row.host === 'zj');
    assert.deepEqual(
      rows.map((row) => row.pane_id),
      ['terminal_0', 'terminal_1', 'terminal_2'],
      listed.stderrText(),
    );
    for (const row of rows) assert.match(row.pane_key, new RegExp(`^zj::zellij::\\S+::${row.pane_id}$`));
    const key = rows[1]!.pane_key;

    const captured = await drover(['pane', 'capture', key, '-l', '5', '--json']);
    assert.equal(captured.exitCode, 0, captured.stderrText());
    assertSamePane((JSON.parse(captured.text()) as { pane_key: string }).pane_key, key);

    const delivered = await drover(['pane', 'deliver', key, '--text', 'hello from the hub', '--json']);
    assert.equal(delivered.exitCode, 0, delivered.stderrText());
    const receipt = JSON.parse(delivered.text()) as { status: string; pane_key: string };
    assert.equal(receipt.status, 'submitted');
    assertSamePane(receipt.pane_key, key);
    const typed = zellij.fake.read().inputs.filter((input) => input.paneId === 'terminal_1' && input.kind === 'text');
    assert.deepEqual(
      typed.map((input) => input.payload.join('')).filter((text) => text.includes('hello from the hub')),
      ['hello from the hub'],
      'typed there once, under the pane the key names',
    );

    // The session starts again without its first pane: the new run's terminal_1 is another pane.
    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const inputs = zellij.fake.read().inputs.length;
    const refused = await drover(['pane', 'deliver', key, '--text', 'not for this pane', '--json']);
    assert.equal(refused.exitCode, 6, refused.stderrText());
    const error = (JSON.parse(refused.text()) as { error: { code: string; delivery: string } }).error;
    assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent']);
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed there');
  });
});

// Without sshd these are skipped, except in CI, which installs it: there they must run.
const unavailable = sshdUnavailable();
const skip = unavailable !== undefined && process.env.CI !== 'true' ? `skipped: ${unavailable}` : false;

describe('views across hosts through a real OpenSSH server on loopback', { skip }, () => {
  const sandbox = cliSandbox();
  let sshd: TestSshd;
  let halted = false;
  let env: NodeJS.ProcessEnv;
  const drover = (args: readonly string[]) => sandbox.drover(args, { env, timeoutMs: 90_000 });

  before(async () => {
    sshd = await startSshd();
    env = { DROVER_SSH_BIN: sshd.sshWrapper, XDG_CONFIG_HOME: '', DROVER_CONFIG: '' };
    // The other machine's own default tmux server and drover (this build), its state in the login's home.
    const remoteDrover = sshd.installDrover(CLI_PATH);
    await sshd.exec(`TMUX_TMPDIR='${sshd.home}' tmux new-session -d -s box-session -x 80 -y 24`);
    const started = await run(['tmux', 'new-session', '-d', '-s', 'here', '-x', '80', '-y', '24', 'cat'], { env: sandbox.env });
    assert.equal(started.exitCode, 0, started.stderrText());
    const added = await drover(['host', 'add', 'box', '--ssh', sshd.alias, '--drover', remoteDrover]);
    assert.equal(added.exitCode, 0, added.stderrText());
  });
  after(async () => {
    await run(['tmux', 'kill-server'], { env: sandbox.env });
    if (!halted) await sshd?.exec(`TMUX_TMPDIR='${sshd.home}' tmux kill-server`).catch(() => undefined);
    await sshd?.stop();
  });

  it('lists the host’s panes live, then, with its sshd stopped, as stale with their age', async () => {
    const live = await drover(['pane', 'map', '--all-hosts', '--json']);
    assert.equal(live.exitCode, 0, live.stderrText());
    const first = JSON.parse(live.text()) as { rows: MergedRowJson[]; hosts: HostStatusJson[] };
    assert.deepEqual(
      first.rows.map((row) => [row.host, row.session, row.stale]),
      [
        ['local', 'here', false],
        ['box', 'box-session', false],
      ],
    );
    const boxRow = first.rows[1]!;
    assert.match(boxRow.pane_key, /^box::tmux::/);

    // The machine goes off: its tmux server with it (the login's processes end with their connection).
    await sshd.exec(`TMUX_TMPDIR='${sshd.home}' tmux kill-server`);
    await sshd.halt();
    halted = true;
    const off = await drover(['pane', 'map', '--all-hosts', '--json']);
    assert.equal(off.exitCode, 0, off.stderrText());
    const second = JSON.parse(off.text()) as { rows: MergedRowJson[]; hosts: HostStatusJson[] };
    const stale = second.rows.filter((row) => row.host === 'box');
    assert.deepEqual(
      stale.map((row) => [row.pane_key, row.stale, row.seen_at]),
      [[boxRow.pane_key, true, boxRow.seen_at]],
    );
    assert.ok(stale[0]!.stale_age_ms! > 0);
    const box = second.hosts.find((host) => host.name === 'box')!;
    assert.deepEqual([box.reachable, box.answered, box.last_seen_at], [false, false, boxRow.seen_at]);
    assert.notEqual(box.link_state, 'up');
    assert.ok(box.error !== null);
  });
});
