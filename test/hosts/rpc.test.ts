import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, it } from 'node:test';
import {
  RPC_PROTOCOL,
  RPC_VERSION,
  RpcClient,
  RpcHandshakeError,
  RpcLinkLostError,
  RpcRequestError,
  isCompatible,
  serveRpc,
  type RpcAnswer,
  type RpcEvent,
  type RpcHandshake,
  type RpcParams,
  type RpcServeOptions,
} from '../../src/hosts/index.js';

const HANDSHAKE: RpcHandshake = { protocol: RPC_PROTOCOL, version: RPC_VERSION, drover_version: '0.0.0-test', muxes: [{ mux: 'tmux', selected: true }], capabilities: ['echo', 'ping', 'watch', 'unwatch'] };

/** A server and a client joined by two in-memory pipes. */
async function pair(serve: Partial<RpcServeOptions> & Pick<RpcServeOptions, 'call'>): Promise<{ client: RpcClient; toServer: PassThrough; served: Promise<void> }> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const served = serveRpc({ handshake: HANDSHAKE, input: toServer, output: toClient, ...serve });
  const client = await RpcClient.connect({ input: toClient, output: toServer }, { timeoutMs: 2000 });
  return { client, toServer, served };
}

const echo = async (_method: string, params: RpcParams): Promise<RpcAnswer> => ({ exitStatus: 0, document: { echoed: params } });

