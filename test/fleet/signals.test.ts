import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LongLivedChild } from '../../src/process/index.js';
import { DEFERRED_SIGNALS } from '../../src/fleet/index.js';
import { fakeSpans, tempDirectory } from './support.js';

const SPAN_CHILD = fileURLToPath(new URL('../fixtures/fleet/span-child.js', import.meta.url));

function collect(stream: Readable): { text: () => string; ready: Promise<void> } {
  let text = '';
  const ready = new Promise<void>((resolve, reject) => {
    stream.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.includes('ready\n')) resolve();
    });
    stream.once('end', () => reject(new Error(`child ended before it was ready: '${text}'`)));
  });
  return { text: () => text, ready };
}

describe('termination spans (in process)', () => {
  it('listens for SIGINT, SIGTERM and SIGHUP only while a span is open', async () => {
    const { host, spans } = fakeSpans();
    assert.deepEqual(DEFERRED_SIGNALS, ['SIGINT', 'SIGTERM', 'SIGHUP']);
    for (const signal of DEFERRED_SIGNALS) assert.equal(host.listening(signal), 0);
    const value = await spans.run(() => {
      for (const signal of DEFERRED_SIGNALS) assert.equal(host.listening(signal), 1);
      return 7;
    });
    assert.equal(value, 7);
    for (const signal of DEFERRED_SIGNALS) assert.equal(host.listening(signal), 0);
    assert.deepEqual(host.kills, [], 'nothing to deliver');
  });

  it('delivers the first deferred signal only when the outermost span ends', () => {
    const { host, spans } = fakeSpans();
    spans.enter();
    spans.enter();
    assert.equal(host.listening('SIGTERM'), 1, 'nested spans share one listener');
    host.raise('SIGHUP');
    host.raise('SIGTERM');
    assert.equal(spans.deferred, 'SIGHUP');
    spans.exit();
    assert.deepEqual(host.kills, [], 'the inner span ending delivers nothing');
    assert.equal(spans.depth, 1);
    spans.exit();
    assert.deepEqual(host.kills, [{ pid: host.pid, signal: 'SIGHUP' }]);
    assert.equal(host.listening('SIGHUP'), 0, 'listeners are gone before the signal is raised again');
    assert.equal(spans.deferred, undefined);
  });

  it('delivers after a failing body too, and refuses an unbalanced exit', async () => {
    const { host, spans } = fakeSpans();
    await assert.rejects(
      spans.run(() => {
        host.raise('SIGINT');
        throw new Error('span body failed');
      }),
      /span body failed/,
    );
    assert.deepEqual(host.kills, [{ pid: host.pid, signal: 'SIGINT' }]);
    assert.throws(() => spans.exit(), /exited more often than entered/);
  });
});

describe('termination spans (a real process)', () => {
  it('lets a SIGTERMed process finish its span work, then die of SIGTERM', async (t) => {
    const stamp = join(tempDirectory(t), 'stamp');
    const child = await LongLivedChild.start([process.execPath, SPAN_CHILD, stamp, 'inside']);
    t.after(() => child.stop(100, 'SIGKILL'));
    const output = collect(child.stdout);
    await output.ready;
    process.kill(child.pid, 'SIGTERM');
    const exit = await child.exited;
    assert.equal(exit.signal, 'SIGTERM');
    assert.equal(readFileSync(stamp, 'utf8'), 'span work finished after SIGTERM\n');
    assert.match(output.text(), /inner span ended/);
    assert.doesNotMatch(output.text(), /still alive/, 'the signal took effect as the outermost span ended');
  });

  it('dies at once outside a span, leaving no stamp', async (t) => {
    const stamp = join(tempDirectory(t), 'stamp');
    const child = await LongLivedChild.start([process.execPath, SPAN_CHILD, stamp, 'outside']);
    t.after(() => child.stop(100, 'SIGKILL'));
    await collect(child.stdout).ready;
    process.kill(child.pid, 'SIGTERM');
    assert.equal((await child.exited).signal, 'SIGTERM');
    assert.equal(existsSync(stamp), false);
  });
});
