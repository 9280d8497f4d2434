import { z } from 'zod';
import { holdingPaneInput } from '../../fleet/index.js';
import { deliveryIdProblem, keyOnHost, newDeliveryId } from '../../hosts/index.js';
import { isHostName, isValidMuxId, looksLikePaneKey, MUX_NAMES, MuxError, muxSnapshotJson, muxSnapshotJsonSchema, parsePaneKey } from '../../mux/index.js';
import {
  deliveryReceiptJson,
  deliveryReceiptJsonSchema,
  mapRowJson,
  mapRowJsonSchema,
  onPane,
  paneDeliver,
  paneKill,
  paneMap,
  paneProcess,
  paneProcessJson,
  paneProcessJsonSchema,
  paneQuestions,
  paneReady,
  paneSendKeys,
  paneTypeText,
  paneWaitForScreen,
  questionMatchJsonSchema,
  questionSkipJsonSchema,
  questionSweepJson,
  questionSweepJsonSchema,
  readinessReportJson,
  readinessReportJsonSchema,
  resolvePane,
  tailLines,
  type QuestionScope,
  type SessionScope,
} from '../../panes/index.js';
import { ArgumentError, TimeoutError } from '../../process/index.js';
import { checkId, compileTextPattern, isPaneId, type PaneId, type TextTest } from '../../tmux/index.js';
import { acrossHosts, hostField, mergedHostsField, mergedRowFields, onHost, paneOnHost, shapedAs, type HostStatusJson } from '../hosts.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { dispatched, force, guardSelf, refuseSelf } from './tmux.js';

/** Time kept back from a clamped wait so the reply still fits the request deadline. */
const REPLY_MARGIN_MS = 250;

const scope = {
  session: z.string().min(1).max(1024).optional().describe('only this session (default: all sessions)'),
};

/** `HOST::ID`: a pane id on another machine. */
function isIdOnHost(value: string): boolean {
  const parts = value.split('::');
  return parts.length === 2 && isHostName(parts[0]) && isValidMuxId(parts[1]!);
}

/** A pane's id as its multiplexer names it: %3 on tmux, w1:p3 on herdr, terminal_3 on zellij; HOST::ID on a host. */
const paneId = z
  .string()
  .refine(
    (value) => (isValidMuxId(value) && !looksLikePaneKey(value)) || isIdOnHost(value),
    'a pane id such as %3 (tmux), w1:p3 (herdr) or terminal_3 (zellij), or HOST::ID (gpu::%3) for a pane on a host of drover host list',
  );

/** A pane's key, as every row that names a pane carries it in `pane_key`. */
const paneKey = z
  .string()
  .max(1024)
  .regex(new RegExp(`^[^:]+::(${MUX_NAMES.join('|')})::[^:]+::.+$`), "a pane key like local::tmux::28114-1764844800::%3 (a row's pane_key)");

/** One pane, by its id or by its key; exactly one of the two. */
const onePane = {
  pane_id: paneId.optional().describe('the pane by its id, whichever run of the server answers now; HOST::ID (gpu::%3) for a pane on that host'),
  pane_key: paneKey
    .optional()
    .describe(
      "the pane by its key (a row's pane_key, of this machine or, from pane_map with all_hosts, of a host): refused, nothing done, once the server it names was restarted; what a script should hold",
    ),
};

const all_hosts = z.boolean().optional().describe('this machine and every host of drover host list, merged: each row with its host; a host that cannot be reached keeps its last rows, marked stale');

/** What each host maps with all_hosts: the named session there, else every session (a host has no current one). */
function hostsScope(input: { session?: string }): { session: string } | { all_sessions: true } {
  return input.session === undefined ? { all_sessions: true } : { session: input.session };
}

/** The host of the panes a sweep names, when they are on another machine: all of them on one host, or all here. */
function questionsHost(panes: readonly string[] | undefined): string | undefined {
  const hosts = new Set((panes ?? []).map((pane) => paneOnHost(pane)?.host));
  if (hosts.size > 1) throw new ArgumentError(`the panes are on ${[...hosts].map((host) => host ?? 'this machine').join(', ')}: name panes of one machine per call, or sweep every host with all_hosts`);
  return [...hosts][0];
}

/** The call names a pane on another machine. */
const onAnotherHost = (input: { pane_id?: string; pane_key?: string }): boolean => paneOnHost(input.pane_id ?? input.pane_key) !== undefined;

