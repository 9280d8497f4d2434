import { z } from 'zod';
import { MUX_CAPABILITIES, capabilityKey } from './capabilities.js';
import { AGENT_STATUSES, MUX_NAMES } from './types.js';

// The JSON Schemas of a multiplexer's declaration and of the port's snapshot, which MCP declares
// as its tools' output. They live apart from the code that builds the JSON so that a command
// that only prints it does not load the schema library at start; the types are inferred from them.

const CAPABILITY_KEYS = MUX_CAPABILITIES.map(capabilityKey) as [string, ...string[]];

/**
 * A declaration as JSON (`drover mux capabilities --json`, MCP's capabilities tool): capability
 * names snake_case like every key, key spellings as the port spells keys. The schema is built
 * from the capability list every declaration is total over, and the type is inferred from it.
 */
export const muxDeclarationJsonSchema = z.strictObject({
  mux: z.enum(MUX_NAMES),
  supports: z.strictObject(Object.fromEntries(CAPABILITY_KEYS.map((key) => [key, z.boolean()]))),
  unsupported_keys: z.array(z.string()),
  notes: z.partialRecord(z.enum(CAPABILITY_KEYS), z.string()),
  facts: z.strictObject({
    topology_latency: z.discriminatedUnion('kind', [z.strictObject({ kind: z.literal('push') }), z.strictObject({ kind: z.literal('bounded'), ms: z.number() })]),
    spaces: z.enum(['one', 'many']),
  }),
});
export type MuxDeclarationJson = z.infer<typeof muxDeclarationJsonSchema>;

const size = { width: z.number(), height: z.number() };

export const muxPaneJsonSchema = z.strictObject({
  pane_id: z.string(),
  pane_key: z.string().describe('the pane id with the server run it lives on: what the pane tools take as pane_key'),
  space_id: z.string(),
  space_label: z.string(),
  space_number: z.number().int(),
  tab_id: z.string(),
  tab_label: z.string().nullable(),
  cwd: z.string(),
  focused: z.boolean(),
  alive: z.boolean(),
  agent: z.string(),
  status: z.enum(AGENT_STATUSES),
  pane_label: z.string().nullable(),
  terminal_title: z.string().nullable(),
  foreground_command: z.string().nullable(),
  readable_lines: z.number().int().nullable(),
  agent_session: z.strictObject({ source: z.string(), agent: z.string(), kind: z.enum(['id', 'path']), value: z.string() }).nullable(),
  geometry: z.strictObject({ x: z.number(), y: z.number(), ...size }).nullable(),
});

export const muxSnapshotJsonSchema = z.strictObject({
  incarnation: z.string().describe('the run of the multiplexer the snapshot was read from'),
  spaces: z.array(
    z.strictObject({
      space_id: z.string(),
      number: z.number().int(),
      label: z.string(),
      focused: z.boolean(),
      active_tab_id: z.string().nullable(),
      tab_count: z.number().int(),
      pane_count: z.number().int(),
      repo_root: z.string().nullable(),
      is_worktree: z.boolean().nullable(),
    }),
  ),
  tabs: z.array(
    z.strictObject({
      tab_id: z.string(),
      space_id: z.string(),
      number: z.number().int(),
      label: z.string(),
      focused: z.boolean(),
      pane_count: z.number().int(),
      size: z.strictObject(size).nullable(),
    }),
  ),
  panes: z.array(muxPaneJsonSchema),
});

export type MuxPaneJson = z.infer<typeof muxPaneJsonSchema>;
export type MuxSnapshotJson = z.infer<typeof muxSnapshotJsonSchema>;
