import { z } from 'zod';
import { AGENT_STATES } from '../agents/index.js';
import type { DeliveryReceipt } from './delivery.js';
import { STAGE_STATES } from './fab-status.js';
import { AGENT_STATE_SOURCES } from './map-rows.js';
import { QUESTION_INDICATORS, QUESTION_SKIP_REASONS } from './questions.js';
import { READINESS_STATES } from './readiness.js';

// The JSON Schemas of the pane verbs' `--json` rows, which MCP declares as its tools' output.
// They live apart from the code that builds the rows so that a command that only prints rows
// does not load the schema library at start; the row types are inferred from them, so a field
// added to a row and not to its schema does not compile.

/**
 * The two fields every `--json` row and MCP result that names a pane starts with: the id, and
 * the key a script should hold on to (it is refused, never acted on, once its server is gone).
 */
export const paneRefJsonShape = {
  pane_id: z.string(),
  pane_key: z.string().describe('the pane and the server run it lives on (HOST::MUX::INCARNATION::PANE); scripts should name panes by it'),
} as const;

/**
 * The `--json` shape of a delivery receipt (also the MCP deliver tool's result). The type is
 * inferred from the schema and deliveryReceiptJson returns it, so the two cannot differ.
 */
export const deliveryReceiptJsonSchema = z.strictObject({
  ...paneRefJsonShape,
  status: z.enum(['submitted', 'staged_unconfirmed', 'failed'] as const satisfies readonly DeliveryReceipt['status'][]),
  reason: z.string(),
  evidence: z.enum(['agent_busy', 'agent_asking', 'composer_cleared'] as const satisfies readonly NonNullable<DeliveryReceipt['evidence']>[]).nullable(),
  agent: z.string().nullable(),
  method: z.enum(['paste', 'keys'] as const satisfies readonly DeliveryReceipt['method'][]),
  attempts: z.number().int(),
  chars: z.number().int(),
  draft_cleared: z.string().nullable(),
  typed: z.boolean(),
  snippet: z.string(),
});
export type DeliveryReceiptJson = z.infer<typeof deliveryReceiptJsonSchema>;

/** The `--json` shape of a readiness report (also the MCP ready tool's result), inferred from its schema. */
export const readinessReportJsonSchema = z.strictObject({
  ...paneRefJsonShape,
  state: z.enum(READINESS_STATES),
  reason: z.string(),
  agent: z.string().nullable(),
  rule: z.string().nullable(),
  detail: z.string(),
  draft: z.string().nullable(),
  snippet: z.string(),
});
export type ReadinessReportJson = z.infer<typeof readinessReportJsonSchema>;

/**
 * One row of `pane map --json` and of the MCP pane_map tool: the row type is inferred from
 * this schema and mapRowJson returns that type, so a key added to one and not the other does
 * not compile. Unknowns are null.
 */
export const mapRowJsonSchema = z.strictObject({
  session: z.string(),
  window_index: z.number().int(),
  window_id: z.string().nullable(),
  ...paneRefJsonShape,
  tab: z.string(),
  worktree: z.string(),
  repo: z.string().nullable(),
  change: z.string().nullable(),
  stage: z.string().nullable(),
  display_state: z.enum(STAGE_STATES).nullable(),
  agent_state: z.enum(AGENT_STATES).nullable(),
  agent_idle_duration: z.string().nullable(),
  pr_url: z.string().nullable(),
  pr_number: z.number().int().nullable(),
  agent: z.string().nullable().describe('the agent the pane runs, by its process tree'),
  agent_state_source: z.enum(AGENT_STATE_SOURCES).nullable().describe("where agent_state came from: the agent's hooks, the multiplexer (herdr detects agents), or the agent's screen"),
  branch: z.string().nullable().optional().describe('with --glance: the branch checked out in its worktree (7 hex digits when detached); null outside git'),
  last_line: z.string().nullable().optional().describe("with --glance: the lowest line with words on its screen (an agent's transcript, not its input box); null when blank or unread"),
  screen_digest: z.string().nullable().optional().describe('with --glance: changes whenever what its screen shows does; null when unread'),
});
export type MapRowJson = z.infer<typeof mapRowJsonSchema>;

/**
 * The `--json` rows of a sweep (and the MCP questions tool's result). The row types are
 * inferred from these schemas and the builders return them, so a field added to a row and not
 * to its schema does not compile.
 */
export const questionMatchJsonSchema = z.strictObject({
  ...paneRefJsonShape,
  agent_state: z.enum(AGENT_STATES),
  indicator: z.enum(QUESTION_INDICATORS),
  snippet: z.string().describe('the line that asks'),
  agent: z.string().nullable(),
  rule: z.string().nullable().describe('the screen rule that matched; null for the line scan'),
  answers: z
    .array(z.strictObject({ label: z.string(), keys: z.array(z.string()).describe('`pane keys` names that choose it') }))
    .describe("what the question offers, read off the same screen: its menu's entries, y and n…; empty when it wants words"),
});
export const questionSkipJsonSchema = z.strictObject({ ...paneRefJsonShape, reason: z.enum(QUESTION_SKIP_REASONS) });
export const questionSweepJsonSchema = z.strictObject({ matches: z.array(questionMatchJsonSchema), skipped: z.array(questionSkipJsonSchema) });
export type QuestionMatchJson = z.infer<typeof questionMatchJsonSchema>;
export type QuestionSkipJson = z.infer<typeof questionSkipJsonSchema>;
export type QuestionSweepJson = z.infer<typeof questionSweepJsonSchema>;

/** One process and those under it, as the report lists them. */
const processNodeJsonSchema = z.strictObject({
  pid: z.number().int(),
  ppid: z.number().int(),
  comm: z.string(),
  cmdline: z.string(),
  classification: z.enum(['agent', 'node', 'git', 'other']),
  agent: z.string().nullable().describe("an agent's name; null for any other process"),
  get children(): z.ZodArray<typeof processNodeJsonSchema> {
    return z.array(processNodeJsonSchema);
  },
});

export const paneProcessJsonSchema = z.strictObject({
  pane_id: z.string(),
  pane_key: z.string(),
  pane_pid: z.number().int(),
  processes: z.array(processNodeJsonSchema),
  has_agent: z.boolean(),
});

export type PaneProcessJson = z.infer<typeof paneProcessJsonSchema>;
