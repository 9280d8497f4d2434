import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DroverError } from '../process/index.js';

export type ProcessClass = 'agent' | 'node' | 'git' | 'other';

/** One process of a pane's tree, in the `drover pane process --json` shape. */
export interface ProcessNode {
  pid: number;
  ppid: number;
  comm: string;
  cmdline: string;
  classification: ProcessClass;
  children: ProcessNode[];
}

export type ProcessClassifier = (comm: string, argv: readonly string[]) => ProcessClass;

function baseName(path: string): string {
  return path.split('/').pop() ?? '';
}

/**
 * Classifies by the agent names first: the command name, then the basenames of at most the
 * first two argv words, so `node /usr/lib/gemini` is an agent while a prompt argument that
 * mentions one is not. Other node processes are node, git and gh are git, the rest other.
 */
export function createProcessClassifier(agentNames: Iterable<string>): ProcessClassifier {
  const agents = new Set(agentNames);
  return (comm, argv) => {
    const name = baseName(comm.trim());
    if (agents.has(name) || argv.slice(0, 2).some((word) => agents.has(baseName(word)))) return 'agent';
    if (name === 'node') return 'node';
    if (name === 'git' || name === 'gh') return 'git';
    return 'other';
  };
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
export function readProcessTree(rootPid: number, classify: ProcessClassifier, procRoot = '/proc'): ProcessNode | undefined {
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
      classification: classify(facts.comm, facts.argv),
      children: facts.children.map(walk).filter((node): node is ProcessNode => node !== undefined),
    };
  };
  return walk(rootPid);
}

/**
 * The nearest of up to `maxDepth` ancestors of `pid` (its parent first) that classifies as
 * an agent: the process an agent hook runs for.
 */
export function findAgentAncestor(pid: number, classify: ProcessClassifier, maxDepth = 5, procRoot = '/proc'): number | undefined {
  let current = readProcess(procRoot, pid);
  for (let depth = 0; depth < maxDepth && current !== undefined && current.ppid > 1; depth += 1) {
    const ancestor = current.ppid;
    current = readProcess(procRoot, ancestor);
    if (current !== undefined && classify(current.comm, current.argv) === 'agent') return ancestor;
  }
  return undefined;
}

export function treeHasAgent(node: ProcessNode): boolean {
  return node.classification === 'agent' || node.children.some(treeHasAgent);
}

/** The human listing: one line per process, indented by depth. */
export function renderProcessTree(node: ProcessNode, depth = 0): string {
  const line = `${'  '.repeat(depth)}${node.pid} ${node.comm} [${node.classification}]\n`;
  return line + node.children.map((child) => renderProcessTree(child, depth + 1)).join('');
}
