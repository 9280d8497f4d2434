import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '../../src/tmux/index.js';
import { eventually, screenShows, startFakeAgent } from '../panes/live.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer } from '../support/tmux.js';

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
});
