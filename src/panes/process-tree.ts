import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DroverError } from '../process/index.js';
import type { AgentKind } from './screens/types.js';

export type ProcessClass = 'agent' | 'node' | 'git' | 'other';

/** One process of a pane's tree, in the `drover pane process --json` shape. */
export interface ProcessNode {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
  classification: ProcessClass;
  /** For an agent: its name (`codex` for the node wrapper that runs Codex too); else null. */
  agent: string | null;
  children: ProcessNode[];
}

/** Names an agent process (undefined for any other process). */
export type AgentNamer = (comm: string, argv: readonly string[]) => string | undefined;
export type ProcessClassifier = (comm: string, argv: readonly string[]) => ProcessClass;

/** A program's name as a person would say it: the basename without a script or `.exe` suffix. */
function programName(path: string): string {
  return (path.split('/').pop() ?? '').replace(/\.(?:c?js|mjs|exe)$/, '');
}

/**
 * Process names under which the agents drover knows run. Codex and Gemini CLI run as node
 * scripts (`node …/codex.js`, `node …/bundle/gemini.js`) whose process is named `node`;
 * opencode's binary may show as `.opencode`.
 */
const KNOWN_AGENT_NAMES: Readonly<Record<string, AgentKind>> = Object.freeze({
  claude: 'claude',
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  opencode: 'opencode',
  '.opencode': 'opencode',
});

/** The agent drover knows by this process name, if any. */
export function knownAgentKind(name: string): AgentKind | undefined {
  return Object.hasOwn(KNOWN_AGENT_NAMES, name) ? KNOWN_AGENT_NAMES[name] : undefined;
}

/**
 * Names agents by the command name first, then the program names of at most the first two
 * argv words, so `node /usr/lib/gemini.js` is gemini while a prompt argument that mentions
 * one is not. `agentNames` adds the programs of configured providers.
 */
export function createAgentNamer(agentNames: Iterable<string>): AgentNamer {
  const extra = new Set(agentNames);
  return (comm, argv) => {
    for (const word of [comm.trim(), ...argv.slice(0, 2)]) {
      const name = programName(word);
      const known = knownAgentKind(name);
      if (known !== undefined) return known;
      if (extra.has(name)) return name;
    }
    return undefined;
  };
}

/** Agents first (see createAgentNamer); other node processes are node, git and gh are git, the rest other. */
export function createProcessClassifier(agentNames: Iterable<string>): ProcessClassifier {
  const nameAgent = createAgentNamer(agentNames);
  return (comm, argv) => classified(nameAgent, comm, argv).classification;
}

interface ProcessFacts {
  ppid: number;
  comm: string;
  argv: string[];
  children: number[];
}

/** Reads one process, or undefined when it exited meanwhile. */
function readProcess(procRoot: string, pid: number): ProcessFacts | undefined {
  const dir = join(procRoot, String(pid));
  try {
    const stat = readFileSync(join(dir, 'stat'), 'utf8');
    // The command name is in parentheses and may itself contain ") ", so split after the last one.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const comm = readFileSync(join(dir, 'comm'), 'utf8').replace(/\n$/, '');
    const argv = readFileSync(join(dir, 'cmdline'), 'utf8').split('\0');
    if (argv.at(-1) === '') argv.pop();
    const children = readdirSync(join(dir, 'task')).flatMap((tid) =>
      readFileSync(join(dir, 'task', tid, 'children'), 'utf8')
        .split(' ')
        .filter((word) => word !== '')
        .map(Number),
    );
    return { ppid, comm, argv, children };
  } catch {
    return undefined;
  }
}

/**
 * The process tree under `rootPid` (root included) from Linux's /proc, walking each task's
 * `children` list. Undefined when the root process does not exist. A process that exits
 * during the walk is left out.
 */
export function readProcessTree(rootPid: number, nameAgent: AgentNamer, procRoot = '/proc'): ProcessNode | undefined {
  const probe = join(procRoot, String(rootPid), 'task', String(rootPid), 'children');
  if (existsSync(join(procRoot, String(rootPid))) && !existsSync(probe)) {
    throw new DroverError(`${probe} is missing: this kernel does not list child processes in /proc`, { phase: 'inspect' });
  }
  const seen = new Set<number>();
  const walk = (pid: number): ProcessNode | undefined => {
    if (seen.has(pid)) return undefined;
    seen.add(pid);
    const facts = readProcess(procRoot, pid);
    if (facts === undefined) return undefined;
    return {
      pid,
      ppid: facts.ppid,
      comm: facts.comm,
      cmdline: facts.argv.join(' '),
      ...classified(nameAgent, facts.comm, facts.argv),
      children: facts.children.map(walk).filter((node): node is ProcessNode => node !== undefined),
    };
  };
  return walk(rootPid);
}

/**
 * The nearest of up to `maxDepth` ancestors of `pid` (its parent first) that classifies as
 * an agent: the process an agent hook runs for.
 */
export function findAgentAncestor(pid: number, nameAgent: AgentNamer, maxDepth = 5, procRoot = '/proc'): number | undefined {
  let current = readProcess(procRoot, pid);
  for (let depth = 0; depth < maxDepth && current !== undefined && current.ppid > 1; depth += 1) {
    const ancestor = current.ppid;
    current = readProcess(procRoot, ancestor);
    if (current !== undefined && nameAgent(current.comm, current.argv) !== undefined) return ancestor;
  }
  return undefined;
}

function classified(nameAgent: AgentNamer, comm: string, argv: readonly string[]): Pick<ProcessNode, 'classification' | 'agent'> {
  const agent = nameAgent(comm, argv) ?? null;
  if (agent !== null) return { classification: 'agent', agent };
  const name = programName(comm.trim());
  return { classification: name === 'node' ? 'node' : name === 'git' || name === 'gh' ? 'git' : 'other', agent: null };
}

export function treeHasAgent(node: ProcessNode): boolean {
  return node.classification === 'agent' || node.children.some(treeHasAgent);
}

/** The first agent of a tree, parents before children: the one the pane runs. */
export function firstAgent(node: ProcessNode): ProcessNode | undefined {
  if (node.agent !== null) return node;
  for (const child of node.children) {
    const found = firstAgent(child);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The human listing: one line per process, indented by depth. */
export function renderProcessTree(node: ProcessNode, depth = 0): string {
  const label = node.agent === null || node.agent === node.comm ? node.classification : `${node.classification}: ${node.agent}`;
  const line = `${'  '.repeat(depth)}${node.pid} ${node.comm} [${label}]\n`;
  return line + node.children.map((child) => renderProcessTree(child, depth + 1)).join('');
}
