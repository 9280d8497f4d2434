import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  AGENT_STATE_OPTION,
  LEGACY_AGENT_STATE_OPTION,
  parseAgentStateValue,
  writeAgentHookState,
} from '../../src/agents/index.js';
import {
  READY_PROBE,
  paneDeliver,
  paneMap,
  paneQuestions,
  paneReady,
  renderReadiness,
} from '../../src/panes/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { useTestServer } from '../support/tmux.js';
import { QUESTIONS } from '../fixtures/fake-agent.js';
import { FAKE_AGENT_INDICATORS } from './fixtures.js';
import { eventually, keyOf, portOn, screenOf, screenShows, startFakeAgent } from './live.js';

async function agentOption(pane: Pane): Promise<string | undefined> {
  return (await pane.options().getOrUndefined(AGENT_STATE_OPTION, { inherited: false }))?.as('string');
}

/** Each state change runs a hook, a cold node start of seconds under load, one after another. */
function stateBecomes(pane: Pane, state: string): Promise<string> {
  return eventually(
    `${pane.id} to report ${state}`,
    async () => {
      const value = await agentOption(pane);
      return value?.startsWith(`${state}:`) ? value : undefined;
    },
    60_000,
  );
}

async function submit(pane: Pane, text: string): Promise<void> {
  await pane.sendText(text);
  await pane.sendKeys(['Enter']);
}

describe('readiness against real panes', () => {
  const live = useTestServer();
  let shell: Pane;
  let booting: Pane;
  let composer: Pane;
  let dialog: Pane;

  before(async () => {
    const { server } = live;
    [shell, booting, composer, dialog] = await Promise.all([
      server.newSession({ command: ['sh'], env: { PS1: 'shell$ ' }, receipt: true }).then(async ({ pane }) => (await screenShows(pane, 'shell$'), pane)),
      startFakeAgent(server, ['--boot-ms', '60000'], { waitFor: 'Starting fake agent' }),
      startFakeAgent(server),
      startFakeAgent(server, ['--trust-dialog'], { waitFor: 'Do you trust' }),
    ]);
  });

  it('reads a shell pane as a shell and types nothing into it', async () => {
    const report = await paneReady(portOn(live.server), shell.id);
    assert.equal(report.state, 'shell');
    assert.equal(report.reason, 'shell_foreground');
    assert.equal(report.snippet, 'shell$\n');
    assert.ok(!(await screenOf(shell)).includes(READY_PROBE));
  });

  it('reads a TUI that is still starting as booting', async () => {
    const report = await paneReady(portOn(live.server), booting.id);
    assert.equal(report.state, 'booting');
    assert.equal(report.reason, 'screen_changing');
    assert.match(report.snippet, /Starting fake agent… \d+\n$/);
    assert.equal(renderReadiness(report, booting.id, 'work'), `booting\npane: ${booting.id}\nwhy: the screen is still changing\nserver: work\n--- last 20 lines ---\n${report.snippet}`);
  });

  it('reads a composer as ready and leaves it empty', async () => {
    const report = await paneReady(portOn(live.server), composer.id);
    assert.deepEqual([report.state, report.reason, report.snippet], ['ready', 'probe_echoed', '']);
    await eventually('the probe to be cleared', async () => ((await screenOf(composer)).includes(READY_PROBE) ? undefined : true));
  });

  it('brings a pane out of copy-mode before probing it, so the probe reaches its program and is erased again', async () => {
    const pane = await startFakeAgent(live.server);
    await pane.copyMode();
    assert.equal(await pane.inMode(), true);
    const report = await paneReady(portOn(live.server), pane.id);
    assert.deepEqual([report.state, report.reason], ['ready', 'probe_echoed'], report.detail);
    assert.equal(await pane.inMode(), false);
    await eventually('the probe to be cleared', async () => ((await screenOf(pane)).includes(READY_PROBE) ? undefined : true));
  });

  it('reads a dialog that swallows input as parked, with the dialog as snippet', async () => {
    const report = await paneReady(portOn(live.server), dialog.id);
    assert.equal(report.state, 'parked');
    assert.match(report.snippet, /^Do you trust the files in this folder\?\n\n❯ 1\. Yes, proceed\n/);
  });
});

