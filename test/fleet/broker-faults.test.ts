import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { PostgresStore, SqlBroker, StoreUnavailableError, type Broker } from '../../src/fleet/index.js';
import { postgresSkipReason, startPostgres } from '../support/postgres.js';
import { seedFleet } from './support.js';

const SENDERS = 4;
const PER_SENDER = 40;

/** How long a sender keeps retrying while the server restarts: a restart under load can take seconds. */
const RETRY_FOR_MS = 30_000;

/** Sends with its own key, again with the same key while the store is unavailable, until stored. */
async function sendUntilStored(broker: Broker, from: number, to: number, key: string): Promise<number> {
  const giveUpAt = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return (await broker.sendMessage({ from, to, text: `load ${key}`, idempotencyKey: key })).messageId;
    } catch (error) {
      if (!(error instanceof StoreUnavailableError) || Date.now() > giveUpAt) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const skip = await postgresSkipReason();
describe('the PostgreSQL store restarted mid-load', { skip }, () => {
  const cluster = skip === undefined ? startPostgres(after) : undefined;

  it('loses no message and stores none twice when senders retry with their keys', async (t) => {
    const url = await (await cluster!).createDatabase();
    const brokers = await Promise.all(Array.from({ length: SENDERS + 1 }, async () => new SqlBroker(await PostgresStore.open({ url }))));
    t.after(() => Promise.all(brokers.map((broker) => broker.close())));
    const { director, alice } = await seedFleet(brokers[0]!);
    let stored = 0;
    let restarted = false;
    const restart = (async () => {
      while (stored < (SENDERS * PER_SENDER) / 3) await new Promise((resolve) => setTimeout(resolve, 5));
      await (await cluster!).restart();
      restarted = true;
    })();
    const ids = await Promise.all(
      brokers.slice(1).map(async (broker, sender) => {
        const mine: number[] = [];
        for (let k = 0; k < PER_SENDER; k += 1) {
          mine.push(await sendUntilStored(broker, director.memberId, alice.memberId, `${sender}-${k}`));
          stored += 1;
        }
        return mine;
      }),
    );
    await restart;
    assert.ok(restarted, 'the server was restarted while the senders sent');
    const messages = (await brokers[0]!.pollMessages(alice.memberId)).filter((message) => message.text.startsWith('load '));
    assert.equal(messages.length, SENDERS * PER_SENDER, 'every send stored once');
    assert.equal(new Set(messages.map((message) => message.text)).size, SENDERS * PER_SENDER, 'no key stored twice');
    assert.deepEqual(new Set(messages.map((message) => message.messageId)), new Set(ids.flat()), 'each sender got the id of the message stored for it');
  });
});
