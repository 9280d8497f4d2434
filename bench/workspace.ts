/**
 * `drover workspace load` against `tmuxp load -d` (Debian package tmuxp) building the same
 * 12-window / 18-pane workspace file, each run as a user runs it (the whole command, process
 * start-up included) onto a fresh tmux server of its own, interleaved in one run. Both
 * servers start from the same configuration, with /bin/sh as the pane shell so that shell
 * start-up (which both tools leave to tmux) does not drown the tools' own work. A third line
 * times tmux alone building the same layout from one chained command line: the floor both
 * tools share, so the report shows what each tool adds on top of tmux. A fourth line times
 * drover's library doing the same load in this process (read, plan, apply over one control
 * connection): what drover costs without a Node process start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { findExecutable, run as runChild, type RunResult } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import { applyPlan, loadWorkspaceFile, planWorkspace } from '../src/workspace/index.js';
import { log, median, round } from './support.js';

const CLI = fileURLToPath(new URL('../cli/drover.js', import.meta.url));
const SAMPLES = 5;
const TARGET_RATIO = 5;
const SESSION = 'bench-workspace';
const CONFIG = 'set -g default-shell /bin/sh\n';

/** Windows 0–2 hold three panes each under a layout, windows 3–11 one pane: 12 windows, 18 panes. */
const LAYOUTS = ['main-vertical', 'tiled', 'even-horizontal'];
const WINDOWS = Array.from({ length: 12 }, (_, w) => ({ name: `win-${w}`, panes: w < LAYOUTS.length ? 3 : 1, layout: LAYOUTS[w] }));

