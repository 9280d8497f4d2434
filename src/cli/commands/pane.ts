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
import { invokingPane, LOCAL_HOST, looksLikePaneKey, MAX_GRID_LINES, MUX_NAMES, type MuxPort } from '../../mux/index.js';
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
  mapRowJson,
  openAgentPane,
  paneCapture,
  paneCaptureJson,
  paneDeliver,
  paneSendKeys,
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
  windowRenameJson,
  type DeliveryReceipt,
  type PaneRef,
  type QuestionScope,
  type SessionScope,
} from '../../panes/index.js';
import { Endpoint, Server } from '../../tmux/index.js';
import { resolveEndpoint, serverDescription, type SocketFlags } from '../endpoint.js';
import { DeliveryLedger, deliveryIdProblem, newDeliveryId, parseHostTarget, RPC_GLANCE_SINCE, RPC_TO_SHELL, type KnownDelivery } from '../../hosts/index.js';
import { DroverError, shellQuote } from '../../process/index.js';
import { droverCommand } from '../invocation.js';
import { deliveryLedgerDirectory } from '../state.js';
import type { RemoteVerb, runOnHost as runOnHostNow } from '../remote.js';
import { EXIT, ExitError, UsageError, errorDocument, messageOf, parseMilliseconds, reportFailure, writeJson, writeWarning, type CliIO } from '../io.js';
import type { AllHostsColumn, runAcrossHosts as runAcrossHostsNow } from '../all-hosts.js';
import { resolveTmuxTarget } from '../pane-target.js';
import type { CommandContext } from '../program.js';
import { openResolvedMux, openResolvedTmux, releaseResolvedTmux, resolveMux, type ResolvedMux } from './mux.js';

/**
 * How a verb's failures become exit codes. Both schemes: a usage error or a capability the
 * multiplexer lacks is 2, a pane key of another server run 6. `pane` (the verbs aimed at one
 * pane): a missing pane is 2, a multiplexer that failed or did not answer 3, anything else 1.
 * `sweep` (map and questions, which have no single pane to be missing): any other failure is 1.
 */
type Scheme = 'pane' | 'sweep';

interface JsonFlag {
  json?: boolean;
}

/** The global -L/-S and the pane family's --mux. */
interface PaneFlags extends SocketFlags {
  mux?: string;
}

/** The multiplexer could not be reached, or it ran and refused. */
const MUX_FAILURES: ReadonlySet<string> = new Set(['tmux_failed', 'unreachable', 'timed_out', 'refused', 'gone']);

/** The exit status of a failure under a scheme (see EXIT). */
function exitCodeFor(error: unknown, scheme: Scheme): number {
  if (error instanceof ExitError) return error.exitCode;
  const code = failureCode(error);
  if (code === 'usage' || code === 'unsupported') return EXIT.usage;
  if (code === 'interrupted') return EXIT.interrupted;
  if (code === 'server_replaced') return EXIT.replaced;
  if (scheme === 'pane') {
    if (error instanceof PaneNotFoundError) return EXIT.notFound;
    if (MUX_FAILURES.has(code)) return EXIT.muxFailure;
  }
  return EXIT.failure;
}

type Handler<O> = (options: O & PaneFlags, io: CliIO, ...positionals: string[]) => Promise<number | void>;

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

/** The multiplexer one pane command drives, chosen as `drover mux` chooses it, and opened. */
interface PaneMux {
  readonly resolved: ResolvedMux;
  readonly port: MuxPort;
  /** On tmux, the binding the port shares, through which tmux targets are resolved. */
  readonly tmux: Server | undefined;
  readonly io: CliIO;
}

async function withMux<T>(flags: PaneFlags, io: CliIO, body: (mux: PaneMux) => Promise<T>, tmuxTransport?: 'control'): Promise<T> {
  const resolved = resolveMux(flags, io);
  const tmux = resolved.tmuxEndpoint === undefined ? undefined : await openResolvedTmux(resolved, io, tmuxTransport);
  const port = openResolvedMux(resolved, io, tmux);
  try {
    return await body({ resolved, port, tmux, io });
  } finally {
    await port.close();
    await releaseResolvedTmux(tmux, io);
  }
}

/** How long a host may take over a pane verb with no wait of its own (tmux calls, a capture, a kill). */
const HOST_VERB_BUDGET_MS = 30_000;

/** A verb on another host's pane; the host link's code loads only then. */
async function runOnHost(...args: Parameters<typeof runOnHostNow>): ReturnType<typeof runOnHostNow> {
  return (await import('../remote.js')).runOnHost(...args);
}

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
 * The pane a target names, for the pane verbs: a pane key as it is (the verb checks its server
 * run), a tmux target resolved once to its `%id` on tmux, and on any other multiplexer the id
 * as that multiplexer spells it.
 */
