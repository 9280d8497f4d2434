import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { procLookup, readProcessTree, type ProcessNode } from '../../src/agents/index.js';
import { isProcessAlive } from '../../src/process/index.js';
import { createMuxPort, TmuxAdapter, type MuxPort } from '../../src/mux/index.js';
import { Server } from '../../src/tmux/index.js';
import { git } from '../support/git.js';
import { startModelMock, type ModelMock } from './mock/server.js';
import { PROFILES } from './profiles/index.js';
import type { AgentName, AgentProfile } from './profiles/types.js';

export type { AgentName, AgentProfile } from './profiles/types.js';

/** The agent versions the bed is pinned to; fixtures are kept per version. */
export const AGENT_VERSIONS: Readonly<Record<string, string>> = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'test', 'agents', 'versions.json'), 'utf8'),
) as Record<string, string>;

/**
 * Where `scripts/install-agents.sh` puts the agents: `$DROVER_AGENTS_DIR`, else
 * `$XDG_CACHE_HOME/drover/agents`, else `~/.cache/drover/agents`. Outside the repository,
 * and never a dependency of drover itself.
 */
export function agentsDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DROVER_AGENTS_DIR) return env.DROVER_AGENTS_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'drover', 'agents');
}

/** The installed agent's executable, or undefined when it is not installed. */
export function findAgentBinary(profile: AgentProfile): string | undefined {
  const path = join(agentsDir(), 'node_modules', '.bin', profile.binary);
  return existsSync(path) ? path : undefined;
}

/**
 * The agent's executable, or a skipped test when it is missing. Under CI=true a missing agent
 * fails instead: CI installs all four, so a skip there would hide a broken install.
 */
export function requireAgent(t: TestContext, name: AgentName): string | undefined {
  // CI drives the real agents on its first Node only: they are programs of their own, and what
  // drover does with them is the same code on every Node it runs on.
  if (process.env.DROVER_REAL_AGENTS === 'off') {
    t.skip('real agents are off for this run (DROVER_REAL_AGENTS=off)');
    return undefined;
  }
  const profile = PROFILES[name];
  const binary = findAgentBinary(profile);
  if (binary !== undefined) return binary;
  const message = `${name} is not installed in ${agentsDir()} (run scripts/install-agents.sh)`;
  if (process.env.CI === 'true') assert.fail(`${message}; CI must run the real-agent tests`);
  process.stderr.write(`\n!!! SKIPPED real-agent test: ${message}\n\n`);
  t.skip(message);
  return undefined;
}

export interface AgentBed {
  readonly profile: AgentProfile;
  readonly mock: ModelMock;
  /** A private tmux server whose environment is the agent's (HOME, PATH, base URL, key). */
  readonly server: Server;
  /** The mux port over that server, as the pane verbs reach it. */
  readonly port: MuxPort;
  readonly home: string;
  readonly workdir: string;
  readonly env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

export interface BedOptions {
  /** Leave the folder-trust dialog in place (default: trusted, no dialog). */
  trusted?: boolean;
  /** Pane size of the bed's session. */
  width?: number;
  height?: number;
  /** Pass to the mock. */
  chunks?: number;
  chunkDelayMs?: number;
}

/**
 * One real agent's world: the model mock, an isolated HOME prepared by the agent's profile,
 * a project directory, and a private tmux server (on a socket in a fresh temporary
 * directory, without TMUX/TMUX_PANE) with one session `bed` sized `width`×`height` whose
 * first pane is a shell in the project directory. Everything is removed by close().
 */
export async function startAgentBed(name: AgentName, options: BedOptions = {}): Promise<AgentBed> {
  const profile = PROFILES[name];
  const binary = findAgentBinary(profile);
  if (binary === undefined) throw new Error(`${name} is not installed in ${agentsDir()}`);
  const root = mkdtempSync(join(tmpdir(), `drover-agent-${name}-`));
  const home = join(root, 'home');
  const workdir = join(root, 'project');
  mkdirSync(home, { recursive: true });
  mkdirSync(workdir, { recursive: true });
  writeFileSync(join(workdir, 'README.md'), '# demo project\n\nA small project the agent works in.\n');
  writeFileSync(join(workdir, 'notes.txt'), 'notes for @-mention tests\n');
  await git('init', '-q', workdir);
  let mock: ModelMock | undefined;
  let server: Server | undefined;
  try {
    mock = await startModelMock({ chunks: options.chunks, chunkDelayMs: options.chunkDelayMs });
    const context = { home, workdir, mockUrl: mock.url, trusted: options.trusted ?? true };
    profile.prepare(context);
    const env: NodeJS.ProcessEnv = {
      PATH: `${dirname(binary)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home,
      USER: process.env.USER ?? 'root',
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      SHELL: '/bin/bash',
      TMPDIR: root,
      ...profile.env(context),
    };
    server = await Server.start({ env, config: 'set -g history-limit 5000\n' });
    await server.newSession({ name: 'bed', width: options.width ?? 120, height: options.height ?? 40, cwd: workdir });
    const started = { profile, mock, server, port: createMuxPort(new TmuxAdapter({ server })), home, workdir, env };
    return {
      ...started,
      async close() {
        await retire(server!, mock!, root);
      },
    };
  } catch (error) {
    if (server !== undefined && mock !== undefined) await retire(server, mock, root);
    else {
      await mock?.close().catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    }
    throw error;
  }
}

/** Every process running in the server's panes, agents' children included. */
async function paneProcesses(server: Server): Promise<number[]> {
  const pids = (await server.snapshot()).panes.toArray().map((pane) => pane.panePid as number);
  const flatten = (node: ProcessNode | undefined): number[] => (node === undefined ? [] : [node.pid, ...node.children.flatMap(flatten)]);
  return pids.flatMap((pid) => flatten(readProcessTree(pid, () => undefined, procLookup())));
}

/** Every process working in a directory below `root`: an agent whose pane a test closed may outlive it (SIGHUP ignored). */
function processesBelow(root: string): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      return cwd === root || cwd.startsWith(`${root}/`) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

/**
 * Stops the tmux server and waits for the agents it ran to exit (they get SIGHUP with their
 * terminal, and some keep writing their files for a moment); a straggler is killed after 3 s,
 * and so is any process still working in the bed's directory. Only then is it removed.
 */
async function retire(server: Server, mock: ModelMock, root: string): Promise<void> {
  const pids = [...new Set([...(await paneProcesses(server).catch(() => [])), ...processesBelow(root)])];
  await server.close().catch(() => undefined);
  const deadline = Date.now() + 3000;
  while (pids.some(isProcessAlive) && Date.now() < deadline) await delay(50);
  for (const pid of pids.filter(isProcessAlive)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // It exited in between.
    }
  }
  await mock.close().catch(() => undefined);
  rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
