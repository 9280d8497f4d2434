import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SqliteStore, openBroker } from '../../src/fleet/index.js';
import type { Server } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer } from '../support/tmux.js';

describe('drover mcp fleet tools', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let session: McpSession;
  let director: number;
  let member: number;

  before(async () => {
    server = await startTestServer();
    const broker = await openBroker({ env: sandbox.env });
    try {
      const created = await broker.createFleet({ name: 'mcp', codingAgent: 'shell', directorPlacement: { backend: 'tmux', session: 'x', window: '@1', pane: '%1' } });
      director = created.director.memberId;
      // A pending placement: the message is stored and held, never typed anywhere.
      member = (await broker.registerMember({ fleetId: created.fleet.fleetId, name: 'worker', codingAgent: 'shell', placement: { backend: 'tmux', session: 'x', window: '@1' } })).memberId;
    } finally {
      await broker.close();
    }
    session = await connectMcp(['-S', server.endpoint.socketPath, '--tier', 'mutating'], sandbox.env);
  });

  after(async () => {
    await session.close();
    await server.close();
  });

  it('sends, polls and acknowledges messages when a fleet database exists', async () => {
    const names = (await session.client.listTools()).tools.map((t) => t.name);
    assert.ok(['message_send', 'message_poll', 'message_ack'].every((n) => names.includes(n)));
    const sent = (await session.client.callTool({ name: 'message_send', arguments: { from: director, to: member, text: 'review ⏎ the plan' } })) as CallToolResult;
    assert.notEqual(sent.isError, true, JSON.stringify(sent.content));
    const message = (sent.structuredContent as { message: { message_id: number; text: string }; notification_sent: boolean }).message;
    assert.equal(message.text, 'review ⏎ the plan');
    const polled = (await session.client.callTool({ name: 'message_poll', arguments: { member } })) as CallToolResult;
    assert.deepEqual((polled.structuredContent as { messages: { message_id: number }[] }).messages.map((m) => m.message_id), [message.message_id]);
    const acked = (await session.client.callTool({ name: 'message_ack', arguments: { member, message_id: message.message_id } })) as CallToolResult;
    assert.equal((acked.structuredContent as { message: { status_state: string } }).message.status_state, 'completed');
    const wrong = (await session.client.callTool({ name: 'message_ack', arguments: { member: director, message_id: message.message_id } })) as CallToolResult;
    assert.equal(wrong.isError, true);
  });

  it('offers no fleet tools without a database', async () => {
    const plain = await connectMcp(['-S', server.endpoint.socketPath, '--tier', 'mutating'], { ...sandbox.env, DROVER_DB: `${sandbox.dir}/none/drover.db` });
    try {
      assert.ok(!(await plain.client.listTools()).tools.some((t) => t.name.startsWith('message_')));
    } finally {
      await plain.close();
    }
    const refused = await sandbox.drover(['mcp', '-S', server.endpoint.socketPath, '--enable-tool', 'message_send'], { env: { DROVER_DB: `${sandbox.dir}/none/drover.db` } });
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderrText(), /need a fleet database/);
  });

  it('message_poll reads only: a database gone since start is an error, not a new empty one', async () => {
    const dir = mkdtempSync(join(sandbox.dir, 'moved-'));
    const path = join(dir, 'drover.db');
    SqliteStore.open({ path }).db.close();
    const reader = await connectMcp(['-S', server.endpoint.socketPath, '--allow', 'fleet'], { ...sandbox.env, DROVER_DB: path });
    try {
      rmSync(dir, { recursive: true, force: true });
      const polled = (await reader.client.callTool({ name: 'message_poll', arguments: { member } })) as CallToolResult;
      assert.equal(polled.isError, true);
      assert.match(JSON.stringify(polled.content), /no drover database at/);
      assert.equal(existsSync(dir), false, 'neither the database nor its directory was created');
    } finally {
      await reader.close();
    }
  });
});
