import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DroverError, LongLivedChild } from '../../src/process/index.js';
import {
  BUILTIN_PROVIDERS,
  agentNames,
  createAgentNamer,
  createProcessClassifier,
  findFirstAgent,
  firstAgent,
  procLookup,
  programInShellGroup,
  psLookup,
  systemProcessLookup,
  findAgentAncestor,
  readProcessTree,
  renderProcessTree,
  treeHasAgent,
  type ProcessFacts,
  type ProcessNode,
} from '../../src/agents/index.js';
import { fixture } from '../panes/fixtures.js';

const classify = createProcessClassifier(agentNames(BUILTIN_PROVIDERS));
const nameAgent = createAgentNamer(agentNames(BUILTIN_PROVIDERS));

describe('createProcessClassifier', () => {
  it('checks the command name first, then the first two argv words', () => {
    assert.equal(classify('claude', ['claude', '--model', 'opus']), 'agent');
    assert.equal(classify('node', ['node', '/usr/local/bin/gemini', '--yolo']), 'agent');
    assert.equal(classify('node', ['/usr/bin/env', 'codex']), 'agent');
    assert.equal(classify('node', ['node', 'server.js', 'claude']), 'node', 'a third word is prompt text, not the program');
    assert.equal(classify('git', ['git', 'status']), 'git');
    assert.equal(classify('gh', ['gh', 'pr', 'view']), 'git');
    assert.equal(classify('bash', ['-bash']), 'other');
  });

  it('names the agents drover knows however they run: native binary, node script, or renamed binary', () => {
    assert.equal(nameAgent('claude', ['claude']), 'claude');
    assert.equal(nameAgent('node', ['node', '/cache/node_modules/@openai/codex/bin/codex.js']), 'codex');
    assert.equal(nameAgent('codex', ['/cache/node_modules/@openai/codex-linux-x64/vendor/codex/codex']), 'codex');
    assert.equal(nameAgent('node', ['node', '--max-old-space-size=4096', '/x/@google/gemini-cli/bundle/gemini.js']), undefined, 'past the first two words');
    assert.equal(nameAgent('node', ['/usr/bin/node', '/x/@google/gemini-cli/bundle/gemini.js']), 'gemini');
    assert.equal(nameAgent('.opencode', ['/x/opencode-linux-x64/bin/opencode']), 'opencode');
    assert.equal(nameAgent('vim', ['vim', 'claude.md']), undefined);
    assert.equal(createAgentNamer(['aider'])('python3', ['python3', '/usr/bin/aider']), 'aider', 'a configured provider names its own agent');
  });
});

function fakeProcess(root: string, pid: number, ppid: number, comm: string, argv: string[], childrenByTask: Record<number, number[]>): void {
  const dir = join(root, String(pid));
  mkdirSync(dir, { recursive: true });
  // As Linux writes it, up to the thread count (the 20th field) and the start time after it.
  const threads = Object.keys(childrenByTask).length;
  writeFileSync(join(dir, 'stat'), `${pid} (${comm}) S ${ppid} ${pid} ${pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 ${threads} 0 12345\n`);
  writeFileSync(join(dir, 'cmdline'), argv.map((word) => `${word}\0`).join(''));
  for (const [tid, children] of Object.entries(childrenByTask)) {
    mkdirSync(join(dir, 'task', tid), { recursive: true });
    writeFileSync(join(dir, 'task', tid, 'children'), children.map((child) => `${child} `).join(''));
  }
}

describe('programInShellGroup', () => {
  /** pid → [comm, process group, the terminal's foreground group, children]. */
  const lookupOf = (table: Record<number, [string, number | undefined, number | undefined, number[]]>) => ({
    facts: (pid: number): ProcessFacts | undefined => {
      const row = table[pid];
      return row === undefined ? undefined : { ppid: 1, comm: row[0], argv: [row[0]], group: row[1], terminalGroup: row[2], children: row[3] };
    },
  });

  it('finds the program a shell runs in its own group: the first that is not a shell, not the tools it runs', () => {
    // sh -c 'sh -c "claude; true"; true': claude, and the rg it runs, stay in the outer shell's group.
    const lookup = lookupOf({ 10: ['sh', 10, 10, [11]], 11: ['sh', 10, 10, [12]], 12: ['claude', 10, 10, [13]], 13: ['rg', 10, 10, []] });
    assert.equal(programInShellGroup(10, lookup), 'claude');
    assert.equal(programInShellGroup(13, lookup), 'claude', 'asked from any process of the pane');
  });

  it('finds none for a shell at its prompt, whose jobs have groups of their own, or where groups are unknown', () => {
    assert.equal(programInShellGroup(20, lookupOf({ 20: ['bash', 20, 20, [21]], 21: ['sleep', 21, 20, []] })), undefined);
    // An interactive shell started from another took the terminal's group for itself.
    assert.equal(programInShellGroup(30, lookupOf({ 30: ['sh', 30, 31, [31]], 31: ['bash', 31, 31, []] })), undefined);
    assert.equal(programInShellGroup(40, lookupOf({ 40: ['sh', undefined, undefined, [41]], 41: ['cat', undefined, undefined, []] })), undefined);
    assert.equal(programInShellGroup(50, lookupOf({ 50: ['sh', 50, -1, [51]], 51: ['cat', 50, -1, []] })), undefined, 'no controlling terminal');
  });
});

