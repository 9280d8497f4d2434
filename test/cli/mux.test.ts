import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { MUX_CAPABILITIES } from '../../src/mux/index.js';
import { LongLivedChild, type RunResult } from '../../src/process/index.js';
import type { Server } from '../../src/tmux/index.js';
import { createFakeZellij, FAKE_ZELLIJ_SESSION } from '../fixtures/zellij/harness.js';
import { seed } from '../mux/tmux-world.js';
import { cliSandbox } from '../support/cli.js';
import { startTestServer, useTestServer } from '../support/tmux.js';

interface ProbeDocument {
  mux: string;
  chosen_by: string;
  endpoint: Record<string, string | null>;
  verdict: string;
  reachable: boolean;
  passed: number;
  failed: number;
  skipped: number;
  checks: { check: string; status: string; problems: string[]; skipped: string | null }[];
}

interface SnapshotDocument {
  mux: string;
  chosen_by: string;
  endpoint: Record<string, string | null>;
  incarnation: string;
  spaces: { space_id: string; label: string; focused: boolean; tab_count: number; pane_count: number }[];
  tabs: { tab_id: string; space_id: string; number: number; label: string; size: { width: number; height: number } | null }[];
  panes: {
    pane_id: string;
    pane_key: string;
    tab_id: string;
    agent: string;
    status: string;
    pane_label: string | null;
    terminal_title: string | null;
    alive: boolean;
    geometry: { x: number; y: number; width: number; height: number } | null;
  }[];
}

/** The JSON document of a run that must have exited with `code`. */
function json<T>(result: RunResult, code = 0): T {
  assert.equal(result.exitCode, code, `exit ${result.exitCode}: ${result.stderrText()}${result.text()}`);
  return JSON.parse(result.text()) as T;
}

/** The eleven read-only checks, all passing but those the multiplexer's declaration makes inapplicable, as `drover mux probe` prints them. */
function assertAllPass(probe: ProbeDocument, inapplicable: readonly string[] = []): void {
  assert.equal(probe.verdict, 'pass', JSON.stringify(probe.checks.filter((check) => check.status !== 'pass' && !inapplicable.includes(check.check))));
  assert.deepEqual([probe.passed, probe.failed, probe.skipped], [11 - inapplicable.length, 0, inapplicable.length]);
  assert.deepEqual(probe.checks.filter((check) => check.skipped !== null).map((check) => check.check), inapplicable);
  assert.equal(probe.checks[0]?.check, 'the multiplexer is reachable');
}

describe('drover mux on an owned tmux server', () => {
  const sandbox = cliSandbox();
  const owned = useTestServer();
  let socket: string;
  before(async () => {
    await seed(owned.server);
    socket = owned.server.endpoint.socketPath;
  });

  it('publishes the snapshot of the server -S names, in JSON and as a tree', async () => {
    const snapshot = json<SnapshotDocument>(await sandbox.drover(['-S', socket, 'mux', 'snapshot', '--json']));
    assert.equal(snapshot.mux, 'tmux');
    assert.equal(snapshot.chosen_by, '-S');
    assert.deepEqual([snapshot.endpoint.socket_path, snapshot.endpoint.source], [socket, '-S']);
    assert.deepEqual(
      snapshot.spaces.map((space) => [space.label, space.tab_count, space.pane_count]).sort(),
      [
        ['scratch', 1, 1],
        ['work', 2, 3],
      ],
    );
    const work = snapshot.spaces.find((space) => space.label === 'work')!;
    assert.deepEqual(snapshot.tabs.filter((tab) => tab.space_id === work.space_id).map((tab) => [tab.number, tab.label]), [
      [1, 'editor'],
      [2, 'logs'],
    ]);
    assert.ok(snapshot.panes.every((pane) => /^%\d+$/.test(pane.pane_id) && pane.agent === 'shell' && pane.status === 'unknown' && pane.alive));

    const text = await sandbox.drover(['-S', socket, 'mux', 'snapshot']);
    assert.equal(text.exitCode, 0, text.stderrText());
    const lines = text.text().split('\n');
    assert.equal(lines[0], `tmux at tmux -S ${socket} (from -S)`);
    assert.ok(lines.some((line) => /^work \$\d+( \(focused\))? {2}2 tabs, 3 panes$/.test(line)), text.text());
    assert.ok(lines.some((line) => /^ {2}1: editor @\d+ \*$/.test(line)), text.text());
    assert.equal(lines.filter((line) => /^ {4}%\d+ shell\/unknown/.test(line)).length, 4);
  });

  it('passes every read-only check live, and --mux tmux agrees with DROVER_MUX and $TMUX', async () => {
    const flagged = json<ProbeDocument>(await sandbox.drover(['-S', socket, 'mux', 'probe', '--mux', 'tmux', '--json']));
    assertAllPass(flagged);
    assert.equal(flagged.chosen_by, '--mux');

    const configured = json<ProbeDocument>(await sandbox.drover(['mux', 'probe', '--json'], { env: { DROVER_MUX: 'tmux', DROVER_MUX_ENDPOINT_TMUX: socket } }));
    assertAllPass(configured);
    assert.deepEqual([configured.chosen_by, configured.endpoint.source], ['DROVER_MUX', 'DROVER_MUX_ENDPOINT_TMUX']);

    const inside = await sandbox.drover(['mux', 'probe'], { env: { TMUX: `${socket},1,0` } });
    assert.equal(inside.exitCode, 0, inside.text());
    assert.match(inside.text(), new RegExp(`^probing tmux at tmux -S ${socket} \\(from \\$TMUX\\) \\(read-only checks\\)\n`));
    assert.equal(inside.text().match(/^✓ /gm)?.length, 11);
    assert.match(inside.text(), /\n11 of 11 applicable checks passed\n$/);
  });

  it('refuses -S beside another --mux, and an unknown --mux, as usage errors', async () => {
    const mixed = await sandbox.drover(['-S', socket, 'mux', 'snapshot', '--mux', 'herdr']);
    assert.equal(mixed.exitCode, 2);
    assert.match(mixed.stderrText(), /-S names a tmux server, but --mux chose herdr/);
    const unknown = await sandbox.drover(['mux', 'probe', '--mux', 'screen']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderrText(), /Allowed choices are tmux, herdr, zellij/);
  });
});

