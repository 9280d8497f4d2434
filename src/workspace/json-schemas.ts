import { z } from 'zod';
import type { CompensationState, EffectOutcome } from './apply.js';
import { STEP_EFFECTS, STEP_OPS, type PlanConflict, type PlanPrecondition } from './plan.js';

// The JSON Schemas of a plan and of an apply, which MCP declares as its workspace tools'
// output. They live apart from the plan and apply code so that `drover workspace` does not load
// the schema library at start; the types are inferred from them, so the two cannot differ.

export const planConflictJsonSchema = z.strictObject({
  kind: z.enum(['session_exists', 'window_index_taken', 'server_option', 'unknown_option'] as const satisfies readonly PlanConflict['kind'][]),
  path: z.string(),
  message: z.string(),
});

/**
 * A plan's JSON export (`workspace plan --json`, MCP workspace_plan). The type is inferred
 * from the schema and toJSON returns it, so the two cannot differ. A step's args are its
 * operation's own fields, snake_case.
 */
export const workspacePlanJsonSchema = z.strictObject({
  session_name: z.string(),
  window_count: z.number().int(),
  pane_count: z.number().int(),
  preconditions: z.array(z.strictObject({ kind: z.enum(['session_absent'] as const satisfies readonly PlanPrecondition['kind'][]), session_name: z.string() })),
  conflicts: z.array(planConflictJsonSchema),
  size: z.strictObject({ width: z.number().int(), height: z.number().int(), reason: z.string() }).nullable(),
  creates_directories: z.array(z.strictObject({ path: z.string(), source: z.string() })),
  steps: z.array(
    z.strictObject({
      index: z.number().int(),
      op: z.enum(STEP_OPS),
      args: z.record(z.string(), z.unknown()),
      effect: z.enum(STEP_EFFECTS),
      produces: z.array(z.string()),
      consumes: z.array(z.string()),
      source: z.string(),
    }),
  ),
});
export type WorkspacePlanJson = z.infer<typeof workspacePlanJsonSchema>;

/**
 * An apply's JSON export (`workspace load --json`, MCP workspace_load). The type is inferred
 * from the schema and toJSON returns it, so the two cannot differ.
 */
export const applyResultJsonSchema = z.strictObject({
  session_name: z.string(),
  session_id: z.string().nullable(),
  success: z.boolean(),
  partial: z.boolean(),
  uncertain: z.boolean(),
  completed_steps: z.array(z.number().int()),
  created: z.array(z.strictObject({ symbol: z.string(), kind: z.enum(['session', 'window', 'pane']), id: z.string(), step: z.number().int() })),
  effects: z.array(z.strictObject({ step: z.number().int(), op: z.enum(STEP_OPS), effect: z.enum(STEP_EFFECTS), outcome: z.enum(['observed', 'dispatch_only'] as const satisfies readonly EffectOutcome[]) })),
  failed_step: z.number().int().nullable(),
  failed_action: z.string().nullable(),
  failed_source: z.string().nullable(),
  failure_class: z.string().nullable(),
  conflicts: z.array(planConflictJsonSchema),
  compensation: z.enum(['not_requested', 'not_needed', 'completed', 'refused', 'failed'] as const satisfies readonly CompensationState[]),
  cleanup_errors: z.array(z.string()),
});
export type ApplyResultJson = z.infer<typeof applyResultJsonSchema>;
