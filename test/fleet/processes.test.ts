import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LongLivedChild, run } from '../../src/process/index.js';
import { createMember, deliverPending, shellPromptLine } from '../../src/fleet/index.js';
import { CLI_PATH } from '../support/cli.js';
import { eventually } from '../support/wait.js';
import { echoRunning, paneHistory, tmuxFleet, type TmuxFleet } from './support.js';

const SEND_CHILD = fileURLToPath(new URL('../fixtures/fleet/tmux-send-child.js', import.meta.url));

/** Collects a child's stdout; `until(text)` resolves once it has appeared. */
function watch(stream: Readable): { text: () => string; until: (needle: string) => Promise<void> } {
  let text = '';
  const waiters: { needle: string; resolve: () => void; reject: (error: Error) => void }[] = [];
  const check = (): void => {
    for (const waiter of [...waiters]) {
      if (!text.includes(waiter.needle)) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    check();
  });
  stream.once('end', () => {
    for (const waiter of waiters.splice(0)) waiter.reject(new Error(`the child ended without printing '${waiter.needle}': '${text}'`));
  });
  return {
    text: () => text,
    until: (needle) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ needle, resolve, reject });
        check();
      }),
  };
}

async function sender(t: { after(fn: () => unknown): void }, s: TmuxFleet, to: number, text: string, mode: 'plain' | 'stall' | 'term') {
  const child = await LongLivedChild.start([process.execPath, SEND_CHILD, s.store.path, s.server.endpoint.socketPath, String(s.directorId), String(to), text, mode]);
  t.after(() => child.stop(100, 'SIGKILL'));
  return { child, output: watch(child.stdout) };
}

async function memberWithPane(s: TmuxFleet, name: string) {
  const created = await createMember(s.runtime, { fleetId: s.fleetId, name, cwd: s.dir });
  await echoRunning(s.server, created.pane);
  return created;
}

// One at a time: every sender must fit the real five-second input budget, and sibling tests
// cold-starting node senders and CLIs at the same moment eat into it.
describe('senders in other processes, into real tmux', () => {
  it('two processes sending to one member at once: both messages delivered, neither lost, lines not interleaved', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await memberWithPane(s, 'bob');
    const senders = await Promise.all(['from the first sender', 'from the second sender'].map((text) => sender(t, s, bob.member.memberId, text, 'plain')));
    for (const { child } of senders) child.stdin.end();
    for (const { child } of senders) assert.equal((await child.exited).exitCode, 0);
    const results = senders.map(({ output }) => JSON.parse(output.text().split('\n').find((line) => line.startsWith('{'))!) as { messageId: number; diagnostic: string | null });
    for (const result of results) if (result.diagnostic) assert.match(result.diagnostic, /pane input remained busy; the next send to member \d+ or the next message wait retries it\.$/);

    // A sender that found the lock busy left its message for the next attempt.
    await deliverPending({ ...s.runtime.notify, recipientId: bob.member.memberId, fleetId: s.fleetId });
    const messages = await Promise.all(results.map(({ messageId }) => s.broker.showMessage(messageId)));
    for (const message of messages) assert.ok(message.notifiedAt, `message ${message.messageId} was notified`);
    // The last Enter was just sent: tmux shows what the pane printed back a moment later.
    await eventually("both messages' lines to arrive whole", async () => {
      const history = await paneHistory(s.server, bob.pane);
      return messages.every((message) => history.includes(shellPromptLine(message, { escapeLead: true })));
    });
  });

  it('a sender SIGKILLed between its first keystroke and the stamp leaves the message pending; the next message wait delivers it', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await memberWithPane(s, 'bob');
    const { child, output } = await sender(t, s, bob.member.memberId, 'interrupted delivery', 'stall');
    child.stdin.end();
    await output.until('typed\n');
    process.kill(child.pid, 'SIGKILL');
    assert.equal((await child.exited).signal, 'SIGKILL');
    const [pending] = await s.broker.pollMessages(bob.member.memberId);
    assert.equal(pending?.text, 'interrupted delivery');
    assert.equal(pending.notifiedAt, null, 'not stamped');

    const waited = await run([process.execPath, CLI_PATH, 'message', 'wait', '--member', String(s.directorId), '--timeout-ms', '3000', '--json'], {
      env: { PATH: process.env.PATH, HOME: s.dir, DROVER_DB: s.store.path, TMUX: `${s.server.endpoint.socketPath},0,0` },
      timeoutMs: 30_000,
    });
    assert.equal(waited.exitCode, 5, `no message came for the Director itself: ${waited.stderrText()}`);
    const report = JSON.parse(waited.text()) as { timed_out: boolean; notified: number[]; diagnostics: string[] };
    assert.deepEqual([report.timed_out, report.notified, report.diagnostics], [true, [pending.messageId], []]);
    const delivered = await s.broker.showMessage(pending.messageId);
    assert.ok(delivered.notifiedAt);
    assert.ok((await paneHistory(s.server, bob.pane)).includes(shellPromptLine(delivered, { escapeLead: true })));
  });

  it('a SIGTERM received while typing takes effect only after the notification is stamped', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await memberWithPane(s, 'bob');
    const { child, output } = await sender(t, s, bob.member.memberId, 'finish me first', 'term');
    child.stdin.end();
    await output.until('typed\n');
    process.kill(child.pid, 'SIGTERM');
    assert.equal((await child.exited).signal, 'SIGTERM', 'the deferred signal still ended the process');
    const [message] = await s.broker.pollMessages(bob.member.memberId);
    assert.ok(message?.notifiedAt, 'notified_at was stamped before the process died');
    assert.doesNotMatch(output.text(), /after/, 'nothing ran after the span ended');
  });
});
