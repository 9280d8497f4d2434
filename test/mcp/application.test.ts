import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Application, CaptureStore, ToolPolicy, defineTool, toolCatalog, type ToolDefinition } from '../../src/mcp/index.js';
import type { Server } from '../../src/tmux/index.js';
import { startTestServer } from '../support/tmux.js';

const echo = defineTool({
  name: 'echo_size',
  tier: 'readonly',
  title: 'Echo',
  description: 'Returns a string of the requested size.',
  input: z.object({ size: z.number().int().min(0) }),
  output: z.object({ text: z.string() }),
  async run(_context, input) {
    return { text: 'x'.repeat(input.size) };
  },
});

const slow = defineTool({
  name: 'slow',
  tier: 'readonly',
  title: 'Slow',
  description: 'Waits for the request signal.',
  input: z.object({}),
  output: z.object({ done: z.boolean() }),
  async run(context) {
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
    return { done: true };
  },
});

const liar = defineTool({
  name: 'liar',
  tier: 'readonly',
  title: 'Liar',
  description: 'Returns something its output schema does not allow.',
  input: z.object({}),
  output: z.object({ count: z.number() }),
  async run() {
    return { count: 'many' } as never;
  },
});

describe('Application', () => {
  let server: Server;
  let client: Client;
  let application: Application;

  before(async () => {
    server = await startTestServer();
    const tools = [echo, slow, liar] as ToolDefinition[];
    application = new Application({ server, tools, policy: ToolPolicy.resolve({}, toolCatalog(tools)), responseBytes: 1000, requestTimeoutMs: 300 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await application.mcp.connect(serverSide);
    client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
  });

  after(async () => {
    await client.close();
    await application.close();
    await server.close();
  });

  it('bounds the response size', async () => {
    const small = (await client.callTool({ name: 'echo_size', arguments: { size: 10 } })) as CallToolResult;
    assert.deepEqual(small.structuredContent, { text: 'x'.repeat(10) });
    const large = (await client.callTool({ name: 'echo_size', arguments: { size: 2000 } })) as CallToolResult;
    assert.equal(large.isError, true);
    assert.match(JSON.stringify(large.content), /larger than 1000 bytes/);
  });

  it('ends a request at its deadline', async () => {
    const started = Date.now();
    const result = (await client.callTool({ name: 'slow', arguments: {} })) as CallToolResult;
    assert.ok(Date.now() - started < 2000);
    assert.deepEqual(result.structuredContent, { done: true });
  });

  it('checks results against the output schema', async () => {
    await assert.rejects(async () => {
      const result = (await client.callTool({ name: 'liar', arguments: {} })) as CallToolResult;
      if (result.isError) throw new Error(JSON.stringify(result.content));
    }, /output|schema|count/i);
  });
});

describe('ToolPolicy and CaptureStore', () => {
  it('enables tiers cumulatively and names valid choices on error', () => {
    const catalog = new Map([
      ['a', 'readonly'],
      ['b', 'mutating'],
      ['c', 'destructive'],
    ] as const);
    assert.deepEqual([...ToolPolicy.resolve({}, catalog).enabled], ['a']);
    assert.deepEqual([...ToolPolicy.resolve({ tier: 'mutating' }, catalog).enabled], ['a', 'b']);
    assert.deepEqual([...ToolPolicy.resolve({ enable: ['c'] }, catalog).enabled], ['a', 'c']);
    assert.throws(() => ToolPolicy.resolve({ enable: ['z'] }, catalog), /tools: a, b, c/);
    assert.throws(() => ToolPolicy.resolve({ tier: 'all' }, catalog), /tiers: readonly, mutating, destructive/);
  });

  it('keeps at most 16 captures and 8 MiB for 30 s', () => {
    let now = 0;
    const store = new CaptureStore(undefined, () => now);
    const cursors = Array.from({ length: 17 }, (_, i) => store.retain({ paneId: '%1', lastLine: i, text: 'x' }));
    assert.equal(store.size, 16);
    assert.throws(() => store.take(cursors[0]!, '%1'), /unknown or expired/);
    assert.equal(store.take(cursors[16]!, '%1').lastLine, 16);
    assert.throws(() => store.take(cursors[16]!, '%2'), /another pane/);
    store.retain({ paneId: '%1', lastLine: 0, text: 'y'.repeat(5 * 1024 * 1024) });
    store.retain({ paneId: '%1', lastLine: 0, text: 'z'.repeat(5 * 1024 * 1024) });
    assert.ok(store.retainedBytes <= 8 * 1024 * 1024);
    now += 30_001;
    assert.throws(() => store.take(cursors[16]!, '%1'), /unknown or expired/);
  });
});
