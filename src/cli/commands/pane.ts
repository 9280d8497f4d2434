import { Option, type Command } from 'commander';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  BUILTIN_PROVIDERS,
  SHELL_PROVIDER,
  providersFor,
  renderProcessTree,
  resolveLaunchCommand,
} from '../../agents/index.js';
import {
  AgentExitedError,
  NotInTmuxError,
  PANE_TARGET_FORMS,
  PaneNotFoundError,
  SNIPPET_LINES,
  capturePaneTail,
  deliveryReceiptJson,
  ensureWindowPrefix,
  explainPane,
  explanationJson,
  failureCode,
  insideTmux,
  mapRowJson,
  openAgentPane,
  paneCapture,
  paneCaptureJson,
  paneDeliver,
  paneKill,
  paneMap,
  paneProcess,
  paneProcessJson,
  paneQuestions,
  paneReady,
  promptFilePointer,
  questionSweepJson,
  readinessReportJson,
  renderCaptureHeader,
  renderDeliveryReceipt,
  renderExplanation,
  renderMapTable,
  renderQuestionSweep,
  renderReadiness,
  renderWindowRename,
  replaceWindowPrefix,
  resolvePaneTarget,
  windowRenameJson,
  type QuestionScope,
  type SessionScope,
} from '../../panes/index.js';
import type { PaneId, Server } from '../../tmux/index.js';
import { parseHostTarget } from '../../hosts/index.js';
import { LOCAL_HOST } from '../../mux/index.js';
import { runOnHost, type RemoteVerb } from '../remote.js';
import { openServer, resolveEndpoint, serverDescription, type SocketFlags } from '../endpoint.js';
import { EXIT, ExitError, UsageError, parseMilliseconds, reportFailure, writeJson, writeWarning, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';

/**
 * How a verb's failures become exit codes. `pane` (the verbs aimed at one pane): a missing
 * pane is 2, any other tmux failure 3, anything else 1. `sweep` (map and questions, which
 * have no single pane to be missing): every in-handler failure is 1.
 */
type Scheme = 'pane' | 'sweep';

interface JsonFlag {
  json?: boolean;
}

/** tmux could not be reached, or it ran and refused. */
const TMUX_FAILURES: ReadonlySet<string> = new Set(['tmux_failed', 'unreachable', 'server_replaced', 'timed_out']);

/** The exit status of a failure under a scheme (see EXIT). */
function exitCodeFor(error: unknown, scheme: Scheme): number {
  if (error instanceof ExitError) return error.exitCode;
  const code = failureCode(error);
  if (code === 'usage') return EXIT.usage;
  if (code === 'interrupted') return EXIT.interrupted;
  if (scheme === 'pane') {
    if (error instanceof PaneNotFoundError) return EXIT.notFound;
    if (TMUX_FAILURES.has(code)) return EXIT.tmuxFailure;
  }
  return EXIT.failure;
}

type Handler<O> = (options: O & SocketFlags, io: CliIO, ...positionals: string[]) => Promise<number | void>;

/** Wraps a pane verb: its failures get the pane family's exit codes, reported the one way every command reports them. */
function paneVerb<O extends object>(context: CommandContext, scheme: Scheme, handler: Handler<O>): (...args: unknown[]) => Promise<void> {
  return context.action<O>(async (options, io, ...positionals) => {
    try {
      return await handler(options, io, ...positionals);
    } catch (error) {
      reportFailure(io, error, (options as JsonFlag).json === true);
      return exitCodeFor(error, scheme);
    }
  });
}

async function withServer<T>(flags: SocketFlags, io: CliIO, body: (server: Server) => Promise<T>): Promise<T> {
  const server = await openServer(flags, io);
  try {
    return await body(server);
  } finally {
    await server.close();
  }
}

/** Runs `body` on the pane `target` names, resolved once to its %id (see PANE_TARGET_FORMS). */
function onPane<T>(flags: SocketFlags, io: CliIO, target: string, body: (server: Server, pane: PaneId) => Promise<T>): Promise<T> {
  return withServer(flags, io, async (server) => body(server, await resolvePaneTarget(server, target)));
}

/** How long a host may take over a pane verb with no wait of its own (tmux calls, a capture, a kill). */
const HOST_VERB_BUDGET_MS = 30_000;

/**
 * A verb on a `HOST::PANE` target runs on that host (see runOnHost) and answers its exit status;
 * `local::PANE` and every other target run here, on the pane returned.
 */
async function onHostOr(target: string, flags: SocketFlags, io: CliIO, verb: () => RemoteVerb): Promise<{ local: string } | { remote: number }> {
  const named = parseHostTarget(target);
  if (named === undefined) return { local: target };
  if (named.host === LOCAL_HOST) return { local: named.pane };
  return { remote: await runOnHost(named, verb(), flags, io) };
}

/**
 * The server a report names: the one -L/-S named, or the private `drover up` server; null
 * for the caller's own tmux server or tmux's default one.
 */
function serverLabel(flags: SocketFlags, io: CliIO): string | null {
  if (flags.socketName !== undefined) return flags.socketName;
  if (flags.socketPath !== undefined) return flags.socketPath;
  const { endpoint, source } = resolveEndpoint(flags, io);
  return source === 'drover-up' ? endpoint.socketPath : null;
}

function serverLine(label: string | null): string {
  return label === null ? '' : `server: ${label}\n`;
}

/**
 * The scope of map and questions. The current session is the one this process runs in, so
 * outside tmux the caller must name one or ask for all of them, checked before tmux is asked.
 */
function sessionScope(options: { session?: string; allSessions?: boolean } & SocketFlags, io: CliIO): SessionScope {
  if (options.allSessions) return { kind: 'all' };
  if (options.session !== undefined) return { kind: 'session', name: options.session };
  if (!insideTmux(io.env)) {
    throw new NotInTmuxError(`not inside a tmux session, so there is no current session: pass --all-sessions for every session on ${serverDescription(options, io)}, or --session NAME`);
  }
  return { kind: 'current' };
}

// ---- map --------------------------------------------------------------------------------------

interface MapOptions extends JsonFlag {
  session?: string;
  allSessions?: boolean;
}

async function map(options: MapOptions & SocketFlags, io: CliIO): Promise<void> {
  const scope = sessionScope(options, io);
  const rows = await withServer(options, io, (server) => paneMap(server, scope, { env: io.env }));
  if (options.json) writeJson(io, rows.map(mapRowJson));
  else io.stdout.write(renderMapTable(rows, { allSessions: scope.kind === 'all' }));
}

// ---- capture ----------------------------------------------------------------------------------

interface CaptureOptions extends JsonFlag {
  lines: string;
  raw?: boolean;
}

function parseLines(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`-l/--lines takes a whole number of lines, 1 or more (got ${JSON.stringify(value)})`);
  return Number(value);
}

