/**
 * One deadline per submission, against a real tmux server that stops answering (SIGSTOP) in the
 * middle of one: every multiplexer command of a submission runs under the submission's own
 * five-second transport budget, so the whole attempt ends within it plus the runner's bound for
 * killing and reaping the tmux client that was waiting.
 */
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { TRANSPORT_BUDGET_MS, createMember, deliverPending, shellPromptLine, type DeliveryOptions, type PaneInput, type PortOpener } from '../../src/fleet/index.js';
import { eventually } from '../support/wait.js';
import { echoRunning, paneHistory, paneProgram, screenAgentRules, tempDirectory, tmuxFleet, type TmuxFleet } from './support.js';

/** The runner's bound for killing and reaping a client that ran out of time, plus scheduling slack. */
const CLEANUP_MS = 500 + 250;

/** Stops the fleet's tmux server; the test resumes it (SIGCONT) whatever happens. */
async function stopper(t: { after(fn: () => unknown): void }, s: TmuxFleet): Promise<{ stop(): void; resume(): void }> {
  const { pid } = await s.server.incarnation();
  let stopped = false;
  const resume = (): void => {
    if (stopped) process.kill(pid, 'SIGCONT');
    stopped = false;
  };
  t.after(resume);
  return {
    stop: () => {
      process.kill(pid, 'SIGSTOP');
      stopped = true;
    },
    resume,
  };
}

/** The runtime's pane input, with `after` run once a call of the given kind has gone through. */
function watching(openPort: PortOpener, kind: 'type' | 'read', after: () => void): PortOpener {
  let done = false;
  return async (placement, deadline) => {
    const input = await openPort(placement, deadline);
    const watched: PaneInput = {
      ...input,
      channel: (until) => {
        const channel = input.channel(until);
        const once = async <T>(value: T): Promise<T> => {
          if (!done) {
            done = true;
            after();
          }
          return value;
        };
        return kind === 'type' ? { ...channel, type: async (text) => once(await channel.type(text)) } : { ...channel, read: async () => once(await channel.read()) };
      },
    };
    return watched;
  };
}

/** One delivery attempt, timed from its call, which is where its transport budget starts. */
async function timed(options: DeliveryOptions): Promise<{ elapsed: number; attempt: Awaited<ReturnType<typeof deliverPending>> }> {
  const started = performance.now();
  const attempt = await deliverPending(options);
  return { elapsed: performance.now() - started, attempt };
}

// One at a time: each attempt is measured against real time, and siblings would eat into it.
describe('a submission whose tmux server stops answering', () => {
  it('to a shell: stopped once the line is typed, Enter gives up at the deadline and the message stays pending', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    // Until cat runs, the pane's shell starting it is taken for one at its prompt, and the
    // ctrl+c that leads a line there would end it, and the pane with it.
    await echoRunning(s.server, bob.pane);
    const message = await s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text: 'never reaches Enter' });
    const server = await stopper(t, s);
    const { elapsed, attempt } = await timed({ ...s.runtime.notify, openPort: watching(s.runtime.openPort, 'type', server.stop), recipientId: bob.member.memberId, fleetId: s.fleetId });
    server.resume();
    t.diagnostic(`stopped after the line: the attempt took ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < TRANSPORT_BUDGET_MS + CLEANUP_MS, `the attempt took ${Math.round(elapsed)} ms on a ${TRANSPORT_BUDGET_MS} ms budget`);
    assert.deepEqual(attempt.notified, []);
    assert.match(attempt.diagnostic?.reason ?? '', /the line was typed into pane %\d+ but Enter failed; it may have been submitted/);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null, 'not stamped: the next attempt retries it');
  });

  it('to a shell: paused for a while, the submission still goes in within the budget', async (t) => {
    const s = await tmuxFleet(t);
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await echoRunning(s.server, bob.pane);
    const message = await s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text: 'late but whole' });
    const server = await stopper(t, s);
    const pause = (): void => {
      server.stop();
      void delay(1500).then(server.resume);
    };
    const { elapsed, attempt } = await timed({ ...s.runtime.notify, openPort: watching(s.runtime.openPort, 'type', pause), recipientId: bob.member.memberId, fleetId: s.fleetId });
    t.diagnostic(`paused 1.5 s after the line: the attempt took ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < TRANSPORT_BUDGET_MS + CLEANUP_MS, `the attempt took ${Math.round(elapsed)} ms on a ${TRANSPORT_BUDGET_MS} ms budget`);
    assert.deepEqual([attempt.notified, attempt.diagnostic], [[message.messageId], null]);
    const line = shellPromptLine(await s.broker.showMessage(message.messageId), { escapeLead: true });
    await eventually('the line to reach the pane', async () => (await paneHistory(s.server, bob.pane)).includes(line));
  });

  it('to a coding agent: stopped after its screen was read, the paste gives up at the deadline and nothing is stamped', async (t) => {
    // A pane whose screen the test agent's rules read as an empty composer.
    const s = await tmuxFleet(t, { shell: paneProgram(tempDirectory(t), 'composer', `sh -c 'printf "phase composer\\ncomposer \\"\\"\\n"; exec cat >/dev/null'`) });
    const bob = await createMember(s.runtime, { fleetId: s.fleetId, name: 'bob', cwd: s.dir });
    await eventually('the composer to show', async () => (await paneHistory(s.server, bob.pane)).includes('composer ""'));
    const message = await s.broker.sendMessage({ from: s.directorId, to: bob.member.memberId, text: 'never pasted' });
    const server = await stopper(t, s);
    const { elapsed, attempt } = await timed({
      ...s.runtime.notify,
      agentRules: () => screenAgentRules,
      openPort: watching(s.runtime.openPort, 'read', server.stop),
      recipientId: bob.member.memberId,
      fleetId: s.fleetId,
    });
    server.resume();
    t.diagnostic(`stopped after the first screen read: the attempt took ${Math.round(elapsed)} ms`);
    assert.ok(elapsed < TRANSPORT_BUDGET_MS + CLEANUP_MS, `the attempt took ${Math.round(elapsed)} ms on a ${TRANSPORT_BUDGET_MS} ms budget`);
    assert.deepEqual(attempt.notified, []);
    assert.notEqual(attempt.diagnostic, null);
    assert.equal((await s.broker.showMessage(message.messageId)).notifiedAt, null);
  });
});
