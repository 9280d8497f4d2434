import { ArgumentError } from '../process/index.js';

/** How much a tool can change: reading, changing state, or destroying objects. */
export type Tier = 'readonly' | 'mutating' | 'destructive';
export const TIERS: readonly Tier[] = ['readonly', 'mutating', 'destructive'];

export interface PolicySpec {
  /** Tools up to this tier are enabled. Default: readonly. */
  tier?: string;
  /** Extra tools enabled by name, whatever their tier. */
  enable?: readonly string[];
}

/** Which tools a server exposes. Tools outside the policy are not listed and cannot be called. */
export class ToolPolicy {
  readonly tier: Tier;
  readonly enabled: ReadonlySet<string>;

  private constructor(tier: Tier, enabled: ReadonlySet<string>) {
    this.tier = tier;
    this.enabled = enabled;
    Object.freeze(this);
  }

  /** Validates tier and tool names against the catalog; unknown names fail, listing the valid ones. */
  static resolve(spec: PolicySpec, catalog: ReadonlyMap<string, Tier>): ToolPolicy {
    const tier = (spec.tier ?? 'readonly') as Tier;
    if (!TIERS.includes(tier)) throw new ArgumentError(`unknown tier ${JSON.stringify(spec.tier)}; tiers: ${TIERS.join(', ')}`);
    const unknown = (spec.enable ?? []).filter((name) => !catalog.has(name));
    if (unknown.length > 0) {
      throw new ArgumentError(`unknown tool${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; tools: ${[...catalog.keys()].sort().join(', ')}`);
    }
    const rank = TIERS.indexOf(tier);
    const enabled = new Set<string>();
    for (const [name, toolTier] of catalog) if (TIERS.indexOf(toolTier) <= rank) enabled.add(name);
    for (const name of spec.enable ?? []) enabled.add(name);
    return new ToolPolicy(tier, enabled);
  }

  allows(name: string): boolean {
    return this.enabled.has(name);
  }
}