async function capture(options: CaptureOptions & SocketFlags, io: CliIO, given: string): Promise<number | void> {
  const lines = parseLines(options.lines);
  const where = await onHostOr(given, options, io, () => {
    if (options.raw) throw new UsageError('--raw is for a pane on this machine; a pane on another host answers with its JSON document');
    return { method: 'pane.capture', params: { lines }, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true };
  });
  if ('remote' in where) return where.remote;
  const target = where.local;
  await onPane(options, io, target, async (server, pane) => {
    if (options.raw) {
      io.stdout.write(await capturePaneTail(server, pane, lines));
      return;
    }
    const captured = await paneCapture(server, pane, { lines, env: io.env });
    if (options.json) {
      writeJson(io, paneCaptureJson(captured));
      return;
    }
    io.stdout.write(renderCaptureHeader(captured));
    io.stdout.write(captured.content);
  });
}

// ---- process ----------------------------------------------------------------------------------

async function processTree(options: JsonFlag & SocketFlags, io: CliIO, target: string): Promise<void> {
  const report = await onPane(options, io, target, (server, pane) => paneProcess(server, pane, { cwd: io.cwd }));
  if (options.json) writeJson(io, paneProcessJson(report));
  else io.stdout.write(report.processes.map((root) => renderProcessTree(root)).join(''));
}

// ---- window-name ------------------------------------------------------------------------------

