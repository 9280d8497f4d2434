import { readProcessTree, systemProcessLookup, treeHasAgent, type ProcessLookup, type ProcessNode } from '../agents/index.js';
import { MuxError, type MuxPort } from '../mux/index.js';
import { agentNamerFor, onPane } from './facts.js';
import { PANE_VERB_BUDGET_MS, requireCapabilities } from './pane-actions.js';
import type { PaneProcessJson } from './json-schemas.js';
import type { PaneRef } from './target.js';

/** The `drover pane process --json` document. */
export interface PaneProcessReport extends PaneRef {
  pane_pid: number;
  processes: ProcessNode[];
  has_agent: boolean;
}

/**
 * The process tree under a pane's own program. It needs the pane's pid, which only a
 * multiplexer that reports the pane's process (paneProcess) with a pid can give; any other is
 * refused as unsupported. Agent names come from the providers in effect for `cwd` (a broken
 * project config falls back to the built-ins).
 */
export async function paneProcess(port: MuxPort, pane: string, options: { cwd?: string; lookup?: ProcessLookup } = {}): Promise<PaneProcessReport> {
  requireCapabilities(port, 'reading the process tree of a pane', ['paneProcess']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (ref, channel) => {
    const { pid } = await channel.process();
    if (pid === null) {
      const note = port.declaration.notes.paneProcess;
      throw new MuxError(port.mux, `reading the process tree of a pane needs its pid (paneProcess), which ${port.mux} does not report${note === undefined ? '' : `: ${note}`}`, { reason: 'unsupported', phase: 'admit', delivery: 'not_sent' });
    }
    const tree = readProcessTree(pid, agentNamerFor(options.cwd), options.lookup ?? (await systemProcessLookup()));
    return { ...ref, pane_pid: pid, processes: tree ? [tree] : [], has_agent: tree ? treeHasAgent(tree) : false };
  });
}


/** The `--json` shape of a process report: the pane under `pane_id` and `pane_key`, as every document names it. */
export function paneProcessJson(report: PaneProcessReport): PaneProcessJson {
  const { paneId, paneKey, ...rest } = report;
  return { pane_id: paneId, pane_key: paneKey, ...rest };
}