describe('readProcessTree over a /proc layout', () => {
  let proc: string;
  before(() => {
    proc = mkdtempSync(join(tmpdir(), 'drover-proc-'));
    fakeProcess(proc, 100, 1, 'bash', ['-bash'], { 100: [200, 300, 999] });
    fakeProcess(proc, 200, 100, 'node', ['node', '/usr/local/bin/gemini', '--yolo'], { 200: [], 201: [400] });
    fakeProcess(proc, 300, 100, 'git', ['git', 'fetch'], { 300: [] });
    fakeProcess(proc, 400, 200, 'odd) name', ['python3', '-c', "print('claude')"], { 400: [] });
    // A worker thread (602) that ended after the task listing: its directory is there, its list is not.
    fakeProcess(proc, 600, 1, 'codex', ['codex'], { 600: [601], 602: [] });
    fakeProcess(proc, 601, 600, 'sh', ['sh', '-c', 'true'], { 601: [] });
    rmSync(join(proc, '600', 'task', '602', 'children'));
  });
  after(() => rmSync(proc, { recursive: true, force: true }));

  it('walks every task, keeps the root, skips processes that exited, and parses odd command names', () => {
    const tree = readProcessTree(100, nameAgent, procLookup(proc));
    const flat = (node: ProcessNode): [number, number, string, string, string][] => [
      [node.pid, node.ppid, node.comm, node.cmdline, node.classification],
      ...node.children.flatMap(flat),
    ];
    assert.ok(tree);
    assert.deepEqual(flat(tree), [
      [100, 1, 'bash', '-bash', 'other'],
      [200, 100, 'node', 'node /usr/local/bin/gemini --yolo', 'agent'],
      [400, 200, 'odd) name', "python3 -c print('claude')", 'other'],
      [300, 100, 'git', 'git fetch', 'git'],
    ]);
    assert.equal(treeHasAgent(tree), true);
    assert.equal(treeHasAgent(tree.children[1]!), false);
    assert.equal(firstAgent(tree)?.pid, 200);
    assert.equal(firstAgent(tree)?.agent, 'gemini', 'a node process running gemini is gemini');
    assert.equal(renderProcessTree(tree), '100 bash [other]\n  200 node [agent: gemini]\n    400 odd) name [other]\n  300 git [git]\n');
  });

  it('keeps a process one of whose threads ended while it was read', () => {
    const tree = readProcessTree(600, nameAgent, procLookup(proc));
    assert.deepEqual([tree?.comm, tree?.agent, tree?.children.map((child) => child.pid)], ['codex', 'codex', [601]]);
  });

  it('finds the agent a pane runs as the whole tree would, reading no process past it', () => {
    const read: number[] = [];
    const lookup = procLookup(proc);
    const counting = { facts: (pid: number) => (read.push(pid), lookup.facts(pid)) };
    assert.deepEqual(findFirstAgent(100, nameAgent, counting), { pid: 200, agent: 'gemini' });
    assert.deepEqual(read, [100, 200], 'neither the agent’s child (400) nor the sibling after it (300) is read');
    for (const root of [100, 200, 300, 400, 999]) {
      const tree = readProcessTree(root, nameAgent, lookup);
      const whole = tree === undefined ? undefined : firstAgent(tree);
      const expected = whole === undefined || whole.agent === null ? undefined : { pid: whole.pid, agent: whole.agent };
      assert.deepEqual(findFirstAgent(root, nameAgent, lookup), expected, `the tree under ${root}`);
    }
    assert.deepEqual(findFirstAgent(100, createAgentNamer(['git']), lookup), { pid: 200, agent: 'gemini' }, 'parents and earlier siblings first');
    assert.deepEqual(findFirstAgent(300, createAgentNamer(['git']), lookup), { pid: 300, agent: 'git' }, 'the root itself counts');
  });

  it('reads a one-thread process’s children from its own task without listing the task directory', () => {
    fakeProcess(proc, 700, 1, 'sh', ['sh'], { 700: [300] });
    // A thread the stat line does not count: listing the directory would find its child too.
    mkdirSync(join(proc, '700', 'task', '701'));
    writeFileSync(join(proc, '700', 'task', '701', 'children'), '400 ');
    assert.deepEqual(procLookup(proc).facts(700)?.children, [300]);
    assert.deepEqual(procLookup(proc).facts(200)?.children, [400], 'a process of two threads has each one’s children');
  });

  it('has the JSON shape of `drover pane process`', () => {
    const leaf = readProcessTree(300, nameAgent, procLookup(proc));
    assert.deepEqual(JSON.parse(JSON.stringify(leaf)), { pid: 300, ppid: 100, comm: 'git', cmdline: 'git fetch', classification: 'git', agent: null, children: [] });
  });

  it('finds the nearest agent among a process’s ancestors', () => {
    assert.equal(findAgentAncestor(400, nameAgent, procLookup(proc), 5), 200);
    assert.equal(findAgentAncestor(300, nameAgent, procLookup(proc), 5), undefined);
    assert.equal(findAgentAncestor(400, createAgentNamer([]), procLookup(proc), 1), 200, 'gemini is known without any provider');
    assert.equal(findAgentAncestor(300, createAgentNamer(['bash']), procLookup(proc), 1), 100, 'a configured name counts too');
    assert.equal(findAgentAncestor(300, createAgentNamer(['zsh']), procLookup(proc), 1), undefined);
  });

  it('names a process by its program when a runtime renamed its main thread (Node 24: MainThread)', () => {
    fakeProcess(proc, 600, 300, 'MainThread', ['/usr/bin/node', 'server.js'], { 600: [] });
    fakeProcess(proc, 601, 300, 'MainThread', [], { 601: [] });
    assert.equal(readProcessTree(600, nameAgent, procLookup(proc))?.comm, 'node');
    assert.equal(readProcessTree(600, nameAgent, procLookup(proc))?.classification, 'node');
    assert.equal(readProcessTree(601, nameAgent, procLookup(proc))?.comm, 'MainThread', 'a process with no argv keeps its thread name');
  });

  it('is undefined for a process that does not exist', () => {
    assert.equal(readProcessTree(12345, nameAgent, procLookup(proc)), undefined);
  });

  it('says so when the kernel does not list children', () => {
    fakeProcess(proc, 500, 1, 'sh', ['sh'], {});
    assert.throws(() => readProcessTree(500, nameAgent, procLookup(proc)), (error) => error instanceof DroverError && /does not list child processes/.test(error.message));
  });
});

