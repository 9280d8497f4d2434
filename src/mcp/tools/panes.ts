import { z } from 'zod';
import {
  deliveryReceiptJson,
  deliveryReceiptJsonSchema,
  mapRowJson,
  mapRowJsonSchema,
  paneDeliver,
  paneMap,
  paneQuestions,
  paneReady,
  questionSweepJson,
  questionSweepJsonSchema,
  readinessReportJson,
  readinessReportJsonSchema,
  type QuestionScope,
  type SessionScope,
} from '../../panes/index.js';
import { createMuxPort, parsePaneKey, TmuxAdapter, type MuxPort } from '../../mux/index.js';
import { ArgumentError } from '../../process/index.js';
import { checkId, type PaneId } from '../../tmux/index.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { force, guardSelf, paneId } from './tmux.js';

const scope = {
  session: z.string().min(1).max(1024).optional().describe('only this session (default: all sessions)'),
};

/** A tmux pane's key, as every row that names a pane carries it in `pane_key`. */
const paneKey = z
  .string()
  .max(1024)
  .regex(/^[^:]+::tmux::[^:]+::%\d+$/, "a tmux pane key like local::tmux::28114-1764844800::%3 (a row's pane_key)");

/** One pane, by its id or by its key; exactly one of the two. */
const onePane = {
  pane_id: paneId.optional().describe('the pane by its tmux id, whichever run of the server answers now'),
  pane_key: paneKey
    .optional()
    .describe("the pane by its key (a row's pane_key): refused, nothing done, once the server it names was restarted; what a script should hold"),
};

/**
 * The tmux id of a pane named by id or key (what the screen and self checks take), and what the
 * verb is given: the key as it came, so the verb refuses a key of another run of the server.
 */
function namedPane(input: { pane_id?: string; pane_key?: string }): { id: PaneId; target: string } {
  if ((input.pane_id === undefined) === (input.pane_key === undefined)) throw new ArgumentError('name the pane by exactly one of pane_id and pane_key');
  if (input.pane_id !== undefined) return { id: checkId('pane', input.pane_id), target: input.pane_id };
  return { id: idOfKey(input.pane_key!), target: input.pane_key! };
}

/** The tmux id a pane key carries (the schema checked its form). */
function idOfKey(key: string): PaneId {
  const parsed = parsePaneKey(key);
  if (!parsed.ok) throw new ArgumentError(parsed.problem);
  return checkId('pane', parsed.key.paneId);
}

/** A pane the questions tool names: its tmux id, or its key. */
function idOfNamed(pane: string): PaneId {
  return pane.includes('::') ? idOfKey(pane) : checkId('pane', pane);
}

/** The pane verbs reach tmux through the mux port, over the server this MCP server borrowed. */
function portOf(context: ToolContext): MuxPort {
  return createMuxPort(new TmuxAdapter({ server: context.server }));
}

export const paneTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'pane_map',
    tier: 'readonly',
    group: 'observe',
    title: 'Map agent panes',
    description: 'Every pane with its session, window, git worktree and repo, fab change/stage when present, agent state (active, waiting, idle, unknown) and idle duration.',
    input: z.object(scope),
    output: z.strictObject({ panes: z.array(mapRowJsonSchema) }),
    // The map reads the screen of an agent whose hooks do not say its state.
    screens: () => 'all',
    async run(context, input) {
      const sessionScope: SessionScope = input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const rows = await paneMap(portOf(context), sessionScope, { env: context.env });
      return { panes: rows.map(mapRowJson) };
    },
  }),
  defineTool({
    name: 'questions',
    tier: 'readonly',
    group: 'observe',
    title: 'Find agents waiting on a question',
    description: 'Sweeps waiting and idle agent panes (or the named panes) for a pending question or prompt in their last 20 lines, and says why each other pane was skipped.',
    input: z.object({ ...scope, panes: z.array(z.union([paneId, paneKey])).min(1).max(1024).optional().describe('only these panes, each by its id or its key') }),
    output: questionSweepJsonSchema,
    screens: (input) => input.panes?.map(idOfNamed) ?? 'all',
    async run(context, input) {
      const questionScope: QuestionScope = input.panes ? { kind: 'panes', panes: input.panes } : input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const sweep = await paneQuestions(portOf(context), questionScope, { env: context.env });
      return questionSweepJson(sweep);
    },
  }),
  defineTool({
    name: 'ready',
    tier: 'mutating',
    group: 'input',
    title: 'Classify an agent pane: ready, busy, booting, parked, shell or exited',
    description:
      'For claude, codex, gemini and opencode the screen decides and nothing is typed; any other program gets a probe word typed into its input (never submitted) and erased again, so the tool counts as mutating. parked means a dialog or question holds the input.',
    input: z.object({ ...onePane, force }),
    output: readinessReportJsonSchema,
    screens: (input) => [namedPane(input).id],
    async run(context, input) {
      const { id, target } = namedPane(input);
      const pane = await guardSelf(context, id, 'probe', input.force);
      return readinessReportJson(await paneReady(portOf(context), input.pane_key === undefined ? pane : target, { signal: context.signal }));
    },
  }),
  defineTool({
    name: 'deliver',
    tier: 'mutating',
    group: 'input',
    title: 'Deliver a prompt to an agent and report whether it was submitted',
    description:
      'Pastes the text (line breaks kept) into an agent that is at its composer, checks the composer shows it, closes completion menus, presses Enter and reports submitted only on evidence (the agent turned busy, asks permission, or the composer emptied); otherwise failed or staged_unconfirmed with the reason and the screen. Never types into dialogs, questions or busy turns.',
    input: z.object({ ...onePane, text: z.string().min(1).max(256 * 1024), force }),
    output: deliveryReceiptJsonSchema.extend({ warnings: z.array(z.string()).describe('a failed first attempt, said before the retry') }),
    screens: (input) => [namedPane(input).id],
    async run(context, input) {
      const { id, target } = namedPane(input);
      const pane = await guardSelf(context, id, 'deliver to', input.force);
      const warnings: string[] = [];
      const receipt = await paneDeliver(portOf(context), input.pane_key === undefined ? pane : target, input.text, { signal: context.signal, onWarning: (w) => warnings.push(w) });
      return { ...deliveryReceiptJson(receipt), warnings };
    },
  }),
];
