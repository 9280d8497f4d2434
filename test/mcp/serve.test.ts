import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { MAX_REQUEST_BYTES, boundedLines, oversizedRequestResponse } from '../../src/mcp/index.js';
import type { Server } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer } from '../support/tmux.js';

interface ErrorDocument {
  error: { code: string; message: string; phase?: string; delivery?: string };
}

/** A failed call's error document (its only content). */
function refusal(result: CallToolResult): ErrorDocument['error'] {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result.structuredContent)}`);
  assert.equal(result.structuredContent, undefined, 'clients check structured content against the output schema');
  const content = result.content as { type: string; text: string }[];
  assert.equal(content.length, 1);
  return (JSON.parse(content[0]!.text) as ErrorDocument).error;
}

describe('boundedLines', () => {
  it('passes lines within the limit, refuses a longer one as it arrives, and keeps reading after it', async () => {
    const input = new PassThrough();
    const refused: string[] = [];
    const lines = boundedLines(input, 8, (response) => refused.push(response));
    const out: Buffer[] = [];
    lines.on('data', (chunk: Buffer) => out.push(chunk));
    input.write('12345678\nabc');
    input.write('defghijklmnop');
    input.write('qrs\nok\n');
    input.end('tail');
    await new Promise((resolve) => lines.on('end', resolve));
    assert.equal(Buffer.concat(out).toString(), '12345678\nok\n', 'an unterminated tail is never a message');
    assert.deepEqual(refused, [oversizedRequestResponse(8)]);
    assert.deepEqual(JSON.parse(refused[0]!), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: 'request refused: a message longer than 8 bytes was not read; send it in smaller requests' },
    });
  });
});

describe('drover mcp before any tmux server runs', () => {
  const sandbox = cliSandbox();
  let session: McpSession;
  before(async () => {
    session = await connectMcp([], sandbox.env);
  });
  after(() => session.close());

  it('starts and lists its tools, reports the missing server per call, then finds the server drover up started', async () => {
    assert.ok((await session.client.listTools()).tools.some((tool) => tool.name === 'snapshot'));
    const missing = refusal((await session.client.callTool({ name: 'snapshot', arguments: {} })) as CallToolResult);
    assert.equal(missing.code, 'unreachable');
    assert.match(missing.message, /^no tmux server is running: drover looked for tmux's default server \(.+\); start one with `.+ up` or name one with -L\/-S$/);

    const up = await sandbox.drover(['up', '--json']);
    try {
      assert.equal(up.exitCode, 0, up.stderrText());
      const snapshot = (await session.client.callTool({ name: 'snapshot', arguments: {} })) as CallToolResult;
      assert.notEqual(snapshot.isError, true, JSON.stringify(snapshot.content));
      assert.deepEqual((snapshot.structuredContent as { sessions: { session_name: string }[] }).sessions.map((entry) => entry.session_name), ['drover']);
    } finally {
      await sandbox.drover(['down']);
    }
  });
});

describe('drover mcp errors and frames', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let session: McpSession;
  before(async () => {
    server = await startTestServer();
    await server.newSession({ name: 'work', command: ['sleep', '600'] });
    session = await connectMcp(['-S', server.endpoint.socketPath], sandbox.env);
  });
  after(async () => {
    await session.close();
    await server.close();
  });

  it('reports a failure as a structured error that echoes neither the input nor tmux', async () => {
    const gone = refusal((await session.client.callTool({ name: 'capture', arguments: { pane_id: '%4242' } })) as CallToolResult);
    assert.equal(gone.code, 'not_found');
    assert.equal(gone.message, 'not found: no such session, window or pane on this tmux server');
    assert.doesNotMatch(JSON.stringify(gone), /4242|can't find/);
  });

  it('refuses a request line over the limit with a JSON-RPC error and keeps serving', async () => {
    const replies: Buffer[] = [];
    const listen = (chunk: Buffer): number => replies.push(chunk);
    session.child.stdout.on('data', listen);
    try {
      const line = Buffer.alloc(MAX_REQUEST_BYTES + 1, 'x');
      await new Promise<void>((resolve, reject) => session.child.stdin.write(Buffer.concat([line, Buffer.from('\n')]), (error) => (error ? reject(error) : resolve())));
      const tools = await session.client.listTools();
      assert.ok(tools.tools.length > 0, 'the server still answers');
      assert.ok(Buffer.concat(replies).toString('utf8').includes(oversizedRequestResponse(MAX_REQUEST_BYTES)), 'the oversized line got its error response');
    } finally {
      session.child.stdout.off('data', listen);
    }
  });
});
