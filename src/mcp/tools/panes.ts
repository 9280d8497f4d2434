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
import { checkId } from '../../tmux/index.js';
import { defineTool, type ToolDefinition } from '../tool.js';
import { force, guardSelf, paneId } from './tmux.js';

const scope = {
  session: z.string().min(1).max(1024).optional().describe('only this session (default: all sessions)'),
};

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
      const rows = await paneMap(context.server, sessionScope, { env: context.env });
      return { panes: rows.map(mapRowJson) };
    },
  }),
  defineTool({
    name: 'questions',
    tier: 'readonly',
    group: 'observe',
    title: 'Find agents waiting on a question',
    description: 'Sweeps waiting and idle agent panes (or the named panes) for a pending question or prompt in their last 20 lines, and says why each other pane was skipped.',
    input: z.object({ ...scope, panes: z.array(paneId).min(1).max(1024).optional() }),
    output: questionSweepJsonSchema,
    screens: (input) => input.panes?.map((pane) => checkId('pane', pane)) ?? 'all',
    async run(context, input) {
      const questionScope: QuestionScope = input.panes ? { kind: 'panes', panes: input.panes } : input.session ? { kind: 'session', name: input.session } : { kind: 'all' };
      const sweep = await paneQuestions(context.server, questionScope, { env: context.env });
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
    input: z.object({ pane_id: paneId, force }),
    output: readinessReportJsonSchema,
    screens: (input) => [checkId('pane', input.pane_id)],
    async run(context, input) {
      const pane = await guardSelf(context, input.pane_id, 'probe', input.force);
      const report = await paneReady(context.server, pane, { signal: context.signal });
      return readinessReportJson(pane, report);
    },
  }),
  defineTool({
    name: 'deliver',
    tier: 'mutating',
    group: 'input',
    title: 'Deliver a prompt to an agent and report whether it was submitted',
    description:
      'Pastes the text (line breaks kept) into an agent that is at its composer, checks the composer shows it, closes completion menus, presses Enter and reports submitted only on evidence (the agent turned busy, asks permission, or the composer emptied); otherwise failed or staged_unconfirmed with the reason and the screen. Never types into dialogs, questions or busy turns.',
    input: z.object({ pane_id: paneId, text: z.string().min(1).max(256 * 1024), force }),
    output: deliveryReceiptJsonSchema.extend({ warnings: z.array(z.string()).describe('a failed first attempt, said before the retry') }),
    screens: (input) => [checkId('pane', input.pane_id)],
    async run(context, input) {
      const pane = await guardSelf(context, input.pane_id, 'deliver to', input.force);
      const warnings: string[] = [];
      const receipt = await paneDeliver(context.server, pane, input.text, { signal: context.signal, onWarning: (w) => warnings.push(w) });
      return { ...deliveryReceiptJson(pane, receipt), warnings };
    },
  }),
];
