import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { processDiagnostics, run } from '../../src/process/index.js';
import { git, gitEnv } from '../support/git.js';
import { WorktreeResolver, currentBranch, gitAnchor, mainWorktreeFromCommonDir, mainWorktreeFromPorcelain, worktreeFromLayout, worktreeLabel } from '../../src/panes/index.js';

describe('WorktreeResolver against real repositories', () => {
  let root: string;
  let alpha: string;
  let feature: string;
  let beta: string;
  let plain: string;

  before(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'drover-git-')));
    alpha = join(root, 'alpha');
    feature = join(root, 'trees', 'alpha-feature');
    beta = join(root, 'beta');
    plain = join(root, 'plain');
    mkdirSync(join(alpha, 'src'), { recursive: true });
    mkdirSync(beta);
    mkdirSync(plain);
    await git('init', '-q', '-b', 'main', alpha);
    await git('-C', alpha, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '--allow-empty', '-m', 'start');
    await git('-C', alpha, 'worktree', 'add', '-q', '-b', 'feature', feature);
    mkdirSync(join(feature, 'docs'));
    await git('init', '-q', '-b', 'main', beta);
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('resolves everyday repositories and linked worktrees from git’s own files, with no git child', async () => {
    const resolver = new WorktreeResolver({ env: { ...gitEnv, GIT_DIR: '/nonexistent' } });
    const cwds = [alpha, join(alpha, 'src'), join(alpha, 'src'), feature, join(feature, 'docs'), beta, plain, alpha];
    const before = processDiagnostics().spawned;
    const infos = await resolver.resolveAll(cwds);
    assert.equal(processDiagnostics().spawned - before, 0, 'a .git directory, or a .git file whose commondir leads back to <repo>/.git');
    assert.deepEqual(Object.fromEntries(infos), {
      [alpha]: { worktree: alpha, repo: alpha },
      [join(alpha, 'src')]: { worktree: alpha, repo: alpha },
      [feature]: { worktree: feature, repo: alpha },
      [join(feature, 'docs')]: { worktree: feature, repo: alpha },
      [beta]: { worktree: beta, repo: beta },
      [plain]: { worktree: null, repo: null },
    });

    const again = processDiagnostics().spawned;
    await resolver.resolveAll([plain, feature, alpha]);
    assert.equal(processDiagnostics().spawned, again, 'answered from the cache');
  });

  it('labels worktrees per repo', async () => {
    const infos = await new WorktreeResolver().resolveAll([alpha, join(feature, 'docs'), beta, plain]);
    assert.deepEqual(
      [alpha, join(feature, 'docs'), beta, plain].map((cwd) => worktreeLabel(cwd, infos.get(cwd)!)),
      ['(main)', 'trees/alpha-feature/', '(main)', 'plain/'],
    );
  });

  it('agrees with git for every layout it reads itself', async () => {
    for (const dir of [alpha, feature, beta]) {
      const output = await run(['git', '-C', dir, 'rev-parse', '--path-format=absolute', '--show-toplevel', '--git-common-dir'], { env: gitEnv, timeoutMs: 10_000 });
      const [worktree, common] = output.text().trim().split('\n');
      assert.deepEqual(worktreeFromLayout(dir), { worktree, repo: dirname(common!) });
    }
  });

  it('asks git for the main worktree when the git directory is kept elsewhere', async () => {
    const separate = join(root, 'separate');
    await git('init', '-q', '--separate-git-dir', join(root, 'separate.git'), separate);
    const before = processDiagnostics().spawned;
    // git names the git directory itself as the main worktree of this layout.
    assert.deepEqual(await new WorktreeResolver().resolve(separate), { worktree: separate, repo: join(root, 'separate.git') });
    assert.equal(processDiagnostics().spawned - before, 2, 'rev-parse, then worktree list');
  });

  it('treats a directory that is gone, and the inside of a git directory, as outside git', async () => {
    const resolver = new WorktreeResolver();
    assert.deepEqual(await resolver.resolve(join(root, 'vanished')), { worktree: null, repo: null });
    assert.deepEqual(await resolver.resolve(join(alpha, '.git')), { worktree: null, repo: null });
  });

  it('reads the branch each worktree has checked out, as git names it', async () => {
    assert.equal(currentBranch(alpha), 'main');
    assert.equal(currentBranch(feature), 'feature', 'a linked worktree reads its own HEAD');
    assert.equal(currentBranch(beta), 'main', 'an unborn branch is still the branch');
    assert.equal(currentBranch(plain), null);
    const detached = join(root, 'trees', 'alpha-detached');
    await git('-C', alpha, 'worktree', 'add', '-q', '--detach', detached);
    const head = (await run(['git', '-C', detached, 'rev-parse', '--short=7', 'HEAD'], { env: gitEnv, timeoutMs: 10_000 })).text().trim();
    assert.equal(currentBranch(detached), head);
  });

  it('anchors a cwd at the nearest directory holding .git', () => {
    assert.equal(gitAnchor(join(alpha, 'src')), alpha);
    assert.equal(gitAnchor(join(feature, 'docs')), feature, 'a linked worktree has a .git file');
    assert.equal(gitAnchor(join(alpha, '.git', 'refs')), join(alpha, '.git', 'refs'), 'inside a git directory git answers for itself');
    assert.equal(gitAnchor(plain), undefined);
    assert.equal(gitAnchor(join(root, 'vanished')), undefined);
  });
});

describe('mainWorktreeFromPorcelain', () => {
  it('takes the first worktree record', () => {
    const output = 'worktree /src/app\0HEAD 1234\0branch refs/heads/main\0\0worktree /src/app-wt\0HEAD 5678\0detached\0\0';
    assert.equal(mainWorktreeFromPorcelain(output), '/src/app');
    assert.equal(mainWorktreeFromPorcelain(''), undefined);
  });
});

describe('mainWorktreeFromCommonDir', () => {
  it('strips the /.git of the usual layout and leaves the others to git', () => {
    assert.equal(mainWorktreeFromCommonDir('/src/app/.git'), '/src/app');
    assert.equal(mainWorktreeFromCommonDir('/.git'), '/');
    assert.equal(mainWorktreeFromCommonDir('/srv/app.git'), undefined);
    assert.equal(mainWorktreeFromCommonDir('/src/super/.git/modules/lib'), undefined);
  });
});

describe('worktreeLabel', () => {
  it('falls back to the basename when the main worktree is unknown', () => {
    assert.equal(worktreeLabel('/x/y/sub', { worktree: '/x/y', repo: null }), 'y/');
  });
});
