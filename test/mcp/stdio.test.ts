import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, it } from 'node:test';
import { z } from 'zod';
import { Application, STDIO_ERRORS, StdioTransport, ToolPolicy, defineTool, toolCatalog, type StdioLimits, type ToolDefinition } from '../../src/mcp/index.js';
import { ServerUnreachableError } from '../../src/tmux/index.js';
import { jsonLines, type WireMessage, type WireReader } from '../support/mcp.js';

/** Calls that wait until the test releases them by key, recording when each started and its deadline. */
class Gate {
  readonly started: string[] = [];
  readonly deadlines = new Map<string, number>();
  private readonly releases = new Map<string, () => void>();
  private readonly starts = new Map<string, () => void>();

  release(key: string): void {
    this.releases.get(key)?.();
  }

  /** Resolves once the call with this key has started. */
  startOf(key: string): Promise<void> {
    return this.started.includes(key) ? Promise.resolve() : new Promise((resolve) => this.starts.set(key, resolve));
  }

  tool(): ToolDefinition {
    return defineTool({
      name: 'hold',
      tier: 'readonly',
      group: 'core',
      needsServer: false,
      title: 'Hold',
      description: 'Waits until released (or, unless stubborn, aborted).',
      input: z.object({ key: z.string(), stubborn: z.boolean().optional(), padding: z.string().optional() }),
      output: z.strictObject({ key: z.string() }),
      run: async (context, input) => {
        this.started.push(input.key);
        this.deadlines.set(input.key, context.deadlineMs);
        this.starts.get(input.key)?.();
        await new Promise<void>((resolve) => {
          this.releases.set(input.key, resolve);
          if (input.stubborn !== true) context.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        return { key: input.key };
      },
    });
  }
}

interface Session {
  readonly transport: StdioTransport;
  readonly input: PassThrough;
  readonly output: PassThrough;
  readonly wire: WireReader;
  readonly gate: Gate;
  send(message: object | string): void;
  hold(id: string, args?: Record<string, unknown>): void;
  answer(id: string): Promise<WireMessage>;
}

const open: Session[] = [];

async function session(limits: Partial<StdioLimits>, output = new PassThrough()): Promise<Session> {
  const input = new PassThrough();
  const gate = new Gate();
  const transport = new StdioTransport(input, output, limits);
  const tools = [gate.tool()];
  const application = new Application({
    server: () => Promise.reject(new ServerUnreachableError('no tmux server in this test')),
    tools,
    policy: ToolPolicy.resolve({}, toolCatalog(tools)),
    requestTimeoutMs: limits.requestTimeoutMs,
    remainingMs: (id) => transport.remainingMs(id),
  });
  const wire = jsonLines(output);
  await application.mcp.connect(transport);
  const send = (message: object | string): void => {
    input.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  };
  const created: Session = {
    transport,
    input,
    output,
    wire,
    gate,
    send,
    hold: (id, args = {}) => send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hold', arguments: { key: id, ...args } } }),
    answer: (id) => wire.until((message) => message.id === id),
  };
  send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'stdio-test', version: '1' } } });
  await created.answer('init');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  open.push(created);
  return created;
}

afterEach(async () => {
  for (const each of open.splice(0)) await each.transport.close();
});

