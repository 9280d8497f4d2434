/**
 * What every conformance check shares: the result shape, the world a world check perturbs, and
 * small helpers. Checks are framework-free: each returns problem strings, and an empty list is a pass.
 */
import type { GatedVerb } from '../capabilities.js';
import type { MuxOutcome, MuxPort, MuxSnapshot, MuxWatchOptions } from '../types.js';

export interface ConformanceResult {
  readonly check: string;
  readonly problems: readonly string[];
  /** Set when the check does not apply to this adapter's declaration or world; problems is then empty. */
  readonly skipped?: string;
}

/** One input a world's pane received, in the multiplexer's own spelling. */
export interface WorldInput {
  readonly paneId: string;
  readonly kind: 'text' | 'keys';
  readonly payload: readonly string[];
}

/**
 * A live multiplexer a test owns and may perturb (single-use: one world per check). It starts
 * with at least three live panes over at least two tabs, two spaces where the multiplexer can
 * hold them, and an agent pane when agentDetection is declared.
 */
export interface MuxConformanceWorld {
  readonly port: MuxPort;
  /** Input the panes received, in order; absent when the world cannot observe it. */
  inputs?(): Promise<readonly WorldInput[]>;
  /**
   * Where the world cannot tell typed text from keys (a real multiplexer): a pane whose program
   * asked for bracketed paste and records the raw bytes its terminal delivers, and those bytes so far.
   */
  readonly recorder?: { readonly paneId: string; received(): Promise<Buffer> };
  /** How often the transport has been used (requests, processes): compared before and after a call. */
  transportUses(): Promise<number>;
  /** Every connection drops; the multiplexer keeps running. */
  reconnect(): Promise<void>;
  /**
   * The multiplexer at the world's address stops and starts again; streams close. One whose
   * ids outlive it (herdr) comes back with the same panes under the same ids; one whose ids do
   * not (a tmux server started again at the same socket, a zellij session started again under
   * its name) comes back as another run whose ids (%0, terminal_0…) name other panes.
   */
  restartMux(): Promise<void>;
  /** A new port on the world's address, as another drover process would open; the caller closes it. */
  openPort(): MuxPort;
  /** The transport dies (the multiplexer stops answering). */
  takeDown(): Promise<void>;
  /** The transport comes back after takeDown(); absent where the world cannot come back (a killed tmux server). */
  bringUp?(): Promise<void>;
  /** Someone renames a tab outside drover; `silent` keeps even a pushing multiplexer from announcing it. */
  renameTabOutOfBand(tabId: string, label: string, options: { silent: boolean }): Promise<void>;
  /** The pane's own program writes its title. */
  setProgramTitle(paneId: string, title: string): Promise<void>;
  /** The pane prints a line. */
  changePane(paneId: string): Promise<void>;
  /** The pane's process exits and the pane goes away. */
  endPane(paneId: string): Promise<void>;
  /** The operator focuses a pane in the multiplexer itself. */
  focusOutOfBand(paneId: string): Promise<void>;
  /** A git repository the worktree verbs can use, when the world has one. */
  readonly gitRepo?: string;
  close(): Promise<void>;
}

export type WorldFactory = () => Promise<MuxConformanceWorld>;

/** How long a check waits for something a pushing multiplexer announces. */
export const PUSH_WAIT_MS = 5_000;
/** Slack added to a declared bounded latency before a check gives up, for loaded machines. */
export const LATENCY_SLACK_MS = 10_000;
/** How long a check waits for a watch to come up: a first census can be slow on a busy machine. */
export const UP_WAIT_MS = 30_000;

export function waitMs(port: MuxPort): number {
  const latency = port.declaration.topologyLatency;
  return latency.kind === 'push' ? PUSH_WAIT_MS : latency.ms * 2 + LATENCY_SLACK_MS;
}

