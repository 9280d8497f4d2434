import { z } from 'zod';
import type { MessageState, MessageType } from './model.js';

// The JSON Schema of a message, which MCP declares as its message tools' output. It lives apart
// from messageJson so that the fleet commands do not load the schema library at start; the type
// is inferred from it.

/**
 * A message as `--json` and the MCP message tools print it. The type is inferred from the
 * schema and messageJson returns it, so the two cannot differ.
 */
export const messageJsonSchema = z.strictObject({
  message_id: z.number().int(),
  owner_member_id: z.number().int(),
  from_member_id: z.number().int(),
  to_member_id: z.number().int().nullable(),
  type: z.enum(['unicast', 'broadcast_summary'] as const satisfies readonly MessageType[]),
  created_at: z.string(),
  status_state: z.enum(['input_required', 'completed'] as const satisfies readonly MessageState[]),
  status_timestamp: z.string(),
  origin_message_id: z.number().int().nullable(),
  text: z.string(),
  notified_at: z.string().nullable(),
});
export type MessageJson = z.infer<typeof messageJsonSchema>;
