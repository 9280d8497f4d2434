import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Application, CaptureStore, ToolPolicy, defineTool, toolCatalog, type ToolDefinition } from '../../src/mcp/index.js';
import { run } from '../../src/process/index.js';
import { ServerUnreachableError, type Server } from '../../src/tmux/index.js';
import { startTestServer } from '../support/tmux.js';

const echo = defineTool({
  name: 'echo_size',
  tier: 'readonly',
  group: 'observe',
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
  group: 'observe',
  title: 'Slow',
  description: 'Waits for the request signal.',
  input: z.object({}),
  output: z.object({ done: z.boolean() }),
  async run(context) {
    await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }));
    return { done: true };
  },
});

/** A tool whose child process (as a tmux call would be) outlives the request's deadline. */
function childPast(name: string, tier: 'readonly' | 'mutating'): ToolDefinition {
  return defineTool({
    name,
    tier,
    group: 'observe',
    title: 'Child past the deadline',
    description: 'Runs a child that takes longer than the request may.',
    input: z.object({}),
    output: z.object({ done: z.boolean() }),
    async run(context) {
      await run(['sleep', '5'], { signal: context.signal, timeoutMs: 10_000 });
      return { done: true };
    },
  }) as ToolDefinition;
}

const liar = defineTool({
  name: 'liar',
  tier: 'readonly',
  group: 'observe',
  title: 'Liar',
  description: 'Returns something its output schema does not allow.',
  input: z.object({}),
  output: z.object({ count: z.number() }),
  async run() {
    return { count: 'many' } as never;
  },
});

/** Returns a key its output schema does not declare, as a row built apart from its schema would. */
const drifted = defineTool({
  name: 'drifted',
  tier: 'readonly',
  group: 'observe',
  title: 'Drifted',
  description: 'Returns one key more than its output schema declares.',
  input: z.object({}),
  output: z.strictObject({ count: z.number() }),
  async run() {
    return { count: 1, agent: 'claude' } as never;
  },
});

const typing = defineTool({
  name: 'typing',
  tier: 'mutating',
  group: 'input',
  title: 'Typing',
  description: 'Stands for a tool that changes things.',
  input: z.object({}),
  output: z.strictObject({ done: z.boolean() }),
  async run() {
    return { done: true };
  },
});

