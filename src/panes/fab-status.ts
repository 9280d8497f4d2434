import { readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { yaml } from '../agents/index.js';

export const STAGE_STATES = Object.freeze(['pending', 'active', 'ready', 'done', 'failed', 'skipped'] as const);
export type StageState = (typeof STAGE_STATES)[number];

/** A worktree's fab change as the pane map shows it; fields are null when unresolvable. */
export interface FabState {
  change: string | null;
  stage: string | null;
  displayState: StageState | null;
  prUrl: string | null;
  prNumber: number | null;
}

/** The active-change pointer at a worktree root: a symlink to `fab/changes/<id>/.status.yaml`. */
export const FAB_STATUS_LINK = '.fab-status.yaml';

/** The change id a pointer target names, or null when the target has another shape. */
export function changeFromStatusLink(target: string): string | null {
  const match = /^fab\/changes\/([^/]+)\/\.status\.yaml$/.exec(target);
  return match ? match[1]! : null;
}

function isStageState(value: unknown): value is StageState {
  return typeof value === 'string' && (STAGE_STATES as readonly string[]).includes(value);
}

/** The stages of a `.status.yaml` in file order, and its PR URLs. */
export interface StatusFile {
  progress: (readonly [stage: string, state: StageState])[];
  prs: string[];
}

/** Parses `.status.yaml`; undefined when it is not YAML or lacks a `progress` mapping. */
export function parseStatusFile(text: string): StatusFile | undefined {
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { progress, prs } = doc as { progress?: unknown; prs?: unknown };
  if (typeof progress !== 'object' || progress === null || Array.isArray(progress)) return undefined;
  return {
    progress: Object.entries(progress).filter((entry): entry is [string, StageState] => isStageState(entry[1])),
    prs: Array.isArray(prs) ? prs.filter((url): url is string => typeof url === 'string' && url !== '') : [],
  };
}

/**
 * The stage to show and its state, by five tiers: the first active stage; else the first
 * failed (a parked failure outranks ready and done); else the first ready; else the last
 * done or skipped; else the first pending.
 */
export function displayStage(progress: StatusFile['progress']): { stage: string; state: StageState } | null {
  const first = (...states: StageState[]) => progress.find(([, state]) => states.includes(state));
  const found =
    first('active') ??
    first('failed') ??
    first('ready') ??
    progress.findLast(([, state]) => state === 'done' || state === 'skipped') ??
    first('pending');
  return found ? { stage: found[0], state: found[1] } : null;
}

/** The number in a URL's trailing `/pull/<n>`, or null. */
export function prNumberFromUrl(url: string): number | null {
  const match = /\/pull\/(\d+)\/?$/.exec(url);
  return match ? Number(match[1]) : null;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Reads a worktree's fab layout: undefined when it has no `fab/` directory; a null change
 * when the pointer is missing or malformed; a null stage (and PR) when the status file
 * cannot be loaded. Nothing here touches the network.
 */
export function readFabState(worktreeRoot: string): FabState | undefined {
  if (!isDirectory(join(worktreeRoot, 'fab'))) return undefined;
  const state: FabState = { change: null, stage: null, displayState: null, prUrl: null, prNumber: null };
  let target: string;
  try {
    target = readlinkSync(join(worktreeRoot, FAB_STATUS_LINK));
  } catch {
    return state;
  }
  state.change = changeFromStatusLink(target);
  if (state.change === null) return state;
  let status: StatusFile | undefined;
  try {
    status = parseStatusFile(readFileSync(join(worktreeRoot, 'fab', 'changes', state.change, '.status.yaml'), 'utf8'));
  } catch {
    return state;
  }
  if (status === undefined) return state;
  const shown = displayStage(status.progress);
  state.stage = shown?.stage ?? null;
  state.displayState = shown?.state ?? null;
  state.prUrl = status.prs.at(-1) ?? null;
  state.prNumber = state.prUrl === null ? null : prNumberFromUrl(state.prUrl);
  return state;
}
