/**
 * The agent verbs on every multiplexer, one suite: the same cases against real tmux and against
 * the herdr and zellij fakes. Each world has a pane running the fake agent at its composer
 * (test/fixtures/fake-agent.ts: a real program in a tmux pane; in the fakes the same model,
 * scripted, every turn ending at once) and a pane at a shell prompt. Where the multiplexers
 * legitimately differ (who names the agent, whether a pid or a cursor is reported, what reports
 * an agent's state) the world says so, and the case checks that answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AGENT_STATE_OPTION } from '../../src/agents/index.js';
import { MuxError, type MuxName, type MuxPort } from '../../src/mux/index.js';
import {
  PaneKeyRefusedError,
  PaneNotFoundError,
  READY_PROBE,
  explainPane,
  paneCapture,
  paneDeliver,
  paneKill,
  paneMap,
  paneProcess,
  paneQuestions,
  paneReady,
} from '../../src/panes/index.js';
import { FAKE_AGENT_NAME } from '../fixtures/herdr/server.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { startTestServer } from '../support/tmux.js';
import { eventually, portOn, screenShows, startFakeAgent } from './live.js';

/** What a [y/n] question offers. */
const YES_NO = [
  { label: 'y', keys: ['y'] },
  { label: 'n', keys: ['n'] },
];

interface VerbWorld {
  readonly mux: MuxName;
  readonly port: MuxPort;
  /** A pane running the fake agent at its empty composer. */
  readonly agentPane: string;
  /** A pane at a shell prompt. */
  readonly shellPane: string;
  /** What a pane shows, read around drover's port. */
  screen(pane: string): Promise<string>;
  /** A mark of the input the panes received so far, read around drover's port: it moves when anything is typed. */
  inputs(): Promise<unknown>;
  /** Records the agent's state as this multiplexer's state source would (tmux: its hooks); absent where nothing reports one. */
  readonly reportState?: (pane: string, state: 'waiting' | 'idle') => Promise<void>;
  /** The agent the map names for the fake agent: herdr detects it; elsewhere no agent drover knows runs. */
  readonly agentName: string | null;
  /** The pane's pid is reported, so drover reads its process tree. */
  readonly processTree: boolean;
  /** The cursor is reported, so a typed line can be seen leaving the program's input line. */
  readonly cursor: boolean;
  close(): Promise<void>;
}

async function tmuxWorld(): Promise<VerbWorld> {
  const server = await startTestServer();
  const agent = await startFakeAgent(server);
  const shell = (await server.newSession({ command: ['sh'], env: { PS1: 'shell$ ' }, receipt: true })).pane;
  await screenShows(shell, 'shell$');
  return {
    mux: 'tmux',
    port: portOn(server),
    agentPane: agent.id,
    shellPane: shell.id,
    screen: async (pane) => (await server.pane(pane as `%${number}`).capture()).toString('utf8'),
    // The fake agent echoes whatever reaches it at its composer or in its transcript.
    inputs: async () => (await server.pane(agent.id).capture()).toString('utf8'),
    reportState: async (pane, state) => void (await server.pane(pane as `%${number}`).options().set(AGENT_STATE_OPTION, `${state}:${Math.floor(Date.now() / 1000)}`)),
    agentName: null,
    processTree: true,
    cursor: true,
    close: () => server.close(),
  };
}

async function herdrWorld(): Promise<VerbWorld> {
  const herdr = await openHerdrWorld();
  const snapshot = await herdr.port.snapshot();
  const agentPane = snapshot.panes.find((pane) => pane.paneLabel === 'reviewer')!.paneId;
  const shellPane = snapshot.panes.find((pane) => pane.spaceLabel === 'scratch')!.paneId;
  herdr.server.runFakeAgent(agentPane);
  return {
    mux: 'herdr',
    port: herdr.port,
    agentPane,
    shellPane,
    screen: async (pane) => herdr.server.screenOf(pane),
    inputs: async () => herdr.server.inputs().length,
    reportState: async (pane, state) => herdr.server.setAgentStatus(pane, state === 'waiting' ? 'blocked' : 'idle'),
    agentName: FAKE_AGENT_NAME,
    processTree: false,
    cursor: false,
    close: () => herdr.close(),
  };
}