async function ensurePrefix(options: JsonFlag & SocketFlags, io: CliIO, target: string, prefix: string): Promise<void> {
  const result = await onPane(options, io, target, (server, pane) => ensureWindowPrefix(server, pane, prefix));
  if (options.json) writeJson(io, windowRenameJson(result));
  else io.stdout.write(renderWindowRename(result));
}

async function replacePrefix(options: JsonFlag & SocketFlags, io: CliIO, target: string, from: string, to: string): Promise<void> {
  const result = await onPane(options, io, target, (server, pane) => replaceWindowPrefix(server, pane, from, to));
  if (options.json) writeJson(io, windowRenameJson(result));
  else io.stdout.write(renderWindowRename(result));
}

// ---- open -------------------------------------------------------------------------------------

interface OpenOptions extends JsonFlag {
  provider: string;
  role?: string;
  cwd?: string;
}

function existingDirectory(path: string): string {
  let isDirectory = false;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    // reported below
  }
  if (!isDirectory) throw new UsageError(`-c ${path}: no such directory`);
  return path;
}

async function open(options: OpenOptions & SocketFlags, io: CliIO): Promise<number | void> {
  const cwd = existingDirectory(resolve(io.cwd, options.cwd ?? '.'));
  // An unknown provider or role is a usage error whether or not a server runs: checked first.
  const providers = providersFor(cwd);
  resolveLaunchCommand(providers, options.provider, options.role, io.env);
  const server = serverLabel(options, io);
  let opened;
  try {
    opened = await withServer(options, io, (bound) => openAgentPane(bound, { provider: options.provider, role: options.role, cwd, env: io.env, providers }));
  } catch (error) {
    if (!(error instanceof AgentExitedError)) throw error;
    const lastLines = error.lastLines === '' ? '' : `\n--- last ${SNIPPET_LINES} lines ---\n${error.lastLines.trimEnd()}`;
    throw new ExitError(`${error.message}${lastLines}`, EXIT.failure, { code: 'agent_exited', exit_status: error.exitStatus, last_lines: error.lastLines });
  }
  if (options.json) {
    writeJson(io, { pane_id: opened.pane, provider: opened.provider, server, command: opened.command, bypasses_permissions: opened.bypassesPermissions });
    return;
  }
  io.stdout.write(`opened pane ${opened.pane} (provider ${opened.provider})\n${serverLine(server)}`);
  if (opened.bypassesPermissions) writeWarning(io, `${opened.provider} runs with its permission checks off (bypass_permissions in drover.yaml)`);
}

// ---- ready ------------------------------------------------------------------------------------

async function ready(options: JsonFlag & SocketFlags, io: CliIO, given: string): Promise<number | void> {
  const where = await onHostOr(given, options, io, () => ({ method: 'pane.ready', params: {}, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true }));
  if ('remote' in where) return where.remote;
  const target = where.local;
  const server = serverLabel(options, io);
  const { pane, report } = await onPane(options, io, target, async (bound, id) => ({ pane: id, report: await paneReady(bound, id, { signal: io.signal, cwd: io.cwd }) }));
  if (options.json) {
    writeJson(io, { ...readinessReportJson(pane, report), server });
  } else io.stdout.write(renderReadiness(report, pane, server ?? undefined));
}

// ---- deliver ----------------------------------------------------------------------------------

interface DeliverOptions extends JsonFlag {
  promptFile?: string;
  text?: string;
  stdin?: boolean;
  waitMs: string;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}


