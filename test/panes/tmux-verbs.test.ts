import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_STATE_OPTION } from '../../src/agents/index.js';
import {
  AgentExitedError,
  PaneNotFoundError,
  capturePaneTail,
  ensureWindowPrefix,
  openAgentPane,
  paneCapture,
  paneCaptureJson,
  paneKill,
  paneProcess,
  renderCaptureHeader,
  renderWindowRename,
  replaceWindowPrefix,
} from '../../src/panes/index.js';
import { MuxError, type MuxPort } from '../../src/mux/index.js';
import { ArgumentError, type Pane } from '../../src/tmux/index.js';
import { startTestServer, testEnvironment, useTestServer } from '../support/tmux.js';
import { FAKE_AGENT, eventually, keyOf, portOn, screenShows } from './live.js';

describe('pane verbs against real tmux', () => {
  const live = useTestServer();
  let dir: string;
  let printer: Pane;
  let port: MuxPort;

  before(async () => {
    port = portOn(live.server);
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'drover-verbs-')));
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\\n');
    printer = (
      await live.server.newSession({ name: 'print', windowName: 'printer', cwd: dir, width: 60, height: 20, command: ['sh', '-c', `printf '${lines}\\n\\nlast\\n'; exec sleep 600`], receipt: true })
    ).pane;
    await screenShows(printer, 'last');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  describe('capture', () => {
    it('returns exactly the last N lines, without the blank rows below them', async () => {
      assert.equal((await capturePaneTail(port, printer.id, 3)).toString(), 'line 100\n\nlast\n');
      const fifty = (await capturePaneTail(port, printer.id, 50)).toString().split('\n');
      assert.equal(fifty.length, 51);
      assert.equal(fifty[0], 'line 53');
    });

    it('reports worktree and agent state with the content', async () => {
      await printer.options().set(AGENT_STATE_OPTION, `waiting:${Math.floor(Date.now() / 1000)}`);
      const capture = await paneCapture(port, printer.id, { lines: 2 });
      const basename = dir.split('/').pop();
      assert.deepEqual(paneCaptureJson(capture), {
        pane_id: printer.id,
        pane_key: await keyOf(port, printer.id),
        lines: 2,
        content: '\nlast\n',
        worktree: `${basename}/`,
        change: null,
        stage: null,
        agent_state: 'waiting',
        agent_idle_duration: null,
      });
      assert.equal(renderCaptureHeader(capture), `--- pane ${printer.id} ---\nworktree: ${basename}/ | agent: waiting\n---\n`);
    });

    it('refuses a line count below 1 before asking tmux', async () => {
      await assert.rejects(capturePaneTail(port, '%999', 0), ArgumentError);
      await assert.rejects(paneCapture(port, printer.id, { lines: -5 }), /at least 1/);
    });

    it('says a missing pane is not found, by exact id only', async () => {
      await assert.rejects(capturePaneTail(port, '%999', 5), (error) => error instanceof PaneNotFoundError && error.message === 'pane %999 not found');
      await assert.rejects(capturePaneTail(port, 'printer', 5), PaneNotFoundError);
      await assert.rejects(capturePaneTail(port, 'print:0.0', 5), PaneNotFoundError);
    });
  });

  describe('process', () => {
    it('lists the pane’s tree and classifies agents from the project’s providers', async () => {
      writeFileSync(join(dir, 'drover.yaml'), "providers:\n  sleeper:\n    interactive_command: 'sleep {model}'\n");
      const pane = (await live.server.newSession({ command: ['sh', '-c', 'sleep 600 & wait'], receipt: true })).pane;
      // sh forks the child before the child execs sleep: until then it is a second sh.
      const report = await eventually('the sleep child', async () => {
        const found = await paneProcess(port, pane.id, { cwd: dir });
        return found.processes[0]?.children[0]?.comm === 'sleep' ? found : undefined;
      });
      const shellPid = Number((await pane.display('#{pane_pid}')).toString());
      assert.equal(report.paneId, pane.id);
      assert.equal(report.paneKey, await keyOf(port, pane.id));
      assert.equal(report.pane_pid, shellPid);
      assert.equal(report.processes[0]!.comm, 'sh');
      assert.equal(report.processes[0]!.classification, 'other');
      assert.deepEqual(
        report.processes[0]!.children.map((child) => [child.comm, child.cmdline, child.classification, child.ppid]),
        [['sleep', 'sleep 600', 'agent', shellPid]],
      );
      assert.equal(report.has_agent, true);
      assert.equal((await paneProcess(port, pane.id, { cwd: tmpdir() })).has_agent, false, 'without that provider sleep is no agent');
    });
  });

  describe('window-name', () => {
    it('adds a prefix once, swaps it, strips it, and leaves a retitled window alone', async () => {
      const steps = [
        await ensureWindowPrefix(port, printer.id, '»'),
        await ensureWindowPrefix(port, printer.id, '»'),
        await replaceWindowPrefix(port, printer.id, '»', '›'),
        await replaceWindowPrefix(port, printer.id, '»', '›'),
        await replaceWindowPrefix(port, printer.id, '›', ''),
      ];
      const ref = { paneId: printer.id, paneKey: await keyOf(port, printer.id) };
      assert.deepEqual(steps, [
        { ...ref, old: 'printer', new: '»printer', action: 'renamed' },
        { ...ref, old: '»printer', new: '»printer', action: 'noop' },
        { ...ref, old: '»printer', new: '›printer', action: 'renamed' },
        { ...ref, old: '›printer', new: '›printer', action: 'noop' },
        { ...ref, old: '›printer', new: 'printer', action: 'renamed' },
      ]);
      assert.equal((await printer.display('#W')).toString(), 'printer');
      assert.equal(renderWindowRename(steps[0]!), 'renamed: printer -> »printer\n');
      assert.equal(renderWindowRename(steps[1]!), '');
    });

    it('refuses an empty prefix before touching tmux, and reports a missing pane', async () => {
      await assert.rejects(ensureWindowPrefix(port, printer.id, ''), ArgumentError);
      await assert.rejects(replaceWindowPrefix(port, printer.id, '', 'x'), ArgumentError);
      await assert.rejects(ensureWindowPrefix(port, '%999', '»'), PaneNotFoundError);
    });
  });

  describe('open', () => {
    const providers = { fake: { name: 'fake', interactiveCommand: `node ${FAKE_AGENT} --busy-ms {model}`, profiles: { default: { model: '100' } } } };

    it('opens a new window when the caller is not a pane of the server', async () => {
      const env = testEnvironment();
      const opened = await openAgentPane(port, { provider: 'fake', providers, cwd: dir, env });
      assert.equal(opened.placement, 'window');
      assert.equal(opened.command, `node ${FAKE_AGENT} --busy-ms 100`);
      assert.equal(opened.paneKey, await keyOf(port, opened.paneId));
      const pane = live.server.pane(opened.paneId);
      await screenShows(pane, '╭');
      assert.equal((await pane.display('#{pane_current_path}')).toString(), dir);
    });

    it('splits the caller’s window when the caller is a pane of the server', async () => {
      const opened = await openAgentPane(port, { provider: 'fake', providers, cwd: dir, callerPane: printer.id });
      assert.equal(opened.placement, 'split');
      const window = async (id: string) => (await live.server.pane(id).display('#{window_id}')).toString();
      assert.equal(await window(opened.paneId), await window(printer.id));
    });

    it('runs a plain command as the pane’s own program, so tmux names the pane after it', async () => {
      const env = testEnvironment();
      const sleeper = { sleeper: { name: 'sleeper', interactiveCommand: 'NAP=1 sleep 600', profiles: {} } };
      const opened = await openAgentPane(port, { provider: 'sleeper', providers: sleeper, cwd: dir, env, startupCheckMs: 300 });
      assert.deepEqual(opened.argv, ['sleep', '600']);
      assert.equal((await live.server.pane(opened.paneId).display('#{pane_current_command}')).toString(), 'sleep');
      const own = await live.server.pane(opened.paneId).options().getOrUndefined('remain-on-exit', { inherited: false });
      assert.equal(own, undefined, 'the pane is back to the server’s setting');
    });

    it('reports a program that exits at once with its status and last words, and removes its pane', async () => {
      const before = (await live.server.snapshot()).panes.toArray().length;
      // Like an agent, it lingers a moment after its last write: a program that writes and exits
      // in the same instant can lose that write when tmux closes the pane's terminal.
      const dying = { dying: { name: 'dying', interactiveCommand: `node -e 'console.log("error: no login found"); setTimeout(() => process.exit(3), 200)'`, profiles: {} } };
      await assert.rejects(openAgentPane(port, { provider: 'dying', providers: dying, cwd: dir, env: {} }), (error) => {
        assert.ok(error instanceof AgentExitedError);
        assert.equal(error.exitStatus, 3);
        assert.equal(error.lastLines, 'error: no login found\n');
        return true;
      });
      assert.equal((await live.server.snapshot()).panes.toArray().length, before);
    });

    it('refuses a program the server’s panes cannot find, before making a pane', async () => {
      const before = (await live.server.snapshot()).panes.toArray().length;
      const missing = { ghost: { name: 'ghost', interactiveCommand: 'no-such-agent-xyz --go', profiles: {} } };
      await assert.rejects(openAgentPane(port, { provider: 'ghost', providers: missing, cwd: dir, env: {} }), /no-such-agent-xyz is not on the PATH of the tmux server's panes/);
      assert.equal((await live.server.snapshot()).panes.toArray().length, before);
    });

    it('names the providers when the provider is unknown, before spawning anything', async () => {
      const before = (await live.server.snapshot()).panes.toArray().length;
      await assert.rejects(openAgentPane(port, { provider: 'nope', providers, cwd: dir }), /unknown provider "nope"; available: fake/);
      assert.equal((await live.server.snapshot()).panes.toArray().length, before);
    });
  });

  describe('kill', () => {
    it('kills a pane, then says it is not found', async () => {
      const pane = (await live.server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
      assert.deepEqual(await paneKill(port, pane.id), { paneId: pane.id, paneKey: await keyOf(port, pane.id) });
      assert.equal(await pane.exists(), false);
      await assert.rejects(paneKill(port, pane.id), PaneNotFoundError);
    });
  });
});

describe('a server that went away', () => {
  it('is not reported as a missing pane', async () => {
    const server = await startTestServer();
    try {
      const pane = (await server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
      await server.kill();
      await assert.rejects(capturePaneTail(portOn(server), pane.id, 5), (error) => error instanceof MuxError && error.reason === 'unreachable' && !(error instanceof PaneNotFoundError));
    } finally {
      await server.close();
    }
  });
});