/** A pane of this machine, by its id or its key: the typing and waiting tools reach no host. */
const localPane = {
  pane_id: z
    .string()
    .refine((value) => isValidMuxId(value) && !looksLikePaneKey(value), 'a pane id of this machine such as %3 (tmux), w1:p3 (herdr) or terminal_3 (zellij); deliver reaches a pane on a host')
    .optional()
    .describe('the pane by its id, whichever run of the server answers now'),
  pane_key: onePane.pane_key,
};

/** The tmux pane a typing tool names, as tmux resolves it: a key through the port, so a key of another run is refused. */
async function tmuxPaneOf(context: ToolContext, input: { pane_id?: string; pane_key?: string; force?: boolean }, what: string): Promise<PaneId> {
  const named = await guardedPane(context, input, what);
  return checkId('pane', looksLikePaneKey(named) ? (await resolvePane(context.port, named)).paneId : named);
}

/** The pane as the verbs take it: the key as it came (the port refuses a key of another run), or the id. */
function namedPane(input: { pane_id?: string; pane_key?: string }): string {
  if ((input.pane_id === undefined) === (input.pane_key === undefined)) throw new ArgumentError('name the pane by exactly one of pane_id and pane_key');
  return input.pane_id ?? input.pane_key!;
}

/** The tmux pane whose screen a call reads, for tmux's capture-hook check; none for what is not a tmux pane (the verb refuses it). */
function screenOf(pane: string): PaneId[] {
  if (paneOnHost(pane) !== undefined) return [];
  const parsed = looksLikePaneKey(pane) ? parsePaneKey(pane) : undefined;
  const id = parsed === undefined ? pane : parsed.ok ? parsed.key.paneId : '';
  return isPaneId(id) ? [id] : [];
}

/**
 * The pane a verb that types or destroys is aimed at, refused when it is the pane this MCP
 * server runs in (unless forced). On tmux a bare id is compared as tmux resolves it (`%03` is
 * `%3`); a key is compared by the id it names, once the port accepted it as of this run.
 */
async function guardedPane(context: ToolContext, input: { pane_id?: string; pane_key?: string; force?: boolean }, what: string): Promise<string> {
  const pane = namedPane(input);
  if (input.force || context.selfPane === undefined) return pane;
  if (context.mux === 'tmux' && input.pane_id !== undefined) return guardSelf(context, pane, what, false);
  const { paneId: id } = await resolvePane(context.port, pane);
  if (id === context.selfPane) throw refuseSelf(what, pane);
  return pane;
}

const captureOutput = z.strictObject({
  pane_id: z.string(),
  pane_key: z.string(),
  content: z.string(),
  lines: z.number().int(),
  cursor: z.string().nullable().describe('pass back as "since"; null where the multiplexer reports no history positions (herdr, zellij)'),
  since_cursor: z.boolean(),
  gap: z.boolean().describe('true when scrollback was trimmed past the cursor, so some lines were lost'),
});

interface CaptureInput {
  pane_id?: string;
  pane_key?: string;
  lines?: number;
  escapes?: boolean;
  since?: string;
}

/**
 * A tmux pane's last lines, or those after a cursor: tmux reports history positions, so a
 * cursor says where the reader got to.
 */
async function captureTmux(context: ToolContext, id: PaneId, paneKeyOf: string, input: CaptureInput): Promise<z.infer<typeof captureOutput>> {
  const pane = context.server.pane(id);
  const limit = input.lines ?? 100;
  const previous = input.since !== undefined ? context.captures.take(input.since, pane.id) : undefined;
  const [history, cursorY, height] = (await pane.display('#{history_size} #{cursor_y} #{pane_height}', context.operation)).toString('latin1').split(' ').map(Number) as [number, number, number];
  let start = -Math.min(history, Math.max(0, limit - height));
  let gap = false;
  if (previous) {
    // The first line after the last one the reader saw, in absolute history positions.
    const first = previous.lastLine - history;
    gap = first < -history;
    start = Math.max(first, -history);
  }
  const raw = await pane.capture({ start, end: cursorY, escapes: input.escapes === true, join: true, ...context.operation });
  let lines = raw.toString('utf8').replace(/\n$/, '').split('\n');
  if (lines.length > limit) lines = lines.slice(-limit);
  const content = lines.join('\n');
  const cursor = context.captures.retain({ paneId: pane.id, lastLine: history + cursorY, text: content });
  return { pane_id: pane.id, pane_key: paneKeyOf, content, lines: lines.length, cursor, since_cursor: previous !== undefined, gap };
}