describe('delivery into the fake agent', () => {
  const live = useTestServer();
  const prompt = 'Read /tmp/prompts/a-prompt-whose-path-is-much-longer-than-this-narrow-pane-is-wide.md and execute it.';

  it('delivers a prompt longer than the pane is wide into a pane left in copy-mode', async () => {
    const pane = await startFakeAgent(live.server, ['--busy-ms', '2000'], { width: 30, hook: true });
    await stateBecomes(pane, 'idle');
    await pane.copyMode();
    assert.equal(await pane.inMode(), true);
    const warnings: string[] = [];
    const receipt = await paneDeliver(portOn(live.server), pane.id, prompt, { onWarning: (message) => warnings.push(message) });
    assert.deepEqual([receipt.status, receipt.evidence, receipt.attempts], ['submitted', 'composer_cleared', 1], receipt.reason);
    assert.deepEqual(warnings, []);
    assert.equal(await pane.inMode(), false);
    // The agent's own hooks report the turn: active while busy, idle once it replied.
    await stateBecomes(pane, 'active');
    const screen = await screenShows(pane, '● Done.');
    assert.ok(screen.replace(/\s/g, '').includes(`>${prompt}`.replace(/\s/g, '')), screen);
    await stateBecomes(pane, 'idle');
  });

  it('fails on a parked pane, with the screen, having typed nothing and without retrying', async () => {
    const pane = await startFakeAgent(live.server, ['--trust-dialog'], { waitFor: 'Do you trust' });
    const warnings: string[] = [];
    const receipt = await paneDeliver(portOn(live.server), pane.id, prompt, { onWarning: (message) => warnings.push(message) });
    assert.equal(receipt.status, 'failed');
    assert.equal(receipt.typed, false);
    assert.match(receipt.snippet, /Do you trust the files/);
    assert.deepEqual(warnings, []);
    assert.ok(!(await screenOf(pane)).includes(READY_PROBE), 'the probe was erased');
  });
});

describe('question sweep over fake agents', () => {
  const live = useTestServer();

  /** What a hook would write; set directly here so the sweep test does not wait on hook processes. */
  async function setState(pane: Pane, state: string): Promise<void> {
    await pane.options().set(AGENT_STATE_OPTION, `${state}:${Math.floor(Date.now() / 1000)}`);
  }

  function answerFor(kind: string): string {
    const answer = QUESTIONS[kind]!.answer;
    if (answer === 'line') return 'main';
    return answer === 'any-key' ? 'x' : answer.keys[0]!;
  }

  it('reports every indicator class and skip reason', async () => {
    const { server } = live;
    const [asker, ruled, boxed, busy] = await Promise.all([
      startFakeAgent(server, ['--busy-ms', '100']),
      startFakeAgent(server, ['--busy-ms', '100', '--style', 'rule'], { waitFor: '────' }),
      startFakeAgent(server, ['--busy-ms', '100']),
      startFakeAgent(server, ['--busy-ms', '600000']),
    ]);
    await Promise.all([submit(ruled!, 'hello'), submit(boxed!, 'hello'), submit(busy!, 'hello')]);
    await Promise.all([screenShows(ruled!, '● Done.'), screenShows(boxed!, '● Done.'), screenShows(busy!, 'Working…')]);
    await Promise.all([setState(ruled!, 'idle'), setState(boxed!, 'idle'), setState(busy!, 'active')]);

    const found: Record<string, string> = {};
    for (const kind of Object.keys(QUESTIONS)) {
      const marker = QUESTIONS[kind]!.lines.at(-1);
      await submit(asker!, `please ask:${kind}`);
      await eventually(`the ${kind} question`, async () => {
        const screen = await screenOf(asker!);
        return (marker === undefined ? screen.trim() === '' : screen.includes(marker)) ? true : undefined;
      });
      await setState(asker!, 'waiting');
      const sweep = await paneQuestions(portOn(server), { kind: 'all' });
      const match = sweep.matches.find((row) => row.pane === asker!.id);
      found[kind] = match?.indicator ?? sweep.skipped.find((row) => row.pane === asker!.id)!.reason;
      if (match) assert.equal(match.agent_state, 'waiting');
      const reasons = new Map(sweep.skipped.map((row) => [row.pane, row.reason]));
      assert.equal(reasons.get(ruled!.id), 'turn_boundary');
      assert.equal(reasons.get(boxed!.id), 'no_indicator');
      assert.ok(!reasons.has(busy!.id) && !sweep.matches.some((row) => row.pane === busy!.id), 'discovery leaves active agents out');

      await asker!.sendText(answerFor(kind));
      if (QUESTIONS[kind]!.answer === 'line') await asker!.sendKeys(['Enter']);
      await eventually(`the answer to ${kind}`, async () => {
        const screen = await screenOf(asker!);
        const back = screen.includes('╭') && !screen.includes('Working…') && (marker === undefined || !screen.includes(marker));
        return back ? true : undefined;
      });
      await setState(asker!, 'idle');
    }
    assert.deepEqual(found, { ...FAKE_AGENT_INDICATORS, blank: 'blank_capture' });

    const port = portOn(server);
    const named = await paneQuestions(port, { kind: 'panes', panes: [busy!.id, '%9999', boxed!.id] });
    assert.deepEqual(named, {
      matches: [],
      skipped: [
        { pane: busy!.id, paneKey: await keyOf(port, busy!.id), reason: 'state_changed' },
        { pane: '%9999', paneKey: await keyOf(port, '%9999'), reason: 'capture_failed' },
        { pane: boxed!.id, paneKey: await keyOf(port, boxed!.id), reason: 'no_indicator' },
      ],
    });
  });
});