describe('drover mux against the server drover up started', () => {
  const sandbox = cliSandbox();

  it('finds the server through drover up when there is no $TMUX, with or without --mux tmux', async () => {
    const up = await sandbox.drover(['up', '--json']);
    try {
      assert.equal(up.exitCode, 0, up.stderrText());
      const socket = (JSON.parse(up.text()) as { socket_path: string }).socket_path;
      const probe = json<ProbeDocument>(await sandbox.drover(['mux', 'probe', '--mux', 'tmux', '--json']));
      assertAllPass(probe);
      assert.deepEqual([probe.endpoint.socket_path, probe.endpoint.source], [socket, 'the server drover up started']);
      const snapshot = json<SnapshotDocument>(await sandbox.drover(['mux', 'snapshot', '--json']));
      assert.deepEqual([snapshot.mux, snapshot.chosen_by, snapshot.endpoint.socket_path, snapshot.endpoint.source], ['tmux', 'default', socket, 'the server drover up started']);
    } finally {
      await sandbox.drover(['down']);
    }
  });
});

describe('a tmux server that dies', () => {
  const sandbox = cliSandbox();
  let server: Server;
  before(async () => {
    server = await startTestServer();
    await seed(server);
  });
  after(() => server.close());

  it('answers unreachable when killed mid-call, and a probe of it proves nothing', async () => {
    const socket = server.endpoint.socketPath;
    // The server dies between the listing's first and second command: inside the call, every time.
    await server.run(['set-hook', '-g', 'after-list-sessions', 'run-shell "kill -9 #{pid}"']);
    const killed = json<{ error: { code: string; mux: string; message: string } }>(await sandbox.drover(['-S', socket, 'mux', 'snapshot', '--json']), 1);
    assert.deepEqual([killed.error.code, killed.error.mux], ['unreachable', 'tmux']);
    assert.match(killed.error.message, /server exited unexpectedly|lost server/);

    const probe = json<ProbeDocument>(await sandbox.drover(['-S', socket, 'mux', 'probe', '--json']), 1);
    assert.equal(probe.verdict, 'proves_nothing');
    assert.equal(probe.reachable, false);
    assert.deepEqual([probe.passed, probe.failed, probe.skipped], [0, 1, 10]);
    assert.match(probe.checks[0]!.problems[0]!, /^tmux is not reachable: /);

    const text = await sandbox.drover(['-S', socket, 'mux', 'probe']);
    assert.equal(text.exitCode, 1);
    assert.match(text.text(), /^✗ the multiplexer is reachable\n {4}tmux is not reachable: .+\ntmux could not be read, so this probe proves nothing \(10 checks not run\)\n$/m);
    assert.doesNotMatch(text.text(), /passed/);
  });
});

/** The fake herdr server as its own process, answering perturbations on stdin. */
async function startHerdr(socketPath: string): Promise<{ child: LongLivedChild; op(name: string, ...args: unknown[]): Promise<unknown> }> {
  const script = fileURLToPath(new URL('../fixtures/herdr/main.js', import.meta.url));
  const child = await LongLivedChild.start([process.execPath, script, '--socket', socketPath]);
  const lines: Interface = createInterface({ input: child.stdout });
  const next = (): Promise<Record<string, unknown>> => new Promise((resolve) => lines.once('line', (line) => resolve(JSON.parse(line) as Record<string, unknown>)));
  assert.deepEqual(await next(), { ready: true, socket: socketPath });
  return {
    child,
    async op(name, ...args) {
      const answer = next();
      child.stdin.write(`${JSON.stringify({ op: name, args })}\n`);
      const { ok, value, error } = await answer;
      if (ok !== true) throw new Error(`the fake herdr refused ${name}: ${String(error)}`);
      return value;
    },
  };
}