function workspaceYaml(directory: string): string {
  const lines = [`session_name: ${SESSION}`, `start_directory: ${directory}`, 'windows:'];
  for (const [w, window] of WINDOWS.entries()) {
    lines.push(`  - window_name: ${window.name}`);
    if (window.layout !== undefined) lines.push(`    layout: ${window.layout}`);
    if (w === 0) lines.push('    focus: true');
    lines.push('    panes:');
    for (let p = 0; p < window.panes; p += 1) lines.push(`      - echo pane-${w}-${p}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The environment both tools run in: never the caller's tmux. */
function cleanEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, SHELL: '/bin/sh' };
  delete env.TMUX;
  delete env.TMUX_PANE;
  return env;
}

function checked(result: RunResult, what: string): RunResult {
  if (!result.ok) throw new Error(`${what} failed (exit ${result.exitCode}): ${result.stderrText().trim()}`);
  return result;
}

/** A fresh tmux server on its own socket, kept up by an unrelated session, as a user's server would be. */
async function freshServer(root: string, label: string, env: NodeJS.ProcessEnv): Promise<Endpoint> {
  const directory = mkdtempSync(join(root, `${label}-`));
  const socket = join(directory, 'tmux.sock');
  const config = join(directory, 'tmux.conf');
  writeFileSync(config, CONFIG);
  const endpoint = Endpoint.fromSocketPath(socket, { env });
  checked(await runChild([endpoint.executable, ...endpoint.args, '-f', config, 'new-session', '-d', '-s', 'already-here'], { env, cwd: directory }), 'starting tmux');
  return endpoint;
}

/** Checks that the server holds the declared session: window names in order, and panes per window. */
async function verify(endpoint: Endpoint, env: NodeJS.ProcessEnv, tool: string): Promise<void> {
  const server = await Server.open(endpoint, { env });
  try {
    const snapshot = await server.snapshot();
    const session = snapshot.sessions.toArray().find((record) => record.sessionName === SESSION);
    if (!session) throw new Error(`${tool}: no session ${SESSION} after the load`);
    const windows = [...session.links()].sort((a, b) => a.windowIndex - b.windowIndex).map((link) => link.window());
    const got = windows.map((window) => `${window.windowName}:${window.panes().size}`).join(' ');
    const want = WINDOWS.map((window) => `${window.name}:${window.panes}`).join(' ');
    if (got !== want) throw new Error(`${tool} built a different workspace:\n  got  ${got}\n  want ${want}`);
  } finally {
    await server.close();
  }
}

async function killServer(endpoint: Endpoint, env: NodeJS.ProcessEnv): Promise<void> {
  await runChild([endpoint.executable, ...endpoint.args, 'kill-server'], { env });
}

type Tool = 'tmuxp' | 'drover' | 'tmux' | 'library';

/**
 * The same layout as one tmux client invocation with every command chained: no tool at all,
 * only what tmux itself spends (pane creation dominates), as a floor for both tools.
 */
function chainedCommands(directory: string): string[] {
  const args: string[] = [];
  const add = (...command: string[]): void => {
    if (args.length > 0) args.push(';');
    args.push(...command);
  };
  for (const [w, window] of WINDOWS.entries()) {
    const target = `=${SESSION}:${window.name}`;
    if (w === 0) add('new-session', '-d', '-s', SESSION, '-n', window.name, '-c', directory);
    else add('new-window', '-d', '-t', `=${SESSION}:`, '-n', window.name, '-c', directory);
    for (let p = 1; p < window.panes; p += 1) add('split-window', '-t', target, '-c', directory);
    if (window.layout !== undefined) add('select-layout', '-t', target, window.layout);
    for (let p = 0; p < window.panes; p += 1) add('send-keys', '-t', `${target}.${p}`, `echo pane-${w}-${p}`, 'Enter');
  }
  return args;
}

function loadArgv(tool: Exclude<Tool, 'library'>, tmuxp: string, endpoint: Endpoint, file: string, directory: string): string[] {
  if (tool === 'tmuxp') return [tmuxp, 'load', '-d', '-y', '-S', endpoint.socketPath, file];
  if (tool === 'drover') return [process.execPath, CLI, '-S', endpoint.socketPath, 'workspace', 'load', file];
  return [endpoint.executable, ...endpoint.args, ...chainedCommands(directory)];
}

/** The load `drover workspace load` does, in this process: read, plan, apply on one control connection. */
async function libraryLoad(endpoint: Endpoint, file: string, env: NodeJS.ProcessEnv): Promise<void> {
  const plan = planWorkspace(await loadWorkspaceFile(file));
  const server = await Server.open(endpoint, { env });
  try {
    await server.connect();
    await applyPlan(plan, server);
  } finally {
    await server.close();
  }
}

/** One timed load of the file onto a fresh server, checked afterwards. */
async function timedLoad(root: string, tmuxp: string, file: string, env: NodeJS.ProcessEnv, tool: Tool): Promise<number> {
  const endpoint = await freshServer(root, tool, env);
  try {
    const started = performance.now();
    if (tool === 'library') await libraryLoad(endpoint, file, env);
    else checked(await runChild(loadArgv(tool, tmuxp, endpoint, file, root), { env, input: '', timeoutMs: 120_000 }), `${tool} load`);
    const elapsed = performance.now() - started;
    await verify(endpoint, env, tool);
    return elapsed;
  } finally {
    await killServer(endpoint, env);
  }
}

export async function run(args: string[]): Promise<Record<string, number | boolean>> {
  const samples = args[0] === undefined ? SAMPLES : Number(args[0]);
  if (!Number.isSafeInteger(samples) || samples < 1) throw new Error('usage: npm run bench workspace [SAMPLES]');
  const root = mkdtempSync(join(tmpdir(), 'drover-bench-workspace-'));
  try {
    const env = cleanEnv(root);
    const file = join(root, 'workspace.yaml');
    writeFileSync(file, workspaceYaml(root));
    const tmuxp = findExecutable('tmuxp', env);
    const version = tmuxp === undefined ? undefined : await runChild([tmuxp, '--version'], { env });
    if (tmuxp === undefined || !version?.ok) throw new Error('tmuxp is not installed or does not run (apt-get install -y tmuxp)');
    log(`workspace load: ${WINDOWS.length} windows / ${WINDOWS.reduce((n, w) => n + w.panes, 0)} panes, fresh server per load, median of ${samples}`);
    log(`peer: ${version.text().trim()}`);

    // Correctness first: each way builds the declared session once before anything is timed.
    const tools: Tool[] = ['tmuxp', 'drover', 'tmux', 'library'];
    for (const tool of tools) await timedLoad(root, tmuxp, file, env, tool);

    const times = new Map<Tool, number[]>(tools.map((tool) => [tool, []]));
    for (let i = 0; i < samples; i += 1) for (const tool of tools) times.get(tool)!.push(await timedLoad(root, tmuxp, file, env, tool));
    const [tmuxpMs, droverMs, floorMs, libraryMs] = tools.map((tool) => median(times.get(tool)!)) as [number, number, number, number];
    const runs = (tool: Tool): string => times.get(tool)!.map((t) => t.toFixed(0)).join(', ');
    const ratio = tmuxpMs / droverMs;
    log(`drover workspace load  ${droverMs.toFixed(0).padStart(6)} ms   (runs: ${runs('drover')})`);
    log(`tmuxp load -d          ${tmuxpMs.toFixed(0).padStart(6)} ms   (runs: ${runs('tmuxp')})`);
    log(`tmux alone, chained    ${floorMs.toFixed(0).padStart(6)} ms   (runs: ${runs('tmux')}): the floor both tools share`);
    log(`drover's library       ${libraryMs.toFixed(0).padStart(6)} ms   (runs: ${runs('library')}): the same load in this process`);
    log(`tmuxp/drover ${ratio.toFixed(1)}x (target at least ${TARGET_RATIO}x): ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}`);
    log(`above the floor: drover ${(droverMs - floorMs).toFixed(0)} ms, tmuxp ${(tmuxpMs - floorMs).toFixed(0)} ms (${((tmuxpMs - floorMs) / (droverMs - floorMs)).toFixed(1)}x)`);
    return {
      tmuxp_over_drover: round(ratio, 2),
      drover_load_ms: round(droverMs, 1),
      tmuxp_load_ms: round(tmuxpMs, 1),
      tmux_floor_ms: round(floorMs, 1),
      tmuxp_over_drover_above_floor: round((tmuxpMs - floorMs) / (droverMs - floorMs), 2),
      drover_library_load_ms: round(libraryMs, 1),
      tmuxp_over_drover_library: round(tmuxpMs / libraryMs, 2),
      drover_library_over_tmux_floor: round(libraryMs / floorMs, 2),
      target_met: ratio >= TARGET_RATIO,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
