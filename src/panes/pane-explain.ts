import { agentStatusLabel, defaultAgentStatusContext, hookReports, readProcessTree, renderProcessTree, resolveAgentStatus, rulesFor, systemProcessLookup, type AgentStatus, type ScreenReading } from '../agents/index.js';
import type { MuxPort } from '../mux/index.js';
import { agentNamerFor, listedPane, onPane, readPaneFacts, type PaneAgent } from './facts.js';
import { PANE_VERB_BUDGET_MS, requireCapabilities } from './pane-actions.js';
import { judgeAgentReading, questionRowJson, type QuestionMatch, type QuestionSkip } from './questions.js';
import { untypedReadiness, type ReadinessVerdict } from './readiness.js';
import { paneRefJson, type PaneRef } from './target.js';

/** Everything drover concludes about one pane, and from what: `drover pane explain`. */
export interface PaneExplanation extends PaneRef {
  foreground: string;
  dead: boolean;
  /** The process tree under the pane, as `drover pane process` prints it; "" where the multiplexer reports no pid. */
  processes: string;
  agent: PaneAgent;
  /** The raw value the agent's hooks recorded ("" when none) and what it means now. */
  hook: { raw: string; status: AgentStatus; reports: readonly string[] };
  /** The screen rules' reading, for an agent drover knows; null otherwise. */
  screen: ScreenReading | null;
  /** Readiness as `pane ready` gives it without typing (null for programs that need the typed probe, which explain never types). */
  readiness: ReadinessVerdict | null;
  question: QuestionMatch | QuestionSkip | null;
}

/** The verdict alone, as the explanation carries it. */
function readinessVerdict(untyped: ReturnType<typeof untypedReadiness>): ReadinessVerdict | null {
  return untyped === undefined ? null : { state: untyped.state, reason: untyped.reason };
}

/**
 * Reads a pane the way ready, questions and map do, without typing anything, and says which
 * rule decided what. For a program that is not a shell and has no screen rules, readiness
 * needs the probe (`drover pane ready`), so it is left out here.
 */
export async function explainPane(port: MuxPort, pane: string, options: { cwd?: string } = {}): Promise<PaneExplanation> {
  requireCapabilities(port, 'explaining a pane', ['paneScreen']);
  return onPane(port, pane, { budgetMs: PANE_VERB_BUDGET_MS }, async (ref, channel) => {
    const nameAgent = agentNamerFor(options.cwd);
    const listed = await listedPane(port, ref.paneId);
    const facts = await readPaneFacts(channel, nameAgent);
    const tree = facts.pid === null ? undefined : readProcessTree(facts.pid, nameAgent, await systemProcessLookup());
    const { agent } = facts;
    const raw = listed.hookState ?? '';
    const status = resolveAgentStatus(raw, defaultAgentStatusContext());
    const rules = agent.kind === null ? undefined : rulesFor(agent.kind);
    const shown = rules === undefined ? undefined : await channel.read();
    const screen = rules === undefined || shown === undefined ? null : rules.read(shown);
    const candidate = { pane: ref.paneId, agentState: status.state, agent: agent.name, agentKind: agent.kind, dead: facts.dead };
    return {
      ...ref,
      foreground: facts.foreground,
      dead: facts.dead,
      processes: tree === undefined ? '' : renderProcessTree(tree),
      agent,
      hook: { raw, status, reports: agent.kind === null ? [] : hookReports(agent.kind) },
      screen,
      readiness: readinessVerdict(untypedReadiness(facts, screen ?? undefined)),
      question: screen === null ? null : judgeAgentReading(ref.paneId, candidate, screen, shown?.lines ?? []),
    };
  });
}

/** The `--json` shape of an explanation: snake_case throughout, the pane under `pane_id`. */
export function explanationJson(explanation: PaneExplanation): Record<string, unknown> {
  const { screen } = explanation;
  return {
    ...paneRefJson(explanation),
    foreground: explanation.foreground,
    dead: explanation.dead,
    processes: explanation.processes,
    agent: { ...explanation.agent },
    hook: { raw: explanation.hook.raw, state: explanation.hook.status.state, idle_duration: explanation.hook.status.idleDuration, reports: explanation.hook.reports },
    screen: screen === null ? null : { phase: screen.phase, rule: screen.rule, detail: screen.detail, composer: screen.composer, completion: screen.completion, question: screen.question },
    readiness: explanation.readiness,
    question: explanation.question === null ? null : questionRowJson({ ...explanation.question, paneKey: explanation.paneKey }),
  };
}

/** The text report: one section per source, each saying what it concluded. */
export function renderExplanation(explanation: PaneExplanation): string {
  const { agent, hook, screen, readiness, question } = explanation;
  const lines = [
    `pane ${explanation.paneId}: foreground ${explanation.foreground}${explanation.dead ? ' (dead)' : ''}`,
    `agent: ${agent.name === null ? 'none found in the process tree' : `${agent.name} (pid ${agent.pid})${agent.kind === null ? ', no screen rules' : ''}`}`,
    `hook state: ${hook.raw === '' ? 'none' : `${hook.raw} → ${agentStatusLabel(hook.status)}`}${hook.reports.length > 0 ? ` (its hooks report ${hook.reports.join(', ')})` : ''}`,
  ];
  if (screen === null) lines.push(`screen: no rules for this program${readiness === null ? '; `drover pane ready` probes it by typing' : ''}`);
  else {
    lines.push(`screen: ${screen.phase} by rule ${screen.rule}: ${screen.detail}`);
    if (screen.composer !== null) lines.push(`composer: ${JSON.stringify(screen.composer.text)}${screen.completion ? ' (a completion menu is open)' : ''}`);
    if (screen.question !== null) lines.push(`asks: ${screen.question.snippet}`);
  }
  if (readiness !== null) lines.push(`ready: ${readiness.state} (${readiness.reason})`);
  if (question !== null) lines.push('reason' in question ? `question: none (${question.reason})` : `question: ${question.indicator}: ${question.snippet}`);
  return `${lines.join('\n')}\n--- processes ---\n${explanation.processes === '' ? '(the multiplexer reports no pid for this pane)\n' : explanation.processes}`;
}
