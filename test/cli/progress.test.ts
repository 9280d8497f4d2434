import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { CliIO } from '../../src/cli/index.js';
import { progressOn } from '../../src/cli/progress.js';
import { loadStatus } from '../../src/cli/commands/workspace.js';
import { parseWorkspace, planWorkspace } from '../../src/workspace/index.js';

/** A CliIO whose stderr is collected; `columns` makes it a terminal of that width. */
function stderrIO(columns?: number): { io: CliIO; written: () => string } {
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  const io: CliIO = {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
    env: {},
    cwd: '/',
    stdinIsTTY: false,
    ...(columns === undefined ? {} : { stderrTerminal: { columns } }),
    signal: new AbortController().signal,
  };
  return { io, written: () => Buffer.concat(chunks).toString() };
}

describe('progress on stderr', () => {
  it('rewrites one status line in place, keeps notes, and leaves a clean line at the end', () => {
    const { io, written } = stderrIO(40);
    const progress = progressOn(io, {});
    progress.status('building window 1/3 …');
    progress.status('building window 1/3 …');
    progress.status('focusing');
    progress.note('claude: hooks installed');
    progress.status('done soon');
    progress.end();
    progress.end();
    assert.equal(
      written(),
      '\rbuilding window 1/3 …' + '\rfocusing             ' + '\r        \r' + 'claude: hooks installed\n' + '\rdone soon' + '\r         \r',
    );
  });

  it('keeps a status within one row of the terminal', () => {
    const { io, written } = stderrIO(10);
    progressOn(io, {}).status('loading "a-long-session-name"');
    assert.equal(written(), '\rloading …');
  });

  it('says nothing with --json or when stderr is not a terminal', () => {
    for (const [columns, json] of [
      [80, true],
      [undefined, false],
    ] as const) {
      const { io, written } = stderrIO(columns);
      const progress = progressOn(io, { json });
      progress.status('building');
      progress.note('installed');
      progress.end();
      assert.equal(written(), '', `columns ${columns}, json ${json}`);
    }
  });

  it('names the window of how many a load step builds, and the session for its own settings', () => {
    const plan = planWorkspace(parseWorkspace(JSON.stringify({ session_name: 'dev', windows: [{ panes: ['echo a', 'echo b'] }, { window_name: 'two' }] }), { format: 'json', baseDir: '/srv', homeDir: '/home/user' }));
    const statuses = plan.steps.map((step) => loadStatus(plan, step));
    assert.equal(statuses[0], 'loading "dev": building window 1/2 …');
    assert.ok(statuses.includes('loading "dev": sending commands to window 1/2 …'), statuses.join('\n'));
    assert.ok(statuses.includes('loading "dev": building window 2/2 …'), statuses.join('\n'));
  });
});