describe('agent state writer and reader', () => {
  const live = useTestServer();

  it('writes both option names for the pane in $TMUX_PANE', async () => {
    const target = (await live.server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
    const env = { TMUX: `${live.server.endpoint.socketPath},1,0`, TMUX_PANE: target.id, PATH: process.env.PATH };
    const outcome = await writeAgentHookState('waiting', { env, nowSeconds: 1_800_000_000, agentPid: process.pid });
    assert.deepEqual(outcome, { written: true, pane: target.id, value: `waiting:1800000000:${process.pid}` });
    assert.equal(await agentOption(target), `waiting:1800000000:${process.pid}`);
    assert.equal((await target.options().get(LEGACY_AGENT_STATE_OPTION, { inherited: false })).as('string'), `waiting:1800000000:${process.pid}`);
    assert.deepEqual(parseAgentStateValue(outcome.written ? outcome.value : ''), { state: 'waiting', epochSeconds: 1_800_000_000, pid: process.pid });
  });

  it('does nothing, quietly, outside tmux or when tmux is gone', async () => {
    assert.deepEqual(await writeAgentHookState('idle', { env: {} }), { written: false, reason: 'not inside a tmux pane' });
    const outcome = await writeAgentHookState('idle', { env: { TMUX: '/nonexistent/socket,1,0', TMUX_PANE: '%1', PATH: process.env.PATH } });
    assert.equal(outcome.written, false);
  });

  it('refuses an unknown state', async () => {
    await assert.rejects(writeAgentHookState('sleeping', { env: {} }), /unknown agent state "sleeping"/);
  });

  it('reports a state left by an agent that is gone as unknown, in map', async () => {
    const target = (await live.server.newSession({ name: 'stale', command: ['sleep', '600'], receipt: true })).pane;
    await target.options().set(AGENT_STATE_OPTION, `idle:${Math.floor(Date.now() / 1000)}:999999999`);
    const [row] = await paneMap(portOn(live.server), { kind: 'session', name: 'stale' });
    assert.deepEqual(row?.agent, { state: null, idleDuration: null });
    await target.options().set(AGENT_STATE_OPTION, `idle:${Math.floor(Date.now() / 1000)}:${process.pid}`);
    const [fresh] = await paneMap(portOn(live.server), { kind: 'session', name: 'stale' });
    assert.equal(fresh?.agent.state, 'idle');
  });
});
