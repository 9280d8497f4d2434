import assert from 'node:assert/strict';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  BrokerServer,
  PostgresStore,
  RemoteBroker,
  SqlBroker,
  SqliteStore,
  StoreUnavailableError,
  chooseStore,
  fleetDoctorSection,
  openBroker,
  type Broker,
} from '../../src/fleet/index.js';
import { ArgumentError } from '../../src/process/index.js';
import { postgresSkipReason, startPostgres } from '../support/postgres.js';
import { brokerContract } from './broker-contract.js';
import { seedFleet, tempDirectory } from './support.js';

type After = { after(fn: () => unknown): void };

/** A broker server over `broker` at a socket in a fresh private directory; both closed after the test. */
async function serve(t: After, broker: Broker): Promise<string> {
  const socketPath = join(tempDirectory(t), 'broker.sock');
  const server = await BrokerServer.listen({ broker, socketPath });
  t.after(() => server.close());
  return socketPath;
}

async function connect(t: After, socketPath: string): Promise<RemoteBroker> {
  const remote = await RemoteBroker.connect({ socketPath });
  t.after(() => remote.close());
  return remote;
}

// The contract through the socket: a serving SqlBroker whose timestamps the test steers, and
// two clients of it (two member processes).
brokerContract({
  kind: 'sqlite',
  served: true,
  async open(t, wall) {
    const served = new SqlBroker(SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') }), { wallMicros: wall });
    t.after(() => served.close());
    const socketPath = await serve(t, served);
    return { broker: await connect(t, socketPath), another: () => connect(t, socketPath) };
  },
});

const skip = await postgresSkipReason();
describe('PostgreSQL served over a socket', { skip }, () => {
  const cluster = skip === undefined ? startPostgres(after) : undefined;
  brokerContract({
    kind: 'postgresql',
    served: true,
    async open(t, wall) {
      const served = new SqlBroker(await PostgresStore.open({ url: await (await cluster!).createDatabase() }), { wallMicros: wall });
      t.after(() => served.close());
      const socketPath = await serve(t, served);
      return { broker: await connect(t, socketPath), another: () => connect(t, socketPath) };
    },
  });
});

/**
 * A socket in front of the server that cuts a client's first connection once its first
 * `cutMethod` request has reached the server, before the reply gets back: the link failing
 * mid-request. Counts the requests of that method that reached the server.
 */
async function cuttingProxy(t: After, target: string, cutMethod: string): Promise<{ socketPath: string; forwarded: () => number }> {
  const socketPath = join(tempDirectory(t), 'proxy.sock');
  let forwarded = 0;
  let cut = false;
  const sockets = new Set<Socket>();
  const proxy = createServer((client: Socket) => {
    const upstream = createConnection(target);
    sockets.add(client).add(upstream);
    let cutting = false;
    client.on('data', (data) => {
      const text = data.toString('utf8');
      if (text.includes(`"method":"${cutMethod}"`)) {
        forwarded += 1;
        if (!cut) cutting = cut = true;
      }
      upstream.write(data);
    });
    upstream.on('data', (data) => {
      // The server has done the request: its reply is lost with the connection.
      if (cutting) {
        client.destroy();
        upstream.destroy();
      } else client.write(data);
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(socketPath, resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  );
  return { socketPath, forwarded: () => forwarded };
}

describe('the remote broker', () => {
  async function hub(t: After): Promise<{ served: SqlBroker; socketPath: string }> {
    const served = new SqlBroker(SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') }));
    t.after(() => served.close());
    return { served, socketPath: await serve(t, served) };
  }

  it('stores a send once when the link is cut after the server stored it and the client sends again', async (t) => {
    const { served, socketPath } = await hub(t);
    const { alice, bob } = await seedFleet(served);
    const proxy = await cuttingProxy(t, socketPath, 'sendMessage');
    const remote = await connect(t, proxy.socketPath);
    // No key from the caller: the client makes one, and its retry carries the same one.
    const sent = await remote.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'exactly once' });
    assert.equal(proxy.forwarded(), 2, 'the first attempt reached the server, and the retry did too');
    assert.deepEqual((await served.pollMessages(bob.memberId)).map((m) => [m.messageId, m.text]), [[sent.messageId, 'exactly once']]);
  });

  it('does not repeat a call that is not safe to repeat, and says its outcome is unknown', async (t) => {
    const { served, socketPath } = await hub(t);
    const { alice, bob } = await seedFleet(served);
    const message = await served.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'ack me' });
    const proxy = await cuttingProxy(t, socketPath, 'ackMessage');
    const remote = await connect(t, proxy.socketPath);
    await assert.rejects(remote.ackMessage(bob.memberId, message.messageId), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.equal(error.delivery, 'possibly_sent');
      assert.match(error.message, /was lost before it answered ackMessage; it may or may not have been done/);
      return true;
    });
    assert.equal(proxy.forwarded(), 1);
    assert.equal((await served.showMessage(message.messageId)).statusState, 'completed');
  });

  it('fails with StoreUnavailableError naming the socket when nothing serves it', async (t) => {
    const socketPath = join(tempDirectory(t), 'nobody.sock');
    await assert.rejects(openBroker({ env: { DROVER_BROKER: `drover+unix://${socketPath}` } }), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.ok(error.message.includes(`cannot reach the drover broker at drover+unix://${socketPath}`), error.message);
      return true;
    });
  });

  it('reconnects for the next call after the server comes back', async (t) => {
    const served = new SqlBroker(SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') }));
    t.after(() => served.close());
    const socketPath = join(tempDirectory(t), 'broker.sock');
    const first = await BrokerServer.listen({ broker: served, socketPath });
    const remote = await connect(t, socketPath);
    await seedFleet(remote);
    await first.close();
    const second = await BrokerServer.listen({ broker: served, socketPath });
    t.after(() => second.close());
    assert.equal((await remote.listFleets()).length, 1);
  });

  it('chooses the remote store from DROVER_BROKER, and refuses a URL that names no absolute socket path', () => {
    assert.deepEqual(chooseStore({ DROVER_BROKER: 'drover+unix:///run/me/broker.sock' }), { kind: 'remote', socketPath: '/run/me/broker.sock', source: 'DROVER_BROKER' });
    assert.throws(() => chooseStore({ DROVER_BROKER: 'drover+unix://relative.sock' }), {
      name: 'ArgumentError',
      message: 'DROVER_BROKER must name the broker\'s socket by absolute path, as drover+unix:///home/me/.local/state/drover/broker/broker.sock (got "drover+unix://relative.sock")',
    });
    assert.throws(() => chooseStore({ DROVER_BROKER: `drover+unix:///${'x'.repeat(120)}` }), /longer than a unix socket address holds \(107\)/);
  });

  it('serves on a 0600 socket in a private directory, and refuses a directory others can enter', async (t) => {
    const { socketPath } = await hub(t);
    assert.equal(statSync(socketPath).mode & 0o777, 0o600);
    const open = join(tempDirectory(t), 'open');
    mkdirSync(open, { mode: 0o755 });
    const served = new SqlBroker(SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') }));
    t.after(() => served.close());
    await assert.rejects(BrokerServer.listen({ broker: served, socketPath: join(open, 'broker.sock') }), { name: 'ArgumentError', message: /is open to other users \(mode 0755\)/ });
    const file = join(tempDirectory(t), 'taken');
    writeFileSync(file, '');
    await assert.rejects(BrokerServer.listen({ broker: served, socketPath: file }), /exists and is not a socket/);
    await assert.rejects(BrokerServer.listen({ broker: served, socketPath }), /a broker is already serving at/);
  });

  it('refuses a request line over the bound, and a client of another protocol version', async (t) => {
    const served = new SqlBroker(SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') }));
    t.after(() => served.close());
    const socketPath = join(tempDirectory(t), 'broker.sock');
    const server = await BrokerServer.listen({ broker: served, socketPath, maxRequestBytes: 1024 });
    t.after(() => server.close());
    const remote = await connect(t, socketPath);
    const { alice, bob } = await seedFleet(remote);
    await assert.rejects(remote.sendMessage({ from: alice.memberId, to: bob.memberId, text: 'x'.repeat(2000) }), /a request is longer than 1024 bytes/);
    assert.deepEqual(await served.pollMessages(bob.memberId), []);

    const reply = await new Promise<string>((resolve, reject) => {
      const socket = createConnection(socketPath, () => socket.write('{"protocol":"drover-broker","version":99}\n'));
      let text = '';
      socket.on('data', (data) => (text += data.toString('utf8')));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    assert.match(JSON.parse(reply).error.message, /this broker speaks drover-broker version 1; the client asked for "drover-broker" version 99/);
  });

  it("lets doctor on the member's side say which store the socket serves, or why it cannot be reached", async (t) => {
    const { served, socketPath } = await hub(t);
    const url = `drover+unix://${socketPath}`;
    const found = await fleetDoctorSection({ ...process.env, DROVER_BROKER: url });
    assert.deepEqual(
      { ...found.store },
      { kind: 'sqlite', location: `${url} (serving sqlite ${served.store.location})`, chosenBy: 'DROVER_BROKER', reachable: true, schemaVersion: served.store.schema.latest, latestSchemaVersion: served.store.schema.latest, listens: null },
    );
    const missing = await fleetDoctorSection({ ...process.env, DROVER_BROKER: `${url}.gone` });
    assert.equal(missing.store.reachable, false);
    assert.ok(missing.problems.some((problem) => problem.startsWith(`cannot reach the drover broker at ${url}.gone`)), missing.problems.join('\n'));
  });

  it('keeps the errors of the port: bad input is ArgumentError before anything is stored', async (t) => {
    const { socketPath } = await hub(t);
    const remote = await connect(t, socketPath);
    await assert.rejects(remote.getMember(0), ArgumentError);
    const readOnly = await RemoteBroker.connect({ socketPath, readOnly: true });
    t.after(() => readOnly.close());
    assert.equal(readOnly.store.readOnly, true);
    await assert.rejects(readOnly.createFleet({ name: 'x', codingAgent: 'claude', directorPlacement: { backend: 'tmux', session: 's', window: '@1', pane: '%1' } }), /opened only to read; createFleet would change it/);
  });
});
