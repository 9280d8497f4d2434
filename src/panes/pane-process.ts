import { agentNames, createAgentNamer, providersOrBuiltins, readProcessTree, systemProcessLookup, treeHasAgent, type ProcessLookup, type ProcessNode } from '../agents/index.js';
import type { Server } from '../tmux/index.js';
import { requirePane } from './tmux-pane.js';

/** The `drover pane process --json` document. */
export interface PaneProcessReport {
  pane: string;
  pane_pid: number;
  processes: ProcessNode[];
  has_agent: boolean;
}

/**
 * The process tree under a pane's shell. Agent names come from the providers in effect for
 * `cwd` (a broken project config falls back to the built-ins).
 */
export async function paneProcess(server: Server, paneId: string, options: { cwd?: string; lookup?: ProcessLookup } = {}): Promise<PaneProcessReport> {
  const { values } = await requirePane(server, paneId, ['pane_pid']);
  const panePid = Number(values[0]);
  const classify = createAgentNamer(agentNames(providersOrBuiltins(options.cwd ?? process.cwd())));
  const tree = Number.isSafeInteger(panePid) && panePid > 0 ? readProcessTree(panePid, classify, options.lookup ?? (await systemProcessLookup())) : undefined;
  return { pane: paneId, pane_pid: panePid, processes: tree ? [tree] : [], has_agent: tree ? treeHasAgent(tree) : false };
}

/** The `--json` shape of a process report: the pane under `pane_id`, as every document names it. */
export function paneProcessJson(report: PaneProcessReport): Record<string, unknown> {
  const { pane, ...rest } = report;
  return { pane_id: pane, ...rest };
}