/** Resolves true once `condition` holds (checked on each notify()), false after `ms`. */
export function signal(ms: number): { notify(): void; wait(condition: () => boolean, waitMs?: number): Promise<boolean> } {
  let wake: (() => void) | undefined;
  return {
    notify: () => wake?.(),
    wait: (condition, waitMs = ms) =>
      new Promise<boolean>((resolve) => {
        if (condition()) {
          resolve(true);
          return;
        }
        const timer = setTimeout(() => {
          wake = undefined;
          resolve(condition());
        }, waitMs);
        wake = () => {
          if (!condition()) return;
          clearTimeout(timer);
          wake = undefined;
          resolve(true);
        };
      }),
  };
}

/** Opens a watch that records what it reports. */
export function recordWatch(port: MuxPort, options: Omit<MuxWatchOptions, 'onUp' | 'onDown' | 'onTopologyChange' | 'onPaneChange'>, ms: number) {
  const seen = { up: 0, down: [] as string[], topology: 0, panes: [] as string[] };
  const changed = signal(ms);
  const watch = port.watch({
    ...options,
    onUp: () => {
      seen.up += 1;
      changed.notify();
    },
    onDown: (reason) => {
      seen.down.push(reason);
      changed.notify();
    },
    onTopologyChange: () => {
      seen.topology += 1;
      changed.notify();
    },
    onPaneChange: (paneId) => {
      seen.panes.push(paneId);
      changed.notify();
    },
  });
  return { seen, watch, until: changed.wait };
}

export interface Sample {
  readonly paneId: string;
  readonly tabId: string;
  readonly spaceId: string;
}

export function sampleOf(snapshot: MuxSnapshot): Sample | undefined {
  const pane = snapshot.panes.find((candidate) => candidate.alive) ?? snapshot.panes[0];
  return pane === undefined ? undefined : { paneId: pane.paneId, tabId: pane.tabId, spaceId: pane.spaceId };
}

/** One plausible call of each gated verb, for checking what an undeclared verb answers. */
export const SAMPLE_CALLS: Readonly<Record<GatedVerb, (port: MuxPort, sample: Sample) => Promise<MuxOutcome<unknown>>>> = {
  readGrid: (port, s) => port.readGrid(s.paneId, { scope: 'viewport', styling: 'strip' }),
  readScreen: (port, s) => port.readScreen(s.paneId),
  readProcess: (port, s) => port.readProcess(s.paneId),
  typeText: (port, s) => port.typeText(s.paneId, 'x'),
  pasteText: (port, s) => port.pasteText(s.paneId, 'x'),
  sendKeys: (port, s) => port.sendKeys(s.paneId, ['a']),
  renamePane: (port, s) => port.renamePane(s.paneId, 'conformance'),
  splitPane: (port, s) => port.splitPane({ besidePaneId: s.paneId, direction: 'right' }),
  releaseKeptPane: (port, s) => port.releaseKeptPane(s.paneId),
  closePane: (port, s) => port.closePane(s.paneId),
  resizePane: (port, s) => port.resizePane(s.paneId, { height: 5 }),
  setFocus: (port, s) => port.setFocus(s.paneId),
  createTab: (port, s) => port.createTab({ spaceId: s.spaceId }),
  renameTab: (port, s) => port.renameTab(s.tabId, 'conformance'),
  closeTab: (port, s) => port.closeTab(s.tabId),
  createSpace: (port) => port.createSpace({}),
  listWorktrees: (port) => port.listWorktrees({ repoRoot: '/' }),
  createWorktree: (port) => port.createWorktree({ repoRoot: '/', branch: 'conformance' }),
  openWorktree: (port) => port.openWorktree({ repoRoot: '/', path: '/' }),
  listSessions: (port) => port.listSessions(),
};

export function describeOutcome(outcome: MuxOutcome<unknown>): string {
  return outcome.ok ? 'ok' : `${outcome.reason} (${outcome.detail})`;
}
