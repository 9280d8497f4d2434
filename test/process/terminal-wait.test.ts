import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { foregroundWait } from '../../src/process/index.js';

interface FakeProcess {
  name: string;
  group: number;
  terminalGroup: number;
  /** Each task's call line; null for one this user may not read. */
  tasks: Record<number, string | null>;
}

/** A /proc of its own: each process by its stat fields (state, ppid, pgrp, session, tty, tpgid) and each task's call line. */
function fakeProc(processes: Record<number, FakeProcess>): string {
  const root = mkdtempSync(join(tmpdir(), 'drover-proc-'));
  for (const [pid, process] of Object.entries(processes)) {
    mkdirSync(join(root, pid, 'task'), { recursive: true });
    writeFileSync(join(root, pid, 'stat'), `${pid} (${process.name}) S 1 ${process.group} ${process.group} 34816 ${process.terminalGroup} 4194304 0 0\n`);
    for (const [task, line] of Object.entries(process.tasks)) {
      mkdirSync(join(root, pid, 'task', task));
      if (line !== null) writeFileSync(join(root, pid, 'task', task, 'syscall'), `${line}\n`);
    }
  }
  // /proc holds more than processes.
  writeFileSync(join(root, 'uptime'), '1.0 1.0\n');
  return root;
}

describe('foregroundWait', () => {
  const roots: string[] = [];
  const procOf = (...args: Parameters<typeof fakeProc>) => {
    const root = fakeProc(...args);
    roots.push(root);
    return root;
  };
  after(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

  // The pane's shell (100) runs a job whose group 200 holds the terminal: a script waiting for
  // its sleep. 300 is another group on the terminal that reads it, in the background.
  const job = (sleepCall: string | null, extraTask?: string): Record<number, FakeProcess> => ({
    100: { name: 'bash', group: 100, terminalGroup: 200, tasks: { 100: '61 0xffffffffffffffff 0x7ffc 0x2 0x0 0x0 0x0 0x7ffc 0x7f00' } },
    200: { name: 'sh', group: 200, terminalGroup: 200, tasks: { 200: '61 0xffffffffffffffff 0x7ffc 0x0 0x0 0x0 0x0 0x7ffc 0x7f00' } },
    201: { name: 'sleep (1)', group: 200, terminalGroup: 200, tasks: extraTask === undefined ? { 201: sleepCall } : { 201: sleepCall, 202: extraTask } },
    300: { name: 'cat', group: 300, terminalGroup: 200, tasks: { 300: '0 0x0 0x7ffc 0x20000 0x0 0x0 0x0 0x7ffc 0x7f00' } },
  });

  it('names the calls when every thread of every process in the foreground group sleeps or waits for a child', async () => {
    const procRoot = procOf(job('230 0x0 0x0 0x7ffd 0x7ffd 0x0 0x0 0x7ffd 0x7f00'));
    assert.deepEqual(await foregroundWait(100, { procRoot, arch: 'x64' }), ['clock_nanosleep', 'wait4']);
    const arm = procOf(job('115 0x0 0x0 0x7ffd 0x7ffd 0x0 0x0 0x7ffd 0x7f00'));
    for (const pid of ['100', '200']) writeFileSync(join(arm, pid, 'task', pid, 'syscall'), '260 0xffffffffffffffff 0x0 0x0 0x0 0x0 0x0 0x0 0x0\n');
    assert.deepEqual(await foregroundWait(100, { procRoot: arm, arch: 'arm64' }), ['clock_nanosleep', 'wait4']);
  });

  it('cannot tell, and says nothing, when a thread reads, polls, runs or is out of sight', async () => {
    const cases: [string, Parameters<typeof job>][] = [
      ['a read', ['0 0x0 0x7ffc 0x400 0x0 0x0 0x0 0x7ffc 0x7f00']],
      ['a poll', ['7 0x7ffc 0x1 0xffffffff 0x0 0x0 0x0 0x7ffc 0x7f00']],
      ['running', ['running']],
      ['outside any call', ['-1 0x7ffc 0x7f00']],
      ['a call line it may not read', [null]],
      ['a second thread in epoll_wait', ['230 0x0 0x0 0x7ffd 0x7ffd 0x0 0x0 0x7ffd 0x7f00', '232 0x3 0x7ffc 0x400 0xffffffff 0x0 0x0 0x7ffc 0x7f00']],
    ];
    for (const [what, args] of cases) assert.equal(await foregroundWait(100, { procRoot: procOf(job(...args)), arch: 'x64' }), undefined, what);
  });

  it('cannot tell without a table for the architecture, a terminal, or the process', async () => {
    const procRoot = procOf(job('230 0x0 0x0 0x7ffd 0x7ffd 0x0 0x0 0x7ffd 0x7f00'));
    assert.equal(await foregroundWait(100, { procRoot, arch: 'ia32' }), undefined, 'no table for ia32');
    assert.equal(await foregroundWait(999, { procRoot, arch: 'x64' }), undefined, 'no such process');
    const detached = procOf({ 100: { name: 'daemon', group: 100, terminalGroup: -1, tasks: { 100: '230 0x0' } } });
    assert.equal(await foregroundWait(100, { procRoot: detached, arch: 'x64' }), undefined, 'no terminal');
    assert.equal(await foregroundWait(100, { procRoot: join(procRoot, 'absent'), arch: 'x64' }), undefined, 'no /proc');
  });
});