describe('drover mux on the herdr fake', () => {
  const sandbox = cliSandbox();
  const socketPath = join(sandbox.dir, 'herdr.sock');
  const env = { DROVER_MUX: 'herdr', HERDR_SOCKET_PATH: socketPath };
  let herdr: Awaited<ReturnType<typeof startHerdr>>;
  before(async () => {
    herdr = await startHerdr(socketPath);
  });
  after(() => herdr.child.stop());

  it('publishes agents, labels and titles as herdr reports them, live', async () => {
    await herdr.op('setAgentStatus', 'w1:p1', 'blocked');
    const snapshot = json<SnapshotDocument>(await sandbox.drover(['mux', 'snapshot', '--json'], { env }));
    assert.deepEqual([snapshot.mux, snapshot.chosen_by, snapshot.endpoint.socket_path, snapshot.endpoint.source], ['herdr', 'DROVER_MUX', socketPath, 'HERDR_SOCKET_PATH']);
    assert.deepEqual(
      snapshot.spaces.map((space) => [space.space_id, space.label, space.focused, space.tab_count, space.pane_count]),
      [
        ['w1', 'agents', true, 2, 3],
        ['w2', 'scratch', false, 1, 1],
      ],
    );
    const lead = snapshot.panes.find((pane) => pane.pane_id === 'w1:p1');
    assert.deepEqual([lead?.agent, lead?.status, lead?.terminal_title, lead?.pane_label], ['claude', 'blocked', 'claude: refactor', null]);
    assert.equal(snapshot.panes.find((pane) => pane.pane_id === 'w1:p2')?.pane_label, 'reviewer');
    // Each pane carries its key on the run read, as every row that names a pane does.
    for (const pane of snapshot.panes) assert.equal(pane.pane_key, `local::herdr::${snapshot.incarnation}::${pane.pane_id}`);
    // Where each pane sits in its tab, from herdr's layouts: the tab's panes tile it.
    for (const tab of snapshot.tabs) {
      const tiles = snapshot.panes.filter((pane) => pane.tab_id === tab.tab_id).map((pane) => pane.geometry!);
      assert.equal(tiles.reduce((cells, rect) => cells + rect.width * rect.height, 0), tab.size!.width * tab.size!.height, tab.tab_id);
    }

    const text = await sandbox.drover(['mux', 'snapshot'], { env: { HERDR_ENV: '1', HERDR_SOCKET_PATH: socketPath } });
    assert.equal(text.exitCode, 0, text.stderrText());
    assert.match(text.text(), new RegExp(`^herdr at herdr socket ${socketPath} \\(from HERDR_SOCKET_PATH\\)\nagents w1 \\(focused\\)  2 tabs, 3 panes\n`));
    assert.match(text.text(), /\n {4}w1:p1 claude\/blocked \* {2}\/home\/op\/project {2}title "claude: refactor"\n/);
    assert.match(text.text(), /\n {4}w1:p2 \S+ {2}\/home\/op\/project {2}label "reviewer"\n/);
  });

  it('passes every read-only check, and proves nothing once herdr is gone', async () => {
    // herdr reports no process for a pane, so that check does not apply.
    assertAllPass(json<ProbeDocument>(await sandbox.drover(['mux', 'probe', '--json'], { env })), ["a pane's process reads back as the snapshot reports the pane"]);
    await herdr.child.stop();
    const gone = await sandbox.drover(['mux', 'probe'], { env });
    assert.equal(gone.exitCode, 1);
    assert.match(gone.text(), /^✗ the multiplexer is reachable\n {4}herdr is not reachable: cannot connect to herdr at /m);
    assert.match(gone.text(), /\nherdr could not be read, so this probe proves nothing \(10 checks not run\)\n$/);
  });
});

