/**
 * What each adapter declares it can do. A declaration is total and fails closed: every
 * capability is answered, and anything not declared is refused as `unsupported` by port.ts
 * before the adapter is asked. Facts (topologyLatency, spaces) say "how fast" and "what
 * shape", never "whether", so they sit beside the capabilities rather than among them.
 */
import type { MuxDeclarationJson } from './json-schemas.js';
import type { MuxName } from './types.js';

export const MUX_CAPABILITIES = [
  'paneGrid',
  'gridScrollback',
  'paneScreen',
  'paneProcess',
  'paneGeometry',
  'agentDetection',
  'agentSessionRef',
  'typeText',
  'pasteText',
  'sendKeys',
  'renamePane',
  'splitPane',
  'closePane',
  'resizePane',
  'setFocus',
  'createTab',
  'renameTab',
  'closeTab',
  'createSpace',
  'listWorktrees',
  'createWorktree',
  'openWorktree',
  'pushTopologyEvents',
  'pushPaneEvents',
  'listSessions',
] as const;
export type MuxCapability = (typeof MUX_CAPABILITIES)[number];

/** How soon a change nobody announced is seen. A bounded latency is the ceiling, not an average. */
export type TopologyLatency = { readonly kind: 'push' } | { readonly kind: 'bounded'; readonly ms: number };

export interface MuxDeclaration {
  readonly supports: Readonly<Record<MuxCapability, boolean>>;
  /** Canonical key spellings (keys.ts) this multiplexer cannot send: a bare key name refuses every chord on it. */
  readonly unsupportedKeys: readonly string[];
  /** Operator sentences, keyed by the capability they explain. */
  readonly notes: Readonly<Partial<Record<MuxCapability, string>>>;
  readonly topologyLatency: TopologyLatency;
  /** How many spaces the multiplexer can hold. */
  readonly spaces: 'one' | 'many';
}

/** The port verbs that a capability gates, and which capability gates each. */
export const VERB_CAPABILITY = {
  readGrid: 'paneGrid',
  readScreen: 'paneScreen',
  readProcess: 'paneProcess',
  typeText: 'typeText',
  pasteText: 'pasteText',
  sendKeys: 'sendKeys',
  renamePane: 'renamePane',
  splitPane: 'splitPane',
  releaseKeptPane: 'splitPane',
  closePane: 'closePane',
  resizePane: 'resizePane',
  setFocus: 'setFocus',
  createTab: 'createTab',
  renameTab: 'renameTab',
  closeTab: 'closeTab',
  createSpace: 'createSpace',
  listWorktrees: 'listWorktrees',
  createWorktree: 'createWorktree',
  openWorktree: 'openWorktree',
  listSessions: 'listSessions',
} as const satisfies Record<string, MuxCapability>;
export type GatedVerb = keyof typeof VERB_CAPABILITY;

/** Builds a total declaration from the capabilities an adapter claims; the rest are false. */
export function declareCapabilities(
  claimed: readonly MuxCapability[],
  facts: Omit<MuxDeclaration, 'supports' | 'notes' | 'unsupportedKeys'> & {
    notes?: MuxDeclaration['notes'];
    unsupportedKeys?: readonly string[];
  },
): MuxDeclaration {
  const supports = Object.fromEntries(MUX_CAPABILITIES.map((capability) => [capability, claimed.includes(capability)])) as Record<
    MuxCapability,
    boolean
  >;
  if (facts.topologyLatency.kind === 'bounded' && !(facts.topologyLatency.ms > 0)) {
    throw new RangeError(`a bounded topology latency must be a positive number of ms, got ${facts.topologyLatency.ms}`);
  }
  return Object.freeze({
    supports: Object.freeze(supports),
    unsupportedKeys: Object.freeze([...(facts.unsupportedKeys ?? [])]),
    notes: Object.freeze({ ...(facts.notes ?? {}) }),
    topologyLatency: Object.freeze({ ...facts.topologyLatency }),
    spaces: facts.spaces,
  });
}

export const HERDR_DECLARATION: MuxDeclaration = declareCapabilities(
  MUX_CAPABILITIES.filter((capability) => capability !== 'pasteText' && capability !== 'paneProcess'),
  {
    unsupportedKeys: ['PageUp', 'PageDown', 'Home', 'End', 'Insert', 'Delete'],
    notes: {
      sendKeys: 'herdr has no key names for PageUp, PageDown, Home, End, Insert or Delete.',
      pasteText: "herdr's socket offers no paste: its send_text types the text as keys, so a line break would press Enter.",
      paneProcess: "herdr's socket reports no pid, foreground command or exit status for a pane.",
      paneScreen: 'herdr reports neither the size nor the cursor of a pane: its screen is the visible rows, with no cursor.',
      splitPane: "herdr starts a new pane's shell, into which drover types the program; a pane kept on exit keeps that shell.",
      paneGeometry: "herdr's snapshot carries each tab's layout; an older herdr without session.snapshot reports none, so its panes carry no geometry.",
      resizePane: 'herdr sizes panes by the ratio of the split that holds them, so a size is reached as nearly as whole cells allow.',
    },
    topologyLatency: { kind: 'push' },
    spaces: 'many',
  },
);

