import { agentStatusLabel, defaultAgentStatusContext, type AgentState, type AgentStatus, type AgentStatusContext } from '../agents/index.js';
import type { MuxPort, PaneChannel } from '../mux/index.js';
import { readFabState, type FabState } from './fab-status.js';
import { listedPane, onPane } from './facts.js';
import { agentStatusOf } from './listing.js';
import { PANE_VERB_BUDGET_MS, requireCapabilities } from './pane-actions.js';
import { checkLineCount, tailLines } from './tail.js';
import type { PaneRef } from './target.js';
import { WorktreeResolver, worktreeLabel } from './worktrees.js';

export const DEFAULT_CAPTURE_LINES = 50;

/** The last `lines` lines of the pane, as the multiplexer prints them without colour. */
async function tailOf(channel: PaneChannel, lines: number): Promise<string> {
  return tailLines((await channel.grid({ scope: 'recent', lines, styling: 'strip' })).text, lines);
}

/** The last `lines` lines of a pane (a key or an id), as UTF-8 bytes; the count is checked before the multiplexer is asked. */
export async function capturePaneTail(port: MuxPort, pane: string, lines: number = DEFAULT_CAPTURE_LINES): Promise<Buffer> {
  checkLineCount(lines);
  requireCapabilities(port, 'capturing a pane', ['paneGrid']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (_ref, channel) => Buffer.from(await tailOf(channel, lines)));
}

export interface PaneCapture extends PaneRef {
  lines: number;
  content: Buffer;
  worktree: string;
  fab: FabState | undefined;
  agent: AgentStatus;
}

export interface PaneCaptureOptions {
  lines?: number;
  env?: NodeJS.ProcessEnv;
  agentContext?: AgentStatusContext;
}

/** `drover pane capture` with its header context: worktree, fab change and stage, agent state. */
export async function paneCapture(port: MuxPort, pane: string, options: PaneCaptureOptions = {}): Promise<PaneCapture> {
  const lines = options.lines ?? DEFAULT_CAPTURE_LINES;
  checkLineCount(lines);
  requireCapabilities(port, 'capturing a pane', ['paneGrid']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (ref, channel) => {
    const listed = await listedPane(port, ref.paneId);
    const content = Buffer.from(await tailOf(channel, lines));
    const git = await new WorktreeResolver({ env: options.env }).resolve(listed.cwd);
    return {
      ...ref,
      lines,
      content,
      worktree: worktreeLabel(listed.cwd, git),
      fab: git.worktree === null ? undefined : readFabState(git.worktree),
      agent: agentStatusOf(listed, options.agentContext ?? defaultAgentStatusContext()).status,
    };
  });
}

export interface PaneCaptureJson {
  pane_id: string;
  pane_key: string;
  lines: number;
  content: string;
  worktree: string;
  change: string | null;
  stage: string | null;
  agent_state: AgentState | null;
  agent_idle_duration: string | null;
}

export function paneCaptureJson(capture: PaneCapture): PaneCaptureJson {
  return {
    pane_id: capture.paneId,
    pane_key: capture.paneKey,
    lines: capture.lines,
    content: capture.content.toString('utf8'),
    worktree: capture.worktree,
    change: capture.fab?.change ?? null,
    stage: capture.fab?.stage ?? null,
    agent_state: capture.agent.state,
    agent_idle_duration: capture.agent.idleDuration,
  };
}

/** The text header above the captured lines. */
export function renderCaptureHeader(capture: PaneCapture): string {
  const parts = [`worktree: ${capture.worktree}`];
  if (capture.fab?.change) parts.push(`change: ${capture.fab.change}`);
  if (capture.fab?.stage) parts.push(`stage: ${capture.fab.stage}`);
  if (capture.agent.state !== null) parts.push(`agent: ${agentStatusLabel(capture.agent)}`);
  return `--- pane ${capture.paneId} ---\n${parts.join(' | ')}\n---\n`;
}
