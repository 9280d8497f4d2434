import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { LATEST_SQLITE_SCHEMA_VERSION, SqliteStore, fleetDoctorSection } from '../../src/fleet/index.js';
import { tempDirectory } from './support.js';

describe('fleetDoctorSection', () => {
  it('reports a missing database without creating it, and the backend this environment resolves to', async (t) => {
    const path = join(tempDirectory(t), 'state', 'drover.db');
    const section = await fleetDoctorSection({ PATH: process.env.PATH, DROVER_DB: path, TMUX: '/tmp/tmux-0/default,1,0' });
    assert.deepEqual(section.store, {
      kind: 'sqlite',
      location: path,
      chosenBy: 'DROVER_DB',
      reachable: false,
      schemaVersion: 0,
      latestSchemaVersion: LATEST_SQLITE_SCHEMA_VERSION,
      listens: null,
    });
    assert.deepEqual(section.lockDirectory, { path: join(path, '..', '.pane-locks'), exists: false, writable: false });
    assert.equal(section.backend.resolved, 'tmux');
    assert.match(section.backend.summary!, /^tmux \(chosen by TMUX\)/);
    assert.equal(section.flock.available, true);
    assert.deepEqual(section.problems, []);
    assert.equal(existsSync(path), false, 'doctor creates nothing');
  });

  it('reads the schema version of an existing database and the lock directory beside it', async (t) => {
    const dir = tempDirectory(t);
    const store = SqliteStore.open({ path: join(dir, 'drover.db') });
    await store.close();
    mkdirSync(join(dir, '.pane-locks'));
    const section = await fleetDoctorSection({ PATH: process.env.PATH, DROVER_DB: store.path, HERDR_ENV: '1', HERDR_SOCKET_PATH: join(dir, 'herdr.sock') });
    assert.deepEqual([section.store.kind, section.store.reachable, section.store.schemaVersion], ['sqlite', true, LATEST_SQLITE_SCHEMA_VERSION]);
    assert.deepEqual([section.lockDirectory.exists, section.lockDirectory.writable], [true, true]);
    assert.equal(section.backend.resolved, 'herdr');
    assert.deepEqual(section.problems, []);
  });

  it('lists every problem: an unversioned database, no multiplexer', async (t) => {
    const path = join(tempDirectory(t), 'drover.db');
    const db = new Database(path);
    db.exec('CREATE TABLE other (x)');
    db.close();
    const section = await fleetDoctorSection({ PATH: process.env.PATH, DROVER_DB: path });
    assert.equal(section.store.schemaVersion, null);
    assert.equal(section.backend.resolved, null);
    assert.deepEqual(section.problems, [
      `the database ${path} has no schema_migrations ledger; drover will not use it`,
      'run drover inside a tmux or herdr session, or set DROVER_MUX',
    ]);
  });
});
