/**
 * Two parts. Parity: over the tmuxp corpus (test/fixtures/tmuxp-corpus, tmuxp's own example
 * and builder files), how many of the files tmuxp loads drover loads into the same session —
 * windows, names, indexes, layouts, options, directories, environments, the keys typed into
 * each pane and what ends up focused. What tmuxp builds comes from a model of tmuxp 1.27's
 * loader and builder (bench/workspace-parity/tmuxp-model.ts), since running tmuxp on every
 * file is not possible where it is not installed; the report says so.
 *
 * Speed, when tmuxp is installed: `drover workspace load` against `tmuxp load -d` (Debian package tmuxp) building the same
 * 12-window / 18-pane workspace file, each run as a user runs it (the whole command, process
 * start-up included) onto a fresh tmux server of its own, interleaved in one run. Both
 * servers start from the same configuration, with /bin/sh as the pane shell so that shell
 * start-up (which both tools leave to tmux) does not drown the tools' own work. A third line
 * times tmux alone building the same layout from one chained command line: the floor both
 * tools share, so the report shows what each tool adds on top of tmux. A fourth line times
 * drover's library doing the same load in this process (read, plan, apply over one control
 * connection): what drover costs without a Node process start.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { findExecutable, run as runChild, type RunResult } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import { WorkspaceError, applyPlan, checkDirectories, loadWorkspaceFile, planWorkspace, type WorkspaceDocument } from '../src/workspace/index.js';
import { log, median, round } from './support.js';
import { tmuxpBuild, tmuxpExpandShell, type BuiltSession } from './workspace-parity/tmuxp-model.js';

const CLI = fileURLToPath(new URL('../cli/drover.js', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../test/fixtures/tmuxp-corpus/', import.meta.url));
/** The variables the corpus refers to, set as a tmuxp user would have them. */
const CORPUS_VARIABLES = { MAIN_PANE_HEIGHT: '30', VISUAL_SILENCE: 'on', SERVER_PORT: '8000' };
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

// ---- parity -------------------------------------------------------------------------------------

/** drover's document as the session it builds, in the model's terms (commands as the pane's shell expands them). */
function droverBuild(doc: WorkspaceDocument, env: Readonly<Record<string, string>>): BuiltSession {
  const focusedWindow = doc.windows.findIndex((window) => window.focus);
  return {
    session: doc.sessionName,
    environment: { ...doc.environment },
    options: { ...doc.options },
    globalOptions: { ...doc.globalOptions },
    activeWindow: focusedWindow === -1 ? 0 : focusedWindow,
    windows: doc.windows.map((window) => {
      const focusedPane = window.panes.findIndex((pane) => pane.focus);
      return {
        name: window.name,
        index: window.index,
        layout: window.layout,
        options: { ...window.options },
        optionsAfter: { ...window.optionsAfter },
        // The last split is active unless a pane has focus, as in tmuxp.
        activePane: focusedPane === -1 ? window.panes.length - 1 : focusedPane,
        panes: window.panes.map((pane) => ({
          cwd: pane.startDirectory,
          program: null,
          environment: { ...pane.environment },
          keys: pane.commands.flatMap((command) => {
            const text = tmuxpExpandShell(command.text, env);
            return [pane.suppressHistory ? ` ${text}` : text, ...(command.enter ? ['Enter'] : [])];
          }),
        })),
      };
    }),
  };
}

/** A lone space and nothing both type an empty line. */
function typedEqual(session: BuiltSession): BuiltSession {
  return {
    ...session,
    windows: session.windows.map((window) => ({ ...window, panes: window.panes.map((pane) => ({ ...pane, keys: pane.keys.map((key) => (key === ' ' ? '' : key)) })) })),
  };
}

type DroverOutcome = { loads: true; built: BuiltSession } | { loads: false; reason: string };

/** What `drover workspace plan FILE` accepts: the file parses and every start directory exists. */
async function droverOutcome(file: string, env: Readonly<Record<string, string>>, expandEnv: readonly string[]): Promise<DroverOutcome> {
  try {
    const doc = await loadWorkspaceFile(file, { env, expandEnv: [...expandEnv], homeDir: env.HOME ?? homedir() });
    await checkDirectories(doc);
    return { loads: true, built: droverBuild(doc, env) };
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    return { loads: false, reason: error.problems.map((problem) => `${problem.path}: ${problem.code}${problem.unsupportedFeature === undefined ? '' : ` (${problem.unsupportedFeature})`}`).join('; ') };
  }
}