async function zellijWorld(): Promise<VerbWorld> {
  const zellij = await openZellijWorld();
  const agentPane = 'terminal_1';
  await zellij.runFakeAgent(agentPane);
  return {
    mux: 'zellij',
    port: zellij.port,
    agentPane,
    shellPane: 'terminal_2',
    screen: async (pane) => zellij.screenOf(pane),
    inputs: async () => zellij.fake.read().inputs.length,
    agentName: null,
    processTree: false,
    cursor: true,
    close: () => zellij.close(),
  };
}

function describeAgentVerbs(name: MuxName, open: () => Promise<VerbWorld>): void {
  describe(`the agent verbs on ${name}`, { concurrency: 1 }, () => {
    let world: VerbWorld;
    let incarnation: string;
    const keyOf = (pane: string): string => `local::${name}::${incarnation}::${pane}`;
    before(async () => {
      world = await open();
      incarnation = (await world.port.snapshot()).incarnation;
    });
    after(() => world.close());

    it('map: every pane from one snapshot, each with its key; the fake agent as the multiplexer names it', async () => {
      const snapshot = await world.port.snapshot();
      const rows = await paneMap(world.port, { kind: 'all' });
      assert.deepEqual(rows.map((row) => row.pane).sort(), snapshot.panes.map((pane) => pane.paneId).sort());
      for (const row of rows) assert.equal(row.paneKey, keyOf(row.pane));
      const listed = snapshot.panes.find((pane) => pane.paneId === world.agentPane)!;
      const row = rows.find((candidate) => candidate.pane === world.agentPane)!;
      assert.deepEqual([row.session, row.windowId, row.agentName], [listed.spaceLabel, listed.tabId, world.agentName]);
      const session = (await paneMap(world.port, { kind: 'session', name: listed.spaceLabel })).map((candidate) => candidate.pane);
      assert.ok(session.includes(world.agentPane) && session.every((pane) => snapshot.panes.find((candidate) => candidate.paneId === pane)!.spaceId === listed.spaceId));
    });

    it('capture: the last lines of the pane, by id or by key', async () => {
      const byId = await paneCapture(world.port, world.agentPane, { lines: 2 });
      assert.match(byId.content.toString('utf8'), /^│ > +│\n╰─+╯\n$/);
      const byKey = await paneCapture(world.port, keyOf(world.agentPane), { lines: 2 });
      assert.deepEqual([byKey.paneId, byKey.paneKey, byKey.content.toString('utf8')], [world.agentPane, keyOf(world.agentPane), byId.content.toString('utf8')]);
    });

    it('process: the process tree where the pane’s pid is reported, else a refusal naming paneProcess; nothing is typed', async () => {
      const inputs = await world.inputs();
      if (world.processTree) {
        const report = await paneProcess(world.port, world.agentPane);
        assert.ok(report.pane_pid > 0);
        assert.equal(report.processes[0]?.comm, 'node');
        assert.equal(report.paneKey, keyOf(world.agentPane));
      } else {
        await assert.rejects(paneProcess(world.port, world.agentPane), (error) => error instanceof MuxError && error.reason === 'unsupported' && /paneProcess/.test(error.message));
      }
      assert.deepEqual(await world.inputs(), inputs);
    });

    it('explain: what drover reads off the pane, typing nothing', async () => {
      const before = await world.screen(world.agentPane);
      const inputs = await world.inputs();
      const explained = await explainPane(world.port, world.agentPane);
      assert.equal(explained.paneKey, keyOf(world.agentPane));
      assert.deepEqual([explained.dead, explained.agent.name, explained.agent.kind, explained.screen, explained.readiness], [false, world.agentName, null, null, null]);
      assert.equal(explained.processes !== '', world.processTree);
      assert.deepEqual(await world.inputs(), inputs);
      assert.equal(await world.screen(world.agentPane), before);
    });

    it('ready: the probe echoes at the composer and is erased again', async () => {
      const report = await paneReady(world.port, world.agentPane);
      assert.deepEqual([report.state, report.reason, report.paneKey], ['ready', 'probe_echoed', keyOf(world.agentPane)], report.detail);
      await eventually('the probe to be erased', async () => ((await world.screen(world.agentPane)).includes(READY_PROBE) ? undefined : true));
    });

    it('deliver: the line reaches the agent; submitted where the cursor shows it left the input line', async () => {
      const receipt = await paneDeliver(world.port, world.agentPane, 'say hello');
      assert.deepEqual([receipt.status, receipt.method, receipt.typed], [world.cursor ? 'submitted' : 'staged_unconfirmed', 'keys', true], receipt.reason);
      await eventually('the prompt in the transcript', async () => ((await world.screen(world.agentPane)).includes('> say hello') ? true : undefined));
      await eventually('the reply', async () => ((await world.screen(world.agentPane)).includes('● Done.') ? true : undefined), 30_000);
    });

    it('questions: the question the agent asks, where something reports its state; named by key too', async () => {
      const port = world.port;
      assert.ok((await port.typeText(world.agentPane, 'please ask:yes_no')).ok);
      assert.ok((await port.sendKeys(world.agentPane, ['Enter'])).ok);
      await eventually('the question', async () => ((await world.screen(world.agentPane)).includes('[y/n]') ? true : undefined), 30_000);
      if (world.reportState !== undefined) await world.reportState(world.agentPane, 'waiting');
      const sweep = await paneQuestions(port, { kind: 'all' });
      const named = await paneQuestions(port, { kind: 'panes', panes: [keyOf(world.agentPane)] });
      if (world.reportState === undefined) {
        const skip = { pane: world.agentPane, paneKey: keyOf(world.agentPane), reason: 'no_agent_state' };
        assert.deepEqual(named, { matches: [], skipped: [skip] });
        assert.ok(!sweep.matches.some((row) => row.pane === world.agentPane), 'nothing says this agent waits');
      } else {
        const match = { pane: world.agentPane, paneKey: keyOf(world.agentPane), agent_state: 'waiting', indicator: 'yes_no', snippet: 'Apply the edit to src/app.ts? [y/n]', agent: world.agentName, rule: null, answers: YES_NO };
        assert.deepEqual(named, { matches: [match], skipped: [] });
        assert.deepEqual(sweep.matches.find((row) => row.pane === world.agentPane), match);
      }
      assert.ok((await port.typeText(world.agentPane, 'y')).ok);
      // The turn the answer started ends before the next case marks the input: its spinner moves the screen.
      await eventually('the turn after the answer to end', async () => ((await world.screen(world.agentPane)).includes('  answer: y\n● Done.') ? true : undefined), 30_000);
      if (world.reportState !== undefined) await world.reportState(world.agentPane, 'idle');
    });

    it('a key of another server run is refused before anything is typed', async () => {
      const inputs = await world.inputs();
      const stale = `local::${name}::another-run-1::${world.agentPane}`;
      await assert.rejects(paneDeliver(world.port, stale, 'must not be typed'), PaneKeyRefusedError);
      await assert.rejects(paneKill(world.port, stale), PaneKeyRefusedError);
      const other: MuxName = name === 'tmux' ? 'herdr' : 'tmux';
      await assert.rejects(paneReady(world.port, `local::${other}::${incarnation}::${world.agentPane}`), PaneKeyRefusedError);
      assert.deepEqual(await world.inputs(), inputs);
      assert.ok((await world.port.snapshot()).panes.some((pane) => pane.paneId === world.agentPane));
    });

    it('kill: the pane goes, then it is not found', async () => {
      assert.deepEqual(await paneKill(world.port, keyOf(world.shellPane)), { paneId: world.shellPane, paneKey: keyOf(world.shellPane) });
      await eventually('the pane to leave the snapshot', async () => ((await world.port.snapshot()).panes.some((pane) => pane.paneId === world.shellPane) ? undefined : true));
      await assert.rejects(paneKill(world.port, world.shellPane), PaneNotFoundError);
    });
  });
}

describeAgentVerbs('tmux', tmuxWorld);
describeAgentVerbs('herdr', herdrWorld);
describeAgentVerbs('zellij', zellijWorld);
