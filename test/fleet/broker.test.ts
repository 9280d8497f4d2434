import { after, describe } from 'node:test';
import { join } from 'node:path';
import { PostgresStore, SqlBroker, SqliteStore } from '../../src/fleet/index.js';
import { postgresSkipReason, startPostgres } from '../support/postgres.js';
import { brokerContract } from './broker-contract.js';
import { tempDirectory } from './support.js';

// The broker contract on the embedded store: a fresh SQLite file per test; a second broker is a
// second connection to the same file, as another process would open it.
brokerContract({
  kind: 'sqlite',
  async open(t, wall) {
    const path = join(tempDirectory(t), 'drover.db');
    const connect = (): SqlBroker => {
      const broker = new SqlBroker(SqliteStore.open({ path }), { wallMicros: wall });
      t.after(() => broker.close());
      return broker;
    };
    const broker = connect();
    return { broker, another: () => Promise.resolve(connect()) };
  },
});

// The same contract on PostgreSQL: one private cluster for the suite, a new database per test; a
// second broker is a second pool of connections to that database.
const skip = await postgresSkipReason();
describe('PostgreSQL', { skip }, () => {
  const cluster = skip === undefined ? startPostgres(after) : undefined;
  brokerContract({
    kind: 'postgresql',
    async open(t, wall) {
      const url = await (await cluster!).createDatabase();
      const connect = async (): Promise<SqlBroker> => {
        const broker = new SqlBroker(await PostgresStore.open({ url }), { wallMicros: wall });
        t.after(() => broker.close());
        return broker;
      };
      const broker = await connect();
      return { broker, another: connect };
    },
  });
});