describe('Application', () => {
  let server: Server;
  let client: Client;
  let application: Application;

  before(async () => {
    server = await startTestServer();
    const tools = [echo, slow, liar, drifted] as ToolDefinition[];
    application = new Application({ server, tools, policy: ToolPolicy.resolve({ allow: ['observe'] }, toolCatalog(tools)), responseBytes: 1000, requestTimeoutMs: 300 });
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

  it('reports a call its deadline cut short as timed_out: not sent for a read-only tool, possibly sent for one that changes things', async (t) => {
    const tools = [childPast('reads_long', 'readonly'), childPast('writes_long', 'mutating')];
    const cut = new Application({ server, tools, policy: ToolPolicy.resolve({ allow: ['observe'] }, toolCatalog(tools)), requestTimeoutMs: 300 });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await cut.mcp.connect(serverSide);
    const caller = new Client({ name: 't', version: '1' });
    await caller.connect(clientSide);
    t.after(async () => {
      await caller.close();
      await cut.close();
    });
    for (const [name, delivery] of [['reads_long', 'not_sent'], ['writes_long', 'possibly_sent']] as const) {
      const result = (await caller.callTool({ name, arguments: {} })) as CallToolResult;
      assert.equal(result.isError, true);
      const { error } = JSON.parse((result.content as { text: string }[])[0]!.text) as { error: { code: string; delivery: string; message: string } };
      assert.deepEqual([error.code, error.delivery], ['timed_out', delivery], name);
      assert.match(error.message, /did not finish within its 300 ms deadline/);
    }
  });

  it('checks results against the output schema', async () => {
    await assert.rejects(async () => {
      const result = (await client.callTool({ name: 'liar', arguments: {} })) as CallToolResult;
      if (result.isError) throw new Error(JSON.stringify(result.content));
    }, /output|schema|count/i);
  });

  it('refuses, on the server, a result with a key its schema does not declare', async () => {
    await client.listTools();
    const result = (await client.callTool({ name: 'drifted', arguments: {} })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /Output validation error: .*drifted.*Unrecognized key.*agent/);
    assert.equal(result.structuredContent, undefined);
  });

  it('refuses an argument the tool does not name', async () => {
    const result = (await client.callTool({ name: 'echo_size', arguments: { size: 1, sise: 2 } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(JSON.stringify(result.content), /Unrecognized key.*sise/);
  });

  it('answers capabilities without a tmux server, saying none was reachable', async () => {
    const tools = [typing] as ToolDefinition[];
    const offline = new Application({
      server: () => Promise.reject(new ServerUnreachableError('no server here')),
      tools,
      policy: ToolPolicy.resolve({}, toolCatalog(tools)),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await offline.mcp.connect(serverSide);
    const reader = new Client({ name: 't', version: '1' });
    await reader.connect(clientSide);
    try {
      assert.deepEqual((await reader.listTools()).tools.map((tool) => tool.name), ['capabilities']);
      const about = (await reader.callTool({ name: 'capabilities', arguments: {} })) as CallToolResult;
      const report = about.structuredContent as { multiplexer: { reachable: boolean; version: null }; tools: { name: string; enabled: boolean }[] };
      assert.deepEqual([report.multiplexer.reachable, report.multiplexer.version], [false, null]);
      assert.deepEqual(report.tools, [
        { name: 'capabilities', group: 'core', tier: 'readonly', enabled: true },
        { name: 'typing', group: 'input', tier: 'mutating', enabled: false },
      ]);
    } finally {
      await reader.close();
      await offline.close();
    }
  });

  it('refuses a response bound under 4096 bytes when a tool that changes things is on', () => {
    const tools = [typing] as ToolDefinition[];
    const make = (allow: string[], responseBytes: number): Application =>
      new Application({ server, tools, policy: ToolPolicy.resolve({ allow }, toolCatalog(tools)), responseBytes });
    assert.throws(() => make(['input'], 4095), /a response bound of 4095 bytes leaves no room .*\(typing\) need at least 4096/);
    assert.equal(make([], 4095).policy.allows('typing'), false, 'read-only tools alone may have a smaller bound');
    assert.ok(make(['input'], 4096).policy.allows('typing'));
  });
});

describe('ToolPolicy and CaptureStore', () => {
  it('enables core alone by default, and groups, tiers and single tools only when asked', () => {
    const catalog = new Map([
      ['about', { tier: 'readonly', group: 'core' }],
      ['screen', { tier: 'readonly', group: 'observe' }],
      ['secrets', { tier: 'readonly', group: 'environment' }],
      ['type', { tier: 'mutating', group: 'input' }],
      ['kill', { tier: 'destructive', group: 'destroy' }],
    ] as const);
    const enabled = (spec: Parameters<typeof ToolPolicy.resolve>[0]): string[] => [...ToolPolicy.resolve(spec, catalog).enabled].sort();
    assert.deepEqual(enabled({}), ['about']);
    assert.deepEqual(enabled({ allow: ['observe'] }), ['about', 'screen']);
    assert.deepEqual(enabled({ allow: ['observe,input'] }), ['about', 'screen', 'type']);
    assert.deepEqual(enabled({ tier: 'readonly' }), ['about', 'screen', 'secrets']);
    assert.deepEqual(enabled({ tier: 'mutating' }), ['about', 'screen', 'secrets', 'type']);
    assert.deepEqual(enabled({ enable: ['kill'] }), ['about', 'kill']);
    assert.deepEqual([...ToolPolicy.resolve({ allow: ['input'] }, catalog).groups].sort(), ['core', 'input']);
    assert.equal(ToolPolicy.resolve({}, catalog).tier, null);
    assert.throws(() => ToolPolicy.resolve({ enable: ['z'] }, catalog), /unknown tool "z"; tools: about, kill, screen, secrets, type/);
    assert.throws(() => ToolPolicy.resolve({ allow: ['screens'] }, catalog), /unknown group "screens"; groups: core, observe, environment, buffers/);
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
