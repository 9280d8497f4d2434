/**
 * drover's workspace loading against the installed tmuxp (Debian's package: the judge is the
 * real thing, and the bench stops, saying so, where it is not installed).
 *
 * Parity: every file of the tmuxp corpus (test/fixtures/tmuxp-corpus: tmuxp's own examples and
 * builder fixtures) is loaded by `tmuxp load -d` and by `drover workspace load`, each onto a
 * fresh private tmux server, and what the two servers then hold is compared
 * (bench/workspace-parity/server-state.ts): sessions, the session's options and environment,
 * windows (index, name, layout, options, which is active) and panes (directory, start command,
 * environment, options, which is active, what was typed into it), commands as the pane's shell
 * would expand them. A file is "the same" when nothing differs. Files tmuxp fails on are listed
 * as such, files drover refuses with its reason, and differences with where they are; a
 * difference drover makes on purpose is named as such with why (BY_DESIGN), and still does not
 * count as the same. `npm run bench workspace SAMPLES TEXT` judges only the files whose name
 * contains TEXT.
 *
 * Both tools get identical servers: one configuration, one environment (HOME and the XDG
 * directories in a temporary directory, no TMUX, the corpus's variables set), one working
 * directory (a temporary one, not the file's) and the same size: drover builds at 200x50
 * without a terminal, and tmuxp's own 800x600 (`new-session -x 800 -y 600`, re-laid out at
 * the client's size when one attaches) is brought to the same 200x50 by a session-created hook
 * before its windows are made.
 *
 * Speed, once parity is known: the corpus files both load the same (less those that declare
 * sleeps, which both tools wait out alike) loaded once each by tmuxp, drover's CLI and drover's
 * library, interleaved file by file; then a 12-window / 18-pane file loaded by each tool
 * (SAMPLES times, each run checked first), beside tmux alone building the same layout from one
 * chained command line (the floor both tools share) and drover's library doing the same load in
 * this process (what drover costs without a Node process start).
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { findExecutable, run as runChild, type RunResult } from '../src/process/index.js';
import { Endpoint, Server } from '../src/tmux/index.js';
import {
  DETACHED_BUILD_SIZE,
  WorkspaceError,
  applyPlan,
  checkDirectories,
  loadWorkspaceFile,
  planWorkspace,
  type WorkspaceDocument,
} from '../src/workspace/index.js';
import { log, median, round } from './support.js';
import { STAND_IN_COMMAND, asShellSees, describeDifference, differences, expandTyped, readHeld, settle, type Difference, type HeldSession } from './workspace-parity/server-state.js';

const CLI = fileURLToPath(new URL('../cli/drover.js', import.meta.url));
const CORPUS = fileURLToPath(new URL('../../test/fixtures/tmuxp-corpus/', import.meta.url));
/** The variables the corpus refers to, set as a tmuxp user would have them. */
const CORPUS_VARIABLES = { MAIN_PANE_HEIGHT: '30', VISUAL_SILENCE: 'on', SERVER_PORT: '8000' };
const SAMPLES = 5;
const TARGET_RATIO = 5;
const SESSION = 'bench-workspace';
/** Keeps each fresh server up, as a user's server would be, before a tool loads onto it. */
const KEEPER = 'already-here';
const { width: WIDTH, height: HEIGHT } = DETACHED_BUILD_SIZE;
/** Generous: a few corpus files sleep for seconds between commands. */
const LOAD_TIMEOUT_MS = 120_000;

/**
 * Every server's configuration: /bin/sh as the shell, the stand-in as each pane's program,
 * and drover's detached size for every session — including tmuxp's, whose own -x/-y the hook
 * overrides before tmuxp creates the windows it keeps.
 */
const CONFIG = [
  'set -g default-shell /bin/sh',
  `set -g default-command '${STAND_IN_COMMAND}'`,
  `set -g default-size ${WIDTH}x${HEIGHT}`,
  `set-hook -g session-created 'set-option default-size ${WIDTH}x${HEIGHT}'`,
  '',
].join('\n');

type Tool = 'tmuxp' | 'drover' | 'tmux' | 'library';

