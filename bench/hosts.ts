/**
 * drover across machines, over a real OpenSSH server: three hosts, each a Unix user made for the
 * run and reached through its own sshd on 127.0.0.1 (a free port, throwaway keys), with 50 `cat`
 * panes on that user's own tmux server and this build's CLI as its `drover`. Side by side in one
 * run, each sample taking its turn with the others, after ten untimed turns of them all (the
 * hosts' long-lived drovers and this process warmed up alike):
 *
 * - the merged pane map of the three hosts over their long-lived links (viewAcrossHosts, as
 *   `pane map --all-hosts` does it) vs. the naive way, one fresh
 *   `ssh HOST drover pane map --json` per host (all three at once, its best case), vs. each
 *   host's own map: in-process on its server, bound as the library binds by default (a tmux
 *   client per command) and over a held control connection (as the link's drover binds it), and
 *   its CLI run on that host as its user. The goal compares the merged map with the slowest
 *   in-process one of the library's default binding;
 *   one host's map alone over its link beside its own map separates the link's cost from that of
 *   three hosts sharing this machine's cores.
 * - one small request (`ping`) over a link vs. a fresh ssh running `drover --version` there, and
 *   a fresh `ssh HOST true` (ssh alone).
 * - a delivery into a `cat` pane on a host over its link (the host's own `pane deliver`, with a
 *   delivery id) vs. the same delivery here, in-process, into a `cat` pane of a server of this user,
 *   bound over a control connection as the host's drover binds its own.
 *
 * Correctness first: every view lists every host's 50 panes, the same panes, none stale; every
 * delivery is submitted and found in its pane. Needs root (to make the users) and sshd; without
 * them the bench says so and fails rather than print figures of something else.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hosts, RememberedRowsStore, rowListsOf, viewAcrossHosts, type HostEntry, type HostRow, type HostViewRequest, type MergedView } from '../src/hosts/index.js';
import { createMuxPort, TmuxAdapter } from '../src/mux/index.js';
import { mapRowJson, paneDeliver, paneMap, renderTable } from '../src/panes/index.js';
import { messageOf, run as runChild, type RunResult } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import { startSshd, sshdUnavailable, type TestSshd } from '../test/fixtures/ssh/sshd.js';
import { eventually } from '../test/support/wait.js';
import { log, median, percentile, round, sampleInTurns } from './support.js';

const HOSTS = 3;
const PANES_PER_HOST = 50;
const MAP_SAMPLES = 25;
/** Untimed turns before each timed set: the hosts' long-lived drovers warm up as this process does. */
const WARMUP_TURNS = 10;
const RTT_SAMPLES = 30;
const DELIVERIES = 30;
const MERGED_GOAL = 1.5;
const RTT_GOAL = 10;
const CLI = fileURLToPath(new URL('../cli/drover.js', import.meta.url));
const MAP_REQUEST: HostViewRequest = {
  method: 'pane.map',
  params: { all_sessions: true },
  hostBudgetMs: 60_000,
  listNames: ['rows'],
};

/** The timings of one run, each sample in milliseconds. */
export interface HostsTimings {
  readonly mergedMap: readonly number[];
  readonly naiveMap: readonly number[];
  /** The first host's map alone over its link. */
  readonly singleLinkMap: readonly number[];
  /** Each host's in-process map on its own server, bound as the library binds by default. */
  readonly localMaps: readonly (readonly number[])[];
  /** The same over a held control connection, as the link's drover binds its server. */
  readonly localControlMaps: readonly (readonly number[])[];
  /** Each host's CLI map, run there as its user. */
  readonly localCliMaps: readonly (readonly number[])[];
  readonly linkRtt: readonly number[];
  readonly freshSshDrover: readonly number[];
  readonly freshSshTrue: readonly number[];
  readonly remoteDeliver: readonly number[];
  readonly localDeliver: readonly number[];
}

/**
 * The JSON line's figures from the samples: medians of the maps and round trips (the slowest
 * host's for the single maps), p50 and p95 of the deliveries, and each ratio named numerator
 * over denominator.
 */
