import { ArgumentError } from '../process/index.js';

/** How much a tool can change: reading, changing state, or destroying objects. */
export type Tier = 'readonly' | 'mutating' | 'destructive';
export const TIERS: readonly Tier[] = ['readonly', 'mutating', 'destructive'];

/**
 * What a tool exposes or does, the unit an operator opts into. `core` (what the server can
 * do, and the structure of sessions, windows and panes) is always on; every other group,
 * and so every screen, buffer, environment variable and keystroke, is off until enabled.
 */
export const TOOL_GROUPS = {
  core: 'what this server can do, and the sessions, windows and panes of the tmux server (names, sizes, commands, paths)',
  observe: 'what panes show: screens and scrollback, waits for text, pane searches, process trees, the agent map and question sweeps',
  environment: "tmux's global and session environments (often holding tokens and keys)",
  buffers: 'paste buffers (anything copied in tmux)',
  options: 'tmux options at any scope',
  input: 'typing and keys into panes, readiness probes, verified prompt delivery, copy mode',
  layout: 'creating sessions, windows and panes (each may run a given command), renaming, layouts, moving windows',
  workspace: 'reading workspace files and building them on the server',
  configure: 'setting tmux options, environment variables and paste buffers',
  fleet: "the fleet's messages: reading a member's inbox, sending and acknowledging",
  destroy: 'killing panes, windows and sessions, respawning panes, deleting buffers, piping a pane to a shell command',
} as const;
export type ToolGroup = keyof typeof TOOL_GROUPS;
export const GROUP_NAMES = Object.keys(TOOL_GROUPS) as ToolGroup[];

/** What the policy needs to know of a tool. */
export interface CatalogEntry {
  readonly tier: Tier;
  readonly group: ToolGroup;
}

export interface PolicySpec {
  /** Every tool up to this tier is enabled, whatever its group. Default: none beyond core. */
  tier?: string;
  /** Groups enabled whole (names, or comma-separated names). */
  allow?: readonly string[];
  /** Single tools enabled by name, whatever their group or tier. */
  enable?: readonly string[];
}

function listOf(values: readonly string[] | undefined): string[] {
  return (values ?? []).flatMap((value) => value.split(',')).map((value) => value.trim()).filter((value) => value !== '');
}

function unknownNames(kind: string, names: readonly string[], valid: readonly string[]): ArgumentError {
  const quoted = names.map((name) => JSON.stringify(name)).join(', ');
  return new ArgumentError(`unknown ${kind}${names.length > 1 ? 's' : ''} ${quoted}; ${kind}s: ${valid.join(', ')}`);
}

/** Which tools a server exposes. Tools outside the policy are not listed and cannot be called. */
export class ToolPolicy {
  /** The tier asked for, or null when none was. */
  readonly tier: Tier | null;
  /** Groups enabled whole: core, plus those asked for by name. */
  readonly groups: ReadonlySet<ToolGroup>;
  readonly enabled: ReadonlySet<string>;

  private constructor(tier: Tier | null, groups: ReadonlySet<ToolGroup>, enabled: ReadonlySet<string>) {
    this.tier = tier;
    this.groups = groups;
    this.enabled = enabled;
    Object.freeze(this);
  }

  /** Validates tier, group and tool names against the catalog; an unknown name fails, listing the valid ones. */
  static resolve(spec: PolicySpec, catalog: ReadonlyMap<string, CatalogEntry>): ToolPolicy {
    let tier: Tier | null = null;
    if (spec.tier !== undefined) {
      if (!TIERS.includes(spec.tier as Tier)) throw new ArgumentError(`unknown tier ${JSON.stringify(spec.tier)}; tiers: ${TIERS.join(', ')}`);
      tier = spec.tier as Tier;
    }
    const allow = listOf(spec.allow);
    const badGroups = allow.filter((name) => !(name in TOOL_GROUPS));
    if (badGroups.length > 0) throw unknownNames('group', badGroups, GROUP_NAMES);
    const enable = listOf(spec.enable);
    const badTools = enable.filter((name) => !catalog.has(name));
    if (badTools.length > 0) throw unknownNames('tool', badTools, [...catalog.keys()].sort());

    const groups = new Set<ToolGroup>(['core', ...(allow as ToolGroup[])]);
    const rank = tier === null ? -1 : TIERS.indexOf(tier);
    const enabled = new Set<string>();
    for (const [name, entry] of catalog) if (groups.has(entry.group) || TIERS.indexOf(entry.tier) <= rank) enabled.add(name);
    for (const name of enable) enabled.add(name);
    return new ToolPolicy(tier, groups, enabled);
  }

  allows(name: string): boolean {
    return this.enabled.has(name);
  }
}