interface Bench {
  readonly root: string;
  readonly env: NodeJS.ProcessEnv;
  readonly tmuxp: string;
}

/** The environment both tools run in: never the caller's tmux, home or tmuxp configuration. */
function cleanEnv(root: string): NodeJS.ProcessEnv {
  const home = join(root, 'home');
  mkdirSync(home);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    SHELL: '/bin/sh',
    ...CORPUS_VARIABLES,
  };
  for (const name of ['TMUX', 'TMUX_PANE', 'TMUXP_CONFIGDIR', 'TMUX_TMPDIR']) delete env[name];
  return env;
}

function checked(result: RunResult, what: string): RunResult {
  if (!result.ok) throw new Error(`${what} failed (exit ${result.exitCode}): ${result.stderrText().trim()}`);
  return result;
}

/** A fresh tmux server on its own socket in its own directory, holding only the keeper session. */
async function freshServer(bench: Bench, label: string): Promise<Endpoint> {
  const directory = mkdtempSync(join(bench.root, `${label}-`));
  const config = join(directory, 'tmux.conf');
  writeFileSync(config, CONFIG);
  const endpoint = Endpoint.fromSocketPath(join(directory, 'tmux.sock'), { env: bench.env });
  checked(await runChild([endpoint.executable, ...endpoint.args, '-f', config, 'new-session', '-d', '-s', KEEPER], { env: bench.env, cwd: bench.root }), 'starting tmux');
  return endpoint;
}

async function killServer(bench: Bench, endpoint: Endpoint): Promise<void> {
  await runChild([endpoint.executable, ...endpoint.args, 'kill-server'], { env: bench.env });
}

async function withFreshServer<T>(bench: Bench, label: string, use: (endpoint: Endpoint) => Promise<T>): Promise<T> {
  const endpoint = await freshServer(bench, label);
  try {
    return await use(endpoint);
  } finally {
    await killServer(bench, endpoint);
  }
}

async function sessionNames(bench: Bench, endpoint: Endpoint): Promise<string[]> {
  const result = checked(await runChild([endpoint.executable, ...endpoint.args, 'list-sessions', '-F', '#{session_name}'], { env: bench.env }), 'list-sessions');
  return result
    .text()
    .split('\n')
    .filter((name) => name !== '' && name !== KEEPER);
}

function toolArgv(bench: Bench, tool: 'tmuxp' | 'drover', endpoint: Endpoint, file: string, expandEnv: readonly string[]): string[] {
  if (tool === 'tmuxp') return [bench.tmuxp, 'load', '-d', '-y', '-S', endpoint.socketPath, file];
  return [process.execPath, CLI, '-S', endpoint.socketPath, 'workspace', 'load', file, ...expandEnv.flatMap((name) => ['--expand-env', name])];
}

/** drover's library doing what `drover workspace load` does, in this process: read, plan at the CLI's size, apply on one control connection. */
async function libraryLoad(bench: Bench, endpoint: Endpoint, file: string, expandEnv: readonly string[]): Promise<void> {
  const plan = planWorkspace(await readDocument(bench, file, expandEnv), { size: DETACHED_BUILD_SIZE });
  const server = await Server.open(endpoint, { env: bench.env });
  try {
    await server.connect();
    await applyPlan(plan, server, { timeoutMs: LOAD_TIMEOUT_MS });
  } finally {
    await server.close();
  }
}