export function hostsFigures(timings: HostsTimings): Record<string, number | boolean> {
  const mergedMs = median(timings.mergedMap);
  const naiveMs = median(timings.naiveMap);
  const localMs = Math.max(...timings.localMaps.map(median));
  const localCliMs = Math.max(...timings.localCliMaps.map(median));
  const localControlMs = Math.max(...timings.localControlMaps.map(median));
  const singleMs = median(timings.singleLinkMap);
  const firstLocalMs = median(timings.localMaps[0] ?? []);
  const rttMs = median(timings.linkRtt);
  const freshMs = median(timings.freshSshDrover);
  const remote = { p50: percentile(timings.remoteDeliver, 50), p95: percentile(timings.remoteDeliver, 95) };
  const local = { p50: percentile(timings.localDeliver, 50), p95: percentile(timings.localDeliver, 95) };
  return {
    merged_map_over_local_map: round(mergedMs / localMs, 2),
    naive_map_over_merged_map: round(naiveMs / mergedMs, 2),
    merged_map_over_local_control_map: round(mergedMs / localControlMs, 2),
    merged_map_over_local_cli_map: round(mergedMs / localCliMs, 2),
    one_host_link_map_over_its_local_map: round(singleMs / firstLocalMs, 2),
    fresh_ssh_over_link_rtt: round(freshMs / rttMs, 1),
    remote_deliver_p50_over_local_deliver_p50: round(remote.p50 / local.p50, 2),
    merged_map_ms: round(mergedMs, 1),
    naive_map_ms: round(naiveMs, 1),
    slowest_local_map_ms: round(localMs, 1),
    slowest_local_control_map_ms: round(localControlMs, 1),
    slowest_local_cli_map_ms: round(localCliMs, 1),
    one_host_link_map_ms: round(singleMs, 1),
    one_host_local_map_ms: round(firstLocalMs, 1),
    link_rtt_ms: round(rttMs, 2),
    fresh_ssh_drover_ms: round(freshMs, 1),
    fresh_ssh_true_ms: round(median(timings.freshSshTrue), 1),
    remote_deliver_p50_ms: round(remote.p50, 1),
    remote_deliver_p95_ms: round(remote.p95, 1),
    local_deliver_p50_ms: round(local.p50, 1),
    local_deliver_p95_ms: round(local.p95, 1),
    merged_map_goal_met: mergedMs / localMs <= MERGED_GOAL,
    link_rtt_goal_met: freshMs / rttMs >= RTT_GOAL,
  };
}

function checked(result: RunResult, what: string): RunResult {
  if (!result.ok) throw new Error(`${what} failed (${result.exitCode}): ${result.stderrText()}`);
  return result;
}

/** One machine of the run: its sshd and login, its drover, its tmux server's socket. */
interface BenchHost {
  readonly name: string;
  readonly sshd: TestSshd;
  readonly user: string;
  readonly drover: string;
  readonly socket: string;
}

/** Makes host `index`: its sshd and user, an alias naming it, and 50 `cat` panes on its own tmux server. */
async function makeHost(index: number, sshds: TestSshd[], uids: string[]): Promise<BenchHost> {
  const sshd = await startSshd();
  sshds.push(sshd);
  const name = `host-${index}`;
  sshd.addAlias(name, []);
  const drover = sshd.installDrover(CLI);
  const [user, uid] = (await sshd.exec('id -un; id -u')).trim().split('\n') as [string, string];
  uids.push(uid);
  // The user's default server, where its drover looks (the drover program sets TMUX_TMPDIR to its home).
  await sshd.exec(
    `export TMUX_TMPDIR='${sshd.home}'; tmux new-session -d -s bench -x 120 -y 30 cat && i=1 && while [ $i -lt ${PANES_PER_HOST} ]; do tmux new-window -d -t bench cat || exit 1; i=$((i+1)); done`,
  );
  return { name, sshd, user, drover, socket: join(sshd.home, `tmux-${uid}`, 'default') };
}

/** One ssh client config naming every host, behind one wrapper: what DROVER_SSH_BIN runs. */
function sshClient(dir: string, hosts: readonly BenchHost[]): string {
  const config = join(dir, 'ssh_config');
  writeFileSync(config, hosts.map((host) => readFileSync(join(host.sshd.dir, 'ssh_config'), 'utf8')).join('\n'));
  const wrapper = join(dir, 'ssh');
  writeFileSync(wrapper, `#!/bin/sh\nexec /usr/bin/ssh -F '${config}' "$@"\n`, { mode: 0o755 });
  return wrapper;
}