interface Parity {
  readonly files: number;
  readonly tmuxpLoads: number;
  readonly same: number;
  readonly sameWithExpansion: number;
}

async function parity(): Promise<Parity> {
  const files = ['builder', 'examples'].flatMap((dir) => readdirSync(join(CORPUS, dir)).map((name) => `${dir}/${name}`)).sort();
  const env: Record<string, string> = { HOME: homedir(), ...CORPUS_VARIABLES };
  let tmuxpLoads = 0;
  let same = 0;
  let sameWithExpansion = 0;
  log(`parity over ${files.length} tmuxp corpus files (${CORPUS}), environment: HOME and ${Object.keys(CORPUS_VARIABLES).join(', ')}`);
  for (const file of files) {
    const path = join(CORPUS, file);
    const tmuxp = tmuxpBuild(path, env);
    if (!tmuxp.loads) {
      log(`  ${file}: tmuxp does not load it (${tmuxp.reason})`);
      continue;
    }
    tmuxpLoads += 1;
    const plain = await droverOutcome(path, env, []);
    const expanded = await droverOutcome(path, env, Object.keys(CORPUS_VARIABLES));
    const matches = (outcome: DroverOutcome): boolean => outcome.loads && isDeepStrictEqual(typedEqual(outcome.built), typedEqual(tmuxp.built));
    if (matches(plain)) same += 1;
    if (matches(expanded)) sameWithExpansion += 1;
    const verdict = matches(plain)
      ? 'same'
      : matches(expanded)
        ? 'same with --expand-env'
        : plain.loads
          ? `DIFFERENT: ${firstDifference(plain.built, tmuxp.built)}`
          : `drover refuses it (${plain.reason})`;
    log(`  ${file}: ${verdict}`);
  }
  return { files: files.length, tmuxpLoads, same, sameWithExpansion };
}

/** The first place two builds differ, for the report. */
function firstDifference(drover: unknown, tmuxp: unknown, path = '$'): string {
  if (isDeepStrictEqual(drover, tmuxp)) return '';
  if (typeof drover === 'object' && drover !== null && typeof tmuxp === 'object' && tmuxp !== null) {
    const keys = [...new Set([...Object.keys(drover), ...Object.keys(tmuxp)])];
    for (const key of keys) {
      const a = (drover as Record<string, unknown>)[key];
      const b = (tmuxp as Record<string, unknown>)[key];
      if (!isDeepStrictEqual(a, b)) return firstDifference(a, b, `${path}.${key}`);
    }
  }
  return `${path}: drover ${JSON.stringify(drover)}, tmuxp ${JSON.stringify(tmuxp)}`;
}

// ---- speed --------------------------------------------------------------------------------------

export async function run(args: string[]): Promise<Record<string, number | boolean | string>> {
  const samples = args[0] === undefined ? SAMPLES : Number(args[0]);
  if (!Number.isSafeInteger(samples) || samples < 1) throw new Error('usage: npm run bench workspace [SAMPLES]');
  const root = mkdtempSync(join(tmpdir(), 'drover-bench-workspace-'));
  try {
    const env = cleanEnv(root);
    const tmuxp = findExecutable('tmuxp', env);
    const version = tmuxp === undefined ? undefined : await runChild([tmuxp, '--version'], { env });
    const installed = tmuxp !== undefined && version?.ok === true;
    log(`peer: ${installed ? version.text().trim() : 'tmuxp is NOT installed here (apt-get install -y tmuxp); what tmuxp builds comes from drover\'s model of it'}`);
    const { files, tmuxpLoads, same, sameWithExpansion } = await parity();
    log(`parity (model of tmuxp 1.27, bench/workspace-parity/tmuxp-model.ts): ${same}/${tmuxpLoads} files tmuxp loads are loaded the same by drover (${sameWithExpansion}/${tmuxpLoads} with --expand-env for the corpus variables); ${files} files in all`);
    const parityFigures = {
      parity_source: 'model of tmuxp 1.27',
      files_same_over_files_tmuxp_loads: round(same / tmuxpLoads, 3),
      files_same: same,
      files_tmuxp_loads: tmuxpLoads,
      files_same_with_expand_env_over_files_tmuxp_loads: round(sameWithExpansion / tmuxpLoads, 3),
      corpus_files: files,
      tmuxp_installed: installed,
    };
    if (!installed) {
      log('speed: skipped, tmuxp is not installed (the load-time comparison needs the real peer)');
      return parityFigures;
    }
    const file = join(root, 'workspace.yaml');
    writeFileSync(file, workspaceYaml(root));
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
      ...parityFigures,
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