export const paneTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'mux_snapshot',
    tier: 'readonly',
    group: 'core',
    everyMux: true,
    title: 'Snapshot the multiplexer through the port',
    description:
      "Every space (tmux session), tab (window) and pane as drover's mux port sees them, on tmux, herdr or zellij alike, each pane with its pane_key; no screen content. The same document as drover mux snapshot --json.",
    input: z.object({}),
    output: muxSnapshotJsonSchema,
    async run(context) {
      return muxSnapshotJson(context.mux, await context.port.snapshot(context.operation));
    },
  }),
  defineTool({
    name: 'capture',
    tier: 'readonly',
    group: 'observe',
    everyMux: true,
    title: 'Capture a pane',
    description:
      'Returns the last lines of a pane (screen plus scrollback). On tmux also a cursor: pass it back as "since" to get only the lines written after that capture (cursors last 30 s; at most 16 are kept).',
    input: z.object({
      ...onePane,
      lines: z.number().int().min(1).max(5000).optional().describe('how many lines at most (default 100)'),
      escapes: z.boolean().optional().describe('keep colour/attribute escape sequences'),
      since: z.string().max(64).optional().describe('tmux only: a cursor from an earlier capture of this pane'),
    }),
    output: captureOutput.extend(hostField),
    screens: (input) => screenOf(namedPane(input)),
    elsewhere: onAnotherHost,
    async run(context, input) {
      const host = paneOnHost(namedPane(input));
      if (host !== undefined) {
        if (input.since !== undefined || input.escapes === true) throw new ArgumentError('since and escapes are for a pane on this machine: a pane on a host is captured as plain lines');
        // As the host printed it; the output schema checks it before the client sees it.
        const captured = (await onHost(context, host.host, 'pane.capture', { pane: host.pane, lines: input.lines ?? 100 })) as { pane_id: string; pane_key: string; content: string };
        const lines = captured.content.replace(/\n$/, '').split('\n');
        return { pane_id: captured.pane_id, pane_key: captured.pane_key, content: lines.join('\n'), lines: lines.length, cursor: null, since_cursor: false, gap: false, host: host.host };
      }
      const { paneId: id, paneKey: key } = await resolvePane(context.port, namedPane(input));
      if (context.mux === 'tmux') return captureTmux(context, checkId('pane', id), key, input);
      if (input.since !== undefined) {
        throw new MuxError(context.mux, `capturing since a cursor needs the history positions tmux reports, and ${context.mux} reports none: capture without since`, {
          reason: 'unsupported',
          phase: 'validate',
          delivery: 'not_sent',
        });
      }
      const limit = input.lines ?? 100;
      const text = await onPane(context.port, key, { budgetMs: context.deadlineMs, signal: context.signal }, async (_ref, channel) => (await channel.grid({ scope: 'recent', lines: limit, styling: input.escapes ? 'preserve' : 'strip' })).text);
      const lines = tailLines(text, limit).replace(/\n$/, '').split('\n');
      return { pane_id: id, pane_key: key, content: lines.join('\n'), lines: lines.length, cursor: null, since_cursor: false, gap: false };
    },
  }),
  defineTool({
    name: 'pane_map',
    tier: 'readonly',
    group: 'observe',
    everyMux: true,
    title: 'Map agent panes',
    description:
      'Every pane with its session, window, git worktree and repo, fab change/stage when present, agent state (active, waiting, idle, unknown) and idle duration. With all_hosts, this machine and every host of drover host list, each row with its host.',
    input: z.object({ ...scope, all_hosts }),
    output: z.strictObject({ panes: z.array(mapRowJsonSchema.extend(mergedRowFields)), ...mergedHostsField }),
    // The map reads the screen of an agent whose hooks do not say its state.
    screens: () => 'all',
    elsewhere: (input) => input.all_hosts === true,
    async run(context, input) {
      const sessionScope: SessionScope = input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const local = async () => (await paneMap(context.port, sessionScope, { env: context.env })).map(mapRowJson);
      if (input.all_hosts) {
        const { rows, hosts } = (await acrossHosts(context, 'pane.map', hostsScope(input), ['rows'], local)) as { rows: z.infer<typeof mapRowJsonSchema>[]; hosts: HostStatusJson[] };
        return { panes: rows, hosts };
      }
      return { panes: await local() };
    },
  }),
  defineTool({
    name: 'pane_process',
    tier: 'readonly',
    group: 'observe',
    everyMux: true,
    title: "A pane's process tree",
    description:
      "The processes under the pane's own program (pid, parent, command and its arguments, and which are agents), typing nothing. It needs the pane's pid: a multiplexer that reports none (herdr, zellij) refuses it as unsupported.",
    input: z.object(onePane),
    output: paneProcessJsonSchema.extend(hostField),
    elsewhere: onAnotherHost,
    async run(context, input) {
      const host = paneOnHost(namedPane(input));
      if (host !== undefined) return shapedAs(paneProcessJsonSchema.extend(hostField), await onHost(context, host.host, 'pane.process', { pane: host.pane })) as z.infer<typeof paneProcessJsonSchema>;
      return paneProcessJson(await paneProcess(context.port, namedPane(input)));
    },
  }),
  defineTool({
    name: 'questions',
    tier: 'readonly',
    group: 'observe',
    everyMux: true,
    title: 'Find agents waiting on a question',
    description: 'Sweeps waiting and idle agent panes (or the named panes) for a pending question or prompt in their last 20 lines, and says why each other pane was skipped.',
    input: z.object({
      ...scope,
      panes: z
        .array(z.union([paneId, paneKey]))
        .min(1)
        .max(1024)
        .optional()
        .describe('only these panes, each by its id or its key; all on this machine, or all on one host (HOST::ID, or its keys)'),
      all_hosts,
    }),
    output: z.strictObject({
      matches: z.array(questionMatchJsonSchema.extend(mergedRowFields)),
      skipped: z.array(questionSkipJsonSchema.extend(mergedRowFields)),
      ...hostField,
      ...mergedHostsField,
    }),
    screens: (input) => input.panes?.flatMap(screenOf) ?? 'all',
    elsewhere: (input) => input.all_hosts === true || questionsHost(input.panes) !== undefined,
    async run(context, input) {
      if (input.all_hosts && (input.panes !== undefined || input.session !== undefined)) {
        throw new ArgumentError('all_hosts sweeps every session of every machine: it takes neither panes nor session');
      }
      const host = questionsHost(input.panes);
      if (host !== undefined) {
        const panes = input.panes!.map((pane) => paneOnHost(pane)!.pane);
        const { matches, skipped } = (await onHost(context, host, 'pane.questions', { panes })) as z.infer<typeof questionSweepJsonSchema>;
        return { matches: matches.map((row) => keyOnHost(row, host)), skipped: skipped.map((row) => keyOnHost(row, host)), host };
      }
      const questionScope: QuestionScope = input.panes ? { kind: 'panes', panes: input.panes } : input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const local = async () => questionSweepJson(await paneQuestions(context.port, questionScope, { env: context.env }));
      if (input.all_hosts) return (await acrossHosts(context, 'pane.questions', { all_sessions: true }, ['matches', 'skipped'], local)) as z.infer<typeof questionSweepJsonSchema>;
      return local();
    },
  }),
  defineTool({
    name: 'ready',
    tier: 'mutating',
    group: 'input',
    everyMux: true,
    title: 'Classify an agent pane: ready, busy, booting, parked, shell or exited',
    description:
      'For claude, codex, gemini and opencode the screen decides and nothing is typed; any other program gets a probe word typed into its input (never submitted) and erased again, so the tool counts as mutating. parked means a dialog or question holds the input.',
    input: z.object({ ...onePane, force }),
    output: readinessReportJsonSchema.extend(hostField),
    screens: (input) => screenOf(namedPane(input)),
    elsewhere: onAnotherHost,
    async run(context, input) {
      const host = paneOnHost(namedPane(input));
      if (host !== undefined) return shapedAs(readinessReportJsonSchema.extend(hostField), await onHost(context, host.host, 'pane.ready', { pane: host.pane })) as z.infer<typeof readinessReportJsonSchema>;
      const pane = await guardedPane(context, input, 'probe');
      return readinessReportJson(await paneReady(context.port, pane, { signal: context.signal }));
    },
  }),
  defineTool({
    name: 'deliver',
    tier: 'mutating',
    group: 'input',
    everyMux: true,
    title: 'Deliver a prompt to an agent and report whether it was submitted',
    description:
      'Pastes the text (line breaks kept) into an agent that is at its composer, checks the composer shows it, closes completion menus, presses Enter and reports submitted only on evidence (the agent turned busy, asks permission, or the composer emptied); otherwise failed or staged_unconfirmed with the reason and the screen. Never types into dialogs, questions or busy turns.',
    input: z.object({
      ...onePane,
      text: z.string().min(1).max(256 * 1024),
      force,
      delivery_id: z
        .string()
        .max(128)
        .optional()
        .describe(
          'a pane on a host only: the delivery\'s id (1 to 128 letters, digits, . _ -; one is made up when absent); when the link was lost mid-delivery (possibly_sent), call again with the same id: the host types it at most once and answers its receipt',
        ),
    }),
    output: deliveryReceiptJsonSchema.extend({
      warnings: z.array(z.string()).describe('a failed first attempt, said before the retry; on a host, the host keeps these to itself'),
      delivery_id: z.string().optional().describe('on a host: the id the host remembers this delivery by'),
      replayed: z.boolean().optional().describe('on a host: the receipt of an earlier delivery with this id, not typed again'),
      ...hostField,
    }),
    screens: (input) => screenOf(namedPane(input)),
    elsewhere: onAnotherHost,
    async run(context, input) {
      const host = paneOnHost(namedPane(input));
      const idProblem = input.delivery_id === undefined ? undefined : deliveryIdProblem(input.delivery_id);
      if (idProblem !== undefined) throw new ArgumentError(`delivery_id: ${idProblem}`);
      if (host !== undefined) {
        const deliveryId = input.delivery_id ?? newDeliveryId();
        const resend = `call deliver again with the same pane, text and delivery_id ${JSON.stringify(deliveryId)}`;
        const receipt = await onHost(context, host.host, 'pane.deliver', { pane: host.pane, text: input.text, wait_ms: 0, delivery_id: deliveryId }, { id: deliveryId, resend });
        return { ...(shapedAs(deliveryReceiptJsonSchema, receipt) as z.infer<typeof deliveryReceiptJsonSchema>), warnings: [], ...shapedAs(z.object({ delivery_id: z.string(), replayed: z.boolean() }), receipt), host: host.host };
      }
      if (input.delivery_id !== undefined) throw new ArgumentError('delivery_id is for a pane on a host, where the link may be lost mid-delivery');
      const pane = await guardedPane(context, input, 'deliver to');
      const warnings: string[] = [];
      // The pane's input lock, shared with the fleet's dispatchers here: a fleet message is never typed into the middle of this prompt.
      const receipt = await holdingPaneInput(context.port, pane, { env: context.env, signal: context.signal }, () =>
        paneDeliver(context.port, pane, input.text, { signal: context.signal, onWarning: (w) => warnings.push(w) }),
      );
      return { ...deliveryReceiptJson(receipt), warnings };
    },
  }),
  defineTool({
    name: 'send_text',
    tier: 'mutating',
    group: 'input',
    everyMux: true,
    title: 'Type text into a pane',
    description: 'Types text literally (no key names) into a pane, optionally followed by Enter. Dispatch only: use capture or wait_for_text to see the effect, or deliver for a verified prompt.',
    input: z.object({ ...localPane, text: z.string().min(1).max(256 * 1024), enter: z.boolean().optional(), force }),
    output: z.strictObject({ pane_id: z.string(), pane_key: z.string(), enter_sent: z.boolean(), ...dispatched }),
    async run(context, input) {
      if (context.mux === 'tmux') {
        const pane = context.server.pane(await tmuxPaneOf(context, input, 'type into'));
        await pane.sendText(input.text, context.operation);
        if (input.enter) await pane.sendKeys(['Enter'], context.operation);
        return { pane_id: pane.id, pane_key: (await resolvePane(context.port, pane.id)).paneKey, enter_sent: input.enter === true, delivery: 'observed' as const };
      }
      const typed = await paneTypeText(context.port, await guardedPane(context, input, 'type into'), input.text, { enter: input.enter, signal: context.signal });
      return { pane_id: typed.paneId, pane_key: typed.paneKey, enter_sent: input.enter === true, delivery: 'observed' as const };
    },
  }),
  defineTool({
    name: 'send_keys',
    tier: 'mutating',
    group: 'input',
    everyMux: true,
    title: 'Send keys to a pane',
    description:
      "Sends keys to a pane. On tmux, tmux's key names (Enter, Escape, C-c, Up, …); on herdr and zellij, drover's neutral spelling (Enter, Escape, ctrl+c, Up, …), each refused before anything is sent when that multiplexer cannot send it.",
    input: z.object({ ...localPane, keys: z.array(z.string().min(1).max(64)).min(1).max(256), force }),
    output: z.strictObject({ pane_id: z.string(), pane_key: z.string(), keys: z.number().int(), ...dispatched }),
    async run(context, input) {
      if (context.mux === 'tmux') {
        const pane = context.server.pane(await tmuxPaneOf(context, input, 'send keys to'));
        await pane.sendKeys(input.keys, context.operation);
        return { pane_id: pane.id, pane_key: (await resolvePane(context.port, pane.id)).paneKey, keys: input.keys.length, delivery: 'observed' as const };
      }
      const sent = await paneSendKeys(context.port, await guardedPane(context, input, 'send keys to'), input.keys, { signal: context.signal });
      return { pane_id: sent.paneId, pane_key: sent.paneKey, keys: input.keys.length, delivery: 'observed' as const };
    },
  }),
  defineTool({
    name: 'wait_for_text',
    tier: 'readonly',
    group: 'observe',
    everyMux: true,
    title: 'Wait for text to appear in a pane',
    description:
      'Waits until the pane shows the text (or matches the regular expression, RE2 syntax: no backreferences or lookaround): on tmux event-driven over control mode, elsewhere by reading the screen every 100 ms. The wait is clamped to the request deadline; the value used is reported. A timeout is a normal result (matched: false), not an error.',
    input: z.object({
      ...localPane,
      text: z.string().min(1).max(4096).optional(),
      regex: z.string().min(1).max(1024).optional(),
      timeout_ms: z.number().int().min(1).optional(),
    }),
    output: z.strictObject({ pane_id: z.string(), pane_key: z.string(), matched: z.boolean(), timeout_ms_used: z.number().int(), elapsed_ms: z.number().int() }),
    screens: (input) => screenOf(namedPane(input)),
    async run(context, input) {
      if ((input.text === undefined) === (input.regex === undefined)) throw new ArgumentError('give exactly one of text or regex');
      let predicate: string | TextTest;
      if (input.regex !== undefined) {
        try {
          predicate = compileTextPattern(input.regex);
        } catch (error) {
          throw new ArgumentError(`regex is ${(error as Error).message}`);
        }
      } else predicate = input.text!;
      const limit = Math.max(1, context.deadlineMs - REPLY_MARGIN_MS);
      const timeoutMs = Math.min(input.timeout_ms ?? limit, limit);
      const started = Date.now();
      const { paneId: id, paneKey: key } = await resolvePane(context.port, namedPane(input));
      const answer = (matched: boolean) => ({ pane_id: id, pane_key: key, matched, timeout_ms_used: timeoutMs, elapsed_ms: Date.now() - started });
      if (context.mux !== 'tmux') {
        const test = typeof predicate === 'string' ? (text: string) => text.includes(predicate) : predicate;
        return answer((await paneWaitForScreen(context.port, id, test, { timeoutMs, signal: context.signal })).matched);
      }
      try {
        await context.server.waitForOutput(context.server.pane(checkId('pane', id)), predicate, { timeoutMs, signal: context.signal });
        return answer(true);
      } catch (error) {
        if (error instanceof TimeoutError) return answer(false);
        throw error;
      }
    },
  }),
  defineTool({
    name: 'kill_pane',
    tier: 'destructive',
    group: 'destroy',
    everyMux: true,
    title: 'Kill a pane',
    description: 'Kills a pane and the program in it.',
    input: z.object({ ...onePane, force }),
    output: z.strictObject({ pane_id: z.string(), pane_key: z.string(), ...dispatched, ...hostField }),
    elsewhere: onAnotherHost,
    async run(context, input) {
      const host = paneOnHost(namedPane(input));
      if (host !== undefined) {
        const killed = (await onHost(context, host.host, 'pane.kill', { pane: host.pane })) as { pane_id: string; pane_key: string };
        return { pane_id: killed.pane_id, pane_key: killed.pane_key, delivery: 'observed' as const, host: host.host };
      }
      const killed = await paneKill(context.port, await guardedPane(context, input, 'kill'));
      return { pane_id: killed.paneId, pane_key: killed.paneKey, delivery: 'observed' as const };
    },
  }),
];
