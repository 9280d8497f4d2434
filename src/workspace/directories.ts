import { mkdir, stat } from 'node:fs/promises';
import type { WorkspaceDocument } from './document.js';
import { WorkspaceError, combineProblems } from './errors.js';
import { indexPath } from './tree.js';

/** A start directory of the workspace and the key that declares it. */
export interface DeclaredDirectory {
  readonly path: string;
  /** Structural path of the declaring key, e.g. `windows[1].start_directory`. */
  readonly source: string;
}

/**
 * Every distinct start directory of the document, each with the first key that declares it.
 * Inherited directories are attributed to the level that set them.
 */
export function declaredDirectories(doc: WorkspaceDocument): DeclaredDirectory[] {
  const found = new Map<string, string>();
  const note = (path: string | null, source: string): void => {
    if (path !== null && !found.has(path)) found.set(path, source);
  };
  note(doc.startDirectory, 'start_directory');
  doc.windows.forEach((window, w) => {
    const windowPath = indexPath('windows', w);
    note(window.startDirectory, window.startDirectory === doc.startDirectory ? 'start_directory' : `${windowPath}.start_directory`);
    window.panes.forEach((pane, p) => {
      const own = pane.startDirectory !== window.startDirectory;
      note(pane.startDirectory, own ? `${indexPath(`${windowPath}.panes`, p)}.start_directory` : `${windowPath}.start_directory`);
    });
  });
  return [...found].map(([path, source]) => ({ path, source }));
}

/**
 * Checks that every start directory exists before anything is built (tmux would otherwise
 * fail half-way through a load). Returns the missing ones when `createMissing` is set, for
 * the plan to create; otherwise a missing directory is a problem that offers --create-dirs.
 * Something that exists but is not a directory is always a problem.
 */
export async function checkDirectories(doc: WorkspaceDocument, { createMissing = false } = {}): Promise<DeclaredDirectory[]> {
  const problems: WorkspaceError[] = [];
  const missing: DeclaredDirectory[] = [];
  for (const declared of declaredDirectories(doc)) {
    const kind = await directoryKind(declared);
    if (kind === 'directory') continue;
    if (kind === 'other') {
      problems.push(new WorkspaceError('the start directory is not a directory (or lies under a file)', { path: declared.source, code: 'value' }));
    } else if (createMissing) {
      missing.push(declared);
    } else {
      problems.push(
        new WorkspaceError('the start directory does not exist; pass --create-dirs to create it (createDirectories in the library)', {
          path: declared.source,
          code: 'missing_directory',
        }),
      );
    }
  }
  if (problems.length > 0) throw combineProblems(problems);
  return missing;
}

async function directoryKind({ path, source }: DeclaredDirectory): Promise<'directory' | 'other' | 'missing'> {
  try {
    return (await stat(path)).isDirectory() ? 'directory' : 'other';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    // A file where a parent directory should be: nothing can be created there.
    if (code === 'ENOTDIR') return 'other';
    throw new WorkspaceError(`cannot check the start directory (${code ?? 'error'})`, { path: source, code: 'io', cause: error });
  }
}

/** Creates the directories a plan lists (with any missing parents); existing ones are left alone. */
export async function createDirectories(directories: readonly DeclaredDirectory[]): Promise<void> {
  for (const directory of directories) await mkdir(directory.path, { recursive: true });
}