async function paneTarget(mux: PaneMux, target: string): Promise<string> {
  if (looksLikePaneKey(target) || mux.tmux === undefined) return target;
  return resolveTmuxTarget(mux.tmux, target);
}

/** Runs `body` on the pane `target` names (see paneTarget). */
function onPane<T>(flags: PaneFlags, io: CliIO, target: string, body: (port: MuxPort, pane: string, mux: PaneMux) => Promise<T>): Promise<T> {
  return withMux(flags, io, async (mux) => body(mux.port, await paneTarget(mux, target), mux));
}

/**
 * The pane this process runs in, when it is a pane of the server the command drives: on tmux,
 * $TMUX_PANE when $TMUX names that server's socket; elsewhere the variable the multiplexer sets
 * in its panes.
 */
function callerPane(mux: PaneMux): string | undefined {
  const { env } = mux.io;
  if (mux.tmux === undefined) return invokingPane(mux.resolved.mux, env);
  if (!env.TMUX || !env.TMUX_PANE) return undefined;
  return Endpoint.fromEnv({ env, executable: mux.tmux.endpoint.executable }).equals(mux.tmux.endpoint) ? env.TMUX_PANE : undefined;
}

/** Whether this process runs inside a session of the multiplexer the command chose. */
function insideSession(resolved: ResolvedMux, env: NodeJS.ProcessEnv): boolean {
  return resolved.mux === 'tmux' ? Boolean(env.TMUX) : invokingPane(resolved.mux, env) !== undefined;
}

/**
 * The server a report names: the tmux server -L/-S named, or the private `drover up` server;
 * null for the caller's own tmux server, tmux's default one, or another multiplexer.
 */
function serverLabel(flags: PaneFlags, io: CliIO): string | null {
  if (flags.socketName !== undefined) return flags.socketName;
  if (flags.socketPath !== undefined) return flags.socketPath;
  if (resolveMux(flags, io).mux !== 'tmux') return null;
  const { endpoint, source } = resolveEndpoint(flags, io);
  return source === 'drover-up' ? endpoint.socketPath : null;
}

function serverLine(label: string | null): string {
  return label === null ? '' : `server: ${label}\n`;
}

/**
 * The scope of map and questions. The current session is the one this process runs in, so
 * outside the chosen multiplexer the caller must name one or ask for all of them, checked
 * before the multiplexer is asked.
 */
function sessionScope(options: { session?: string; allSessions?: boolean } & PaneFlags, io: CliIO): SessionScope | undefined {
  if (options.allSessions) return { kind: 'all' };
  if (options.session !== undefined) return { kind: 'session', name: options.session };
  const resolved = resolveMux(options, io);
  if (!insideSession(resolved, io.env)) {
    const where = resolved.mux === 'tmux' ? serverDescription(options, io) : resolved.where;
    throw new NotInTmuxError(`not inside a ${resolved.mux} session, so there is no current session: pass --all-sessions for every session on ${where}, or --session NAME`);
  }
  return undefined;
}

/** A scope, with the caller's pane filled in for the current session once the multiplexer is open. */
function scopeFor(scope: SessionScope | undefined, mux: PaneMux): SessionScope {
  return scope ?? { kind: 'current', callerPane: callerPane(mux) };
}

// ---- map --------------------------------------------------------------------------------------

interface MapOptions extends JsonFlag {
  session?: string;
  allSessions?: boolean;
  allHosts?: boolean;
  glance?: boolean;
}

/** How long a host may take over a sweep (a map or a question sweep reads every pane there). */
const HOST_SWEEP_BUDGET_MS = 60_000;

/**
 * The scope of a view across hosts: the named session on each, else every session (another
 * machine has no session this process runs in). Each host uses the multiplexer and server its
 * own environment selects: -L, -S and --mux name this machine's.
 */
function hostsScope(options: { session?: string }): { params: { session?: string; all_sessions?: boolean }; scope: SessionScope } {
  return options.session === undefined ? { params: { all_sessions: true }, scope: { kind: 'all' } } : { params: { session: options.session }, scope: { kind: 'session', name: options.session } };
}

const PANE_COLUMN: AllHostsColumn = { header: 'Pane', fields: ['pane_id'] };

