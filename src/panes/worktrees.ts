import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { SpawnError, run } from '../process/index.js';

/** Where a pane's cwd sits in git: its worktree root and its repo's main worktree root (null outside git). */
export interface WorktreeInfo {
  worktree: string | null;
  repo: string | null;
}

const NOT_IN_GIT: Readonly<WorktreeInfo> = Object.freeze({ worktree: null, repo: null });

/** At most this many git children run at once. */
const GIT_CONCURRENCY = 8;
const GIT_TIMEOUT_MS = 5000;

/** git without inherited GIT_DIR, GIT_WORK_TREE…: discovery must start from the cwd alone. */
function gitEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('GIT_')));
}

async function mapBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** The first `worktree <path>` record of `git worktree list --porcelain -z`: the main worktree. */
export function mainWorktreeFromPorcelain(output: string): string | undefined {
  const first = output.split('\0').find((field) => field.startsWith('worktree '));
  return first?.slice('worktree '.length);
}

/**
 * The main worktree git itself derives from a repository's common git directory: that
 * directory without its trailing `/.git`. Undefined for other layouts (a bare repository,
 * `--separate-git-dir`, a submodule), which are left to `git worktree list`.
 */
export function mainWorktreeFromCommonDir(commonDir: string): string | undefined {
  return basename(commonDir) === '.git' ? dirname(commonDir) : undefined;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Where git's repository discovery from `dir` lands: the nearest directory at or above `dir`
 * holding a `.git` entry. git walks up through the directories in between without stopping,
 * so it answers from there exactly as from `dir`, and every cwd below one worktree root
 * shares one git call. Undefined when `dir` is gone or nothing above it holds `.git` (git
 * would find no repository; GIT_DIR is never inherited). A directory inside a `.git`
 * directory, which git treats apart, is its own anchor.
 */
export function gitAnchor(dir: string): string | undefined {
  if (!isDirectory(dir)) return undefined;
  if (dir.split('/').includes('.git')) return dir;
  for (let current = dir; ; current = dirname(current)) {
    if (existsSync(join(current, '.git'))) return current;
    if (dirname(current) === current) return undefined;
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * What git would answer for an anchor in the two everyday layouts, read from the files git
 * itself reads: a `.git` directory (the anchor is its own repository's main worktree), or a
 * linked worktree's `.git` file naming `<repo>/.git/worktrees/<name>`, whose `commondir`
 * leads back to `<repo>/.git`. Undefined for anything else (submodules, separate git
 * directories, bare repositories), which git is asked about.
 */
export function worktreeFromLayout(anchor: string): WorktreeInfo | undefined {
  const dotGit = join(anchor, '.git');
  if (isDirectory(dotGit)) return existsSync(join(dotGit, 'HEAD')) ? { worktree: realpathSync(anchor), repo: realpathSync(anchor) } : undefined;
  const pointer = /^gitdir: (.+)$/m.exec(readText(dotGit) ?? '')?.[1]?.trim();
  if (pointer === undefined) return undefined;
  const gitDir = resolve(anchor, pointer);
  const common = readText(join(gitDir, 'commondir'))?.trim();
  if (!common) return undefined;
  const main = mainWorktreeFromCommonDir(resolve(gitDir, common));
  if (main === undefined || !isDirectory(main)) return undefined;
  return { worktree: realpathSync(anchor), repo: realpathSync(main) };
}

/**
 * The branch a worktree has checked out, read from its HEAD the way git does: the branch name,
 * the commit's first 7 hex digits when HEAD is detached, null when the worktree's git directory
 * cannot be read (nothing there, or a layout only git itself resolves).
 */
export function currentBranch(worktree: string): string | null {
  const dotGit = join(worktree, '.git');
  const pointer = isDirectory(dotGit) ? undefined : /^gitdir: (.+)$/m.exec(readText(dotGit) ?? '')?.[1]?.trim();
  const gitDir = pointer === undefined ? dotGit : resolve(worktree, pointer);
  const head = readText(join(gitDir, 'HEAD'))?.trim();
  if (head === undefined) return null;
  const ref = /^ref: refs\/heads\/(.+)$/.exec(head);
  if (ref !== null) return ref[1]!;
  return /^[0-9a-f]{40,64}$/.test(head) ? head.slice(0, 7) : null;
}

/**
 * Resolves pane cwds to git worktrees with as few git children as possible: none for a cwd
 * outside git or in an everyday repository or linked worktree (read from git's own files),
 * else one `rev-parse` per worktree (it also names the repo's common git directory) and a
 * `worktree list` only for a repo whose layout does not name its main worktree. Results are
 * cached for the resolver's lifetime.
 */
export class WorktreeResolver {
  private readonly byCwd = new Map<string, Promise<WorktreeInfo>>();
  private readonly byAnchor = new Map<string, Promise<WorktreeInfo>>();
  private readonly mainByCommonDir = new Map<string, Promise<string | null>>();
  private readonly env: NodeJS.ProcessEnv;

  constructor(options: { env?: NodeJS.ProcessEnv } = {}) {
    this.env = gitEnvironment(options.env ?? process.env);
  }

  /** stdout, or undefined when git says no (not a repository) or is not installed. */
  private async git(args: readonly string[]): Promise<string | undefined> {
    try {
      const result = await run(['git', ...args], { env: this.env, timeoutMs: GIT_TIMEOUT_MS });
      return result.ok ? result.lossyText() : undefined;
    } catch (error) {
      if (error instanceof SpawnError) return undefined;
      throw error;
    }
  }

  private mainWorktree(commonDir: string, worktree: string): Promise<string | null> {
    const derived = mainWorktreeFromCommonDir(commonDir);
    if (derived !== undefined) return Promise.resolve(derived);
    let main = this.mainByCommonDir.get(commonDir);
    if (main === undefined) {
      main = this.git(['-C', worktree, 'worktree', 'list', '--porcelain', '-z']).then(
        (output) => (output === undefined ? null : (mainWorktreeFromPorcelain(output) ?? null)),
      );
      this.mainByCommonDir.set(commonDir, main);
    }
    return main;
  }

  private async lookUp(anchor: string): Promise<WorktreeInfo> {
    const known = worktreeFromLayout(anchor);
    if (known) return known;
    const output = await this.git(['-C', anchor, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir']);
    const [worktree, commonDir] = output?.split('\n') ?? [];
    if (!worktree || !commonDir) return NOT_IN_GIT;
    return { worktree, repo: await this.mainWorktree(commonDir, worktree) };
  }

  private atAnchor(anchor: string): Promise<WorktreeInfo> {
    let info = this.byAnchor.get(anchor);
    if (info === undefined) {
      info = this.lookUp(anchor);
      this.byAnchor.set(anchor, info);
    }
    return info;
  }

  resolve(cwd: string): Promise<WorktreeInfo> {
    // `git -C ""` would quietly run in this process's own directory.
    if (cwd === '') return Promise.resolve(NOT_IN_GIT);
    let info = this.byCwd.get(cwd);
    if (info === undefined) {
      const anchor = gitAnchor(cwd);
      info = anchor === undefined ? Promise.resolve(NOT_IN_GIT) : this.atAnchor(anchor);
      this.byCwd.set(cwd, info);
    }
    return info;
  }

  /** Resolves every cwd (duplicates cost nothing), with bounded parallelism. */
  async resolveAll(cwds: Iterable<string>): Promise<Map<string, WorktreeInfo>> {
    const distinct = [...new Set(cwds)];
    const infos = await mapBounded(distinct, GIT_CONCURRENCY, (cwd) => this.resolve(cwd));
    return new Map(distinct.map((cwd, index) => [cwd, infos[index]!]));
  }
}

/**
 * The Worktree column: `(main)` for a repo's main worktree, the path relative to the main
 * worktree's parent for a linked one (so each repo's panes read correctly), and
 * `<basename>/` outside git.
 */
export function worktreeLabel(cwd: string, info: WorktreeInfo): string {
  if (info.worktree === null) return `${basename(cwd)}/`;
  if (info.repo === null) return `${basename(info.worktree)}/`;
  if (info.worktree === info.repo) return '(main)';
  return `${relative(dirname(info.repo), info.worktree)}/`;
}
