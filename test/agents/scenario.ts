import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import {
  FleetRuntime,
  SqlBroker,
  SqliteStore,
  checkMemberPanes,
  createFleetHere,
  createMember,
  deliverPending,
  formatNotificationLine,
  promptMember,
  sendAndNotify,
  waitForMessages,
} from '../../src/fleet/index.js';
import {
  AgentExitedError,
  explainPane,
  openAgentPane,
  paneDeliver,
  paneMap,
  paneQuestions,
  paneReady,
  type DeliveryReceipt,
  type ReadinessReport,
} from '../../src/panes/index.js';
import { requireAgent, startAgentBed, type AgentBed, type AgentName } from './bed.js';
import { SLOW_MARKER, TOOL_MARKER, type Turn } from './mock/server.js';

/** The prompts every agent must receive whole, once each: the shapes that broke naive delivery. */
export const PROMPT_SHAPES: readonly { name: string; text: string }[] = Object.freeze([
  { name: 'short', text: 'Say hello in one word.' },
  { name: 'unicode and quotes', text: `naïve "double" 'single' — ✓ 日本語 🎉 $HOME \`tick\` <tag> & 100%` },
  { name: 'ending in an @mention', text: 'Summarise the file @notes.txt' },
  { name: 'multi-line', text: 'First line of the task.\nSecond line: details.\nThird line: done when tests pass.' },
  { name: '2 000 characters', text: longText(2000) },
  { name: '100 000 characters', text: longText(100_000) },
]);

/** Varied words and digits, so a truncated or reordered arrival cannot pass for the original. */
export function longText(length: number): string {
  let text = '';
  for (let i = 0; text.length < length; i += 1) text += `word${i} `;
  return `${text.slice(0, length - 4)}END.`;
}

/** Polls paneReady until `state` (the verdict any other way stays in the failure message). */
export async function readyBecomes(bed: AgentBed, pane: string, states: readonly ReadinessReport['state'][], timeoutMs = 60_000): Promise<ReadinessReport> {
  const deadline = Date.now() + timeoutMs;
  let last: ReadinessReport | undefined;
  for (;;) {
    last = await paneReady(bed.port, pane, { cwd: bed.workdir });
    if (states.includes(last.state)) return last;
    if (Date.now() > deadline) assert.fail(`pane ${pane} did not become ${states.join('/')}: ${last.state} (${last.reason}: ${last.detail})\n${last.snippet}`);
    await delay(200);
  }
}

/**
 * Waits until the pane reads ready and stays so for `holdMs`: an interrupted turn can show its
 * composer a moment before the status row says the turn ended (opencode did, once, in CI), and
 * a delivery then is rightly refused as into a busy agent.
 */
async function readyHolds(bed: AgentBed, pane: string, holdMs = 1000): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    await readyBecomes(bed, pane, ['ready']);
    const until = Date.now() + holdMs;
    let held = true;
    while (held && Date.now() < until) {
      await delay(200);
      held = (await paneReady(bed.port, pane, { cwd: bed.workdir })).state === 'ready';
    }
    if (held) return;
    if (Date.now() > deadline) assert.fail(`pane ${pane} did not stay ready for ${holdMs} ms`);
  }
}

/** Opens the agent the way a user does (`drover pane open --provider NAME`) and waits for its composer. */
export async function openAgent(bed: AgentBed): Promise<string> {
  const opened = await openAgentPane(bed.port, { provider: bed.profile.name, cwd: bed.workdir, env: bed.env });
  assert.equal(opened.bypassesPermissions, false);
  await readyBecomes(bed, opened.paneId, ['ready']);
  return opened.paneId;
}

/** How many of the mock's turns carry exactly `text`. */
export function arrivals(turns: readonly Turn[], text: string): number {
  return turns.filter((turn) => turn.text === text).length;
}

/**
 * Delivers `text` as `drover pane deliver` does (waiting for a turn still running) and
 * checks the receipt and the mock: the prompt arrived byte-exact, as one user turn, once.
 */
export async function deliverAndCheck(bed: AgentBed, pane: string, text: string): Promise<DeliveryReceipt> {
  const before = bed.mock.turns().length;
  const receipt = await paneDeliver(bed.port, pane, text, { cwd: bed.workdir, composerWaitMs: 30_000 });
  assert.equal(receipt.status, 'submitted', `${receipt.reason}\n${receipt.snippet}`);
  const turns = await bed.mock.waitForTurns(`the prompt of ${text.length} characters`, (all) => all.slice(before).some((turn) => turn.text === text), 30_000);
  assert.equal(arrivals(turns, text), 1, 'exactly once');
  return receipt;
}

