import { z } from 'zod';
import { isValidMuxId, looksLikePaneKey, MUX_NAMES, MuxError, muxSnapshotJson, muxSnapshotJsonSchema, parsePaneKey } from '../../mux/index.js';
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
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { dispatched, force, guardSelf, refuseSelf } from './tmux.js';

const scope = {
  session: z.string().min(1).max(1024).optional().describe('only this session (default: all sessions)'),
};

/** A pane's id as its multiplexer names it: %3 on tmux, w1:p3 on herdr, terminal_3 on zellij. */
const paneId = z
  .string()
  .refine((value) => isValidMuxId(value) && !looksLikePaneKey(value), 'a pane id such as %3 (tmux), w1:p3 (herdr) or terminal_3 (zellij)');

/** A pane's key, as every row that names a pane carries it in `pane_key`. */
const paneKey = z
  .string()
  .max(1024)
  .regex(new RegExp(`^[^:]+::(${MUX_NAMES.join('|')})::[^:]+::.+$`), "a pane key like local::tmux::28114-1764844800::%3 (a row's pane_key)");

/** One pane, by its id or by its key; exactly one of the two. */
const onePane = {
  pane_id: paneId.optional().describe('the pane by its id, whichever run of the server answers now'),
  pane_key: paneKey
    .optional()
    .describe("the pane by its key (a row's pane_key): refused, nothing done, once the server it names was restarted; what a script should hold"),
};

/** The pane as the verbs take it: the key as it came (the port refuses a key of another run), or the id. */
function namedPane(input: { pane_id?: string; pane_key?: string }): string {
  if ((input.pane_id === undefined) === (input.pane_key === undefined)) throw new ArgumentError('name the pane by exactly one of pane_id and pane_key');
  return input.pane_id ?? input.pane_key!;
}

/** The tmux pane whose screen a call reads, for tmux's capture-hook check; none for what is not a tmux pane (the verb refuses it). */
function screenOf(pane: string): PaneId[] {
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
    output: captureOutput,
    screens: (input) => screenOf(namedPane(input)),
    async run(context, input) {
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
    description: 'Every pane with its session, window, git worktree and repo, fab change/stage when present, agent state (active, waiting, idle, unknown) and idle duration.',
    input: z.object(scope),
    output: z.strictObject({ panes: z.array(mapRowJsonSchema) }),
    // The map reads the screen of an agent whose hooks do not say its state.
    screens: () => 'all',
    async run(context, input) {
      const sessionScope: SessionScope = input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const rows = await paneMap(context.port, sessionScope, { env: context.env });
      return { panes: rows.map(mapRowJson) };
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
    output: paneProcessJsonSchema,
    async run(context, input) {
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
    input: z.object({ ...scope, panes: z.array(z.union([paneId, paneKey])).min(1).max(1024).optional().describe('only these panes, each by its id or its key') }),
    output: questionSweepJsonSchema,
    screens: (input) => input.panes?.flatMap(screenOf) ?? 'all',
    async run(context, input) {
      const questionScope: QuestionScope = input.panes ? { kind: 'panes', panes: input.panes } : input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const sweep = await paneQuestions(context.port, questionScope, { env: context.env });
      return questionSweepJson(sweep);
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
    output: readinessReportJsonSchema,
    screens: (input) => screenOf(namedPane(input)),
    async run(context, input) {
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
    input: z.object({ ...onePane, text: z.string().min(1).max(256 * 1024), force }),
    output: deliveryReceiptJsonSchema.extend({ warnings: z.array(z.string()).describe('a failed first attempt, said before the retry') }),
    screens: (input) => screenOf(namedPane(input)),
    async run(context, input) {
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
    output: z.strictObject({ pane_id: z.string(), pane_key: z.string(), ...dispatched }),
    async run(context, input) {
      const killed = await paneKill(context.port, await guardedPane(context, input, 'kill'));
      return { pane_id: killed.paneId, pane_key: killed.paneKey, delivery: 'observed' as const };
    },
  }),
];
