import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '../../src/tmux/index.js';
import { eventually, screenShows, startFakeAgent } from '../panes/live.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { RestartableServer, startTestServer } from '../support/tmux.js';

function ok(result: unknown): Record<string, unknown> {
  const call = result as CallToolResult;
  assert.notEqual(call.isError, true, JSON.stringify(call.content));
  return call.structuredContent as Record<string, unknown>;
}

describe('drover mcp agent tools', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let session: McpSession;

  before(async () => {
    server = await startTestServer();
    session = await connectMcp(['-S', server.endpoint.socketPath, '--tier', 'mutating'], sandbox.env);
  });

  after(async () => {
    await session.close();
    await server.close();
  });

  it('maps panes, probes readiness, delivers a verified prompt and finds a question', async () => {
    const agent = await startFakeAgent(server, ['--busy-ms', '300'], { hook: true });
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; worktree: string }[] };
    assert.ok(map.panes.some((row) => row.pane_id === agent.id));
    // The agent reports "idle" through its hook (a node process) after its first screen; let
    // that finish so the probe's settle measures the agent's echo, not a machine busy starting it.
    await eventually('the agent to report idle', async () => {
      const rows = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; agent_state: string | null }[] };
      return rows.panes.find((row) => row.pane_id === agent.id)?.agent_state === 'idle' ? true : undefined;
    });

    const ready = ok(await session.client.callTool({ name: 'ready', arguments: { pane_id: agent.id } }));
    assert.equal(ready.state, 'ready');

    const delivered = ok(await session.client.callTool({ name: 'deliver', arguments: { pane_id: agent.id, text: 'please ask:yes_no' } }));
    assert.deepEqual([delivered.status, delivered.evidence], ['submitted', 'composer_cleared'], String(delivered.reason));
    await screenShows(agent, '[y/n]');
    // The agent reports "waiting" through its hook, a moment after drawing the question.
    await eventually('the agent to report waiting', async () => {
      const rows = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; agent_state: string | null }[] };
      return rows.panes.find((row) => row.pane_id === agent.id)?.agent_state === 'waiting' ? true : undefined;
    });

    const sweep = ok(await session.client.callTool({ name: 'questions', arguments: { panes: [agent.id] } })) as { matches: { pane_id: string; indicator: string }[]; skipped: unknown[] };
    assert.deepEqual(sweep.matches.map((m) => [m.pane_id, m.indicator]), [[agent.id, 'yes_no']]);
  });

  it('names panes by key, and refuses a key of another server run before anything is typed', async () => {
    const agent = await startFakeAgent(server);
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
    const key = map.panes.find((row) => row.pane_id === agent.id)!.pane_key;
    assert.match(key, new RegExp(`^local::tmux::[^:]+::${agent.id}$`));
    const ready = ok(await session.client.callTool({ name: 'ready', arguments: { pane_key: key } }));
    assert.deepEqual([ready.state, ready.pane_id, ready.pane_key], ['ready', agent.id, key]);
    const sweep = ok(await session.client.callTool({ name: 'questions', arguments: { panes: [key] } })) as { skipped: { pane_key: string }[] };
    assert.deepEqual(sweep.skipped.map((row) => row.pane_key), [key]);

    const before = await server.pane(agent.id).capture();
    const stale = key.replace(/::tmux::[^:]+::/, '::tmux::1-1::');
    for (const [name, args] of [
      ['deliver', { pane_key: stale, text: 'must not be typed' }],
      ['ready', { pane_key: stale }],
    ] as const) {
      const refused = (await session.client.callTool({ name, arguments: args })) as CallToolResult;
      assert.equal(refused.isError, true, name);
      const { error } = JSON.parse((refused.content[0] as { text: string }).text) as { error: { code: string; delivery: string } };
      assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent'], name);
    }
    const both = (await session.client.callTool({ name: 'deliver', arguments: { pane_id: agent.id, pane_key: key, text: 'x' } })) as CallToolResult;
    assert.match((both.content[0] as { text: string }).text, /"code":"usage".*exactly one of pane_id and pane_key/);
    assert.deepEqual(await server.pane(agent.id).capture(), before, 'nothing was typed');
  });
});

describe('drover mcp agent tools across a restart of the tmux server at the same socket', () => {
  const sandbox = cliSandbox();

  it('refuses the old run’s pane key and types nothing into the new server', async (t) => {
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat']);
    const session = await connectMcp(['-S', tmux.socketPath, '--tier', 'mutating'], sandbox.env);
    t.after(() => session.close());
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
    const key = map.panes.find((row) => row.pane_id === '%0')!.pane_key;

    await tmux.restart(['cat']);
    const refused = (await session.client.callTool({ name: 'deliver', arguments: { pane_key: key, text: 'hello-drover-42' } })) as CallToolResult;
    assert.equal(refused.isError, true);
    assert.equal((JSON.parse((refused.content[0] as { text: string }).text) as { error: { code: string } }).error.code, 'server_replaced');
    assert.equal(await tmux.tmuxCommand('list-panes', '-a', '-F', '#{pane_id} #{pane_current_command}'), '%0 cat\n');
    assert.ok(!(await tmux.history('%0')).includes('hello-drover-42'), 'nothing reached the new %0');
  });
});
