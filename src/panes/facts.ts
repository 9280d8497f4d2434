import { performance } from 'node:perf_hooks';
import {
  agentNames,
  createAgentNamer,
  findFirstAgent,
  isShellCommand,
  knownAgentKind,
  programInShellGroup,
  providersOrBuiltins,
  systemProcessLookup,
  type AgentKind,
  type AgentNamer,
  type ProcessLookup,
} from '../agents/index.js';
import { foregroundWait } from '../process/index.js';
import { MuxError, paneChannel, type MuxPane, type MuxPaneProcess, type MuxPort, type PaneChannel } from '../mux/index.js';
import { PaneNotFoundError } from './errors.js';
import { resolvePane, type PaneRef } from './target.js';

/** The agent a pane runs. */
export interface PaneAgent {
  /** The agent's name: one drover knows, or a configured provider's program; null when no agent runs. */
  name: string | null;
  /** Set when drover knows this agent's screens. */
  kind: AgentKind | null;
  /** The agent's own process, when it was found in the pane's process tree. */
  pid: number | null;
}

export const NO_AGENT: Readonly<PaneAgent> = Object.freeze({ name: null, kind: null, pid: null });

/** What one look at a pane says before anything is typed. */
export interface PaneFacts {
  /** Who owns the pane's terminal right now; "" where the multiplexer does not say. */
  foreground: string;
  /** The pane's program exited and the multiplexer kept the pane. */
  dead: boolean;
  agent: PaneAgent;
  /** The pid of the pane's own program; null where the multiplexer does not report one. */
  pid: number | null;
  /**
   * When no program of the terminal's foreground reads it (each waits in a sleep or for a child,
   * as `sleep 8` run from a shell does), the calls they wait in; null when one may read, or
   * where that cannot be told. Read only for a program that is neither a shell nor an agent.
   */
  foregroundWaits: readonly string[] | null;
}

/** The agent names in effect for a directory: the built-ins plus its project's providers. */
export function agentNamerFor(cwd: string = process.cwd()): AgentNamer {
  return createAgentNamer(agentNames(providersOrBuiltins(cwd)));
}

/** The agent a pane runs by its process tree: the first agent under the pane's own program. */
export function paneAgent(panePid: number, nameAgent: AgentNamer, lookup: ProcessLookup): PaneAgent {
  const agent = Number.isSafeInteger(panePid) && panePid > 0 ? findFirstAgent(panePid, nameAgent, lookup) : undefined;
  if (agent === undefined) return NO_AGENT;
  return { name: agent.agent, kind: knownAgentKind(agent.agent) ?? null, pid: agent.pid };
}

/** The agent the multiplexer detected itself (herdr does); "shell" is its word for none. */
export function detectedAgent(pane: Pick<MuxPane, 'agent' | 'alive'>): PaneAgent {
  if (!pane.alive || pane.agent === '' || pane.agent === 'shell') return NO_AGENT;
  return { name: pane.agent, kind: knownAgentKind(pane.agent) ?? null, pid: null };
}

/**
 * A listed pane's agent: by its process tree where the port reports the pane's pid (the pane
 * runs on this machine), else as the multiplexer detected it. A dead pane runs none.
 */
export function agentOfPane(pane: Pick<MuxPane, 'agent' | 'alive' | 'pid'>, nameAgent: AgentNamer, lookup: ProcessLookup): PaneAgent {
  if (!pane.alive) return NO_AGENT;
  return pane.pid === undefined ? detectedAgent(pane) : paneAgent(pane.pid, nameAgent, lookup);
}

/** The pane in the port's snapshot; PaneNotFoundError when it is not there. */
export async function listedPane(port: MuxPort, paneId: string): Promise<MuxPane> {
  const pane = (await port.snapshot()).panes.find((candidate) => candidate.paneId === paneId);
  if (pane === undefined) throw new PaneNotFoundError(paneId);
  return pane;
}

/**
 * Who owns a pane's terminal: the multiplexer's foreground command, except where that is a
 * shell running a program in its own process group (`sh -c cat`): then that program. Without
 * the pane's pid (a multiplexer that does not report it) the multiplexer's word stands.
 */
export function foregroundProgram(process: Pick<MuxPaneProcess, 'pid' | 'foreground'>, lookup: ProcessLookup): string {
  if (process.pid === null || !isShellCommand(process.foreground)) return process.foreground;
  return programInShellGroup(process.pid, lookup) ?? process.foreground;
}

/**
 * What runs in the pane: its process where the multiplexer reports one (paneProcess), else what
 * the snapshot says of it. The agent comes from the process tree when there is a pid, else from
 * the multiplexer's own detection.
 */
export async function readPaneFacts(channel: PaneChannel, nameAgent: AgentNamer): Promise<PaneFacts> {
  const { port, paneId } = channel;
  if (port.declaration.supports.paneProcess) {
    const process = await channel.process();
    if (process.dead) return { foreground: process.foreground, dead: true, agent: NO_AGENT, pid: process.pid, foregroundWaits: null };
    if (process.pid === null) return { foreground: process.foreground, dead: false, agent: detectedAgent(await listedPane(port, paneId)), pid: null, foregroundWaits: null };
    const lookup = await systemProcessLookup();
    const foreground = foregroundProgram(process, lookup);
    const agent = paneAgent(process.pid, nameAgent, lookup);
    const foregroundWaits = agent.kind === null && !isShellCommand(foreground) ? ((await foregroundWait(process.pid)) ?? null) : null;
    return { foreground, dead: false, agent, pid: process.pid, foregroundWaits };
  }
  const pane = await listedPane(port, paneId);
  return { foreground: pane.foregroundCommand ?? '', dead: !pane.alive, agent: detectedAgent(pane), pid: pane.pid ?? null, foregroundWaits: null };
}

/** What a verb gives one pane: its operation's budget and an abort signal. */
export interface PaneBudget {
  /** How long the whole verb may take, however many multiplexer calls it makes. */
  budgetMs: number;
  signal?: AbortSignal;
}

/**
 * Runs `work` on the pane `pane` names (a key or an id, see resolvePane) through a channel that
 * carries the verb's one deadline. A pane the multiplexer says is gone is PaneNotFoundError.
 */
export async function onPane<T>(port: MuxPort, pane: string, budget: PaneBudget, work: (ref: PaneRef, channel: PaneChannel) => Promise<T>): Promise<T> {
  const ref = await resolvePane(port, pane);
  try {
    return await work(ref, paneChannel(port, ref.paneId, { deadline: performance.now() + budget.budgetMs, signal: budget.signal }));
  } catch (error) {
    if (error instanceof MuxError && error.reason === 'gone') throw new PaneNotFoundError(ref.paneId);
    throw error;
  }
}