describe('StdioTransport', () => {
  it('runs at most maxActiveRequests at once and starts a waiting one when a turn frees', async () => {
    const s = await session({ maxActiveRequests: 2 });
    s.hold('a');
    s.hold('b');
    s.hold('c');
    await s.gate.startOf('b');
    assert.deepEqual(s.transport.load, { running: 2, waiting: 1, queuedBytes: s.transport.load.queuedBytes });
    assert.deepEqual(s.gate.started, ['a', 'b']);
    s.gate.release('a');
    assert.equal((await s.answer('a')).error, undefined);
    await s.gate.startOf('c');
    assert.deepEqual(s.gate.started, ['a', 'b', 'c']);
  });

  it('refuses a request beyond maxRequests, running and waiting counted, with a JSON-RPC error, and serves on', async () => {
    const s = await session({ maxActiveRequests: 1, maxRequests: 3 });
    for (const id of ['a', 'b', 'c', 'd']) s.hold(id);
    const refused = await s.answer('d');
    assert.equal(refused.error?.code, STDIO_ERRORS.busy);
    assert.match(refused.error?.message ?? '', /server busy: 3 requests are admitted already/);
    await s.gate.startOf('a');
    assert.deepEqual(s.gate.started, ['a']);
    s.gate.release('a');
    await s.answer('a');
    s.hold('e');
    await s.gate.startOf('b');
    assert.equal(s.transport.load.waiting, 2, 'c and e wait: e was admitted once a answered');
  });

  it('refuses a waiting request whose bytes would pass maxQueuedBytes, and admits a smaller one', async () => {
    const s = await session({ maxActiveRequests: 1, maxQueuedBytes: 10_000, maxFrameBytes: 8000 });
    s.hold('running');
    await s.gate.startOf('running');
    s.hold('big-1', { padding: 'x'.repeat(6000) });
    s.hold('big-2', { padding: 'x'.repeat(6000) });
    s.hold('small');
    const refused = await s.answer('big-2');
    assert.equal(refused.error?.code, STDIO_ERRORS.busy);
    assert.match(refused.error?.message ?? '', /more than 10000 bytes/);
    assert.equal(s.transport.load.waiting, 2, 'big-1 and small wait');
  });

  it('answers a message longer than maxFrameBytes with -32600 and reads on', async () => {
    const s = await session({ maxFrameBytes: 200 });
    s.send(`{"jsonrpc":"2.0","id":"long","method":"ping","params":{"pad":"${'x'.repeat(300)}"}}`);
    s.send({ jsonrpc: '2.0', id: 'after', method: 'ping' });
    assert.deepEqual((await s.answer('after')).result, {});
    const refused = await s.wire.until((message) => message.id === null);
    assert.equal(refused.error?.code, -32600);
    assert.equal(s.wire.messages.some((message) => message.id === 'long'), false, 'the long message was not read');
  });

  it('answers what is not JSON or not JSON-RPC, and reads on', async () => {
    const s = await session({});
    s.send('{not json');
    s.send({ jsonrpc: '1.0', id: 'old', method: 'ping' });
    s.send({ jsonrpc: '2.0', id: 'fine', method: 'ping' });
    await s.answer('fine');
    assert.equal((await s.wire.until((message) => message.error?.code === STDIO_ERRORS.parse)).id, null);
    assert.equal((await s.answer('old')).error?.code, -32600);
  });

  it('counts the time a request waited for a turn against its deadline', async () => {
    const s = await session({ maxActiveRequests: 1, requestTimeoutMs: 2000 });
    s.hold('first');
    s.hold('second');
    await s.gate.startOf('first');
    // Keep the second one waiting a while before the first ends.
    await sleep(300);
    s.gate.release('first');
    await s.gate.startOf('second');
    assert.ok(s.gate.deadlines.get('first')! > 1900);
    assert.ok(s.gate.deadlines.get('second')! <= 1700, `the second had ${s.gate.deadlines.get('second')} ms left`);
  });

  it('answers a request that waited past its deadline with a timeout, and never runs it', async () => {
    const s = await session({ maxActiveRequests: 1, requestTimeoutMs: 300, cleanupTimeoutMs: 2000 });
    s.hold('stuck', { stubborn: true });
    s.hold('waiting');
    const timedOut = await s.answer('waiting');
    assert.equal(timedOut.error?.code, STDIO_ERRORS.timeout);
    assert.match(timedOut.error?.message ?? '', /waited for a turn/);
    assert.deepEqual(s.gate.started, ['stuck']);
  });

  it('answers a running request that outlives its deadline by the cleanup bound, and frees its turn', async () => {
    const s = await session({ maxActiveRequests: 1, requestTimeoutMs: 300, cleanupTimeoutMs: 200 });
    const sent = Date.now();
    s.hold('stuck', { stubborn: true });
    const timedOut = await s.answer('stuck');
    assert.equal(timedOut.error?.code, STDIO_ERRORS.timeout);
    assert.ok(Date.now() - sent >= 500, 'the handler was given the cleanup bound first');
    s.hold('next');
    await s.gate.startOf('next');
    s.gate.release('stuck');
    s.gate.release('next');
    await s.answer('next');
    assert.equal(s.wire.messages.filter((message) => message.id === 'stuck').length, 1, 'the late answer was dropped');
  });

  it('drops a waiting request the client cancels, and answers nothing for it', async () => {
    const s = await session({ maxActiveRequests: 1 });
    s.hold('running');
    s.hold('cancelled');
    await s.gate.startOf('running');
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancelled', reason: 'changed my mind' } });
    s.hold('after');
    s.gate.release('running');
    await s.gate.startOf('after');
    assert.deepEqual(s.gate.started, ['running', 'after']);
  });

  it('answers nothing for a running request the client cancels, and frees its turn within the cleanup bound', async () => {
    const s = await session({ maxActiveRequests: 1, requestTimeoutMs: 5000, cleanupTimeoutMs: 200 });
    s.hold('cancelled', { stubborn: true });
    s.hold('next');
    await s.gate.startOf('cancelled');
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancelled', reason: 'changed my mind' } });
    await s.gate.startOf('next');
    s.gate.release('cancelled');
    s.gate.release('next');
    await s.answer('next');
    assert.equal(s.wire.messages.some((message) => message.id === 'cancelled'), false);
  });

  it('fails the session when the client takes no output for writeTimeoutMs', async () => {
    const unread = new PassThrough({ highWaterMark: 1024 });
    const s = await session({ writeTimeoutMs: 200 }, unread);
    s.wire.stop();
    unread.pause();
    for (let i = 0; i < 400; i += 1) s.send({ jsonrpc: '2.0', id: `p${i}`, method: 'ping' });
    const end = await s.transport.ended;
    assert.equal(end.reason, 'failed');
    assert.match(end.reason === 'failed' ? end.message : '', /took none of \d+ bytes of answers for 200 ms; it is not reading/);
  });

  it('answers what it admitted after the client closes its input, then ends', async () => {
    const s = await session({});
    s.hold('last');
    await s.gate.startOf('last');
    s.input.end();
    s.gate.release('last');
    assert.equal((await s.answer('last')).error, undefined);
    assert.deepEqual(await s.transport.ended, { reason: 'eof' });
  });

  it('closes within the cleanup bound while a request ignores its abort', async () => {
    const s = await session({ cleanupTimeoutMs: 200 });
    s.hold('stubborn', { stubborn: true });
    await s.gate.startOf('stubborn');
    await s.transport.close();
    assert.deepEqual(await s.transport.ended, { reason: 'closed' });
  });

  it('refuses limits that are not positive whole numbers', () => {
    assert.throws(() => new StdioTransport(new PassThrough(), new PassThrough(), { maxFrameBytes: 0 }), /maxFrameBytes must be a positive whole number/);
    assert.throws(() => new StdioTransport(new PassThrough(), new PassThrough(), { maxActiveRequests: 8, maxRequests: 4 }), /cannot exceed maxRequests/);
  });
});
