import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { DroverError, parseProcStat, run } from '../process/index.js';
import type { AgentKind } from './screens/types.js';
import { isShellCommand } from './shells.js';

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

/** One process as a lookup gives it. */
export interface ProcessFacts {
  ppid: number;
  comm: string;
  argv: string[];
  children: number[];
  /** Its process group, and the foreground process group of its terminal (Linux only). */
  group?: number;
  terminalGroup?: number;
}

/**
 * Where process facts come from: Linux's /proc, read one process at a time as a walk needs
 * it, or one `ps` listing on macOS. A process that has exited is undefined.
 */
export interface ProcessLookup {
  facts(pid: number): ProcessFacts | undefined;
}

/**
 * Thread names a runtime gives its main thread, which Linux then reports as the process's
 * command name (Node 24 calls its main thread MainThread): the program is argv[0]'s then.
 */
const RUNTIME_THREAD_NAMES: ReadonlySet<string> = new Set(['MainThread']);

/**
 * The children a thread started. A thread other than the main one may end between the listing
 * of the tasks and this read (a runtime's worker pools come and go): it has none left then, and
 * the process is still there.
 */
function threadChildren(dir: string, tid: string, mainTid: string): number[] {
  let list: string;
  try {
    list = readFileSync(join(dir, 'task', tid, 'children'), 'utf8');
  } catch (error) {
    if (tid !== mainTid && ['ENOENT', 'ESRCH'].includes((error as NodeJS.ErrnoException).code ?? '')) return [];
    throw error;
  }
  return list
    .split(' ')
    .filter((word) => word !== '')
    .map(Number);
}

/** Reads one process from /proc, or undefined when it exited meanwhile. */
function readProcFacts(procRoot: string, pid: number): ProcessFacts | undefined {
  const dir = join(procRoot, String(pid));
  try {
    // The name is what /proc/PID/comm holds too; the thread count is the 18th field after it (stat's 20th).
    const { name: threadName, fields } = parseProcStat(readFileSync(join(dir, 'stat'), 'utf8'));
    const ppid = Number(fields[1]);
    const argv = readFileSync(join(dir, 'cmdline'), 'utf8').split('\0');
    if (argv.at(-1) === '') argv.pop();
    const comm = RUNTIME_THREAD_NAMES.has(threadName) && argv[0] !== undefined ? basename(argv[0]) : threadName;
    // Children are listed per thread; most processes have one, whose id is the process's own,
    // so the task directory is listed only for the others (a map reads every pane's tree).
    const tids = fields[17] === '1' ? [String(pid)] : readdirSync(join(dir, 'task'));
    const children = tids.flatMap((tid) => threadChildren(dir, tid, String(pid)));
    return { ppid, comm, argv, children, group: Number(fields[2]), terminalGroup: Number(fields[5]) };
  } catch {
    return undefined;
  }
}

/**
 * Linux: each process read from `procRoot` when asked for, children from each task's
 * `children` list (a kernel that does not list them is refused, naming the file).
 */
export function procLookup(procRoot = '/proc'): ProcessLookup {
  // The kernel lists children or it does not: once one process shows the list, no other is probed.
  let childrenListed = false;
  return {
    facts(pid) {
      if (!childrenListed) {
        const probe = join(procRoot, String(pid), 'task', String(pid), 'children');
        childrenListed = existsSync(probe);
        if (!childrenListed && existsSync(join(procRoot, String(pid)))) {
          throw new DroverError(`${probe} is missing: this kernel does not list child processes in /proc`, { phase: 'inspect' });
        }
      }
      return readProcFacts(procRoot, pid);
    },
  };
}

/** `ps -axo pid=,ppid=,comm=`: what macOS lists of every process, one per line. */
export const PS_TABLE_ARGV: readonly string[] = Object.freeze(['ps', '-axo', 'pid=,ppid=,comm=']);
/** `ps -axo pid=,args=`: every process's command line, in one more listing. */
export const PS_ARGS_ARGV: readonly string[] = Object.freeze(['ps', '-axo', 'pid=,args=']);

/**
 * macOS: the two `ps` listings parsed into a lookup. `comm` may hold blanks (an application
 * path), so a line is split on its first two runs of blanks only. ps prints a command line
 * with blanks between its words and does not quote them, so an argument holding a blank
 * reads as two words; naming agents only looks at the first two, where that rarely matters.
 */