describe('drover-rpc', () => {
  it('speaks first with its handshake, then answers each request by its id', async () => {
    const { client, toServer, served } = await pair({ call: echo });
    assert.deepEqual(client.handshake, HANDSHAKE);
    const reply = await client.request('echo', { text: 'hi' }, { timeoutMs: 2000 });
    assert.deepEqual(reply, { id: 1, result: { echoed: { text: 'hi' } }, exit_status: 0 });
    toServer.end();
    await served;
  });

  it("turns a command's error document into an error reply with its exit status, and keeps a non-zero result a result", async () => {
    const call = async (method: string): Promise<RpcAnswer> =>
      method === 'missing' ? { exitStatus: 2, document: { error: { code: 'pane_not_found', message: 'pane %9 not found' } } } : { exitStatus: 4, document: { status: 'staged_unconfirmed' } };
    const { client, toServer } = await pair({ call });
    assert.deepEqual(await client.request('missing', {}, { timeoutMs: 2000 }), { id: 1, error: { code: 'pane_not_found', message: 'pane %9 not found' }, exit_status: 2 });
    assert.deepEqual(await client.request('staged', {}, { timeoutMs: 2000 }), { id: 2, result: { status: 'staged_unconfirmed' }, exit_status: 4 });
    toServer.end();
  });

  it('refuses what is not a request, and a method the caller refuses, without stopping', async () => {
    const call = async (method: string): Promise<RpcAnswer> => {
      throw new RpcRequestError('unknown_method', `no method ${method}`);
    };
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const lines: unknown[] = [];
    toClient.on('data', (chunk: Buffer) => lines.push(...chunk.toString().trim().split('\n').map((line) => JSON.parse(line) as unknown)));
    const served = serveRpc({ handshake: HANDSHAKE, input: toServer, output: toClient, call });
    toServer.write('not json\n{"method":"x"}\n{"id":7,"method":"nope"}\n{"id":8,"method":"ping","params":[1]}\n');
    toServer.end();
    await served;
    // Replies come as their requests finish, so they are compared as a set.
    const expected = [
      { id: '', error: { code: 'bad_request', message: 'the line is not JSON' }, exit_status: 2 },
      { id: '', error: { code: 'bad_request', message: 'a request needs an id (a string or a whole number)' }, exit_status: 2 },
      { id: 8, error: { code: 'bad_request', message: 'params are a JSON object' }, exit_status: 2 },
      { id: 7, error: { code: 'unknown_method', message: 'no method nope' }, exit_status: 2 },
    ];
    assert.deepEqual(lines.slice(1).map((line) => JSON.stringify(line)).sort(), expected.map((line) => JSON.stringify(line)).sort());
    assert.equal(lines.length, 5);
  });

  it('runs at most maxActive requests at once, answers in the order they finish, and refuses past maxAdmitted', async () => {
    let running = 0;
    let most = 0;
    const call = async (_method: string, params: RpcParams): Promise<RpcAnswer> => {
      running += 1;
      most = Math.max(most, running);
      await delay(Number(params.ms));
      running -= 1;
      return { exitStatus: 0, document: { ms: params.ms } };
    };
    const { client, toServer } = await pair({ call, maxActive: 2, maxAdmitted: 3 });
    const finished: number[] = [];
    const requests = [300, 50, 100].map((ms) => client.request('sleep', { ms }, { timeoutMs: 5000 }).then((reply) => finished.push(ms) && reply));
    await delay(10);
    const refused = await client.request('sleep', { ms: 1 }, { timeoutMs: 5000 });
    await Promise.all(requests);
    assert.equal(most, 2, 'never more than two at once');
    assert.deepEqual(finished, [50, 100, 300], 'the third waited for a turn, and each reply came when its request finished');
    assert.ok('error' in refused && refused.error.code === 'busy', JSON.stringify(refused));
    toServer.end();
  });

  it('answers a ping at once while every turn is taken, so a busy host does not look stalled', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const call = async (): Promise<RpcAnswer> => {
      await held;
      return { exitStatus: 0, document: {} };
    };
    const { client, toServer } = await pair({ call, maxActive: 1, maxAdmitted: 2 });
    const slow = [client.request('slow', {}, { timeoutMs: 5000 }), client.request('slow', {}, { timeoutMs: 5000 })];
    assert.deepEqual(await client.request('ping', {}, { timeoutMs: 1000 }), { id: 3, result: {}, exit_status: 0 });
    release();
    await Promise.all(slow);
    toServer.end();
  });

  it('streams watch events until unwatch, and a watch that cannot start is an error reply', async () => {
    let stopped = false;
    const watch: RpcServeOptions['watch'] = async (params, emit, signal) => {
      if (params.fail === true) throw new RpcRequestError('unreachable', 'no multiplexer here', 1);
      const timer = setInterval(() => emit('pane', { paneId: '%1' }), 20);
      signal.addEventListener('abort', () => {
        clearInterval(timer);
        stopped = true;
      });
    };
    const { client, toServer } = await pair({ call: echo, watch });
    const events: RpcEvent['event'][] = [];
    const subscription = await client.watch({}, (event) => events.push(event), { timeoutMs: 2000 });
    while (events.length < 3) await delay(10);
    assert.ok(events.every((event) => event.kind === 'pane' && event.pane_id === '%1' && event.watch === subscription.id));
    await subscription.close();
    assert.equal(stopped, true, 'unwatch ends the subscription on the serving side');
    await assert.rejects(client.watch({ fail: true }, () => undefined, { timeoutMs: 2000 }), /refused \(unreachable\): no multiplexer here/);
    toServer.end();
  });

  it('lets requests running at the end of the stream finish, and the client reports them as possibly run', async () => {
    let finished = false;
    const call = async (): Promise<RpcAnswer> => {
      await delay(150);
      finished = true;
      return { exitStatus: 0, document: {} };
    };
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    const served = serveRpc({ handshake: HANDSHAKE, input: toServer, output: toClient, call });
    const client = await RpcClient.connect({ input: toClient, output: toServer }, { timeoutMs: 2000 });
    const pending = client.request('slow', {}, { timeoutMs: 2000 });
    await delay(20);
    // The link goes: the client's side of it ends, and the server's input ends too.
    toClient.destroy();
    toServer.end();
    await assert.rejects(pending, (error: unknown) => error instanceof RpcLinkLostError && error.delivery === 'possibly_sent');
    await served;
    assert.equal(finished, true, 'the serving side finished the request it had started');
  });

  it('accepts a newer minor version and refuses another major with the fix in the message', async () => {
    assert.equal(isCompatible('1.0', '1.7'), true);
    assert.equal(isCompatible('1.3', '1.0'), true);
    assert.equal(isCompatible('1.0', '2.0'), false);
    for (const [version, accepted] of [['1.9', true], ['2.0', false], ['one', false]] as const) {
      const toClient = new PassThrough();
      toClient.write(`${JSON.stringify({ ...HANDSHAKE, version, drover_version: '9.9.9' })}\n`);
      const connecting = RpcClient.connect({ input: toClient, output: new PassThrough() }, { timeoutMs: 1000, upgradeHint: () => 'run `npm install -g drover@0.1.0` on gpu' });
      if (accepted) assert.equal((await connecting).handshake.version, version);
      else {
        await assert.rejects(connecting, (error: unknown) => {
          assert.ok(error instanceof RpcHandshakeError);
          if (version === '2.0') {
            assert.equal(error.incompatible, true);
            assert.ok(error.message.includes(`drover 9.9.9 speaks drover-rpc 2.0; this drover speaks ${RPC_VERSION}: run \`npm install -g drover@0.1.0\` on gpu`), error.message);
          } else assert.match(error.message, /not major\.minor/);
          return true;
        });
      }
    }
  });

  it('is not fooled by a login banner or a shell error before the handshake', async () => {
    const toClient = new PassThrough();
    toClient.end('bash: drover: command not found\n');
    await assert.rejects(RpcClient.connect({ input: toClient, output: new PassThrough() }, { timeoutMs: 1000 }), /printed something other than drover-rpc: "bash: drover: command not found"/);
  });
});
