import { z } from 'zod';
import { MUX_DECLARATIONS, declarationJson, muxDeclarationJsonSchema } from '../../mux/index.js';
import type { CaptureLimits } from '../captures.js';
import { GROUP_NAMES, TIERS, TOOL_GROUPS, type CatalogEntry, type ToolPolicy } from '../policy.js';
import type { StdioLimits } from '../stdio.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';

export const CAPABILITIES_TOOL = 'capabilities';

/** What the application knows of itself, for the capabilities tool. */
export interface ApplicationFacts {
  readonly version: string;
  readonly policy: ToolPolicy;
  /** Every tool this server offers, enabled or not. */
  readonly catalog: ReadonlyMap<string, CatalogEntry>;
  readonly requestTimeoutMs: number;
  readonly responseBytes: number;
  readonly mutationEvidenceBytes: number;
  readonly captureLimits: CaptureLimits;
  /** The stdio transport's bounds, when the application is served over one. */
  readonly stdio: StdioLimits | undefined;
}

const capabilitiesOutput = z.strictObject({
  server: z.strictObject({ name: z.literal('drover'), version: z.string() }),
  policy: z.strictObject({
    tier: z.enum(TIERS).nullable().describe('the tier the operator enabled, if any: every tool up to it is on'),
    groups: z.array(z.strictObject({ name: z.enum(GROUP_NAMES), description: z.string(), enabled: z.boolean(), tools: z.array(z.string()) })),
  }),
  tools: z.array(z.strictObject({ name: z.string(), group: z.enum(GROUP_NAMES), tier: z.enum(TIERS), enabled: z.boolean() })),
  multiplexer: z.strictObject({
    reachable: z.boolean().describe('whether the multiplexer answered this call'),
    version: z.string().nullable().describe("tmux's version; null elsewhere, or when tmux did not answer"),
    declaration: muxDeclarationJsonSchema,
  }),
  limits: z.strictObject({
    request_timeout_ms: z.number().int(),
    response_bytes: z.number().int(),
    mutation_evidence_bytes: z.number().int().describe('the least response bound under which tools that change things are offered'),
    capture_retention: z.strictObject({ captures: z.number().int(), bytes: z.number().int(), ttl_ms: z.number().int() }),
    stdio: z
      .strictObject({
        max_active_requests: z.number().int(),
        max_requests: z.number().int(),
        max_frame_bytes: z.number().int(),
        max_queued_bytes: z.number().int(),
        request_timeout_ms: z.number().int(),
        write_timeout_ms: z.number().int(),
        cleanup_timeout_ms: z.number().int(),
      })
      .nullable(),
  }),
});

/** Whether the multiplexer answers, and on tmux its version; a failure is reported, not raised. */
async function reachability(context: ToolContext): Promise<{ reachable: boolean; version: string | null }> {
  try {
    if (context.mux === 'tmux') {
      const version = await context.server.version(context.operation);
      return { reachable: true, version };
    }
    await context.port.serverIncarnation(context.operation);
    return { reachable: true, version: null };
  } catch {
    // No server yet, or not the one bound: the report says so rather than failing.
    return { reachable: false, version: null };
  }
}

/**
 * The always-on tool that says what this server can do: the policy (groups and tools, on or
 * off), the multiplexer's declared capabilities and version, and every bound a call meets.
 */
export function capabilitiesTool(facts: () => ApplicationFacts): ToolDefinition {
  return defineTool({
    name: CAPABILITIES_TOOL,
    tier: 'readonly',
    group: 'core',
    needsServer: false,
    title: 'What this server can do',
    description:
      "Lists the tool groups and tools (enabled or not, and what enables them), the multiplexer's declared capabilities and version, and the bounds every call meets. Works before any multiplexer server runs.",
    input: z.object({}),
    output: capabilitiesOutput,
    async run(context) {
      const about = facts();
      const { reachable, version } = await reachability(context);
      const tools = [...about.catalog].map(([name, entry]) => ({ name, group: entry.group, tier: entry.tier, enabled: about.policy.allows(name) }));
      const { stdio } = about;
      return {
        server: { name: 'drover' as const, version: about.version },
        policy: {
          tier: about.policy.tier,
          groups: GROUP_NAMES.map((name) => ({
            name,
            description: TOOL_GROUPS[name],
            enabled: about.policy.groups.has(name),
            tools: tools.filter((tool) => tool.group === name).map((tool) => tool.name),
          })),
        },
        tools,
        multiplexer: { reachable, version, declaration: declarationJson(context.mux, MUX_DECLARATIONS[context.mux]) },
        limits: {
          request_timeout_ms: about.requestTimeoutMs,
          response_bytes: about.responseBytes,
          mutation_evidence_bytes: about.mutationEvidenceBytes,
          capture_retention: { captures: about.captureLimits.maxCaptures, bytes: about.captureLimits.maxBytes, ttl_ms: about.captureLimits.ttlMs },
          stdio:
            stdio === undefined
              ? null
              : {
                  max_active_requests: stdio.maxActiveRequests,
                  max_requests: stdio.maxRequests,
                  max_frame_bytes: stdio.maxFrameBytes,
                  max_queued_bytes: stdio.maxQueuedBytes,
                  request_timeout_ms: stdio.requestTimeoutMs,
                  write_timeout_ms: stdio.writeTimeoutMs,
                  cleanup_timeout_ms: stdio.cleanupTimeoutMs,
                },
        },
      };
    },
  });
}