export function psLookup(table: string, args: string): ProcessLookup {
  const argvOf = new Map<number, string[]>();
  for (const line of args.split('\n')) {
    const match = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (match) argvOf.set(Number(match[1]), match[2]!.trim().split(/\s+/));
  }
  const facts = new Map<number, ProcessFacts>();
  for (const line of table.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const pid = Number(match[1]);
    facts.set(pid, { ppid: Number(match[2]), comm: match[3]!.trim(), argv: argvOf.get(pid) ?? [], children: [] });
  }
  for (const [pid, process] of facts) facts.get(process.ppid)?.children.push(pid);
  return { facts: (pid) => facts.get(pid) };
}

/**
 * The lookup for this machine: /proc on Linux, two `ps` listings on macOS. Any other system
 * is refused by name, rather than answered with an empty tree that would look like "no agent".
 */
export async function systemProcessLookup(platform: NodeJS.Platform = process.platform): Promise<ProcessLookup> {
  if (platform === 'linux') return procLookup();
  if (platform === 'darwin') {
    const [table, args] = await Promise.all([run(PS_TABLE_ARGV, { timeoutMs: 5000 }), run(PS_ARGS_ARGV, { timeoutMs: 5000 })]);
    for (const listing of [table, args]) {
      if (!listing.ok) throw new DroverError(`${listing.argv.join(' ')} failed: ${listing.stderrText().trim()}`, { phase: 'inspect' });
    }
    return psLookup(table.text(), args.text());
  }
  throw new DroverError(`drover reads process trees from /proc (Linux) or ps (macOS); ${platform} is neither`, { phase: 'inspect' });
}

/**
 * The process tree under `rootPid` (root included). Undefined when the root process does not
 * exist. A process that exits during the walk is left out.
 */
export function readProcessTree(rootPid: number, nameAgent: AgentNamer, lookup: ProcessLookup): ProcessNode | undefined {
  const seen = new Set<number>();
  const walk = (pid: number): ProcessNode | undefined => {
    if (seen.has(pid)) return undefined;
    seen.add(pid);
    const facts = lookup.facts(pid);
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

/** An agent process found under a pane: its pid and the agent's name. */
export interface FoundAgent {
  readonly pid: number;
  readonly agent: string;
}

/**
 * The agent a pane runs: the first agent under `rootPid` (root included), parents before
 * children, as firstAgent finds it in the whole tree, but reading no process past it. An agent's
 * own processes (its tools, its MCP servers, their children) are never read, and a map reads
 * every pane's tree.
 */
export function findFirstAgent(rootPid: number, nameAgent: AgentNamer, lookup: ProcessLookup): FoundAgent | undefined {
  const seen = new Set<number>();
  const walk = (pid: number): FoundAgent | undefined => {
    if (seen.has(pid)) return undefined;
    seen.add(pid);
    const facts = lookup.facts(pid);
    if (facts === undefined) return undefined;
    const agent = nameAgent(facts.comm, facts.argv);
    if (agent !== undefined) return { pid, agent };
    for (const child of facts.children) {
      const found = walk(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(rootPid);
}

/**
 * The program that reads a terminal whose foreground process group is led by a shell that did
 * not hand it over: `sh -c 'cat; true'`, where the shell waits for cat instead of replacing
 * itself with it, and cat stays in the shell's group. tmux names the group's leader, the
 * shell, as the pane's foreground command. Starting from any process of the pane (`pid`), this
 * is the first process of that group under its leader that is not a shell itself (the program,
 * not the tools it runs); undefined when there is none (a shell at its prompt, whose jobs have
 * groups of their own) or the lookup gives no process groups.
 */
export function programInShellGroup(pid: number, lookup: ProcessLookup): string | undefined {
  const group = lookup.facts(pid)?.terminalGroup;
  if (group === undefined || group <= 0) return undefined;
  const seen = new Set<number>();
  const walk = (parent: number): string | undefined => {
    if (seen.has(parent)) return undefined;
    seen.add(parent);
    for (const child of lookup.facts(parent)?.children ?? []) {
      const facts = lookup.facts(child);
      if (facts === undefined || facts.group !== group) continue;
      const program = isShellCommand(facts.comm) ? walk(child) : facts.comm;
      if (program !== undefined) return program;
    }
    return undefined;
  };
  return walk(group);
}

/**
 * The nearest of up to `maxDepth` ancestors of `pid` (its parent first) that classifies as
 * an agent: the process an agent hook runs for.
 */
export function findAgentAncestor(pid: number, nameAgent: AgentNamer, lookup: ProcessLookup, maxDepth = 5): number | undefined {
  let current = lookup.facts(pid);
  for (let depth = 0; depth < maxDepth && current !== undefined && current.ppid > 1; depth += 1) {
    const ancestor = current.ppid;
    current = lookup.facts(ancestor);
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