const MAP_COLUMNS: readonly AllHostsColumn[] = [
  { header: 'Session', fields: ['session'] },
  PANE_COLUMN,
  { header: 'Tab', fields: ['tab'] },
  { header: 'Worktree', fields: ['worktree'] },
  { header: 'Change', fields: ['change'] },
  { header: 'Agent', fields: ['agent', 'agent_state'] },
];

const GLANCE_COLUMNS: readonly AllHostsColumn[] = [
  { header: 'Branch', fields: ['branch'] },
  { header: 'Last line', fields: ['last_line'] },
];

/** The merged views load the hosts layer only when asked for, so a plain map starts as fast as before. */
async function runAcrossHosts(...args: Parameters<typeof runAcrossHostsNow>): ReturnType<typeof runAcrossHostsNow> {
  return (await import('../all-hosts.js')).runAcrossHosts(...args);
}

async function mapAcrossHosts(options: MapOptions & PaneFlags, io: CliIO): Promise<number> {
  const { params, scope } = hostsScope(options);
  const glance = options.glance === true;
  return runAcrossHosts(
    {
      method: 'pane.map',
      params,
      // A host older than the glance answers its map without it.
      paramsSince: glance ? { version: RPC_GLANCE_SINCE, params: { glance: true } } : undefined,
      hostBudgetMs: HOST_SWEEP_BUDGET_MS,
      tables: [{ list: 'rows', title: 'Panes', columns: glance ? [...MAP_COLUMNS, ...GLANCE_COLUMNS] : MAP_COLUMNS }],
      local: () => withMux(options, io, async (opened) => (await paneMap(opened.port, scope, { env: io.env, glance })).map(mapRowJson), mapTransport(options)),
    },
    io,
    options.json === true,
  );
}

/** A glance reads every pane's screen: over one control connection rather than a tmux client each. */
function mapTransport(options: MapOptions): 'control' | undefined {
  return options.glance === true ? 'control' : undefined;
}

async function map(options: MapOptions & PaneFlags, io: CliIO): Promise<number | void> {
  if (options.allHosts) return mapAcrossHosts(options, io);
  const scope = sessionScope(options, io);
  const { rows, mux } = await withMux(
    options,
    io,
    async (opened) => ({ rows: await paneMap(opened.port, scopeFor(scope, opened), { env: io.env, glance: options.glance === true }), mux: opened.port.mux }),
    mapTransport(options),
  );
  if (options.json) writeJson(io, rows.map(mapRowJson));
  else io.stdout.write(renderMapTable(rows, { allSessions: scope?.kind === 'all', mux }));
}

// ---- capture ----------------------------------------------------------------------------------

interface CaptureOptions extends JsonFlag {
  lines: string;
  raw?: boolean;
}

function parseLines(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_GRID_LINES) {
    throw new UsageError(`-l/--lines takes a whole number of lines from 1 to ${MAX_GRID_LINES} (got ${JSON.stringify(value)})`);
  }
  return Number(value);
}

async function capture(options: CaptureOptions & PaneFlags, io: CliIO, given: string): Promise<number | void> {
  const lines = parseLines(options.lines);
  const where = await onHostOr(given, options, io, () => {
    if (options.raw) throw new UsageError('--raw is for a pane on this machine; a pane on another host answers with its JSON document');
    return { method: 'pane.capture', params: { lines }, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true };
  });
  if ('remote' in where) return where.remote;
  const target = where.local;
  await onPane(options, io, target, async (port, pane) => {
    if (options.raw) {
      io.stdout.write(await capturePaneTail(port, pane, lines));
      return;
    }
    const captured = await paneCapture(port, pane, { lines, env: io.env });
    if (options.json) {
      writeJson(io, paneCaptureJson(captured));
      return;
    }
    io.stdout.write(renderCaptureHeader(captured));
    io.stdout.write(captured.content);
  });
}

// ---- process ----------------------------------------------------------------------------------

async function processTree(options: JsonFlag & PaneFlags, io: CliIO, target: string): Promise<void> {
  const report = await onPane(options, io, target, (port, pane) => paneProcess(port, pane, { cwd: io.cwd }));
  if (options.json) writeJson(io, paneProcessJson(report));
  else io.stdout.write(report.processes.map((root) => renderProcessTree(root)).join(''));
}

// ---- window-name ------------------------------------------------------------------------------

async function ensurePrefix(options: JsonFlag & PaneFlags, io: CliIO, target: string, prefix: string): Promise<void> {
  const result = await onPane(options, io, target, (port, pane) => ensureWindowPrefix(port, pane, prefix));
  if (options.json) writeJson(io, windowRenameJson(result));
  else io.stdout.write(renderWindowRename(result));
}

