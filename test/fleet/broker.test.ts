import { join } from 'node:path';
import { SqlBroker, SqliteStore } from '../../src/fleet/index.js';
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