function paneIds(rows: readonly HostRow[]): string[] {
  return rows.map((row) => String(row.pane_id)).sort();
}

/** Every host's 50 panes, live, the same as its own map; pane keys naming the host. */
function checkMerged(view: MergedView, expected: ReadonlyMap<string, string[]>): void {
  const rows = view.lists.rows ?? [];
  if (!view.complete) throw new Error(`correctness: the merged map is incomplete: ${view.hosts.map((host) => `${host.name}: ${host.error ?? 'ok'}`).join('; ')}`);
  for (const [host, ids] of expected) {
    const mine = rows.filter((row) => row.host === host);
    if (mine.some((row) => row.stale)) throw new Error(`correctness: ${host}'s rows are stale in the merged map`);
    if (JSON.stringify(paneIds(mine.map((row) => row.row))) !== JSON.stringify(ids)) throw new Error(`correctness: the merged map's panes of ${host} are not its own map's`);
    const foreign = mine.find((row) => !String(row.row.pane_key).startsWith(`${host}::`));
    if (foreign !== undefined) throw new Error(`correctness: a row of ${host} has the pane key ${String(foreign.row.pane_key)}`);
  }
  if (rows.length !== HOSTS * PANES_PER_HOST) throw new Error(`correctness: the merged map has ${rows.length} rows, expected ${HOSTS * PANES_PER_HOST}`);
}

