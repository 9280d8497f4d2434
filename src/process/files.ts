import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';

export interface WriteOptions {
  /**
   * Sync the file to disk before it is moved into place (the default). A cache that can be
   * rebuilt goes without: a crash may then leave it empty, never torn, and a reader takes an
   * empty file as none.
   */
  readonly durable?: boolean;
}

/**
 * Writes `text` to a new, hidden file beside `target` (the same directory, so renaming or
 * linking it onto `target` is atomic), synced to disk unless `durable` is false, with `mode`;
 * returns its path. The caller moves it into place or removes it.
 */
export function writeFileBeside(target: string, text: string, mode = 0o600, options: WriteOptions = {}): string {
  const temporary = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const fd = openSync(temporary, 'wx', mode);
  try {
    writeFileSync(fd, text);
    if (options.durable ?? true) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(temporary, { force: true });
    throw error;
  }
  closeSync(fd);
  return temporary;
}

/**
 * Writes `text` to `path` in one rename, so a reader sees the old file or the new one, never a
 * part (another process may read it at any time, or this one be killed mid-write). The
 * directory is made (0700) when missing; the file is 0600.
 */
export function writeFileAtomic(path: string, text: string, options: WriteOptions = {}): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = writeFileBeside(path, text, 0o600, options);
  try {
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Common error codes of file access, in words. */
const ERRNO_WORDS: Readonly<Record<string, string>> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of its path is not a directory',
  ELOOP: 'too many symbolic links',
};

/** The reason a file could not be read, in words where the error code is a common one. */
export function errnoReason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return 'error';
  return ERRNO_WORDS[code] === undefined ? code : `${ERRNO_WORDS[code]}, ${code}`;
}