/**
 * The whole real-agent suite for one agent, as a user and a fleet drive it: open, ready and
 * delivery of every prompt shape; readiness, questions and map in each phase (composer, busy,
 * permission prompt, folder-trust dialog); an agent that exits at once; fleet messages to an
 * idle and a busy member, and to a member whose pane died. The model mock's log is the proof.
 */
export function describeRealAgent(name: AgentName, expect: RealAgentExpectations): void {
  describe(`real ${name}`, { concurrency: 1 }, () => {
    it('opens with permission checks on, is ready, and gets every prompt shape byte-exact, once each', async (t) => {
      if (requireAgent(t, name) === undefined) return;
      const bed = await startAgentBed(name);
      try {
        const pane = await openAgent(bed);
        const [row] = (await paneMap(bed.port, { kind: 'all' }, { cwd: bed.workdir })).filter((candidate) => candidate.pane === pane);
        assert.equal(row?.agentName, name, 'the map names the agent from its process tree');
        assert.equal(row?.agent.state, 'idle');
        const explained = await explainPane(bed.port, pane, { cwd: bed.workdir });
        assert.equal(explained.agent.kind, name);
        assert.equal(explained.screen?.phase, 'composer');
        assert.match(explained.screen?.rule ?? '', new RegExp(`^${name}\\.`), 'explain names the rule that read the screen');
        assert.deepEqual(explained.readiness, { state: 'ready', reason: 'agent_composer' });
        for (const shape of PROMPT_SHAPES) await t.test(shape.name, () => deliverAndCheck(bed, pane, shape.text).then(() => undefined));
        await readyBecomes(bed, pane, ['ready']);
        assert.deepEqual(await skipReason(bed, pane), 'agent_at_composer', 'an idle composer with a transcript is no question');
      } finally {
        await bed.close();
      }
    });

    it('reads busy and permission-prompt screens: ready, questions and map agree', async (t) => {
      if (requireAgent(t, name) === undefined) return;
      const bed = await startAgentBed(name);
      try {
        const pane = await openAgent(bed);
        await paneDeliver(bed.port, pane, `${SLOW_MARKER} take your time`, { cwd: bed.workdir });
        assert.equal((await readyBecomes(bed, pane, ['busy'])).reason, 'agent_busy');
        assert.equal(await mapStateBecomes(bed, pane, 'active'), 'active');
        assert.equal(await skipReason(bed, pane), 'agent_busy');
        await bed.server.pane(pane).sendKeys(expect.interruptKeys);
        await readyHolds(bed, pane);

        const asked = await paneDeliver(bed.port, pane, `${TOOL_MARKER} run the check`, { cwd: bed.workdir });
        assert.equal(asked.status, 'submitted', asked.reason);
        const parked = await readyBecomes(bed, pane, ['parked']);
        assert.equal(parked.reason, 'agent_permission', parked.detail);
        const sweep = await paneQuestions(bed.port, { kind: 'all' }, { cwd: bed.workdir });
        const match = sweep.matches.find((row) => row.pane === pane);
        assert.equal(match?.indicator, 'permission_prompt', JSON.stringify(sweep));
        assert.equal(match?.agent, name);
        assert.equal(await mapStateBecomes(bed, pane, 'waiting'), 'waiting');
        const refused = await paneDeliver(bed.port, pane, 'this must not be typed into the question', { cwd: bed.workdir });
        assert.deepEqual([refused.status, refused.typed], ['failed', false]);
      } finally {
        await bed.close();
      }
    });

    it('parks on the folder-trust dialog: a question, never typed into', { skip: expect.trustDialog ? false : `${name} has no folder-trust dialog` }, async (t) => {
      if (requireAgent(t, name) === undefined) return;
      const bed = await startAgentBed(name, { trusted: false });
      try {
        const opened = await openAgentPane(bed.port, { provider: name, cwd: bed.workdir, env: bed.env });
        const parked = await readyBecomes(bed, opened.paneId, ['parked']);
        assert.equal(parked.reason, 'agent_dialog', parked.detail);
        const sweep = await paneQuestions(bed.port, { kind: 'all' }, { cwd: bed.workdir });
        assert.equal(sweep.matches.find((row) => row.pane === opened.paneId)?.indicator, 'agent_dialog', JSON.stringify(sweep));
        const receipt = await paneDeliver(bed.port, opened.paneId, 'hello', { cwd: bed.workdir });
        assert.deepEqual([receipt.status, receipt.typed], ['failed', false]);
        await delay(500);
        assert.deepEqual(bed.mock.turns(), [], 'nothing reached the model');
        assert.equal((await paneReady(bed.port, opened.paneId, { cwd: bed.workdir })).state, 'parked', 'the dialog is still there');
      } finally {
        await bed.close();
      }
    });

    it('reads the pane an agent left: its shell as a shell, a kept dead pane as exited', async (t) => {
      const binary = requireAgent(t, name);
      if (binary === undefined) return;
      const bed = await startAgentBed(name);
      try {
        const session = bed.server.session((await bed.server.snapshot()).sessions.toArray()[0]!.sessionId as string);
        // The agent run from an interactive shell, as a person starts it.
        const shell = (await session.newWindow({ cwd: bed.workdir, receipt: true })).pane;
        await shell.sendText(binary);
        await shell.sendKeys(['Enter']);
        await readyBecomes(bed, shell.id, ['ready']);
        // The whole process group: Codex and Gemini CLI run as a node launcher and a child.
        process.kill(-(await explainPane(bed.port, shell.id, { cwd: bed.workdir })).agent.pid!, 'SIGKILL');
        const left = await readyBecomes(bed, shell.id, ['shell']);
        assert.equal(left.agent, null);
        assert.equal(await skipReason(bed, shell.id), 'no_agent_state');
        // A pane tmux keeps after its agent died.
        const kept = (await session.newWindow({ cwd: bed.workdir, command: [binary], receipt: true })).pane;
        await kept.options().set('remain-on-exit', 'on');
        await readyBecomes(bed, kept.id, ['ready']);
        process.kill(-(await explainPane(bed.port, kept.id, { cwd: bed.workdir })).agent.pid!, 'SIGKILL');
        assert.equal((await readyBecomes(bed, kept.id, ['exited'])).reason, 'pane_dead');
        assert.equal(await skipReason(bed, kept.id), 'pane_dead', 'its last lines are no question');
      } finally {
        await bed.close();
      }
    });

    it('reports an agent that exits at once, with its last lines, and leaves no pane', async (t) => {
      if (requireAgent(t, name) === undefined) return;
      const bed = await startAgentBed(name);
      try {
        const before = (await bed.server.snapshot()).panes.toArray().length;
        const providers = { broken: { name: 'broken', interactiveCommand: `${name} ${expect.badFlag}`, profiles: {} } };
        await assert.rejects(openAgentPane(bed.port, { provider: 'broken', providers, cwd: bed.workdir, env: bed.env }), (error) => {
          assert.ok(error instanceof AgentExitedError, String(error));
          assert.match(error.lastLines, expect.badFlagMessage);
          return true;
        });
        assert.equal((await bed.server.snapshot()).panes.toArray().length, before);
      } finally {
        await bed.close();
      }
    });

    it('fleet: messages reach an idle and a busy member whole, in order, once; a dead member is reported', async (t) => {
      if (requireAgent(t, name) === undefined) return;
      const bed = await startAgentBed(name);
      const broker = new SqlBroker(SqliteStore.open({ path: join(bed.home, 'drover.db') }));
      const director = (await bed.server.snapshot()).panes.toArray()[0]!.paneId as string;
      const runtime = await FleetRuntime.open({ broker, env: { ...bed.env, TMUX_PANE: director }, tmuxEndpoint: bed.server.endpoint });
      try {
        const fleet = await createFleetHere(runtime, { name: 'bed', agent: 'shell' });
        const created = await createMember(runtime, { fleetId: fleet.fleet.fleetId, name: 'worker', agent: name, prompt: 'You are a test member; reply briefly.', cwd: bed.workdir });
        const from = fleet.director.memberId;
        const to = created.member.memberId;
        // An agent that takes no prompt on its command line gets it as its first message.
        await drain(runtime, to);
        // Ready only counts once the member's first turn reached the model: before that, an
        // agent still starting its turn shows the same idle composer it shows after it.
        await bed.mock.waitForTurns('the member prompt', (all) => all.some((turn) => turn.text.includes('You are a test member')), 60_000);
        await readyBecomes(bed, created.pane, ['ready']);

        const idle = await sendAndNotify({ ...runtime.notify, from, to, text: 'first message: status please' });
        assert.equal(idle.notificationSent, true, idle.diagnostic?.diagnostic);
        await expectLine(bed, formatNotificationLine(idle.message, { escapeLead: false }));

        await promptMember({ ...runtime.notify, memberId: to, text: `${SLOW_MARKER} a long task` });
        await readyBecomes(bed, created.pane, ['busy']);
        const held = [];
        for (const text of ['second message', 'third message ✓ "quoted"']) {
          const sent = await sendAndNotify({ ...runtime.notify, from, to, text });
          assert.equal(sent.notificationSent, false, 'nothing is typed into a running turn');
          assert.equal((await runtime.broker.showMessage(sent.message.messageId)).notifiedAt, null);
          held.push(sent.message);
        }
        // `message wait` retries held deliveries once the turn ended.
        await readyBecomes(bed, created.pane, ['ready'], 60_000);
        // One line per hold: the third message may meet the turn the second one started; the
        // wait retries it until that turn is over, and drops its diagnostic once it went in.
        const waited = await waitForMessages({ ...runtime.notify, memberId: from, timeoutMs: 30_000, rotationIntervalMs: 500 });
        assert.deepEqual(waited.diagnostics, []);
        assert.deepEqual(waited.notified, held.map((message) => message.messageId));
        const turns = bed.mock.turns().map((turn) => turn.text);
        const lines = held.map((message) => formatNotificationLine(message, { escapeLead: false }));
        for (const line of lines) assert.equal(turns.filter((text) => text === line).length, 1, `once: ${line}`);
        assert.ok(turns.indexOf(lines[0]!) < turns.indexOf(lines[1]!), 'in order');

        await bed.server.pane(created.pane).kill();
        const dead = await sendAndNotify({ ...runtime.notify, from, to, text: 'are you there?' });
        assert.equal(dead.notificationSent, false);
        assert.match(dead.diagnostic?.diagnostic ?? '', /no longer exists/);
        const [member] = await checkMemberPanes(runtime, [await runtime.broker.getMember(to)], async () => [await runtime.broker.getMember(to)]);
        assert.ok(member?.placement?.goneAt, 'the member shows as gone');
      } finally {
        await runtime.close();
        await broker.close();
        await bed.close();
      }
    });
  });
}

