import { basename, dirname, relative } from 'node:path';
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
 * Resolves pane cwds to git worktrees with as few git children as possible: one
 * `rev-parse` per distinct cwd (which also names the repo's common git directory) and one
 * `worktree list` per repo. Results are cached for the resolver's lifetime.
 */
export class WorktreeResolver {
  private readonly byCwd = new Map<string, Promise<WorktreeInfo>>();
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
    let main = this.mainByCommonDir.get(commonDir);
    if (main === undefined) {
      main = this.git(['-C', worktree, 'worktree', 'list', '--porcelain', '-z']).then(
        (output) => (output === undefined ? null : (mainWorktreeFromPorcelain(output) ?? null)),
      );
      this.mainByCommonDir.set(commonDir, main);
    }
    return main;
  }

  private async lookUp(cwd: string): Promise<WorktreeInfo> {
    const output = await this.git(['-C', cwd, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir']);
    const [worktree, commonDir] = output?.split('\n') ?? [];
    if (!worktree || !commonDir) return NOT_IN_GIT;
    return { worktree, repo: await this.mainWorktree(commonDir, worktree) };
  }

  resolve(cwd: string): Promise<WorktreeInfo> {
    // `git -C ""` would quietly run in this process's own directory.
    if (cwd === '') return Promise.resolve(NOT_IN_GIT);
    let info = this.byCwd.get(cwd);
    if (info === undefined) {
      info = this.lookUp(cwd);
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
