import { AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION, agentStatusLabel, defaultAgentStatusContext, pickAgentStateOption, resolveAgentStatus, type AgentState, type AgentStatus, type AgentStatusContext } from '../agents/index.js';
import type { Server } from '../tmux/index.js';
import { readFabState, type FabState } from './fab-status.js';
import { checkLineCount, tailLines } from './tail.js';
import { requirePane } from './tmux-pane.js';
import { WorktreeResolver, worktreeLabel } from './worktrees.js';

export const DEFAULT_CAPTURE_LINES = 50;

/** The last `lines` lines of a pane, bytes as tmux printed them (the pane is checked first). */
export async function capturePaneTail(server: Server, paneId: string, lines: number = DEFAULT_CAPTURE_LINES): Promise<Buffer> {
  checkLineCount(lines);
  const { pane } = await requirePane(server, paneId);
  // -S -N fetches N history lines plus the whole screen; the tail keeps the last N of them.
  return tailLines(await pane.capture({ start: -lines }), lines);
}

export interface PaneCapture {
  pane: string;
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
export async function paneCapture(server: Server, paneId: string, options: PaneCaptureOptions = {}): Promise<PaneCapture> {
  const lines = options.lines ?? DEFAULT_CAPTURE_LINES;
  checkLineCount(lines);
  const { pane, values } = await requirePane(server, paneId, ['pane_current_path', AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION]);
  const [cwd, agentOption, legacyOption] = values as [string, string, string];
  const content = tailLines(await pane.capture({ start: -lines }), lines);
  const git = await new WorktreeResolver({ env: options.env }).resolve(cwd);
  return {
    pane: paneId,
    lines,
    content,
    worktree: worktreeLabel(cwd, git),
    fab: git.worktree === null ? undefined : readFabState(git.worktree),
    agent: resolveAgentStatus(pickAgentStateOption(agentOption, legacyOption), options.agentContext ?? defaultAgentStatusContext()),
  };
}

export interface PaneCaptureJson {
  pane_id: string;
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
    pane_id: capture.pane,
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
  return `--- pane ${capture.pane} ---\n${parts.join(' | ')}\n---\n`;
}