export async function run(): Promise<Record<string, number | boolean>> {
  const unavailable = sshdUnavailable() ?? (process.getuid?.() === 0 ? undefined : 'it must run as root, to make a Unix user for each host');
  if (unavailable !== undefined) throw new Error(`cannot run, no figures: ${unavailable}`);
  log(`hosts: ${HOSTS} hosts (each a Unix user behind its own sshd on 127.0.0.1), ${PANES_PER_HOST} cat panes each`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.TMUX;
  delete env.TMUX_PANE;
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'drover-bench-hosts-')));
  const sshds: TestSshd[] = [];
  let hosts: Hosts | undefined;
  let here: Server | undefined;
  // Each host's tmux server, bound from here (root may drive any user's server) for its own map.
  const servers: Server[] = [];
  // The same servers bound again over a control connection, as each host's drover rpc binds its own.
  const controlServers: Server[] = [];
  const uids: string[] = [];
  try {
    const machines: BenchHost[] = [];
    for (let index = 0; index < HOSTS; index += 1) machines.push(await makeHost(index, sshds, uids));
    const ssh = sshClient(dir, machines);
    const entries: HostEntry[] = machines.map((host) => ({ name: host.name, ssh: host.name, drover: host.drover }));
    hosts = Hosts.of(entries, { env: { ...env, DROVER_SSH_BIN: ssh } });
    const store = new RememberedRowsStore(join(dir, 'remembered'));
    for (const host of machines) servers.push(await Server.open(Endpoint.fromSocketPath(host.socket), { env }));
    const ports = servers.map((server) => createMuxPort(new TmuxAdapter({ server })));
    for (const host of machines) controlServers.push(await Server.open(Endpoint.fromSocketPath(host.socket), { env, transport: 'control' }));
    const controlPorts = controlServers.map((server) => createMuxPort(new TmuxAdapter({ server })));
    const freshSsh = (host: BenchHost, command: string): Promise<RunResult> => runChild([ssh, '-T', '-o', 'BatchMode=yes', '--', host.name, command], { env, timeoutMs: 60_000, limits: { stdoutBytes: 16 * 1024 * 1024 } });

    const localMap = async (index: number, over = ports): Promise<HostRow[]> => (await paneMap(over[index]!, { kind: 'all' }, { env })).map(mapRowJson) as unknown as HostRow[];
    const localCliMap = async (host: BenchHost): Promise<HostRow[]> => {
      const result = await runChild(['runuser', '-u', host.user, '--', host.drover, 'pane', 'map', '--json', '--all-sessions'], { env: { PATH: env.PATH, HOME: host.sshd.home, LANG: 'C.UTF-8' }, timeoutMs: 60_000, limits: { stdoutBytes: 16 * 1024 * 1024 } });
      return JSON.parse(checked(result, `drover pane map as ${host.user}`).text()) as HostRow[];
    };
    // This machine, the hub, holds no panes of its own here: its part of the view is empty.
    const mergedMap = (): Promise<MergedView> => viewAcrossHosts(hosts!, MAP_REQUEST, store, () => Promise.resolve([]));
    const naiveMap = (): Promise<HostRow[][]> =>
      Promise.all(machines.map(async (host) => JSON.parse(checked(await freshSsh(host, `'${host.drover}' pane map --json --all-sessions`), `ssh ${host.name} drover pane map`).text()) as HostRow[]));

    // Correctness: each host's own map (in-process and its CLI), the merged one and the naive one list the same panes.
    await hosts.settled({ timeoutMs: 60_000 });
    const expected = new Map<string, string[]>();
    for (const [index, host] of machines.entries()) {
      const ids = paneIds(await localMap(index));
      if (ids.length !== PANES_PER_HOST) throw new Error(`correctness: ${host.name}'s own map lists ${ids.length} panes, expected ${PANES_PER_HOST}`);
      if (JSON.stringify(paneIds(await localCliMap(host))) !== JSON.stringify(ids)) throw new Error(`correctness: ${host.name}'s CLI map differs from its in-process map`);
      if (JSON.stringify(paneIds(await localMap(index, controlPorts))) !== JSON.stringify(ids)) throw new Error(`correctness: ${host.name}'s map over a control connection differs from its in-process map`);
      expected.set(host.name, ids);
    }
    checkMerged(await mergedMap(), expected);
    for (const [index, rows] of (await naiveMap()).entries()) {
      if (JSON.stringify(paneIds(rows)) !== JSON.stringify(expected.get(machines[index]!.name))) throw new Error(`correctness: the naive map of ${machines[index]!.name} differs from its own map`);
    }

    const maps: Record<string, number[]> = await sampleInTurns<string>(MAP_SAMPLES, {
      merged: mergedMap,
      naive: naiveMap,
      single: async () => {
        const reply = await hosts!.link(machines[0]!.name).request('pane.map', MAP_REQUEST.params, { timeoutMs: 60_000 });
        if (!('result' in reply) || rowListsOf(reply.result, MAP_REQUEST.listNames).rows!.length !== PANES_PER_HOST) throw new Error(`correctness: host-0's map over its link: ${JSON.stringify(reply).slice(0, 200)}`);
      },
      ...Object.fromEntries(machines.map((host, index) => [`local-${index}`, () => localMap(index)])),
      ...Object.fromEntries(machines.map((host, index) => [`control-${index}`, () => localMap(index, controlPorts)])),
      ...Object.fromEntries(machines.map((host, index) => [`cli-${index}`, () => localCliMap(host)])),
    }, { warmupTurns: WARMUP_TURNS });

    const [first] = machines as [BenchHost];
    const link = hosts.link(first.name);
    const rtt = await sampleInTurns(RTT_SAMPLES, {
      link: async () => {
        const reply = await link.request('ping', {}, { timeoutMs: 10_000 });
        if (!('result' in reply)) throw new Error(`ping over the link failed: ${JSON.stringify(reply)}`);
      },
      drover: async () => checked(await freshSsh(first, `'${first.drover}' --version`), `ssh ${first.name} drover --version`),
      true: async () => checked(await freshSsh(first, 'true'), `ssh ${first.name} true`),
    }, { warmupTurns: WARMUP_TURNS });

    // Deliveries: one cat pane on the first host over its link, one on a server of this user here.
    here = await Server.start({ env, transport: 'control' });
    const hereSession = await here.newSession({ name: 'bench', width: 120, height: 30, cwd: dir, command: ['cat'] });
    const herePane = (await hereSession.listPanes())[0]!.id;
    const herePort = createMuxPort(new TmuxAdapter({ server: here }));
    const therePane = expected.get(first.name)![0]!;
    let sent = 0;
    const texts: { remote: string[]; local: string[] } = { remote: [], local: [] };
    const deliveries = await sampleInTurns(DELIVERIES, {
      remote: async () => {
        const text = `bench remote ${(sent += 1)}`;
        const reply = await link.request('pane.deliver', { pane: therePane, text, delivery_id: `bench-${sent}` }, { timeoutMs: 60_000 });
        const status = 'result' in reply ? (reply.result as { status?: unknown }).status : undefined;
        if (status !== 'submitted') throw new Error(`correctness: the remote delivery was not submitted: ${JSON.stringify(reply)}`);
        texts.remote.push(text);
      },
      local: async () => {
        const text = `bench local ${(sent += 1)}`;
        const receipt = await paneDeliver(herePort, herePane, text, { cwd: dir });
        if (receipt.status !== 'submitted') throw new Error(`correctness: the local delivery was not submitted: ${receipt.status} ${receipt.reason}`);
        texts.local.push(text);
      },
    }, { warmupTurns: WARMUP_TURNS });
    const thereHistory = (await servers[0]!.pane(therePane).capture({ start: '-', join: true })).toString('utf8');
    const hereHistory = (await here.pane(herePane).capture({ start: '-', join: true })).toString('utf8');
    const missing = [...texts.remote.filter((text) => !thereHistory.includes(text)), ...texts.local.filter((text) => !hereHistory.includes(text))];
    if (missing.length > 0) throw new Error(`correctness: ${missing.length} delivered texts are not in their panes (${missing[0]})`);

    const figures = hostsFigures({
      mergedMap: maps.merged!,
      naiveMap: maps.naive!,
      singleLinkMap: maps.single!,
      localMaps: machines.map((_, index) => maps[`local-${index}`]!),
      localControlMaps: machines.map((_, index) => maps[`control-${index}`]!),
      localCliMaps: machines.map((_, index) => maps[`cli-${index}`]!),
      linkRtt: rtt.link,
      freshSshDrover: rtt.drover,
      freshSshTrue: rtt.true,
      remoteDeliver: deliveries.remote,
      localDeliver: deliveries.local,
    });
    const ms = (key: string): string => `${String(figures[key])} ms`;
    log(`medians of ${MAP_SAMPLES} (maps) and ${RTT_SAMPLES} (round trips); ${DELIVERIES} deliveries each way`);
    process.stderr.write(
      renderTable(
        ['measure', 'drover', 'compared with', 'ratio'],
        [
          ['pane map of 3×50 panes', `merged over links ${ms('merged_map_ms')}`, `slowest host's own map ${ms('slowest_local_map_ms')}`, `${figures.merged_map_over_local_map}× (goal ≤ ${MERGED_GOAL})`],
          ['', '', `the same over a control connection ${ms('slowest_local_control_map_ms')}`, `${figures.merged_map_over_local_control_map}×`],
          ['', '', `slowest host's own CLI ${ms('slowest_local_cli_map_ms')}`, `${figures.merged_map_over_local_cli_map}×`],
          ['', '', `fresh ssh per host ${ms('naive_map_ms')}`, `naive ${figures.naive_map_over_merged_map}× slower`],
          ['pane map of 1 host (50)', `over its link ${ms('one_host_link_map_ms')}`, `its own map ${ms('one_host_local_map_ms')}`, `${figures.one_host_link_map_over_its_local_map}×`],
          ['small request', `ping over the link ${ms('link_rtt_ms')}`, `fresh ssh drover --version ${ms('fresh_ssh_drover_ms')} (ssh true ${ms('fresh_ssh_true_ms')})`, `${figures.fresh_ssh_over_link_rtt}× (goal ≥ ${RTT_GOAL})`],
          ['deliver into cat p50/p95', `remote ${ms('remote_deliver_p50_ms')} / ${ms('remote_deliver_p95_ms')}`, `local ${ms('local_deliver_p50_ms')} / ${ms('local_deliver_p95_ms')}`, `${figures.remote_deliver_p50_over_local_deliver_p50}× at p50`],
        ],
      ),
    );
    return figures;
  } finally {
    await hosts?.close();
    await here?.close();
    for (const server of controlServers) await server.close();
    for (const server of servers) {
      await server.kill().catch(() => undefined);
      await server.close();
    }
    // Every sshd is stopped (and its user removed) even when one fails; a failure fails the run after its figures.
    for (const [index, sshd] of sshds.entries()) {
      try {
        // The links' drovers and the panes end with their connection and server; userdel refuses a user with processes.
        if (uids[index] !== undefined) await eventually(`the processes of host-${index}'s user to end`, async () => (await runChild(['pgrep', '-u', String(uids[index])], { timeoutMs: 5000 })).exitCode === 1, 20_000);
        await sshd.stop();
      } catch (error) {
        log(`cleanup of host-${index} failed (its user and ${sshd.dir} may be left): ${messageOf(error)}`);
        process.exitCode = 1;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}