async function replacePrefix(options: JsonFlag & PaneFlags, io: CliIO, target: string, from: string, to: string): Promise<void> {
  const result = await onPane(options, io, target, (port, pane) => replaceWindowPrefix(port, pane, from, to));
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

async function open(options: OpenOptions & PaneFlags, io: CliIO): Promise<number | void> {
  const cwd = existingDirectory(resolve(io.cwd, options.cwd ?? '.'));
  // An unknown provider or role is a usage error whether or not a server runs: checked first.
  const providers = providersFor(cwd);
  resolveLaunchCommand(providers, options.provider, options.role, io.env);
  const server = serverLabel(options, io);
  let opened;
  try {
    opened = await withMux(options, io, (mux) => openAgentPane(mux.port, { provider: options.provider, role: options.role, cwd, env: io.env, providers, callerPane: callerPane(mux) }));
  } catch (error) {
    if (!(error instanceof AgentExitedError)) throw error;
    const lastLines = error.lastLines === '' ? '' : `\n--- last ${SNIPPET_LINES} lines ---\n${error.lastLines.trimEnd()}`;
    throw new ExitError(`${error.message}${lastLines}`, EXIT.failure, { code: 'agent_exited', exit_status: error.exitStatus, last_lines: error.lastLines });
  }
  if (options.json) {
    writeJson(io, { pane_id: opened.paneId, pane_key: opened.paneKey, provider: opened.provider, server, command: opened.command, bypasses_permissions: opened.bypassesPermissions });
    return;
  }
  io.stdout.write(`opened pane ${opened.paneId} (provider ${opened.provider})\n${serverLine(server)}`);
  if (opened.bypassesPermissions) writeWarning(io, `${opened.provider} runs with its permission checks off (bypass_permissions in drover.yaml)`);
}

// ---- ready ------------------------------------------------------------------------------------

async function ready(options: JsonFlag & PaneFlags, io: CliIO, given: string): Promise<number | void> {
  const where = await onHostOr(given, options, io, () => ({ method: 'pane.ready', params: {}, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true }));
  if ('remote' in where) return where.remote;
  const target = where.local;
  const server = serverLabel(options, io);
  const report = await onPane(options, io, target, (port, pane) => paneReady(port, pane, { signal: io.signal, cwd: io.cwd }));
  if (options.json) {
    writeJson(io, { ...readinessReportJson(report), server });
  } else io.stdout.write(renderReadiness(report, report.paneId, server ?? undefined));
}

// ---- deliver ----------------------------------------------------------------------------------

interface DeliverOptions extends JsonFlag {
  promptFile?: string;
  text?: string;
  stdin?: boolean;
  waitMs: string;
  deliveryId?: string;
  toShell?: boolean;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** How long a resend waits for the first delivery of its id, still running in another process, to end. */
const IN_FLIGHT_WAIT_MS = 20_000;

/** The command that sends this delivery again under its id: typed once at most, however often it is run. */
function resendCommand(options: DeliverOptions & PaneFlags, io: CliIO, given: string, deliveryId: string, composerWaitMs: number): string {
  const words = [
    ...(options.socketName === undefined ? [] : ['-L', options.socketName]),
    ...(options.socketPath === undefined ? [] : ['-S', options.socketPath]),
    'pane',
    ...(options.mux === undefined ? [] : ['--mux', options.mux]),
    'deliver',
    given,
    '--delivery-id',
    deliveryId,
    ...(options.promptFile !== undefined ? ['--prompt-file', options.promptFile] : options.stdin ? ['--stdin'] : ['--text', options.text!]),
    ...(composerWaitMs > 0 ? ['--wait-ms', String(composerWaitMs)] : []),
    ...(options.toShell === true ? ['--to-shell'] : []),
    ...(options.json ? ['--json'] : []),
  ];
  return `${droverCommand(io.env)} ${words.map(shellQuote).join(' ')}`;
}

/** A delivery's answer: the receipt document as printed with --json, and the exit status. */
interface DeliveryAnswer {
  readonly document: Record<string, unknown>;
  readonly exitStatus: number;
}

function printDelivery(io: CliIO, json: boolean, answer: DeliveryAnswer, text: string): number | void {
  if (json) writeJson(io, answer.document);
  else (answer.document.status === 'submitted' ? io.stdout : io.stderr).write(text);
  if (answer.exitStatus !== EXIT.ok) return answer.exitStatus;
}

/**
 * The answer for a delivery id already known here (see DeliveryLedger): the recorded receipt
 * when it ended, else possibly_sent with the id. Nothing is typed either way.
 */
function knownDeliveryAnswer(known: KnownDelivery, json: boolean, io: CliIO): number | void {
  const { record } = known;
  if (known.kind === 'replay') {
    const document: Record<string, unknown> = { ...record.document, delivery_id: record.delivery_id, replayed: true };
    return printDelivery(io, json, { document, exitStatus: record.exit_status ?? EXIT.failure }, `${String(document.status)} ${String(document.pane_id)}: ${String(document.reason)} (delivery ${record.delivery_id} was made before; answered from its record, not typed again)\n`);
  }
  const why =
    known.kind === 'in_flight'
      ? `delivery ${record.delivery_id} is still being made by process ${record.pid} (started ${record.started_at}); it is not typed again: ask again with the same id for its receipt`
      : `delivery ${record.delivery_id} started at ${record.started_at} and ended without a receipt${record.problem === undefined ? ' (its process was cut off)' : `: ${record.problem}`}; it may have been typed, and is never typed again under this id`;
  throw new ExitError(why, EXIT.unconfirmed, { code: 'possibly_sent', delivery: 'possibly_sent', delivery_id: record.delivery_id, delivery_state: known.kind, pane: record.pane });
}

async function deliver(options: DeliverOptions & PaneFlags, io: CliIO, given: string, ...words: string[]): Promise<number | void> {
  // `pane deliver %3 run the tests` is a natural first try: say where the text goes instead of commander's bare count.
  if (words.length > 0) {
    throw new UsageError(`the text is not an argument: give it with --text (${droverCommand(io.env)} pane deliver ${shellQuote(given)} --text ${shellQuote(words.join(' '))}), --stdin or --prompt-file PATH`);
  }
  const sources = [options.promptFile !== undefined, options.text !== undefined, options.stdin === true].filter(Boolean).length;
  if (sources !== 1) throw new UsageError('give exactly one of --prompt-file PATH, --text STRING or --stdin');
  const composerWaitMs = parseMilliseconds('--wait-ms', options.waitMs, 0);
  const idProblem = options.deliveryId === undefined ? undefined : deliveryIdProblem(options.deliveryId);
  if (idProblem !== undefined) throw new UsageError(`--delivery-id: ${idProblem}`);
  const named = parseHostTarget(given);
  if (named !== undefined && named.host !== LOCAL_HOST) {
    // Every remote delivery has an id, so an answer lost with the link can be asked for again.
    const deliveryId = options.deliveryId ?? newDeliveryId();
    // The prompt file's path is the host's (the agent there reads it); standard input is read here and sent as text.
    const params = options.promptFile !== undefined ? { prompt_file: options.promptFile } : { text: options.stdin ? await readAll(io.stdin) : options.text! };
    return runOnHost(
      named,
      {
        method: 'pane.deliver',
        params: { ...params, wait_ms: composerWaitMs, delivery_id: deliveryId, ...(options.toShell === true ? { to_shell: true } : {}) },
        ...(options.toShell === true ? { needs: RPC_TO_SHELL } : {}),
        hostBudgetMs: HOST_VERB_BUDGET_MS + IN_FLIGHT_WAIT_MS + composerWaitMs,
        json: options.json === true,
        delivery: { id: deliveryId, resend: resendCommand(options, io, given, deliveryId, composerWaitMs) },
      },
      options,
      io,
    );
  }
  const target = named?.pane ?? given;
  const text = options.promptFile !== undefined ? promptFilePointer(options.promptFile, io.cwd) : options.stdin ? await readAll(io.stdin) : options.text!;
  const source = options.promptFile !== undefined ? { source: 'prompt', path: options.promptFile } : { source: options.stdin ? 'stdin' : 'text' };
  const json = options.json === true;
  const typeIt = async (): Promise<DeliveryAnswer & { readonly receipt: DeliveryReceipt & PaneRef }> => {
    // The pane's input lock, shared with the fleet's dispatchers here: a fleet message is never typed into the middle of this prompt.
    const { holdingPaneInput } = await import('../../fleet/index.js');
    const receipt = await onPane(options, io, target, (port, pane) =>
      holdingPaneInput(port, pane, { env: io.env, signal: io.signal }, () =>
        paneDeliver(port, pane, text, { signal: io.signal, cwd: io.cwd, composerWaitMs, toShell: options.toShell === true, onWarning: (message) => writeWarning(io, message) }),
      ),
    );
    const exitStatus = receipt.status === 'failed' ? EXIT.failure : receipt.status === 'staged_unconfirmed' ? EXIT.unconfirmed : EXIT.ok;
    return { receipt, exitStatus, document: { ...deliveryReceiptJson(receipt), ...source, ...(options.deliveryId === undefined ? {} : { delivery_id: options.deliveryId }) } };
  };
  if (options.deliveryId === undefined) {
    const answer = await typeIt();
    return printDelivery(io, json, answer, renderDeliveryReceipt(answer.receipt.paneId, answer.receipt));
  }
  const deliveryId = options.deliveryId;
  const ledger = new DeliveryLedger(deliveryLedgerDirectory(io.env));
  const claim = ledger.claim(deliveryId, { pane: target, text });
  if (claim.kind !== 'claimed') {
    const known = claim.kind === 'in_flight' ? ((await ledger.settled(deliveryId, { timeoutMs: IN_FLIGHT_WAIT_MS, signal: io.signal })) ?? claim) : claim;
    return knownDeliveryAnswer(known, json, io);
  }
  let answer;
  try {
    answer = await typeIt();
  } catch (error) {
    // Failed before anything was sent: the id is free for a resend. Otherwise it may have been typed.
    if (error instanceof DroverError && error.delivery === 'not_sent') claim.release();
    else claim.interrupted(messageOf(error));
    throw new ExitError(messageOf(error), exitCodeFor(error, 'pane'), { ...(errorDocument(error).error as { code: string }), delivery_id: deliveryId });
  }
  // A failure that typed nothing is not remembered either: the same id may try again.
  if (answer.receipt.status === 'failed' && !answer.receipt.typed) claim.release();
  else claim.ended(answer.document, answer.exitStatus);
  return printDelivery(io, json, answer, renderDeliveryReceipt(answer.receipt.paneId, answer.receipt));
}

// ---- kill -------------------------------------------------------------------------------------

async function kill(options: JsonFlag & PaneFlags, io: CliIO, given: string): Promise<number | void> {
  const where = await onHostOr(given, options, io, () => ({ method: 'pane.kill', params: {}, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true }));
  if ('remote' in where) return where.remote;
  const target = where.local;
  const server = serverLabel(options, io);
  const killed = await onPane(options, io, target, (port, pane) => paneKill(port, pane));
  if (options.json) writeJson(io, { pane_id: killed.paneId, pane_key: killed.paneKey, killed: true, server });
  else io.stdout.write(`killed ${killed.paneId}\n${serverLine(server)}`);
}

async function keys(options: JsonFlag & PaneFlags, io: CliIO, given: string, ...variadic: string[]): Promise<number | void> {
  // commander hands a variadic argument over as one array; flattened, it is the key names either way.
  const names = variadic.flat();
  const where = await onHostOr(given, options, io, () => ({ method: 'pane.keys', params: { keys: names }, hostBudgetMs: HOST_VERB_BUDGET_MS, json: options.json === true }));
  if ('remote' in where) return where.remote;
  const sent = await onPane(options, io, where.local, (port, pane) => paneSendKeys(port, pane, names));
  if (options.json) writeJson(io, { pane_id: sent.paneId, pane_key: sent.paneKey, keys: sent.keys, server: serverLabel(options, io) });
  else io.stdout.write(`sent ${sent.keys.join(' ')} to ${sent.paneId}\n`);
}

// ---- questions --------------------------------------------------------------------------------

interface QuestionsOptions extends JsonFlag {
  session?: string;
  allSessions?: boolean;
  allHosts?: boolean;
  panes?: string[];
}

async function questionsAcrossHosts(options: QuestionsOptions & PaneFlags, io: CliIO): Promise<number> {
  return runAcrossHosts(
    {
      method: 'pane.questions',
      params: { all_sessions: true },
      hostBudgetMs: HOST_SWEEP_BUDGET_MS,
      tables: [
        { list: 'matches', title: 'Questions', columns: [PANE_COLUMN, { header: 'State', fields: ['agent_state', 'agent'] }, { header: 'Indicator', fields: ['indicator'] }, { header: 'Question', fields: ['snippet'] }] },
        { list: 'skipped', title: 'Skipped', columns: [PANE_COLUMN, { header: 'Reason', fields: ['reason'] }] },
      ],
      local: () => withMux(options, io, async (mux) => questionSweepJson(await paneQuestions(mux.port, { kind: 'all' }, { env: io.env }))),
    },
    io,
    options.json === true,
  );
}

/** The panes --panes lists (repeated or comma-separated), each a key or resolved as paneTarget resolves it. */
async function namedPanes(mux: PaneMux, values: readonly string[]): Promise<QuestionScope> {
  const targets = values.flatMap((value) => value.split(',')).map((id) => id.trim()).filter((id) => id !== '');
  const panes: string[] = [];
  for (const target of targets) panes.push(await paneTarget(mux, target));
  return { kind: 'panes', panes };
}

async function questions(options: QuestionsOptions & PaneFlags, io: CliIO): Promise<number | void> {
  if (options.allHosts) return questionsAcrossHosts(options, io);
  if (options.panes !== undefined && options.panes.every((value) => value.split(',').every((id) => id.trim() === ''))) throw new UsageError('--panes needs at least one pane');
  const scope = options.panes === undefined ? sessionScope(options, io) : undefined;
  const sweep = await withMux(options, io, async (mux) => paneQuestions(mux.port, options.panes === undefined ? scopeFor(scope, mux) : await namedPanes(mux, options.panes), { env: io.env }));
  if (options.json) writeJson(io, questionSweepJson(sweep));
  else io.stdout.write(renderQuestionSweep(sweep));
}

// ---- explain ----------------------------------------------------------------------------------

async function explain(options: JsonFlag & PaneFlags, io: CliIO, target: string): Promise<void> {
  const explanation = await onPane(options, io, target, (port, pane) => explainPane(port, pane, { cwd: io.cwd }));
  if (options.json) writeJson(io, explanationJson(explanation));
  else io.stdout.write(renderExplanation(explanation));
}

// ---- registration -----------------------------------------------------------------------------

const JSON_HELP = 'print one JSON document';
const PANE_ARGUMENT = `the pane: ${PANE_TARGET_FORMS}; HOST::PANE (gpu::%3), or a host's pane key from \`pane map --all-hosts --json\` (gpu::tmux::28114-1764844800::%3), for a pane on a host of \`drover host list\`, answered with that host's JSON document`;

const ALL_HOSTS_HELP = 'this machine and every host of `drover host list`, merged (every session on each, or --session NAME on each)';

const ALL_HOSTS_EXIT = `With --all-hosts: each row carries "host" ("local" for this machine), a "pane_key" naming
that host, "stale" and "stale_age_ms"; a host that cannot be reached keeps its last rows,
marked stale, and "hosts" lists each machine's health. Exit 0 when this machine and every host
that could be reached answered; a host that cannot be reached is reported, not a failure; 1 when
this machine or a reached host failed.`;

const MAP_HELP = `
Identity: a row is identified by "pane_key" (the pane and the server run it lives on: a
script should hold this, and any verb refuses it once that server is gone), "pane_id" (%N on
tmux, meaningful on its own server run only) and "window_id" (@N, stable across swap-window).
"session" and "window_index" are for display only: swap-window, move-window and renames change
them, so never join on them.

Without --session or --all-sessions the map shows the session this runs in, so outside the
multiplexer one of them is needed.

Exit codes: 0 (also when no pane matches), 1 failure (e.g. outside the multiplexer without
--session/--all-sessions), 2 usage error.`;

/** What every verb aimed at one pane says of a pane key of another server run. */
const REPLACED_EXIT = '6 the pane key names a pane of another server run (nothing was done)';

const PANE_VERB_HELP = `
Exit codes: 0 success, 1 failure, 2 pane not found, usage error or a verb the multiplexer cannot
do, 3 the multiplexer failed or did not answer, ${REPLACED_EXIT}.`;

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
provider, program not on the server's PATH) or a multiplexer that cannot split a pane, 3 the
multiplexer failed or did not answer.`;
}

const READY_HELP = `
Agents drover knows (claude, codex, gemini, opencode) are read off their screen and nothing is
typed. An editor, pager or full-screen tool (vim, less, top, …) is parked, typed nothing. Any
other program gets a probe word typed (never submitted) and erased again.

Exit codes: 0 for every classification (the state is the answer), 2 pane not found (or usage
error), 3 the multiplexer failed or did not answer, ${REPLACED_EXIT}.`;

const DELIVER_HELP = `
To an agent drover knows, the text is pasted (bracketed paste), checked in the composer
(as typed or as the agent's paste placeholder), completion menus are closed, Enter is
pressed, and success needs evidence: the agent turned busy, asks permission, or the composer
emptied. A draft already in the composer is cleared first and reported. Dialogs, questions and
busy turns are never typed into. Other programs get the text typed as keys (one line only).
A bare shell at its prompt is refused, since what is typed there runs; with --to-shell it gets
the text as a command line: ctrl+c first (dropping anything half-typed there, an open quote
included), then the text, then Enter, submitted once the line left the prompt.

With --delivery-id ID the delivery is recorded under ID (in drover's state directory) before
anything is typed: run again with the same ID, it is answered from the record (replayed: true)
and never typed twice. A delivery to HOST::PANE always has an id (one is made up when none is
given); when the link is cut mid-delivery, the possibly_sent error carries it and the exact
command that resends it.

Exit codes: 0 submitted, 1 failed (nothing or not all of it was taken; the reason says which),
2 pane not found or usage error (empty text, control characters, several lines where the
multiplexer cannot paste), 3 the multiplexer failed or did not answer, 4 staged_unconfirmed
(typed and Enter pressed, but nothing on screen confirmed the agent took it) or possibly_sent
(a delivery id whose first delivery may have been typed, or a link cut mid-delivery),
${REPLACED_EXIT}.`;

const WINDOW_NAME_HELP = `
Exit codes: 0 renamed or nothing to do, 2 pane not found or usage error (an empty prefix),
3 the multiplexer failed, did not answer or refused the rename, ${REPLACED_EXIT}.`;

export function registerPaneCommands(program: Command, context: CommandContext): void {
  const pane = program
    .command('pane')
    .description('agent pane verbs: map, capture, process, window-name, open, ready, deliver, keys, kill, questions, explain')
    .addOption(new Option('--mux <name>', 'the multiplexer: tmux, herdr or zellij (default: chosen as drover mux chooses; -L/-S mean tmux)').choices(MUX_NAMES))
    // Every verb takes -L/-S and --mux; say so in each one's help (subcommands inherit this setting).
    .configureHelp({ showGlobalOptions: true })
    // `drover pane` alone (perhaps with --mux) asks what the verbs are: help on stdout, exit 0,
    // as for every other group; its --mux option keeps it from counting as a bare group.
    .action(function (this: Command) {
      this.outputHelp();
    });

  pane
    .command('map')
    .description('every pane with its worktree, fab change and stage, and agent state')
    .option('--json', 'print a JSON array of rows')
    .option('--session <name>', 'only this session (no need to run inside the multiplexer)')
    .addOption(new Option('--all-sessions', 'every session (no need to run inside the multiplexer)').conflicts('session'))
    .option('--all-hosts', ALL_HOSTS_HELP)
    .option('--glance', "also read each pane's screen and branch: rows add branch, last_line and screen_digest (what a dashboard row shows)")
    .addHelpText('after', `${MAP_HELP}\n\n${ALL_HOSTS_EXIT}`)
    .action(paneVerb(context, 'sweep', map));

  pane
    .command('capture')
    .description('the last lines of a pane, with its worktree, change, stage and agent state')
    .argument('<pane>', PANE_ARGUMENT)
    .option('-l, --lines <n>', `how many lines (1 to ${MAX_GRID_LINES})`, '50')
    .option('--json', JSON_HELP)
    .addOption(new Option('--raw', 'the captured text only, as the multiplexer printed it').conflicts('json'))
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
    .option('--delivery-id <id>', 'remember this delivery by ID: sent again with the same ID, it is answered from the record and never typed twice')
    .option('--to-shell', 'the text is a command line for a shell: a shell at its prompt gets it (after ctrl+c), where without this it is refused')
    .option('--json', JSON_HELP)
    .allowExcessArguments()
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
    .command('keys')
    .description('send keys to a pane by name (Escape, ctrl+c, Up, Enter, y…): what a person presses, not text to deliver')
    .argument('<pane>', PANE_ARGUMENT)
    .argument('<keys...>', 'key names, sent in order; one the multiplexer cannot send refuses them all before any is sent')
    .option('--json', JSON_HELP)
    .addHelpText('after', PANE_VERB_HELP)
    .action(paneVerb(context, 'pane', keys));

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
    .addOption(new Option('--session <name>', 'only this session (no need to run inside the multiplexer)').conflicts(['allSessions', 'allHosts']))
    .option('--all-sessions', 'every session (no need to run inside the multiplexer)')
    .addOption(new Option('--panes <panes...>', 'these panes (keys, ids, or SESSION:WINDOW[.PANE] targets on tmux), whatever their state; repeatable or comma-separated').conflicts(['session', 'allSessions', 'allHosts']))
    .option('--all-hosts', 'every session here and on every host of `drover host list`, merged; see drover pane map --help')
    .option('--json', JSON_HELP)
    .addHelpText(
      'after',
      `\nWithout --session, --all-sessions or --panes the sweep covers the session this runs in, so
outside the multiplexer one of them is needed.

Exit codes: 0 for any sweep (matches and skips are data), 1 failure, 2 usage error,
${REPLACED_EXIT.replace('the pane key', 'a pane key in --panes')}.`,
    )
    .action(paneVerb(context, 'sweep', questions));
}
