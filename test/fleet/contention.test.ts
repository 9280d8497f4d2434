import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LongLivedChild } from '../../src/process/index.js';
import { deliverPending } from '../../src/fleet/index.js';
import { keystrokeInput, openFixture, seedFleet } from './support.js';

const SEND_CHILD = fileURLToPath(new URL('../fixtures/fleet/send-child.js', import.meta.url));

interface Keystroke {
  pid: number;
  op: string;
  pane: string;
  text?: string;
}

async function output(child: LongLivedChild): Promise<string> {
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const exit = await child.exited;
  assert.equal(exit.exitCode, 0, `sender exited with ${exit.exitCode ?? exit.signal}: ${child.stderr().tail.toString()}`);
  return text;
}

describe('two processes sending to one member at once', () => {
  it('serialise their pane input under the lock, and lose no message', async (t) => {
    const { dir, store, broker, locks } = openFixture(t);
    const { fleet, director, alice, bob } = await seedFleet(broker);
    const paneLog = join(dir, 'pane.log');
    writeFileSync(paneLog, '');

    const senders = await Promise.all(
      [
        [alice.memberId, 'from alice'],
        [director.memberId, 'from the director'],
      ].map(([from, text]) => LongLivedChild.start([process.execPath, SEND_CHILD, store.path, paneLog, String(from), String(bob.memberId), String(text)])),
    );
    t.after(() => Promise.all(senders.map((child) => child.stop(100, 'SIGKILL'))));
    const outputs = senders.map((child) => output(child));
    for (const child of senders) child.stdin.end();
    const results = (await Promise.all(outputs)).map((text) => JSON.parse(text) as { messageId: number; diagnostic: string | null });

    const keystrokes = readFileSync(paneLog, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Keystroke);
    assert.ok(keystrokes.length >= 3, 'at least one submission reached the pane');
    assert.ok(keystrokes.every((k) => k.pane === bob.placement!.pane));
    const holders = keystrokes.map((k) => k.pid).filter((pid, i, all) => i === 0 || all[i - 1] !== pid);
    assert.equal(new Set(holders).size, holders.length, `each process typed in one uninterrupted block: ${holders.join(' ')}`);

    // Whatever one attempt could not deliver (a busy lock) stays pending for the next one.
    for (const result of results) {
      if (result.diagnostic) assert.match(result.diagnostic, /pane input remained busy; the next send to member/);
    }
    const record = (op: string, text?: string): Promise<void> => {
      if (op === 'literal') keystrokes.push({ pid: process.pid, op, pane: '', text });
      return Promise.resolve();
    };
    await deliverPending({ broker, locks, recipientId: bob.memberId, fleetId: fleet.fleetId, openPort: (placement) => Promise.resolve(keystrokeInput(placement.pane, record)) });
    for (const { messageId } of results) {
      const message = await broker.showMessage(messageId);
      assert.ok(message.notifiedAt, `message ${messageId} was eventually notified`);
      assert.ok(keystrokes.some((k) => k.op === 'literal' && k.text?.includes(`[drover msg ${messageId} from `)), `message ${messageId} was typed`);
    }
  });
});