async function deliver(options: DeliverOptions & SocketFlags, io: CliIO, given: string): Promise<number | void> {
  const sources = [options.promptFile !== undefined, options.text !== undefined, options.stdin === true].filter(Boolean).length;
  if (sources !== 1) throw new UsageError('give exactly one of --prompt-file PATH, --text STRING or --stdin');
  const composerWaitMs = parseMilliseconds('--wait-ms', options.waitMs, 0);
  const named = parseHostTarget(given);
  if (named !== undefined && named.host !== LOCAL_HOST) {
    // The prompt file's path is the host's (the agent there reads it); standard input is read here and sent as text.
    const params = options.promptFile !== undefined ? { prompt_file: options.promptFile } : { text: options.stdin ? await readAll(io.stdin) : options.text! };
    return runOnHost(named, { method: 'pane.deliver', params: { ...params, wait_ms: composerWaitMs }, hostBudgetMs: HOST_VERB_BUDGET_MS + composerWaitMs, json: options.json === true }, options, io);
  }
  const target = named?.pane ?? given;
  const text = options.promptFile !== undefined ? promptFilePointer(options.promptFile, io.cwd) : options.stdin ? await readAll(io.stdin) : options.text!;
  const { pane, receipt } = await onPane(options, io, target, async (server, id) => ({
    pane: id,
    receipt: await paneDeliver(server, id, text, { signal: io.signal, cwd: io.cwd, composerWaitMs, onWarning: (message) => writeWarning(io, message) }),
  }));
  if (options.json) {
    const source = options.promptFile !== undefined ? { source: 'prompt', path: options.promptFile } : { source: options.stdin ? 'stdin' : 'text' };
    writeJson(io, { ...deliveryReceiptJson(pane, receipt), ...source });
  } else {
    (receipt.status === 'submitted' ? io.stdout : io.stderr).write(renderDeliveryReceipt(pane, receipt));
  }
  if (receipt.status === 'failed') return EXIT.failure;
  if (receipt.status === 'staged_unconfirmed') return EXIT.unconfirmed;
}

// ---- kill -------------------------------------------------------------------------------------

async function kill(options: JsonFlag & SocketFlags, io: CliIO, given: string): Promise<number | void> {
  const where = await onHostOr(given, options, io, () => ({ method: 'pane.kill', params: {}, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true }));
  if ('remote' in where) return where.remote;
  const target = where.local;
  const server = serverLabel(options, io);
  const pane = await onPane(options, io, target, async (bound, id) => {
    await paneKill(bound, id);
    return id;
  });
  if (options.json) writeJson(io, { pane_id: pane, killed: true, server });
  else io.stdout.write(`killed ${pane}\n${serverLine(server)}`);
}

// ---- questions --------------------------------------------------------------------------------

interface QuestionsOptions extends JsonFlag {
  allSessions?: boolean;
  panes?: string[];
}

/** The pane targets --panes lists (repeated or comma-separated), each resolved to its %id. */
async function namedPanes(server: Server, values: readonly string[]): Promise<QuestionScope> {
  const targets = values.flatMap((value) => value.split(',')).map((id) => id.trim()).filter((id) => id !== '');
  const panes: PaneId[] = [];
  for (const target of targets) panes.push(await resolvePaneTarget(server, target));
  return { kind: 'panes', panes };
}

async function questions(options: QuestionsOptions & SocketFlags, io: CliIO): Promise<void> {
  if (options.panes !== undefined && options.panes.every((value) => value.split(',').every((id) => id.trim() === ''))) throw new UsageError('--panes needs at least one pane');
  const scope = options.panes === undefined ? sessionScope(options, io) : undefined;
  const sweep = await withServer(options, io, async (server) => paneQuestions(server, scope ?? (await namedPanes(server, options.panes!)), { env: io.env }));
  if (options.json) writeJson(io, questionSweepJson(sweep));
  else io.stdout.write(renderQuestionSweep(sweep));
}

// ---- explain ----------------------------------------------------------------------------------

async function explain(options: JsonFlag & SocketFlags, io: CliIO, target: string): Promise<void> {
  const explanation = await onPane(options, io, target, (server, pane) => explainPane(server, pane, { cwd: io.cwd }));
  if (options.json) writeJson(io, explanationJson(explanation));
  else io.stdout.write(renderExplanation(explanation));
}

// ---- registration -----------------------------------------------------------------------------

const JSON_HELP = 'print one JSON document';
const PANE_ARGUMENT = `the pane: ${PANE_TARGET_FORMS}; HOST::PANE (gpu::%3) for a pane on a host of \`drover host list\`, answered with that host's JSON document`;