describe('drover mux on the zellij fake', () => {
  const sandbox = cliSandbox();
  const fake = createFakeZellij();
  after(() => fake.cleanup());

  it('probes and lists the one session through the zellij binary DROVER_ZELLIJ_BIN names', async () => {
    // The fake is not on PATH: only the override can find it.
    const env = { DROVER_ZELLIJ_BIN: fake.executable, DROVER_FAKE_ZELLIJ_STATE: fake.statePath };
    assertAllPass(json<ProbeDocument>(await sandbox.drover(['mux', 'probe', '--mux', 'zellij', '--json'], { env })), ['every pane sits inside its tab, in whole cells']);
    const snapshot = json<SnapshotDocument>(await sandbox.drover(['mux', 'snapshot', '--json'], { env: { ...env, DROVER_MUX: 'zellij', DROVER_MUX_ENDPOINT_ZELLIJ: FAKE_ZELLIJ_SESSION } }));
    assert.deepEqual(snapshot.endpoint, { description: `zellij session ${FAKE_ZELLIJ_SESSION}`, session: FAKE_ZELLIJ_SESSION });
    assert.deepEqual(snapshot.spaces.map((space) => [space.space_id, space.label, space.tab_count, space.pane_count]), [['session', FAKE_ZELLIJ_SESSION, 2, 3]]);
    assert.deepEqual(snapshot.panes.map((pane) => [pane.pane_id, pane.tab_id, pane.terminal_title]), [
      ['terminal_0', 'tab_0', 'build watcher'],
      ['terminal_1', 'tab_0', null],
      ['terminal_2', 'tab_1', null],
    ]);
  });
});

describe('drover mux capabilities', () => {
  const sandbox = cliSandbox();

  it('publishes every declaration without any multiplexer running', async () => {
    const document = json<{ muxes: { mux: string; supports: Record<string, boolean>; unsupported_keys: string[]; notes: Record<string, string>; facts: { topology_latency: { kind: string; ms?: number }; spaces: string } }[] }>(
      await sandbox.drover(['mux', 'capabilities', '--json']),
    );
    assert.deepEqual(document.muxes.map((entry) => entry.mux), ['tmux', 'herdr', 'zellij']);
    const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
    for (const entry of document.muxes) assert.deepEqual(Object.keys(entry.supports).sort(), MUX_CAPABILITIES.map(snakeCase).sort());
    const [tmux, herdr, zellij] = document.muxes;
    assert.deepEqual([tmux!.supports.push_topology_events, tmux!.supports.agent_detection, tmux!.unsupported_keys], [true, false, []]);
    assert.deepEqual(zellij!.unsupported_keys, []);
    assert.match(tmux!.notes.agent_detection!, /foreground command/);
    assert.deepEqual([herdr!.facts, herdr!.unsupported_keys.includes('PageUp')], [{ topology_latency: { kind: 'push' }, spaces: 'many' }, true]);
    assert.deepEqual(zellij!.facts, { topology_latency: { kind: 'bounded', ms: 12_000 }, spaces: 'one' });
    assert.equal(zellij!.supports.set_focus, false);
  });

  it('narrows to one multiplexer with --mux, in text', async () => {
    const text = await sandbox.drover(['mux', 'capabilities', '--mux', 'zellij']);
    assert.equal(text.exitCode, 0, text.stderrText());
    const lines = text.text().split('\n');
    assert.equal(lines[0], 'zellij: one space, topology changes seen within 12000 ms');
    assert.equal(lines.filter((line) => /^ {2}[✓✗] /.test(line)).length, MUX_CAPABILITIES.length);
    assert.ok(lines.includes("  ✗ setFocus — zellij's focus-pane-id does nothing, and focusing a tab instead would show the wrong pane."));
    assert.ok(lines.includes('  ✓ typeText — zellij takes text as one command argument, so text of 128 KiB or more is refused, never split.'));
    assert.doesNotMatch(text.text(), /^tmux|^herdr/m);
  });
});

describe('drover mux without a multiplexer to choose', () => {
  const sandbox = cliSandbox();

  it('outside any session looks for tmux by the endpoint rule, and says how to choose when the environment is ambiguous', async () => {
    const none = await sandbox.drover(['mux', 'snapshot']);
    assert.equal(none.exitCode, 1);
    assert.equal(none.text(), '');
    assert.match(none.stderrText(), /^drover: error: tmux is not reachable at tmux -L default \(from tmux's default socket\): .+; start one with `.*drover(\.js)? up` or name one with -L\/-S\n$/);
    const both = await sandbox.drover(['mux', 'probe', '--json'], { env: { TMUX: join(sandbox.dir, 'none.sock'), HERDR_ENV: '1' } });
    assert.equal(both.exitCode, 1);
    assert.deepEqual(JSON.parse(both.text()), { error: { code: 'refused', message: 'both HERDR_ENV and TMUX are set; set DROVER_MUX to disambiguate', phase: 'select', delivery: 'not_sent' } });
    const unknown = await sandbox.drover(['mux', 'probe', '--json'], { env: { DROVER_MUX: 'screen' } });
    assert.equal(unknown.exitCode, 1);
    assert.match((JSON.parse(unknown.text()) as { error: { message: string } }).error.message, /DROVER_MUX="screen" names no multiplexer drover supports; valid names: tmux, herdr, zellij/);
  });
});
