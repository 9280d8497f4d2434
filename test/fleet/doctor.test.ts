import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ArgumentError } from '../../src/process/index.js';
import { LATEST_POSTGRES_SCHEMA_VERSION, LATEST_SQLITE_SCHEMA_VERSION, PostgresStore, SqliteStore, chooseStore, maskUrl, fleetDoctorSection } from '../../src/fleet/index.js';
import { postgresSkipReason, startPostgres } from '../support/postgres.js';
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

describe('choosing the store', () => {
  it('takes DROVER_BROKER first, then the config file\'s broker key, then the SQLite file at DROVER_DB', (t) => {
    const dir = tempDirectory(t);
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'broker: postgresql://drover:secret@db.example/fleet\n');
    const base = { DROVER_DB: join(dir, 'drover.db'), DROVER_CONFIG: config };
    assert.deepEqual(chooseStore({ ...base, DROVER_BROKER: 'sqlite' }), { kind: 'sqlite', path: base.DROVER_DB, source: 'DROVER_BROKER' });
    assert.deepEqual(chooseStore({ ...base, DROVER_BROKER: 'postgres://other/db' }), { kind: 'postgresql', url: 'postgres://other/db', source: 'DROVER_BROKER' });
    assert.deepEqual(chooseStore(base), { kind: 'postgresql', url: 'postgresql://drover:secret@db.example/fleet', source: `the broker key in ${config}` });
    assert.deepEqual(chooseStore({ DROVER_DB: base.DROVER_DB, DROVER_CONFIG: join(dir, 'absent.yaml') }), { kind: 'sqlite', path: base.DROVER_DB, source: 'DROVER_DB' });
    // Nothing set: the default file, and doctor must not claim DROVER_DB chose it.
    assert.deepEqual(chooseStore({ DROVER_CONFIG: join(dir, 'absent.yaml') }), { kind: 'sqlite', path: join(homedir(), '.local', 'share', 'drover', 'drover.db'), source: 'default' });
  });

  it('refuses a setting that names no store, naming where it came from and never showing a password', (t) => {
    const dir = tempDirectory(t);
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'broker: 42\n');
    assert.throws(() => chooseStore({ DROVER_BROKER: 'mysql://u:hunter2@h/db' }), (error: Error) => {
      assert.ok(error instanceof ArgumentError);
      assert.equal(error.message, 'DROVER_BROKER must be sqlite, a postgresql:// URL or a drover+unix:// socket URL (got mysql://u:***@h/db)');
      return true;
    });
    assert.throws(() => chooseStore({ DROVER_CONFIG: config }), { message: `the broker key in drover's config file ${config} must be a URL string, such as postgresql://host/db` });
  });
});

const skip = await postgresSkipReason();
describe('fleetDoctorSection on PostgreSQL', { skip }, () => {
  const cluster = skip === undefined ? startPostgres(after) : undefined;

  it('checks the store DROVER_BROKER chooses: reached, its schema read without migrating, its notifications heard', async (t) => {
    const url = await (await cluster!).createDatabase();
    const env = { PATH: process.env.PATH, DROVER_BROKER: url, DROVER_DB: join(tempDirectory(t), 'drover.db'), DROVER_MUX: 'tmux' };
    const before = await fleetDoctorSection(env);
    assert.deepEqual(before.store, { kind: 'postgresql', location: url, chosenBy: 'DROVER_BROKER', reachable: true, schemaVersion: 0, latestSchemaVersion: LATEST_POSTGRES_SCHEMA_VERSION, listens: true });
    assert.deepEqual(before.problems, []);
    assert.equal((await fleetDoctorSection(env)).store.schemaVersion, 0, 'doctor migrates nothing');
    await (await PostgresStore.open({ url })).close();
    assert.equal((await fleetDoctorSection(env)).store.schemaVersion, LATEST_POSTGRES_SCHEMA_VERSION);
  });

  it('counts a server that does not answer as a problem, its password masked', async (t) => {
    const socketDir = tempDirectory(t);
    const url = `postgresql://drover:hunter2@/none?host=${encodeURIComponent(socketDir)}`;
    const section = await fleetDoctorSection({ PATH: process.env.PATH, DROVER_BROKER: url, DROVER_MUX: 'tmux' });
    assert.deepEqual([section.store.kind, section.store.reachable, section.store.listens], ['postgresql', false, null]);
    assert.equal(section.problems.length, 1);
    assert.match(section.problems[0]!, /^the PostgreSQL store postgresql:\/\/drover:\*\*\*@\/none\?host=.* cannot be reached: /);
    assert.doesNotMatch(section.problems[0]!, /hunter2/);
    assert.equal(maskUrl('postgresql://u@/db?host=%2Frun&password=hunter2'), 'postgresql://u@/db?host=%2Frun&password=***');
  });
});
