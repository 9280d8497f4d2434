import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Pane, Server } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, jsonLines, write, type McpSession } from '../support/mcp.js';
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
    session = await connectMcp(['-S', server.endpoint.socketPath, '--allow', 'observe'], sandbox.env);
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

  it('reads messages up to 1 MiB, refuses a longer one with a JSON-RPC error, and keeps serving', async () => {
    const replies = jsonLines(session.child.stdout);
    try {
      const ping = (id: string): string => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });
      // A ping padded with JSON whitespace to exactly the limit is read and answered.
      const atLimit = ping('at-limit').padEnd(1024 * 1024, ' ');
      await write(session.child.stdin, `${atLimit}\n${'x'.repeat(1024 * 1024 + 1)}\n`);
      const tools = await session.client.listTools();
      assert.ok(tools.tools.length > 0, 'the server still answers');
      const answered = await replies.until((message) => message.id === 'at-limit');
      assert.deepEqual(answered.result, {});
      const refused = await replies.until((message) => message.id === null);
      assert.deepEqual(refused.error, { code: -32600, message: 'request refused: a message longer than 1048576 bytes was not read; send it in smaller requests' });
    } finally {
      replies.stop();
    }
  });
});

describe('drover mcp stdio bounds', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let pane: Pane;

  before(async () => {
    server = await startTestServer();
    pane = (await (await server.newSession({ name: 'bounds', command: ['cat'] })).listPanes())[0]!;
  });
  after(async () => {
    await server.close();
  });

  async function open(...args: string[]): Promise<McpSession> {
    const session = await connectMcp(['-S', server.endpoint.socketPath, '--allow', 'observe', ...args], sandbox.env);
    // listTools first: the client then checks every result against its tool's output schema.
    await session.client.listTools();
    return session;
  }

  const waitFor = (session: McpSession, text: string, timeoutMs: number): Promise<CallToolResult> =>
    session.client.callTool({ name: 'wait_for_text', arguments: { pane_id: pane.id, text, timeout_ms: timeoutMs } }) as Promise<CallToolResult>;

  it('runs four requests at once and admits 32 in all; the 33rd is refused with a JSON-RPC error', async () => {
    const session = await open('--timeout-ms', '30000');
    try {
      const settled: string[] = [];
      const markers = ['bound-one', 'bound-two', 'bound-three', 'bound-four'];
      const waits = markers.map((marker) => waitFor(session, marker, 20_000).then((result) => (settled.push(`wait ${marker}`), result)));
      // Four waits hold every turn: each ping below waits for one, and the last finds no room.
      const pings = Array.from({ length: 29 }, (_, i) =>
        session.client.ping().then(
          () => (settled.push(`ping ${i}`), 'answered'),
          (error: { code?: number; message?: string }) => (settled.push(`ping ${i}`), `refused ${error.code}: ${error.message}`),
        ),
      );
      const refused = await pings[28]!;
      assert.match(refused, /^refused -32003: .*server busy: 32 requests are admitted already/);
      for (const marker of markers) await server.pane(pane.id).sendText(`${marker}\n`);
      const results = await Promise.all(waits);
      for (const result of results) assert.equal((result.structuredContent as { matched: boolean }).matched, true);
      assert.deepEqual((await Promise.all(pings.slice(0, 28))).filter((outcome) => outcome !== 'answered'), []);
      const firstWait = settled.findIndex((entry) => entry.startsWith('wait'));
      assert.deepEqual(
        settled.slice(0, firstWait).filter((entry) => entry !== 'ping 28'),
        [],
        'no admitted ping was answered before a wait gave up its turn',
      );
    } finally {
      await session.close();
    }
  });

  it('counts the time a request waited for a turn against its 5 s deadline', async () => {
    const session = await open();
    try {
      const busy = Array.from({ length: 4 }, () => waitFor(session, 'never-printed-bounds', 1500));
      const queued = waitFor(session, 'printed-once-the-turns-free', 60_000);
      await Promise.all(busy);
      // Matched at once, the queued wait answers far from its deadline, however slow the machine.
      await server.pane(pane.id).sendText('printed-once-the-turns-free\n');
      const answer = await queued;
      assert.equal(answer.isError, undefined, JSON.stringify(answer.content));
      const { matched, timeout_ms_used: used } = answer.structuredContent as { matched: boolean; timeout_ms_used: number };
      assert.equal(matched, true);
      assert.ok(used <= 4750 - 1400, `the queued wait was given ${used} ms of the 4750 a fresh one gets`);
    } finally {
      await session.close();
    }
  });

  it('ends the session, exit 1, when the client stops reading its answers', async () => {
    const session = await connectMcp(['-S', server.endpoint.socketPath], sandbox.env);
    session.child.stdout.pause();
    // The server stops reading when it gives up, so the rest of this write meets a closed pipe.
    session.child.stdin.on('error', () => undefined);
    const pings = Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', id: `flood-${i}`, method: 'ping' })).join('\n');
    session.child.stdin.write(`${pings}\n`);
    const exit = await session.child.exited;
    assert.equal(exit.exitCode, 1);
    assert.match(session.child.stderr().tail.toString(), /the MCP session ended: the client took none of \d+ bytes of answers for 500 ms; it is not reading/);
  });
});
