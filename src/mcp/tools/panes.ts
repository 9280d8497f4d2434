import { z } from 'zod';
import { deliveryIdProblem, newDeliveryId } from '../../hosts/index.js';
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
import { ArgumentError } from '../../process/index.js';
import { checkId, isPaneId, type PaneId } from '../../tmux/index.js';
import { acrossHosts, hostField, keyOnHost, mergedHostsField, mergedRowFields, onHost, paneOnHost, shapedAs, type HostStatusJson } from '../hosts.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { dispatched, force, guardSelf, refuseSelf } from './tmux.js';

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
      const receipt = await paneDeliver(context.port, pane, input.text, { signal: context.signal, onWarning: (w) => warnings.push(w) });
      return { ...deliveryReceiptJson(receipt), warnings };
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
