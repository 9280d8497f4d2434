import type { Command } from 'commander';
import { userInfo } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { AbortedError, type TerminalResult } from '../../process/index.js';
import { Server, type Endpoint } from '../../tmux/index.js';
import { failureCode as errorCode, type FailureCode } from '../../panes/index.js';
import {
  ApplyError,
  DETACHED_BUILD_SIZE,
  WorkspaceError,
  applyPlan,
  captureWorkspaceSnapshot,
  checkDirectories,
  importTmuxinatorFile,
  loadWorkspaceFile,
  planWorkspace,
  tmuxinatorImportToYaml,
  workspaceToJSON,
  type ApplyResult,
  type PlanSize,
  type PlanStep,
  type TmuxinatorImport,
  type WorkspaceDocument,
  type WorkspacePlan,
} from '../../workspace/index.js';
import { openServer, type SocketFlags } from '../endpoint.js';
import { EXIT, ExitError, UsageError, collect, messageOf, shellQuote, writeJson, writeLine, writeWarning, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { progressOn, type Progress } from '../progress.js';
import { attachArgv } from './server.js';

/**
 * The deadline of a load's tmux work unless --timeout-ms says otherwise (the file's
 * `sleep_before`/`sleep_after` pauses are added to it). The library's 5 s suits a small
 * layout; real files with tens of windows need more, and a stuck tmux still fails within half
 * a minute.
 */
export const DEFAULT_LOAD_TIMEOUT_MS = 30_000;

/** `drover workspace load` adds 3 to the usual codes: effects happened (or may have) and the load did not finish. */
export const WORKSPACE_EXIT = Object.freeze({ ...EXIT, partial: 3 });

const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

/** Flags every command that reads a workspace file takes. */
export interface WorkspaceFileFlags extends SocketFlags {
  json?: boolean;
  expandEnv?: string[];
}

/** Flags of the commands that plan a build: `plan`, `load` and `drover up FILE`. */
interface BuildFlags extends WorkspaceFileFlags {
  createDirs?: boolean;
}

/** Flags of a load, shared by `drover workspace load` and `drover up FILE`. */
export interface LoadFlags extends BuildFlags {
  compensate?: boolean;
  timeoutMs?: string;
}


interface LoadCommandFlags extends LoadFlags {
  attach?: boolean;
  switch?: string;
}

/** A file read, planned and checked, with the load's settings; nothing has touched tmux yet. */
export interface PreparedLoad {
  readonly file: string;
  readonly plan: WorkspacePlan;
  readonly timeoutMs: number;
  readonly compensate: boolean;
}

/** How a load ended: its ledger, the exit status, and the message for stderr when it failed. */
export interface LoadOutcome {
  readonly result: ApplyResult;
  readonly code: number;
  readonly elapsedMs: number;
  /** Set when the apply failed. */
  readonly error?: ApplyError;
}

/** Reads and parses the file; an unreadable or invalid file is a usage error (exit 2) naming the file and the structural path. */
async function readWorkspace(file: string, flags: WorkspaceFileFlags, io: CliIO): Promise<WorkspaceDocument> {
  const names = flags.expandEnv ?? [];
  const bad = names.find((name) => !VARIABLE_NAME.test(name));
  if (bad !== undefined) throw new UsageError(`--expand-env takes a variable name such as HOME (got ${JSON.stringify(bad)})`);
  const env = Object.fromEntries(Object.entries(io.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  try {
    return await loadWorkspaceFile(resolve(io.cwd, file), { expandEnv: names, env, homeDir: homeDirectory(io.env) });
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    throw invalidWorkspace(file, error.problems);
  }
}

/** Exit 2 naming the file and every problem's place, one per line; JSON lists them under `problems`. */
function invalidWorkspace(file: string, problems: readonly WorkspaceError[]): ExitError {
  const lines = problems.map((problem) => `${file}: ${problem.message}`);
  const message = lines.length === 1 ? (lines[0] ?? '') : [`${file}: ${lines.length} problems`, ...lines].join('\n');
  const describe = (problem: WorkspaceError) => ({
    path: problem.path,
    reason: problem.code,
    message: problem.message,
    unsupported_feature: problem.unsupportedFeature ?? null,
    line: problem.line ?? null,
    column: problem.column ?? null,
  });
  const [first] = problems;
  return new ExitError(message, EXIT.usage, {
    code: 'invalid_workspace',
    file,
    ...(first === undefined ? {} : describe(first)),
    problems: problems.map(describe),
  });
}

/** What `~` means in the file: $HOME when it is a usable path, else the account's home. */
function homeDirectory(env: NodeJS.ProcessEnv): string {
  return env.HOME !== undefined && isAbsolute(env.HOME) ? env.HOME : userInfo().homedir;
}

function parseTimeout(value: string | undefined): number {
  if (value === undefined) return DEFAULT_LOAD_TIMEOUT_MS;
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < 1) {
    throw new UsageError(`--timeout-ms must be a positive whole number of milliseconds (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

/** Checks the flags, reads and plans the file: every usage and file error surfaces here, before any server is touched. */
export async function prepareLoad(file: string, flags: LoadFlags, io: CliIO): Promise<PreparedLoad> {
  const timeoutMs = parseTimeout(flags.timeoutMs);
  const doc = await readWorkspace(file, flags, io);
  return { file, plan: await planBuild(file, doc, flags, io), timeoutMs, compensate: flags.compensate === true };
}

/** The build's plan: at this terminal's size, creating missing start directories only with --create-dirs. */
async function planBuild(file: string, doc: WorkspaceDocument, flags: BuildFlags, io: CliIO): Promise<WorkspacePlan> {
  const createDirectories = await checkDirectories(doc, { createMissing: flags.createDirs === true }).catch((error: unknown) => {
    if (!(error instanceof WorkspaceError)) throw error;
    throw invalidWorkspace(file, error.problems);
  });
  return planWorkspace(doc, { size: buildSize(io), createDirectories });
}

/** The invoking terminal's size when standard output is one, else DETACHED_BUILD_SIZE. */
function buildSize(io: Pick<CliIO, 'terminalSize'>): PlanSize {
  const terminal = io.terminalSize;
  if (terminal !== undefined && Number.isSafeInteger(terminal.columns) && Number.isSafeInteger(terminal.rows) && terminal.columns > 0 && terminal.rows > 0) {
    return { width: terminal.columns, height: terminal.rows, reason: "the size of drover's terminal" };
  }
  return DETACHED_BUILD_SIZE;
}

/**
 * What a person is told while a load runs `step`: which window of how many it builds, or what
 * it does there; the session's own settings otherwise.
 */
export function loadStatus(plan: WorkspacePlan, step: PlanStep): string {
  // A step's window is the one its symbols name: `window:2`, or a pane in it, `pane:2.1`.
  const window = [...step.produces, ...step.consumes].map((symbol) => /^(?:window|pane):(\d+)/.exec(symbol)?.[1]).find((index) => index !== undefined);
  const doing = window === undefined ? 'setting up the session' : `${stepVerb(step)} window ${Number(window) + 1}/${plan.windowCount}`;
  return `loading ${JSON.stringify(plan.sessionName)}: ${doing} …`;
}

function stepVerb(step: PlanStep): string {
  if (step.op === 'sleep') return `pausing ${step.args.ms} ms in`;
  if (step.effect === 'dispatch') return 'sending commands to';
  if (step.effect === 'focus') return 'focusing';
  return 'building';
}

/**
 * Applies a prepared plan on a borrowed server, showing each step's status on `progress`.
 * Commands ride one control connection (one tmux client for the whole load instead of one per
 * step); the binding is released before this returns. Failures come back as an outcome with
 * the ledger, never as a throw.
 */
export async function applyWorkspace(endpoint: Endpoint, prepared: PreparedLoad, io: CliIO, progress: Progress): Promise<LoadOutcome> {
  const started = performance.now();
  const server = await Server.open(endpoint, { env: io.env });
  try {
    await server.connect({ signal: io.signal });
    const onStep = (step: PlanStep): void => progress.status(loadStatus(prepared.plan, step));
    const result = await applyPlan(prepared.plan, server, { timeoutMs: prepared.timeoutMs, signal: io.signal, compensate: prepared.compensate, onStep });
    return { result, code: WORKSPACE_EXIT.ok, elapsedMs: performance.now() - started };
  } catch (error) {
    if (!(error instanceof ApplyError)) throw error;
    return { result: error.result, code: failureCode(error, io), elapsedMs: performance.now() - started, error };
  } finally {
    progress.end();
    await server.close();
  }
}

/** 130 for an interrupt, 3 when something may have changed, 1 for a failure before any effect (a conflict, say). */
function failureCode(error: ApplyError, io: CliIO): number {
  if (io.signal.aborted || error.cause instanceof AbortedError) return WORKSPACE_EXIT.interrupted;
  return error.result.partial ? WORKSPACE_EXIT.partial : WORKSPACE_EXIT.failure;
}

/** A failed load's code: a conflict found before anything changed is `refused`, else what its cause says, else `load_failed`. */
function applyFailureCode(error: ApplyError): FailureCode {
  if (error.result.conflicts.length > 0) return 'refused';
  const cause = error.cause === undefined ? 'failed' : errorCode(error.cause);
  return cause === 'failed' ? 'load_failed' : cause;
}

/** The JSON of a load: the ApplyResult's fields, where it ran, and the error when it failed. */
export function loadDocument(endpoint: Endpoint, outcome: LoadOutcome): Record<string, unknown> {
  const { error } = outcome;
  return {
    socket_path: endpoint.socketPath,
    ...outcome.result.toJSON(),
    elapsed_ms: Math.round(outcome.elapsedMs),
    // `code` is the stable one every error document carries (the cause's, as for any other command); `type` stays for scripts that read it.
    ...(error === undefined ? {} : { error: { code: applyFailureCode(error), type: error.name, message: error.message, phase: error.phase, delivery: error.delivery, exit_code: outcome.code } }),
  };
}

/** The lines a person reads about a load: what was built, or what failed and what it left. */
export function loadSummary(outcome: LoadOutcome, plan: WorkspacePlan): string[] {
  const { result } = outcome;
  const count = (kind: string): number => result.created.filter((ref) => ref.kind === kind).length;
  const made = `${count('window')} window(s), ${count('pane')} pane(s)`;
  const dispatched = result.effects.filter((effect) => effect.outcome === 'dispatch_only').length;
  if (result.success) {
    return [
      `drover: loaded workspace ${JSON.stringify(plan.sessionName)} as session ${result.sessionId}: ${made}, ${result.completedSteps.length} steps in ${Math.round(outcome.elapsedMs)} ms`,
      ...(dispatched > 0 ? [`commands: ${dispatched} sent to their panes (sent, not awaited)`] : []),
    ];
  }
  const lines: string[] = [];
  if (result.conflicts.length > 0) for (const conflict of result.conflicts) lines.push(`conflict: ${conflict.path}: ${conflict.message}`);
  if (result.compensation === 'completed') {
    lines.push(`compensation: completed (removed session ${result.sessionId} with the ${made} this load created)`);
    return lines;
  }
  if (result.created.length > 0 || result.uncertain) {
    lines.push(`left behind: ${result.created.length === 0 ? 'nothing known' : `session ${result.sessionId ?? '(none)'} with ${made}`}${result.uncertain ? '; the failed step may also have taken effect' : ''}`);
  }
  if (result.compensation === 'refused') lines.push('compensation: refused (tmux could not prove the session holds only what this load created, so it was kept)');
  if (result.compensation === 'failed') lines.push('compensation: failed (removing the session did not succeed; it may still be there)');
  return lines;
}

/** Writes a failed load: the error on stderr, and the ledger as one JSON document or as lines. */
export function reportFailedLoad(io: CliIO, json: boolean, endpoint: Endpoint, outcome: LoadOutcome, plan: WorkspacePlan): number {
  writeLine(io.stderr, `drover: ${outcome.code === WORKSPACE_EXIT.interrupted ? 'interrupted: ' : ''}${outcome.error?.message ?? 'the workspace load failed'}`);
  // For people only: tmux's own words on why (the JSON keeps just the failure's class).
  const cause = outcome.error?.cause;
  if (cause instanceof Error && !(cause instanceof AbortedError)) writeLine(io.stderr, `cause: ${cause.message}`);
  if (json) writeJson(io, loadDocument(endpoint, outcome));
  else for (const line of loadSummary(outcome, plan)) writeLine(io.stderr, line);
  return outcome.code;
}

// ---- validate ---------------------------------------------------------------------------------

async function validate(flags: WorkspaceFileFlags, io: CliIO, file?: string): Promise<void> {
  const doc = await readWorkspace(requireFile(file), flags, io);
  const panes = doc.windows.reduce((total, window) => total + window.panes.length, 0);
  if (flags.json) {
    writeJson(io, { valid: true, file, session_name: doc.sessionName, window_count: doc.windows.length, pane_count: panes, document: workspaceToJSON(doc) });
    return;
  }
  writeLine(io.stdout, `${file}: valid workspace for session ${JSON.stringify(doc.sessionName)}: ${doc.windows.length} window(s), ${panes} pane(s)`);
}

function requireFile(file: string | undefined): string {
  if (file === undefined || file === '') throw new UsageError('name a workspace file (.yaml, .yml or .json)');
  return file;
}

// ---- plan -------------------------------------------------------------------------------------

async function plan(flags: BuildFlags & { live?: boolean }, io: CliIO, file?: string): Promise<number> {
  const path = requireFile(file);
  const doc = await readWorkspace(path, flags, io);
  let checkedAt: string | null = null;
  let planned: WorkspacePlan;
  if (flags.live) {
    const server = await openServer(flags, io);
    try {
      const draft = await planBuild(path, doc, flags, io);
      planned = draft.checkedAgainst(await captureWorkspaceSnapshot(server, { signal: io.signal, plan: draft }));
      checkedAt = server.endpoint.socketPath;
    } finally {
      await server.close();
    }
  } else {
    planned = await planBuild(path, doc, flags, io);
  }
  if (flags.json) writeJson(io, { ...planned.toJSON(), live: checkedAt !== null, socket_path: checkedAt });
  else {
    writeLine(io.stdout, planned.toText());
    if (checkedAt !== null) writeLine(io.stdout, `Checked against the tmux server at ${checkedAt}: ${planned.conflicts.length === 0 ? 'no conflicts' : `${planned.conflicts.length} conflict(s)`}`);
  }
  if (planned.conflicts.length === 0) return EXIT.ok;
  writeLine(io.stderr, `drover: the plan conflicts with the server: ${planned.conflicts.map((c) => `${c.path}: ${c.message}`).join('; ')}`);
  return EXIT.failure;
}

// ---- import -----------------------------------------------------------------------------------

/** Prints the converted workspace (YAML, or --json with the notes); what did not convert goes to stderr too. */
async function importProject(flags: { json?: boolean }, io: CliIO, format?: string, file?: string): Promise<void> {
  if (format !== 'tmuxinator') throw new UsageError(`drover imports tmuxinator projects (got ${JSON.stringify(format)}): drover workspace import tmuxinator FILE`);
  const path = requireFile(file);
  let result: TmuxinatorImport;
  try {
    result = await importTmuxinatorFile(resolve(io.cwd, path));
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    throw invalidWorkspace(path, error.problems);
  }
  if (flags.json) {
    writeJson(io, { source: path, workspace: result.workspace, notes: result.notes });
    return;
  }
  io.stdout.write(tmuxinatorImportToYaml(result, path));
  for (const note of result.notes) writeWarning(io, `not converted: ${note}`);
}

// ---- load -------------------------------------------------------------------------------------

function checkFollowUp(flags: LoadCommandFlags, io: CliIO): void {
  if (flags.attach && flags.switch !== undefined) throw new UsageError('give either --attach or --switch CLIENT, not both');
  if (flags.switch !== undefined && (flags.switch === '' || flags.switch.startsWith('-') || CONTROL_CHARACTER.test(flags.switch))) {
    throw new UsageError('--switch needs a tmux client name such as /dev/pts/3 (see `tmux list-clients`)');
  }
  if (flags.attach) callerTerminal(io);
}

/** The terminal --attach attaches: standard input's, with its TERM. */
function callerTerminal(io: CliIO): { terminal: { fd: number }; term: string } {
  const fd = (io.stdin as Partial<{ fd: number }>).fd;
  if (!io.stdinIsTTY || typeof fd !== 'number') throw new UsageError('--attach needs a terminal on standard input');
  if (!io.env.TERM) throw new UsageError('--attach needs TERM set to the type of that terminal');
  return { terminal: { fd }, term: io.env.TERM };
}

async function load(flags: LoadCommandFlags, io: CliIO, file?: string): Promise<number> {
  checkFollowUp(flags, io);
  const prepared = await prepareLoad(requireFile(file), flags, io);
  // Fails with the usual explanation (exit 1) when no server runs; load never starts one.
  const probe = await openServer(flags, io);
  const { endpoint } = probe;
  await probe.close();
  const outcome = await applyWorkspace(endpoint, prepared, io, progressOn(io, flags));
  const json = flags.json === true;
  if (outcome.error !== undefined) return reportFailedLoad(io, json, endpoint, outcome, prepared.plan);

  const sessionId = outcome.result.sessionId!;
  const attach = attachArgv(endpoint, outcome.result.sessionName);
  const document = { ...loadDocument(endpoint, outcome), attach, attach_command: attach.map(shellQuote).join(' ') };
  if (flags.switch !== undefined) {
    const failed = await followUp(endpoint, io, (server) => server.switchClient(flags.switch!, server.session(sessionId), { signal: io.signal }).then(() => undefined));
    Object.assign(document, { switched: { client: flags.switch, ok: failed === null, error: failed } });
    if (failed !== null) return reportFollowUpFailure(io, json, document, `switching client ${flags.switch} failed: ${failed}; the session is kept`);
  }
  if (!json) {
    for (const line of loadSummary(outcome, prepared.plan)) writeLine(io.stdout, line);
    if (flags.switch !== undefined) writeLine(io.stdout, `switched: ${flags.switch}`);
    else writeLine(io.stdout, `attach: ${attach.map(shellQuote).join(' ')}`);
  }
  if (flags.attach) {
    let exit: TerminalResult | undefined;
    const failed = await followUp(endpoint, io, async (server) => {
      exit = await server.attach(server.session(sessionId), { ...callerTerminal(io), signal: io.signal });
      if (exit.exitCode !== 0) throw new Error(`tmux attach exited with ${exit.exitCode ?? exit.signal}`);
    });
    Object.assign(document, { attached: { ok: failed === null, exit_code: exit?.exitCode ?? null, error: failed } });
    if (failed !== null) return reportFollowUpFailure(io, json, document, `attaching failed: ${failed}; the session is kept`);
  }
  if (json) writeJson(io, document);
  return WORKSPACE_EXIT.ok;
}

/** Runs what comes after a successful apply on a fresh binding; returns the failure's message, or null. */
async function followUp(endpoint: Endpoint, io: CliIO, body: (server: Server) => Promise<void>): Promise<string | null> {
  try {
    const server = await Server.open(endpoint, { env: io.env });
    try {
      await body(server);
    } finally {
      await server.close();
    }
    return null;
  } catch (error) {
    return messageOf(error);
  }
}

function reportFollowUpFailure(io: CliIO, json: boolean, document: Record<string, unknown>, message: string): number {
  writeLine(io.stderr, `drover: the workspace loaded, but ${message}`);
  if (json) writeJson(io, document);
  return WORKSPACE_EXIT.partial;
}

export function registerWorkspaceCommands(program: Command, context: CommandContext): void {
  const workspace = program.command('workspace').description('tmuxp-style workspace files: validate, plan and load a session layout, or import a tmuxinator project');
  const expandEnv = ['--expand-env <name>', 'expand ${NAME} and $NAME for this variable from the environment (repeatable)', collect] as const;
  const createDirs = ['--create-dirs', 'create start directories that do not exist (the plan lists them)'] as const;

  workspace
    .command('validate')
    .description('check a workspace file (reads nothing else, talks to no tmux)')
    .argument('<file>', 'workspace file (.yaml, .yml or .json)')
    .option(...expandEnv)
    .option('--json', 'print one JSON document (with the canonical workspace)')
    .action(context.action(validate));

  workspace
    .command('plan')
    .description('print the ordered tmux steps a load would run; --live checks them against the server')
    .argument('<file>', 'workspace file (.yaml, .yml or .json)')
    .option(...expandEnv)
    .option(...createDirs)
    .option('--live', 'read the server (-L/-S, $TMUX, or the `drover up` server) and report conflicts (exit 1)')
    .option('--json', 'print one JSON document')
    .action(context.action(plan));

  workspace
    .command('load')
    .description('build the workspace as a new session on a running tmux server (exit 3: partial or uncertain effects)')
    .argument('<file>', 'workspace file (.yaml, .yml or .json)')
    .option(...expandEnv)
    .option(...createDirs)
    .option('--attach', 'attach this terminal to the new session afterwards')
    .option('--switch <client>', 'switch this tmux client (tmux list-clients) to the new session afterwards')
    .option('--compensate', 'on failure, remove the session this load created (only what it provably created)')
    .option('--timeout-ms <ms>', `deadline of the load's tmux work; the file's pauses are added to it (default ${DEFAULT_LOAD_TIMEOUT_MS})`)
    .option('--json', 'print one JSON document: the load ledger (created ids, effects, completed steps, failure, compensation)')
    .action(context.action(load));

  workspace
    .command('import')
    .description('convert a tmuxinator project into a drover workspace (printed as YAML; ERB templates are refused)')
    .argument('<format>', 'the project format: tmuxinator')
    .argument('<file>', 'the tmuxinator project file (.yml)')
    .option('--json', 'print one JSON document: the workspace and what was not converted')
    .action(context.action(importProject));
}
