import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { zombieExitStatus } from '../../src/process/index.js';

/**
 * Starts `sh -c SCRIPT` under a parent that never reaps it (an exec'd sleep), and gives its pid.
 * The script runs only once its parent is that sleep: a shell may reap a child that ended
 * before the shell exec'd.
 */
async function unreapedChild(script: string): Promise<{ pid: number; stop: () => void }> {
  const afterExec = `while [ "$(cat /proc/$PPID/comm)" != sleep ]; do :; done; ${script}`;
  const parent = spawn('sh', ['-c', `sh -c '${afterExec}' & echo $!; exec sleep 30`], { stdio: ['ignore', 'pipe', 'ignore'] });
  const [line] = (await once(parent.stdout, 'data')) as [Buffer];
  return { pid: Number(line.toString().trim()), stop: () => parent.kill() };
}

async function untilZombie(pid: number): Promise<void> {
  for (let tries = 0; tries < 200; tries += 1) {
    if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ')) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${pid} never became a zombie`);
}

describe('zombieExitStatus', { skip: process.platform !== 'linux' && 'reads Linux’s /proc' }, () => {
  it('reads the status an exited, unreaped child will hand its parent', async () => {
    const child = await unreapedChild('exit 5');
    try {
      await untilZombie(child.pid);
      assert.equal(await zombieExitStatus(child.pid), 5);
    } finally {
      child.stop();
    }
  });

  it('answers null for a running process, one ended by a signal, and a pid that is gone', async () => {
    assert.equal(await zombieExitStatus(process.pid), null, 'this process is running');
    const signalled = await unreapedChild('kill -TERM $$');
    try {
      await untilZombie(signalled.pid);
      assert.equal(await zombieExitStatus(signalled.pid), null);
    } finally {
      signalled.stop();
    }
    assert.equal(await zombieExitStatus(2 ** 22 + 1), null, 'above the kernel’s largest pid');
  });
});