export const TMUX_DECLARATION: MuxDeclaration = declareCapabilities(
  [
    'paneGrid',
    'gridScrollback',
    'paneScreen',
    'paneProcess',
    'paneGeometry',
    'typeText',
    'pasteText',
    'sendKeys',
    'renamePane',
    'splitPane',
    'closePane',
    'resizePane',
    'setFocus',
    'createTab',
    'renameTab',
    'closeTab',
    'createSpace',
    'pushTopologyEvents',
    'pushPaneEvents',
  ],
  {
    // Probed: tmux sends every key name of the alphabet, including the six herdr lacks.
    unsupportedKeys: [],
    notes: {
      agentDetection: 'tmux reports only the foreground command and the pane title, neither of which names an agent.',
      agentSessionRef: 'tmux keeps no reference to an agent session.',
      listWorktrees: 'tmux has no git vocabulary.',
      createWorktree: 'tmux keeps no record tying a checkout to the session showing it.',
      openWorktree: 'tmux keeps no record tying a checkout to the session showing it.',
      listSessions: 'tmux cannot list other servers; every session of this server is already a space.',
      sendKeys: 'tmux has no Super/Command modifier, and delivers nothing for ctrl+Enter to a pane that did not ask for extended keys, so those chords are refused.',
    },
    topologyLatency: { kind: 'push' },
    spaces: 'many',
  },
);

/** zellij's census ceiling: the longest an unannounced structure change can sit unseen. */
export const ZELLIJ_CENSUS_CEILING_MS = 12_000;

export function zellijDeclaration(censusCeilingMs: number = ZELLIJ_CENSUS_CEILING_MS): MuxDeclaration {
  return declareCapabilities(
    ['paneGrid', 'gridScrollback', 'paneScreen', 'paneProcess', 'typeText', 'sendKeys', 'renamePane', 'closePane', 'createTab', 'renameTab', 'closeTab', 'pushPaneEvents'],
    {
      // Probed: zellij accepts every key name of the alphabet (Escape spelled Esc).
      unsupportedKeys: [],
      notes: {
        agentDetection: "zellij's listing reports a title and a launch command, neither of which names an agent.",
        agentSessionRef: 'zellij keeps no reference to an agent session.',
        setFocus: "zellij's focus-pane-id does nothing, and focusing a tab instead would show the wrong pane.",
        createSpace: 'one drover mux instance drives exactly one zellij session.',
        listWorktrees: 'zellij has no git vocabulary.',
        createWorktree: 'zellij has no git vocabulary and only one space.',
        openWorktree: 'zellij has no git vocabulary and only one space.',
        pushTopologyEvents: 'zellij announces no structure change; drover takes a census instead.',
        listSessions: 'one drover mux instance drives exactly one zellij session.',
        typeText: 'zellij takes text as one command argument, so text of 128 KiB or more is refused, never split.',
        pasteText: "drover does not drive zellij's paste action yet, so a line break cannot be sent without pressing Enter.",
        sendKeys: 'zellij drops a Super/Command modifier and would send the bare key, so those chords are refused.',
        paneProcess: "zellij reports the command a pane was started with, its exit and its exit status, but no pid and not what runs in a shell's foreground.",
        splitPane: "zellij's new-pane opens beside whichever pane has focus, not beside a given one, and drover cannot move zellij's focus.",
        paneGeometry: "drover does not read where zellij places its panes.",
        resizePane: "zellij's resize grows or shrinks the focused pane by a step, never a given pane to a size, and drover cannot move zellij's focus.",
      },
      topologyLatency: { kind: 'bounded', ms: censusCeilingMs },
      spaces: 'one',
    },
  );
}

export const ZELLIJ_DECLARATION: MuxDeclaration = zellijDeclaration();

export const MUX_DECLARATIONS: Readonly<Record<MuxName, MuxDeclaration>> = Object.freeze({
  tmux: TMUX_DECLARATION,
  herdr: HERDR_DECLARATION,
  zellij: ZELLIJ_DECLARATION,
});

/** The sentence a refused-as-unsupported verb carries. */
export function unsupportedDetail(mux: MuxName, capability: MuxCapability, declaration: MuxDeclaration): string {
  const note = declaration.notes[capability];
  return `${mux} does not support ${capability}${note === undefined ? '' : `: ${note}`}`;
}

/** A capability as a JSON key (`sendKeys` → `send_keys`), spelled like every other JSON key. */
export function capabilityKey(capability: MuxCapability): string {
  return capability.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}


export function declarationJson(mux: MuxName, declaration: MuxDeclaration): MuxDeclarationJson {
  const notes: Record<string, string> = {};
  for (const capability of MUX_CAPABILITIES) {
    const note = declaration.notes[capability];
    if (note !== undefined) notes[capabilityKey(capability)] = note;
  }
  return {
    mux,
    supports: Object.fromEntries(MUX_CAPABILITIES.map((capability) => [capabilityKey(capability), declaration.supports[capability]])),
    unsupported_keys: [...declaration.unsupportedKeys],
    notes,
    facts: { topology_latency: { ...declaration.topologyLatency }, spaces: declaration.spaces },
  };
}