const MAP_HELP = `
Identity: a row is identified by "pane_id" (a %N id, meaningful on its own server) and
"window_id" (@N, stable across swap-window). "session" and "window_index" are for display
only: swap-window, move-window and renames change them, so never join on them.

Without --session or --all-sessions the map shows the session this runs in, so outside tmux
one of them is needed.

Exit codes: 0 (also when no pane matches), 1 failure (e.g. outside tmux without
--session/--all-sessions), 2 usage error.`;

const PANE_VERB_HELP = `
Exit codes: 0 success, 1 failure, 2 pane not found or usage error, 3 any other tmux failure.`;

/** The open help lists each built-in's command line and the flag that bypass_permissions would add. */
function openHelp(): string {
  const rows = Object.values(BUILTIN_PROVIDERS).map(
    (provider) => `  ${provider.name.padEnd(9)} ${provider.interactiveCommand ?? ''}${provider.bypassFlag === undefined ? '' : `   (bypass: ${provider.bypassFlag})`}`,
  );
  return `
Built-in providers start the agent with its own permission checks on:
${rows.join('\n')}
  ${SHELL_PROVIDER.padEnd(9)} your $SHELL (else /bin/sh): a plain shell, no agent
A project opts in to the bypass flag with "providers.<name>.bypass_permissions: true" in
drover.yaml (or .drover/config.yaml); drover then warns on every open. --role picks the
model and effort of providers.<name>.profiles.<role> (default: the "default" profile).

The agent runs as the pane's own program (no shell in between) unless its command line needs
a shell. drover watches it start (an agent it knows until it draws its composer or a dialog,
up to 30 s; any other program for 2 s): an agent that exits meanwhile is reported with its
last lines, exit 1, and its pane is closed.

Exit codes: 0 opened, 1 the agent exited at once (or another failure), 2 usage error (unknown
provider, program not on the server's PATH), 3 any other tmux failure.`;
}

const READY_HELP = `
Agents drover knows (claude, codex, gemini, opencode) are read off their screen and nothing is
typed. Any other program gets a probe word typed (never submitted) and erased again.

Exit codes: 0 for every classification (the state is the answer), 2 pane not found (or usage
error), 3 any other tmux failure.`;

const DELIVER_HELP = `
To an agent drover knows, the text is pasted (bracketed paste), checked in the composer
(as typed or as the agent's paste placeholder), completion menus are closed, Enter is
pressed, and success needs evidence: the agent turned busy, asks permission, or the composer
emptied. A draft already in the composer is cleared first and reported. Dialogs, questions and
busy turns are never typed into. Other programs get the text typed as keys (one line only).

Exit codes: 0 submitted, 1 failed (nothing or not all of it was taken; the reason says which),
2 pane not found or usage error (empty text, control characters), 3 any other tmux failure,
4 staged_unconfirmed (typed and Enter pressed, but nothing on screen confirmed the agent took it).`;

const WINDOW_NAME_HELP = `
Exit codes: 0 renamed or nothing to do, 2 pane not found or usage error (an empty prefix),
3 any other tmux failure (tmux unreachable, rename refused).`;

