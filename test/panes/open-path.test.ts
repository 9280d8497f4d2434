import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { MuxPort } from '../../src/mux/index.js';
import { AgentExitedError, openAgentPane } from '../../src/panes/index.js';
import { Server, clientEnvironment } from '../../src/tmux/index.js';
import { withServer } from '../support/tmux.js';
import { portOn } from './live.js';

/**
 * tmux gives a pane the PATH of the client whose command made it, over the server's and over a
 * `-e PATH=…`. `pane open` checks the agent against the PATH it hands the pane, so that PATH must
 * be the one the pane runs with. Each case starts a server with one PATH and drives it through a
 * binding whose tmux clients have another.
 */
describe('pane open runs the agent with the PATH it checked', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'drover-open-path-')));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'agents-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'path-agent-xyz'), '#!/bin/sh\nexec sleep 600\n');
  chmodSync(join(bin, 'path-agent-xyz'), 0o755);
  const systemPath = '/usr/local/bin:/usr/bin:/bin';
  const withAgent = `${bin}:${systemPath}`;
  const agent = { agent: { name: 'agent', interactiveCommand: 'path-agent-xyz --go', profiles: {} } };

  async function across<T>(serverPath: string, clientPath: string, fn: (port: MuxPort, server: Server) => Promise<T>): Promise<T> {
    return withServer(
      async (started) => {
        await started.newSession({ command: ['sleep', '600'], receipt: true });
        const client = await Server.open(started.endpoint, { env: { ...clientEnvironment(), PATH: clientPath } });
        try {
          return await fn(portOn(client), client);
        } finally {
          await client.close();
        }
      },
      { env: { ...clientEnvironment(), PATH: serverPath } },
    );
  }

  const alive = async (server: Server, paneId: string) => (await server.pane(paneId).display('#{pane_dead} #{pane_current_command}')).toString();

  it('runs an agent only the given PATH has, though the tmux client’s PATH lacks it', async () => {
    await across(systemPath, systemPath, async (port, server) => {
      const opened = await openAgentPane(port, { provider: 'agent', providers: agent, cwd: dir, env: { PATH: withAgent }, startupCheckMs: 300 });
      assert.equal(await alive(server, opened.paneId), '0 sleep');
    });
  });

  it('refuses an agent the given PATH lacks, before making a pane, though the tmux client’s PATH has it', async () => {
    await across(withAgent, withAgent, async (port, server) => {
      const before = (await server.snapshot()).panes.toArray().length;
      await assert.rejects(openAgentPane(port, { provider: 'agent', providers: agent, cwd: dir, env: { PATH: systemPath } }), /path-agent-xyz is not on the PATH/);
      assert.equal((await server.snapshot()).panes.toArray().length, before);
    });
  });

  it('runs a command that names its own PATH with that PATH', async () => {
    const own = { agent: { name: 'agent', interactiveCommand: `PATH=${withAgent} path-agent-xyz --go`, profiles: {} } };
    await across(systemPath, systemPath, async (port, server) => {
      const opened = await openAgentPane(port, { provider: 'agent', providers: own, cwd: dir, env: { PATH: systemPath }, startupCheckMs: 300 });
      assert.equal(await alive(server, opened.paneId), '0 sleep');
    });
  });

  it('shows the last lines of a command line the shell cannot run, `not found` and all', async () => {
    const shell = { agent: { name: 'agent', interactiveCommand: 'path-agent-xyz --go || { sleep 0.2; exit 127; }', profiles: {} } };
    await across(withAgent, withAgent, async (port) => {
      await assert.rejects(openAgentPane(port, { provider: 'agent', providers: shell, cwd: dir, env: { PATH: systemPath } }), (error) => {
        assert.ok(error instanceof AgentExitedError);
        assert.equal(error.exitStatus, 127);
        assert.match(error.lastLines, /path-agent-xyz: .*not found/);
        return true;
      });
    });
  });
});
