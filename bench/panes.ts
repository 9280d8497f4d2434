/**
 * `drover pane map --json` over 100 panes in 10 git repos (each with a linked worktree) on an
 * owned server, run as a user runs it: the built CLI, wall time of the whole command, through
 * the mux port (one snapshot) as every pane verb reaches its multiplexer. The
 * naive baseline asks tmux once per pane (display-message) and git twice per pane
 * (rev-parse, worktree list), one after the other, in this process (no start-up charged).
 * Child processes of the CLI are counted with tmux and git shims on PATH that log each run.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createMuxPort, TmuxAdapter } from '../src/mux/index.js';
import { mapRowJson, paneMap, worktreeLabel, type MapRowJson } from '../src/panes/index.js';
import { processDiagnostics, run as runChild, type RunResult } from '../src/process/index.js';
import { Server, resolveExecutable } from '../src/tmux/index.js';
import { log, median, round, sample, sampleInTurns } from './support.js';

const REPOS = 10;
const PANES_PER_REPO = 10;
const SAMPLES = 20;
const TARGET_MS = 150;
const CLI = fileURLToPath(new URL('../cli/drover.js', import.meta.url));

/** The environment every child gets: never the user's tmux, never the user's git config. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_') && key !== 'TMUX' && key !== 'TMUX_PANE'));
  return { ...env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' };
}

function checked(result: RunResult, what: string): RunResult {
  if (!result.ok) throw new Error(`${what} failed (${result.exitCode}): ${result.stderrText()}`);
  return result;
}

/** Ten repos, each with a `src` directory and a linked worktree: three distinct cwds per repo. */
async function makeRepos(root: string, env: NodeJS.ProcessEnv): Promise<string[][]> {
  const git = async (...args: string[]) => checked(await runChild(['git', ...args], { env, timeoutMs: 30_000 }), `git ${args.join(' ')}`);
  const cwds: string[][] = [];
  for (let index = 0; index < REPOS; index += 1) {
    const repo = join(root, `repo-${index}`);
    const linked = join(root, `repo-${index}-feature`);
    mkdirSync(join(repo, 'src'), { recursive: true });
    await git('init', '-q', '-b', 'main', repo);
    await git('-C', repo, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '--allow-empty', '-m', 'start');
    await git('-C', repo, 'worktree', 'add', '-q', '-b', 'feature', linked);
    cwds.push([repo, join(repo, 'src'), linked]);
  }
  return cwds;
}

/** One session per repo, one window (one pane) per pane, cwds spread over the repo's three directories. */
async function makePanes(server: Server, cwds: string[][]): Promise<void> {
  for (const [index, dirs] of cwds.entries()) {
    const session = await server.newSession({ name: `repo-${index}`, cwd: dirs[0], command: ['sleep', '3600'] });
    for (let pane = 1; pane < PANES_PER_REPO; pane += 1) await session.newWindow({ cwd: dirs[pane % dirs.length], command: ['sleep', '3600'] });
  }
}

interface NaiveRow {
  session: string;
  window_index: number;
  window_id: string;
  pane: string;
  tab: string;
  worktree: string;
  repo: string | null;
}

/** The baseline: list the pane ids, then one tmux call and two git calls per pane, in sequence. */
async function naiveMap(tmux: string, socket: string, env: NodeJS.ProcessEnv): Promise<NaiveRow[]> {
  const list = checked(await runChild([tmux, '-S', socket, 'list-panes', '-a', '-F', '#{pane_id}'], { env }), 'list-panes');
  const rows: NaiveRow[] = [];
  for (const pane of list.text().split('\n').filter(Boolean)) {
    const fields = checked(
      await runChild([tmux, '-S', socket, 'display-message', '-p', '-t', pane, '#{session_name}\t#{window_index}\t#{window_id}\t#{window_name}\t#{pane_current_path}'], { env }),
      'display-message',
    );
    const [session, windowIndex, windowId, tab, cwd] = fields.text().replace(/\n$/, '').split('\t') as [string, string, string, string, string];
    const top = await runChild(['git', '-C', cwd, 'rev-parse', '--show-toplevel'], { env });
    const worktree = top.ok ? top.text().trim() : null;
    let repo: string | null = null;
    if (worktree !== null) {
      const list = checked(await runChild(['git', '-C', cwd, 'worktree', 'list', '--porcelain'], { env }), 'git worktree list');
      repo = /^worktree (.*)$/m.exec(list.text())?.[1] ?? null;
    }
    rows.push({ session, window_index: Number(windowIndex), window_id: windowId, pane, tab, worktree: worktreeLabel(cwd, { worktree, repo }), repo });
  }
  return rows;
}

function droverMap(socket: string, env: NodeJS.ProcessEnv): Promise<RunResult> {
  return runChild([process.execPath, CLI, 'pane', 'map', '--json', '--all-sessions', '-S', socket], { env, timeoutMs: 60_000, limits: { stdoutBytes: 16 * 1024 * 1024 } });
}