describe('readProcessTree on this machine', () => {
  it('finds a child of this process with its command line', async () => {
    const child = await LongLivedChild.start(['sleep', '30'], { stdin: 'ignore', stdout: 'ignore' });
    try {
      const tree = readProcessTree(process.pid, createAgentNamer(['sleep']), procLookup());
      assert.ok(tree);
      assert.equal(tree.pid, process.pid);
      const node = tree.children.find((candidate) => candidate.pid === child.pid);
      assert.ok(node, 'the child is listed');
      assert.deepEqual({ ...node, children: [] }, { pid: child.pid, ppid: process.pid, comm: 'sleep', cmdline: 'sleep 30', classification: 'agent', agent: 'sleep', children: [] });
      assert.equal(treeHasAgent(tree), true);
    } finally {
      await child.stop(0, 'SIGKILL');
    }
  });
});

describe('process trees on macOS, from ps', () => {
  const lookup = psLookup(fixture('ps-macos-table.txt'), fixture('ps-macos-args.txt'));
  const agentOf = (pid: number) => firstAgent(readProcessTree(pid, nameAgent, lookup)!);

  it('builds the tree under a pane from the two listings, command names with blanks included', () => {
    const tree = readProcessTree(5101, nameAgent, lookup);
    assert.ok(tree);
    assert.deepEqual(
      tree.children.map((child) => [child.pid, child.comm, child.children.map((grandchild) => grandchild.pid)]),
      [
        [5102, '-zsh', [5120]],
        [5140, '-zsh', [5141]],
        [5150, '-zsh', [5151]],
        [5160, '/opt/homebrew/bin/opencode', []],
        [5170, '-zsh', [5171]],
      ],
    );
    assert.equal(lookup.facts(412)?.comm, '/Applications/Visual Studio Code.app/Contents/MacOS/Electron');
  });

  it('names the agents as on Linux: native binaries, node scripts, the first agent of a pane', () => {
    assert.deepEqual([agentOf(5102)?.pid, agentOf(5102)?.agent], [5120, 'claude']);
    assert.deepEqual([agentOf(5140)?.pid, agentOf(5140)?.agent], [5141, 'codex'], 'the node launcher runs codex');
    assert.deepEqual([agentOf(5150)?.pid, agentOf(5150)?.agent], [5151, 'gemini']);
    assert.equal(agentOf(5160)?.agent, 'opencode');
    assert.equal(agentOf(5170), undefined, 'vim editing claude.md is no agent');
    assert.equal(findAgentAncestor(5131, nameAgent, lookup), 5120, "a hook run by Claude Code's tool shell finds Claude Code");
  });

  it('is what this machine uses on macOS, /proc on Linux, and a refusal elsewhere', async () => {
    assert.equal((await systemProcessLookup('linux')).facts(process.pid)?.ppid, process.ppid);
    await assert.rejects(systemProcessLookup('win32'), /drover reads process trees from \/proc \(Linux\) or ps \(macOS\); win32 is neither/);
  });
});
