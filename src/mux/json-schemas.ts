import { z } from 'zod';
import { MUX_CAPABILITIES, capabilityKey } from './capabilities.js';
import { MUX_NAMES } from './types.js';

// The JSON Schema of a multiplexer's declaration, which MCP declares as its capabilities tool's
// output. It lives apart from declarationJson so that a command that only prints declarations
// does not load the schema library at start; the type is inferred from it.

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