/** Same panes, same places: the JSON of the CLI against the baseline's answers, pane by pane. */
function checkSameRows(drover: MapRowJson[], naive: NaiveRow[], expected: number): void {
  if (drover.length !== expected || naive.length !== expected) throw new Error(`correctness: drover listed ${drover.length} panes, the baseline ${naive.length}, expected ${expected}`);
  const byPane = new Map(drover.map((row) => [row.pane_id, row]));
  for (const row of naive) {
    const mine = byPane.get(row.pane);
    if (mine === undefined) throw new Error(`correctness: drover did not list ${row.pane}`);
    for (const key of ['session', 'window_index', 'window_id', 'tab', 'worktree', 'repo'] as const) {
      if (mine[key] !== row[key]) throw new Error(`correctness: ${row.pane} ${key} is ${JSON.stringify(mine[key])} for drover, ${JSON.stringify(row[key])} for the baseline`);
    }
  }
  const labels = new Set(drover.map((row) => row.worktree));
  if (![...labels].some((label) => label === '(main)') || ![...labels].some((label) => label.endsWith('-feature/'))) {
    throw new Error(`correctness: expected main and linked worktrees among ${[...labels].join(', ')}`);
  }
}

/** Runs the CLI once with logging shims for tmux and git first on PATH; returns how often each ran. */
async function countCliSpawns(root: string, socket: string, env: NodeJS.ProcessEnv): Promise<{ tmux: number; git: number }> {
  const shims = join(root, 'shims');
  const logFile = join(root, 'spawns.log');
  mkdirSync(shims);
  for (const name of ['tmux', 'git']) {
    writeFileSync(join(shims, name), `#!/bin/sh\necho ${name} >> "$DROVER_BENCH_SPAWN_LOG"\nexec ${resolveExecutable(name, env)} "$@"\n`);
    chmodSync(join(shims, name), 0o755);
  }
  writeFileSync(logFile, '');
  checked(await droverMap(socket, { ...env, PATH: `${shims}:${env.PATH ?? ''}`, DROVER_BENCH_SPAWN_LOG: logFile }), 'drover pane map (counted)');
  const spawned = readFileSync(logFile, 'utf8').split('\n').filter(Boolean);
  return { tmux: spawned.filter((name) => name === 'tmux').length, git: spawned.filter((name) => name === 'git').length };
}

export async function run(): Promise<Record<string, number | boolean>> {
  const total = REPOS * PANES_PER_REPO;
  log(`panes: drover pane map --json (the built CLI) over ${total} panes in ${REPOS} git repos vs one tmux + two git calls per pane; median of ${SAMPLES}`);
  const env = cleanEnv();
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-bench-panes-')));
  const server = await Server.start({ env });
  try {
    const socket = server.endpoint.socketPath;
    await makePanes(server, await makeRepos(root, env));

    const first = checked(await droverMap(socket, env), 'drover pane map');
    const naive = await naiveMap(server.endpoint.executable, socket, env);
    checkSameRows(JSON.parse(first.text()) as MapRowJson[], naive, total);

    const counted = await countCliSpawns(root, socket, env);
    const spawnedBefore = processDiagnostics().spawned;
    const port = createMuxPort(new TmuxAdapter({ server }));
    const inProcess = (await paneMap(port, { kind: 'all' }, { env })).map(mapRowJson);
    const libraryChildren = processDiagnostics().spawned - spawnedBefore;
    if (inProcess.length !== total) throw new Error(`correctness: the library listed ${inProcess.length} panes`);
    if (libraryChildren !== counted.tmux + counted.git) {
      throw new Error(`spawn count mismatch: the shims saw ${counted.tmux + counted.git}, the library's runner ${libraryChildren}`);
    }

    // The CLI, its bare start-up and Node's own start (the floor under any CLI) in turns.
    const cli = await sampleInTurns(SAMPLES, {
      map: async () => checked(await droverMap(socket, env), 'drover pane map'),
      version: async () => checked(await runChild([process.execPath, CLI, '--version'], { env }), 'drover --version'),
      node: async () => checked(await runChild([process.execPath, '-e', '0'], { env }), 'node -e 0'),
    });
    const droverMs = median(cli.map);
    const startupMs = median(cli.version);
    const nodeMs = median(cli.node);
    const libraryMs = median(await sample(SAMPLES, () => paneMap(port, { kind: 'all' }, { env })));
    const naiveMs = median(await sample(SAMPLES, () => naiveMap(server.endpoint.executable, socket, env)));

    log(`drover pane map --json   ${droverMs.toFixed(1)} ms   children: ${counted.tmux} tmux + ${counted.git} git`);
    log(`  of which CLI start-up  ${startupMs.toFixed(1)} ms (drover --version); the map itself in-process ${libraryMs.toFixed(1)} ms`);
    log(`  node -e 0 alone        ${nodeMs.toFixed(1)} ms; drover above it ${(droverMs - nodeMs).toFixed(1)} ms`);
    log(`naive baseline           ${naiveMs.toFixed(1)} ms   children: ${total + 1} tmux + ${2 * total} git`);
    log(`naive/drover ${(naiveMs / droverMs).toFixed(1)}x; target under ${TARGET_MS} ms: ${droverMs < TARGET_MS ? 'met' : 'missed'}; tmux spawns per pane: ${counted.tmux < total ? 'none' : 'yes'}`);
    return {
      naive_over_drover: round(naiveMs / droverMs, 2),
      drover_map_ms: round(droverMs),
      naive_ms: round(naiveMs),
      drover_child_processes: counted.tmux + counted.git,
      drover_tmux_spawns: counted.tmux,
      naive_tmux_spawns: total + 1,
      drover_git_spawns: counted.git,
      naive_git_spawns: 2 * total,
      drover_cli_startup_ms: round(startupMs),
      node_startup_ms: round(nodeMs),
      drover_above_node_ms: round(droverMs - nodeMs),
      drover_library_map_ms: round(libraryMs),
      under_target: droverMs < TARGET_MS,
    };
  } finally {
    await server.close();
    rmSync(root, { recursive: true, force: true });
  }
}