export function registerPaneCommands(program: Command, context: CommandContext): void {
  const pane = program
    .command('pane')
    .description('agent pane verbs: map, capture, process, window-name, open, ready, deliver, kill, questions, explain')
    // Every verb takes -L/-S; say so in each one's help (subcommands inherit this setting).
    .configureHelp({ showGlobalOptions: true });

  pane
    .command('map')
    .description('every pane with its worktree, fab change and stage, and agent state')
    .option('--json', 'print a JSON array of rows')
    .option('--session <name>', 'only this session (no $TMUX needed)')
    .addOption(new Option('--all-sessions', 'every session (no $TMUX needed)').conflicts('session'))
    .addHelpText('after', MAP_HELP)
    .action(paneVerb(context, 'sweep', map));

  pane
    .command('capture')
    .description('the last lines of a pane, with its worktree, change, stage and agent state')
    .argument('<pane>', PANE_ARGUMENT)
    .option('-l, --lines <n>', 'how many lines (1 or more)', '50')
    .option('--json', JSON_HELP)
    .addOption(new Option('--raw', 'the captured text only, bytes as tmux printed them').conflicts('json'))
    .addHelpText('after', PANE_VERB_HELP)
    .action(paneVerb(context, 'pane', capture));

  pane
    .command('process')
    .description('the process tree running in a pane, with agents picked out')
    .argument('<pane>', PANE_ARGUMENT)
    .option('--json', JSON_HELP)
    .addHelpText('after', PANE_VERB_HELP)
    .action(paneVerb(context, 'pane', processTree));

  const windowName = pane.command('window-name').description('guarded rewrites of the window name of a pane');
  windowName
    .command('ensure-prefix')
    .description('prepend <char> to the window name unless it already starts with it')
    .argument('<pane>', PANE_ARGUMENT)
    .argument('<char>', 'the prefix, e.g. »')
    .option('--json', JSON_HELP)
    .addHelpText('after', WINDOW_NAME_HELP)
    .action(paneVerb(context, 'pane', ensurePrefix));
  windowName
    .command('replace-prefix')
    .description('swap the prefix <from> for <to> (empty <to> strips it); a name without <from> is left alone')
    .argument('<pane>', PANE_ARGUMENT)
    .argument('<from>', 'the prefix to replace')
    .argument('<to>', 'the new prefix (may be empty)')
    .option('--json', JSON_HELP)
    .addHelpText('after', WINDOW_NAME_HELP)
    .action(paneVerb(context, 'pane', replacePrefix));

  pane
    .command('open')
    .description("start a provider's agent in a new pane: a split of the caller's window, else a new window")
    .requiredOption('--provider <name>', `claude, codex, gemini, opencode, ${SHELL_PROVIDER}, or one from drover.yaml`)
    .option('--role <role>', 'whose model/effort fills apply', 'default')
    .option('-c, --cwd <dir>', 'where the agent starts (and where drover.yaml is looked up)')
    .option('--json', JSON_HELP)
    .addHelpText('after', openHelp())
    .action(paneVerb(context, 'pane', open));

  pane
    .command('ready')
    .description('classify a pane: ready, busy, booting, parked (a dialog or question holds it), shell or exited')
    .argument('<pane>', PANE_ARGUMENT)
    .option('--json', JSON_HELP)
    .addHelpText('after', READY_HELP)
    .action(paneVerb(context, 'pane', ready));

  pane
    .command('deliver')
    .description('deliver a prompt to an agent pane and report what was seen: submitted, staged_unconfirmed or failed')
    .argument('<pane>', PANE_ARGUMENT)
    .option('--prompt-file <path>', 'delivers "Read <path> and execute it."')
    .addOption(new Option('--text <string>', 'delivers this text (line breaks included)').conflicts('promptFile'))
    .addOption(new Option('--stdin', 'delivers the text read from standard input').conflicts(['promptFile', 'text']))
    .option('--wait-ms <ms>', 'how long a busy or starting agent may take to reach its composer', '0')
    .option('--json', JSON_HELP)
    .addHelpText('after', DELIVER_HELP)
    .action(paneVerb(context, 'pane', deliver));

  pane
    .command('kill')
    .description('kill a pane')
    .argument('<pane>', PANE_ARGUMENT)
    .option('--json', JSON_HELP)
    .addHelpText('after', PANE_VERB_HELP)
    .action(paneVerb(context, 'pane', kill));

  pane
    .command('explain')
    .description('what drover reads off a pane and which rule decided: agent, hook state, screen phase, readiness, question')
    .argument('<pane>', PANE_ARGUMENT)
    .option('--json', JSON_HELP)
    .addHelpText('after', `\nTypes nothing.\n${PANE_VERB_HELP}`)
    .action(paneVerb(context, 'pane', explain));

  pane
    .command('questions')
    .description('sweep waiting and idle agent panes for questions they are showing')
    .option('--all-sessions', 'every session (no $TMUX needed)')
    .addOption(new Option('--panes <panes...>', 'these panes (ids or SESSION:WINDOW[.PANE] targets), whatever their state; repeatable or comma-separated').conflicts('allSessions'))
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      `\nWithout --all-sessions or --panes the sweep covers the session this runs in, so outside tmux one
of them is needed.

Exit codes: 0 for any sweep (matches and skips are data), 1 failure, 2 usage error.`,
    )
    .action(paneVerb(context, 'sweep', questions));
}
