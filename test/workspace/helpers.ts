import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { WorkspaceError, parseWorkspace, type WorkspaceParseOptions, type WorkspaceDocument } from '../../src/workspace/index.js';

/** The repository root, from the compiled test's location (<out>/test/workspace/). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const CORPUS_DIR = `${REPO_ROOT}test/fixtures/tmuxp-corpus`;
export const HOME = '/home/drover-test';
export const BASE = '/srv/project';

export function parseYaml(text: string, options: Partial<WorkspaceParseOptions> = {}): WorkspaceDocument {
  return parseWorkspace(text, { format: 'yaml', baseDir: BASE, homeDir: HOME, ...options });
}

export function parseJson(value: unknown, options: Partial<WorkspaceParseOptions> = {}): WorkspaceDocument {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return parseWorkspace(text, { format: 'json', baseDir: BASE, homeDir: HOME, ...options });
}

/** Runs `fn`, asserts it throws a WorkspaceError, and returns it for further checks. */
export function rejection(fn: () => unknown): WorkspaceError {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof WorkspaceError, `expected a WorkspaceError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected the workspace to be rejected');
}

/** Asserts the rejection's code, path and (optionally) unsupported feature. */
export function assertRejected(
  fn: () => unknown,
  expected: { code: WorkspaceError['code']; path: string; feature?: string },
): WorkspaceError {
  const error = rejection(fn);
  assert.equal(error.code, expected.code, error.message);
  assert.equal(error.path, expected.path, error.message);
  if (expected.feature !== undefined) assert.equal(error.unsupportedFeature, expected.feature, error.message);
  // The message names the path, unless the problem is the document as a whole (`$`).
  assert.equal(error.message, expected.path === '$' ? error.reason : `${expected.path}: ${error.reason}`);
  return error;
}