/** What the CLI reads from the file in the bench's environment (start directories checked). */
async function readDocument(bench: Bench, file: string, expandEnv: readonly string[]): Promise<WorkspaceDocument> {
  const env = Object.fromEntries(Object.entries(bench.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const doc = await loadWorkspaceFile(file, { env, expandEnv: [...expandEnv], homeDir: env.HOME });
  await checkDirectories(doc);
  return doc;
}

// ---- parity -------------------------------------------------------------------------------------

/** A load by one tool onto a fresh server: what the server then held, or why there is nothing to compare. */
type Loaded = { readonly loads: true; readonly held: HeldSession | null } | { readonly loads: false; readonly reason: string };

function lastLine(result: RunResult): string {
  const output = `${result.lossyText()}\n${result.stderr.toString('utf8')}`.replace(/\x1b\[[0-9;]*m/g, '');
  return output.split('\n').map((line) => line.trim()).filter(Boolean).at(-1) ?? `exit ${result.exitCode}`;
}

/** Loads the file with one tool and, when `read`, waits for the panes to settle and reads what the server holds. */
async function loadAndRead(bench: Bench, tool: 'tmuxp' | 'drover', file: string, read: boolean, expandEnv: readonly string[] = []): Promise<Loaded> {
  return withFreshServer(bench, tool, async (endpoint) => {
    const result = await runChild(toolArgv(bench, tool, endpoint, file, expandEnv), { env: bench.env, cwd: bench.root, input: '', timeoutMs: LOAD_TIMEOUT_MS });
    const made = await sessionNames(bench, endpoint);
    if (!result.ok) return { loads: false, reason: `${tool} exits ${result.exitCode}${made.length > 0 ? ', leaving a session behind' : ''}: ${lastLine(result)}` };
    const [session, ...more] = made;
    if (session === undefined) return { loads: false, reason: `${tool} exits 0 and makes no session: ${lastLine(result)}` };
    if (more.length > 0) throw new Error(`${tool} made ${made.length} sessions from ${file}`);
    if (!read) return { loads: true, held: null };
    await settle(endpoint, bench.env, session);
    return { loads: true, held: await readHeld(endpoint, bench.env, session) };
  });
}

/** Why drover will not load the file, or null when it will (what `drover workspace plan FILE` decides). */
async function droverRefusal(bench: Bench, file: string, expandEnv: readonly string[]): Promise<readonly WorkspaceError[] | null> {
  try {
    await readDocument(bench, file, expandEnv);
    return null;
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    return error.problems;
  }
}

function describeRefusal(problems: readonly WorkspaceError[]): string {
  // A feature refused by name is drover's documented choice, not a gap.
  const byDesign = problems.every((problem) => problem.unsupportedFeature !== undefined);
  return `${byDesign ? 'by design, ' : ''}${problems.map((problem) => problem.message).join('; ')}`;
}

/** What a rule about a deliberate difference may look at. */
interface Judged {
  /** What drover's server holds, typed lines as typed. */
  readonly drover: HeldSession;
  /** The environment both tools ran in. */
  readonly env: NodeJS.ProcessEnv;
  /** The file as drover read it. */
  readonly doc: WorkspaceDocument;
  readonly found: readonly Difference[];
}

/** A window option of the session's options that drover set on the window as declared (tmuxp's never lands). */
function sessionWindowOption({ path, drover }: Difference, { doc }: Judged): boolean {
  const name = /^windows\[\d+\]\.options\.(.+)$/.exec(path)?.[1];
  return name !== undefined && Object.hasOwn(doc.options, name) && drover === doc.options[name];
}

/**
 * Differences drover makes on purpose, each with why. A file whose every difference is one of
 * these differs by design; it still does not count as loaded the same.
 */
const BY_DESIGN: readonly { readonly applies: (difference: Difference, judged: Judged) => boolean; readonly why: string }[] = [
  {
    applies: ({ path, drover }, judged) => /^windows\[\d+\]\.panes\[\d+\]\.environment\.PATH$/.test(path) && drover === judged.drover.environment.PATH,
    why: "each tool's panes get the PATH of the tmux client that made them (tmux gives a pane made from a client outside tmux that client's PATH), not the file's; here drover's match the file's",
  },
  {
    applies: ({ path, tmuxp }, { drover, env }) => {
      const at = /^windows\[(\d+)\]\.panes\[(\d+)\]\.typed\[(\d+)\]$/.exec(path);
      const typed = at === null ? null : drover.windows[Number(at[1])]?.panes[Number(at[2])]?.typed;
      return at !== null && typed !== null && typed !== undefined && expandTyped(typed, env)[Number(at[3])] === tmuxp;
    },
    why: "drover leaves a variable in a command to the pane's shell, which has the environment the file gives the pane; tmuxp expands it from its own environment before typing",
  },
  {
    applies: ({ path, drover, tmuxp }) =>
      path.endsWith('.environment.PWD') && typeof drover === 'string' && typeof tmuxp === 'string' && drover.replace(/(.)\/+$/, '$1') === tmuxp.replace(/(.)\/+$/, '$1'),
    why: 'the same directory: drover hands tmux a start directory without a trailing /, so the PWD tmux sets has none',
  },
  {
    applies: sessionWindowOption,
    why: "drover sets a window option of the session's options on every window; tmuxp sets it on the window it makes first and then closes, so it has no effect there",
  },
  {
    // A layout preset sized by such an option (main-pane-height…) follows it.
    applies: ({ path }, judged) => {
      const window = /^(windows\[\d+\])\.layout$/.exec(path)?.[1];
      return window !== undefined && judged.found.some((other) => other.path.startsWith(`${window}.options.main-pane-`) && sessionWindowOption(other, judged));
    },
    why: 'the layout follows from that option',
  },
];

interface FileVerdict {
  readonly file: string;
  readonly tmuxpLoads: boolean;
  /** Loaded the same without --expand-env. */
  readonly same: boolean;
  /** Loaded the same, with --expand-env for the corpus variables where drover needs it. */
  readonly sameWithExpansion: boolean;
  readonly droverRefuses: boolean;
  readonly differsByDesign: boolean;
  /** The --expand-env names that made it the same (for timing it the same way). */
  readonly expandEnv: readonly string[];
  readonly line: string;
}

async function judgeFile(bench: Bench, file: string): Promise<FileVerdict> {
  const path = join(CORPUS, file);
  const plainRefusal = await droverRefusal(bench, path, []);
  // drover expands variables only where asked: the corpus files that use them get --expand-env for those.
  const onlyExpansion = plainRefusal !== null && plainRefusal.every((problem) => problem.unsupportedFeature === 'environment_expansion');
  const expandEnv = onlyExpansion ? Object.keys(CORPUS_VARIABLES) : [];
  const refusal = onlyExpansion ? await droverRefusal(bench, path, expandEnv) : plainRefusal;
  // What tmuxp built is read only when there is a drover build to compare it with.
  const tmuxp = await loadAndRead(bench, 'tmuxp', path, refusal === null);
  const verdict = { file, tmuxpLoads: tmuxp.loads, same: false, sameWithExpansion: false, droverRefuses: false, differsByDesign: false, expandEnv: [] as string[] };
  if (!tmuxp.loads) {
    const drover = refusal === null ? 'drover loads it' : `drover refuses it too (${describeRefusal(refusal)})`;
    return { ...verdict, line: `tmuxp does not load it (${tmuxp.reason}); ${drover}` };
  }
  if (refusal !== null || tmuxp.held === null) return { ...verdict, droverRefuses: true, line: `drover refuses it: ${describeRefusal(refusal ?? [])}` };
  const drover = await loadAndRead(bench, 'drover', path, true, expandEnv);
  if (!drover.loads || drover.held === null) return { ...verdict, line: `DIFFERENT: drover fails to load it (${drover.loads ? 'nothing read' : drover.reason})` };
  const flag = onlyExpansion ? ' with --expand-env' : '';
  const built = drover.held;
  const found = differences(asShellSees(built), asShellSees(tmuxp.held));
  if (found.length > 0) {
    const judged: Judged = { drover: built, env: bench.env, doc: await readDocument(bench, path, expandEnv), found };
    const reasons = found.map((difference) => BY_DESIGN.find((rule) => rule.applies(difference, judged))?.why);
    if (reasons.every((why) => why !== undefined)) {
      const whys = BY_DESIGN.map((rule) => rule.why).filter((why) => reasons.includes(why));
      const example = found[reasons.findIndex((why) => why === whys[0])]!;
      return { ...verdict, differsByDesign: true, line: `differs by design${flag} in ${found.length} place(s), e.g. ${describeDifference(example)}: ${whys.join('; ')}` };
    }
    const unexplained = found.filter((_, i) => reasons[i] === undefined);
    const shown = unexplained.slice(0, 4).map(describeDifference).join('; ');
    return { ...verdict, line: `DIFFERENT${flag}: ${shown}${unexplained.length > 4 ? `; and ${unexplained.length - 4} more` : ''}` };
  }
  const notes: string[] = [];
  if (differences(built, tmuxp.held).length > 0) notes.push('tmuxp typed variables it expanded itself; the shell expands what drover typed to the same');
  const programs = built.windows.flatMap((window) => window.panes).filter((pane) => pane.typed === null).length;
  if (programs > 0) notes.push(`${programs} pane(s) run the file's own default-command: what was typed there is not compared`);
  return { ...verdict, same: !onlyExpansion, sameWithExpansion: true, expandEnv, line: `same${flag}${notes.length === 0 ? '' : ` (${notes.join('; ')})`}` };
}

function corpusFiles(): string[] {
  return ['builder', 'examples'].flatMap((dir) => readdirSync(join(CORPUS, dir)).map((name) => `${dir}/${name}`)).sort();
}

// ---- speed over the corpus ----------------------------------------------------------------------

async function hasSleeps(bench: Bench, file: string, expandEnv: readonly string[]): Promise<boolean> {
  const doc = await readDocument(bench, file, expandEnv);
  return doc.windows.some((window) => window.panes.some((pane) => pane.commands.some((command) => command.sleepBeforeMs > 0 || command.sleepAfterMs > 0)));
}

/** One timed load onto a fresh server; the load must leave one session behind. */
async function timedLoad(bench: Bench, tool: 'tmuxp' | 'drover' | 'library', file: string, expandEnv: readonly string[]): Promise<number> {
  return withFreshServer(bench, tool, async (endpoint) => {
    const started = performance.now();
    if (tool === 'library') await libraryLoad(bench, endpoint, file, expandEnv);
    else checked(await runChild(toolArgv(bench, tool, endpoint, file, expandEnv), { env: bench.env, cwd: bench.root, input: '', timeoutMs: LOAD_TIMEOUT_MS }), `${tool} load of ${file}`);
    const elapsed = performance.now() - started;
    if ((await sessionNames(bench, endpoint)).length !== 1) throw new Error(`${tool} did not leave one session after loading ${file}`);
    return elapsed;
  });
}

// ---- speed on one large file --------------------------------------------------------------------

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
    if (w === 0) add('new-session', '-d', '-s', SESSION, '-n', window.name, '-c', directory, '-x', String(WIDTH), '-y', String(HEIGHT));
    else add('new-window', '-d', '-t', `=${SESSION}:`, '-n', window.name, '-c', directory);
    for (let p = 1; p < window.panes; p += 1) add('split-window', '-t', target, '-c', directory);
    if (window.layout !== undefined) add('select-layout', '-t', target, window.layout);
    for (let p = 0; p < window.panes; p += 1) add('send-keys', '-t', `${target}.${p}`, `echo pane-${w}-${p}`, 'Enter');
  }
  return args;
}

/** Checks that the server holds the declared session: window names in order, and panes per window. */
async function verifyLarge(bench: Bench, endpoint: Endpoint, tool: Tool): Promise<void> {
  const server = await Server.open(endpoint, { env: bench.env });
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

/** One timed load of the large file onto a fresh server, checked afterwards. */
async function timedLargeLoad(bench: Bench, file: string, tool: Tool): Promise<number> {
  return withFreshServer(bench, tool, async (endpoint) => {
    const started = performance.now();
    if (tool === 'library') await libraryLoad(bench, endpoint, file, []);
    else if (tool === 'tmux') checked(await runChild([endpoint.executable, ...endpoint.args, ...chainedCommands(bench.root)], { env: bench.env }), 'tmux chained build');
    else checked(await runChild(toolArgv(bench, tool, endpoint, file, []), { env: bench.env, cwd: bench.root, input: '', timeoutMs: LOAD_TIMEOUT_MS }), `${tool} load`);
    const elapsed = performance.now() - started;
    await verifyLarge(bench, endpoint, tool);
    return elapsed;
  });
}

// ---- the run ------------------------------------------------------------------------------------

/** `tmuxp 1.27.0` from `tmuxp 1.27.0, libtmux 0.21.0`. */
async function tmuxpVersion(tmuxp: string, env: NodeJS.ProcessEnv): Promise<{ full: string; tool: string }> {
  const full = checked(await runChild([tmuxp, '--version'], { env }), 'tmuxp --version').text().trim();
  return { full, tool: full.split(',')[0]!.trim() };
}

export async function run(args: string[]): Promise<Record<string, number | boolean | string>> {
  const [samplesArg, only] = args;
  const samples = samplesArg === undefined ? SAMPLES : Number(samplesArg);
  if (!Number.isSafeInteger(samples) || samples < 1) throw new Error('usage: npm run bench workspace [SAMPLES [CORPUS-FILE-SUBSTRING]]');
  const tmuxp = findExecutable('tmuxp', process.env);
  if (tmuxp === undefined) throw new Error('tmuxp is not installed (apt-get install -y tmuxp): this bench judges drover against the real tmuxp');
  const root = mkdtempSync(join(tmpdir(), 'drover-bench-workspace-'));
  try {
    const bench: Bench = { root, env: cleanEnv(root), tmuxp };
    const version = await tmuxpVersion(tmuxp, bench.env);
    log(`peer: ${version.full}`);

    // Correctness first: parity over the corpus, and only the files loaded the same are timed.
    const files = corpusFiles().filter((file) => only === undefined || file.includes(only));
    if (files.length === 0) throw new Error(`no corpus file name contains ${JSON.stringify(only)}`);
    log(`parity over ${files.length} tmuxp corpus files (${CORPUS}): each loaded by both tools onto a fresh ${WIDTH}x${HEIGHT} server; variables set: ${Object.keys(CORPUS_VARIABLES).join(', ')}`);
    const verdicts: FileVerdict[] = [];
    for (const file of files) {
      const verdict = await judgeFile(bench, file);
      log(`  ${file}: ${verdict.line}`);
      verdicts.push(verdict);
    }
    const count = (test: (verdict: FileVerdict) => boolean): number => verdicts.filter(test).length;
    const tmuxpLoads = count((v) => v.tmuxpLoads);
    const same = count((v) => v.same);
    const sameWithExpansion = count((v) => v.sameWithExpansion);
    const droverRefuses = count((v) => v.droverRefuses);
    const byDesign = count((v) => v.differsByDesign);
    const different = tmuxpLoads - sameWithExpansion - droverRefuses - byDesign;
    log(
      `parity (judge: ${version.tool}): ${same}/${tmuxpLoads} files tmuxp loads are loaded the same by drover (${sameWithExpansion}/${tmuxpLoads} with --expand-env for the corpus variables); ` +
        `drover refuses ${droverRefuses}, ${byDesign} differ by design, ${different} differ otherwise; tmuxp does not load ${files.length - tmuxpLoads}; ${files.length} files in all`,
    );

    const timed: FileVerdict[] = [];
    for (const verdict of verdicts.filter((v) => v.sameWithExpansion)) {
      if (!(await hasSleeps(bench, join(CORPUS, verdict.file), verdict.expandEnv))) timed.push(verdict);
    }
    const corpusTools = ['tmuxp', 'drover', 'library'] as const;
    const corpusMs = { tmuxp: 0, drover: 0, library: 0 };
    for (const verdict of timed) {
      for (const tool of corpusTools) corpusMs[tool] += await timedLoad(bench, tool, join(CORPUS, verdict.file), verdict.expandEnv);
    }
    if (timed.length === 0) throw new Error('no corpus file was loaded the same by both tools: nothing to time');
    log(`corpus speed: the ${timed.length} files loaded the same without sleeps, once each, fresh server per load`);
    log(`  tmuxp load -d          ${corpusMs.tmuxp.toFixed(0).padStart(6)} ms`);
    log(`  drover workspace load  ${corpusMs.drover.toFixed(0).padStart(6)} ms   (tmuxp/drover ${(corpusMs.tmuxp / corpusMs.drover).toFixed(2)}x)`);
    log(`  drover's library       ${corpusMs.library.toFixed(0).padStart(6)} ms   (tmuxp/library ${(corpusMs.tmuxp / corpusMs.library).toFixed(2)}x)`);

    const file = join(root, 'workspace.yaml');
    writeFileSync(file, workspaceYaml(root));
    log(`large file: ${WINDOWS.length} windows / ${WINDOWS.reduce((n, w) => n + w.panes, 0)} panes, fresh server per load, median of ${samples}`);
    const tools: Tool[] = ['tmuxp', 'drover', 'tmux', 'library'];
    // Each way builds the declared session once before anything is timed.
    for (const tool of tools) await timedLargeLoad(bench, file, tool);
    const times = new Map<Tool, number[]>(tools.map((tool) => [tool, []]));
    for (let i = 0; i < samples; i += 1) for (const tool of tools) times.get(tool)!.push(await timedLargeLoad(bench, file, tool));
    const [tmuxpMs, droverMs, floorMs, libraryMs] = tools.map((tool) => median(times.get(tool)!)) as [number, number, number, number];
    const runs = (tool: Tool): string => times.get(tool)!.map((t) => t.toFixed(0)).join(', ');
    const ratio = tmuxpMs / droverMs;
    log(`  drover workspace load  ${droverMs.toFixed(0).padStart(6)} ms   (runs: ${runs('drover')})`);
    log(`  tmuxp load -d          ${tmuxpMs.toFixed(0).padStart(6)} ms   (runs: ${runs('tmuxp')})`);
    log(`  tmux alone, chained    ${floorMs.toFixed(0).padStart(6)} ms   (runs: ${runs('tmux')}): the floor both tools share`);
    log(`  drover's library       ${libraryMs.toFixed(0).padStart(6)} ms   (runs: ${runs('library')}): the same load in this process`);
    log(`  tmuxp/drover ${ratio.toFixed(1)}x (target at least ${TARGET_RATIO}x): ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}; drover CLI/library ${(droverMs / libraryMs).toFixed(2)}x`);
    log(`  above the floor: drover ${(droverMs - floorMs).toFixed(0)} ms, tmuxp ${(tmuxpMs - floorMs).toFixed(0)} ms (${((tmuxpMs - floorMs) / (droverMs - floorMs)).toFixed(1)}x)`);
    return {
      parity_source: version.tool,
      corpus_files: files.length,
      files_tmuxp_loads: tmuxpLoads,
      files_same: same,
      files_same_over_files_tmuxp_loads: round(same / tmuxpLoads, 3),
      files_same_with_expand_env: sameWithExpansion,
      files_same_with_expand_env_over_files_tmuxp_loads: round(sameWithExpansion / tmuxpLoads, 3),
      files_drover_refuses: droverRefuses,
      files_differ_by_design: byDesign,
      files_differ_otherwise: different,
      corpus_files_timed: timed.length,
      corpus_tmuxp_ms: round(corpusMs.tmuxp, 1),
      corpus_drover_ms: round(corpusMs.drover, 1),
      corpus_drover_library_ms: round(corpusMs.library, 1),
      corpus_tmuxp_ms_over_drover_ms: round(corpusMs.tmuxp / corpusMs.drover, 2),
      corpus_tmuxp_ms_over_drover_library_ms: round(corpusMs.tmuxp / corpusMs.library, 2),
      drover_load_ms: round(droverMs, 1),
      tmuxp_load_ms: round(tmuxpMs, 1),
      tmux_floor_ms: round(floorMs, 1),
      drover_library_load_ms: round(libraryMs, 1),
      tmuxp_ms_over_drover_ms: round(ratio, 2),
      tmuxp_ms_over_drover_library_ms: round(tmuxpMs / libraryMs, 2),
      drover_ms_over_drover_library_ms: round(droverMs / libraryMs, 2),
      tmuxp_ms_above_floor_over_drover_ms_above_floor: round((tmuxpMs - floorMs) / (droverMs - floorMs), 2),
      drover_library_ms_over_tmux_floor_ms: round(libraryMs / floorMs, 2),
      target_met: ratio >= TARGET_RATIO,
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