/** What differs between agents in the suite above. */
export interface RealAgentExpectations {
  /** The keys a person presses to interrupt a running turn. */
  interruptKeys: string[];
  /** Whether the agent asks to trust a new folder. */
  trustDialog: boolean;
  /** A flag the agent refuses at start, and what it prints then. */
  badFlag: string;
  badFlagMessage: RegExp;
}

/**
 * The map's state for the pane once it reads `state`, or what it read last after `timeoutMs`.
 * The map takes the state the agent's hook recorded (its screen only while no hook has), and
 * the hook is a process the agent starts when its turn begins: on a loaded machine it may
 * finish after the screen shows the turn, which `pane ready` reads.
 */
async function mapStateBecomes(bed: AgentBed, pane: string, state: string, timeoutMs = 10_000): Promise<string | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows = await paneMap(bed.port, { kind: 'all' }, { cwd: bed.workdir });
    const read = rows.find((row) => row.pane === pane)?.agent.state ?? null;
    if (read === state || Date.now() > deadline) return read;
    await delay(200);
  }
}

async function skipReason(bed: AgentBed, pane: string): Promise<string | undefined> {
  const sweep = await paneQuestions(bed.port, { kind: 'panes', panes: [pane] }, { cwd: bed.workdir });
  return sweep.skipped.find((row) => row.pane === pane)?.reason ?? sweep.matches.find((row) => row.pane === pane)?.indicator;
}

/** Retries a member's held deliveries, as `message wait` does, until none is left (or 60 s pass). */
async function drain(runtime: FleetRuntime, memberId: number): Promise<void> {
  const { fleetId } = await runtime.broker.getMember(memberId);
  const deadline = Date.now() + 60_000;
  while ((await runtime.broker.deliverySnapshot(memberId, fleetId)).next !== null) {
    if (Date.now() > deadline) assert.fail(`member ${memberId} still has messages awaiting delivery`);
    await deliverPending({ ...runtime.notify, recipientId: memberId, fleetId });
    await delay(500);
  }
}

/** Waits until the mock received `line` as a user turn, and checks it came once. */
async function expectLine(bed: AgentBed, line: string): Promise<void> {
  const turns = await bed.mock.waitForTurns(`the line ${line.slice(0, 40)}…`, (all) => all.some((turn) => turn.text === line), 30_000);
  assert.equal(arrivals(turns, line), 1);
}
