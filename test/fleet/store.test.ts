import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ArgumentError } from '../../src/process/index.js';
import { LATEST_SQLITE_SCHEMA_VERSION, SQLITE_MIGRATIONS, SqlBroker, SqliteStore, StoreError, StoreUnavailableError, paneLockDirectory, resolveDatabasePath } from '../../src/fleet/index.js';
import { tempDirectory } from './support.js';

describe('database path', () => {
  it('defaults under ~/.local/share/drover and honours DROVER_DB as an absolute path', () => {
    assert.equal(resolveDatabasePath({}), join(homedir(), '.local', 'share', 'drover', 'drover.db'));
    assert.equal(resolveDatabasePath({ DROVER_DB: '/srv/fleet.db' }), '/srv/fleet.db');
    assert.equal(resolveDatabasePath({ DROVER_DB: 'rel/fleet.db' }), join(process.cwd(), 'rel', 'fleet.db'));
    assert.throws(() => resolveDatabasePath({ DROVER_DB: ' ' }), ArgumentError);
    assert.equal(paneLockDirectory('/srv/fleet.db'), '/srv/.pane-locks');
  });
});

describe('SqliteStore.open', () => {
  it('creates private parent directories, WAL mode, a 5 s busy timeout and foreign keys', (t) => {
    const dir = tempDirectory(t);
    const path = join(dir, 'a', 'b', 'drover.db');
    const store = SqliteStore.open({ env: { DROVER_DB: path } });
    t.after(() => store.close());
    assert.equal(store.path, path);
    assert.deepEqual([store.info.kind, store.info.location], ['sqlite', path]);
    assert.equal(statSync(join(dir, 'a')).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'a', 'b')).mode & 0o777, 0o700);
    assert.equal(statSync(path).mode & 0o777, 0o600, 'a new database is owner-only');
    assert.equal(store.db.pragma('journal_mode', { simple: true }), 'wal');
    assert.equal(store.db.pragma('busy_timeout', { simple: true }), 5000);
    assert.equal(store.db.pragma('foreign_keys', { simple: true }), 1);
  });

  it('applies every migration once and records it in schema_migrations', async (t) => {
    const path = join(tempDirectory(t), 'drover.db');
    const first = SqliteStore.open({ path });
    assert.deepEqual(first.schema, { openedAt: 0, current: LATEST_SQLITE_SCHEMA_VERSION, latest: LATEST_SQLITE_SCHEMA_VERSION });
    await first.close();
    const second = SqliteStore.open({ path });
    t.after(() => second.close());
    assert.equal(second.schema.openedAt, LATEST_SQLITE_SCHEMA_VERSION);
    const ledger = second.db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
    assert.deepEqual(ledger.map((row) => row.version), Array.from({ length: LATEST_SQLITE_SCHEMA_VERSION }, (_, i) => i + 1));
    const tables = second.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as { name: string }[];
    assert.deepEqual(tables.map((row) => row.name), ['fleets', 'members', 'messages', 'placements', 'schema_migrations']);
  });

  it('refuses a database whose schema is newer than this drover knows, without changing it', (t) => {
    const path = join(tempDirectory(t), 'drover.db');
    SqliteStore.open({ path }).db.close();
    const raw = new Database(path);
    raw.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 'x')").run(LATEST_SQLITE_SCHEMA_VERSION + 1);
    raw.close();
    assert.throws(() => SqliteStore.open({ path }), (error: unknown) => {
      assert.ok(error instanceof StoreError);
      assert.match(error.message, new RegExp(`schema version ${LATEST_SQLITE_SCHEMA_VERSION + 1}, newer than this drover knows \\(${LATEST_SQLITE_SCHEMA_VERSION}\\)`));
      assert.ok(error.message.includes(path));
      return true;
    });
  });

  it('refuses an unversioned database that already has tables', (t) => {
    const path = join(tempDirectory(t), 'other.db');
    const raw = new Database(path);
    raw.exec('CREATE TABLE notes (id INTEGER)');
    raw.close();
    assert.throws(() => SqliteStore.open({ path }), /has tables but no schema_migrations ledger/);
    const check = new Database(path);
    t.after(() => check.close());
    assert.deepEqual(check.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'fleets'").get(), { n: 0 });
  });

  it('refuses a path that is not a regular file, or a file that is not a database', (t) => {
    const dir = tempDirectory(t);
    mkdirSync(join(dir, 'adir'));
    assert.throws(() => SqliteStore.open({ path: join(dir, 'adir') }), /exists but is not a regular file/);
    writeFileSync(join(dir, 'junk.db'), 'this is not sqlite, just some text long enough to look like a header........');
    assert.throws(() => SqliteStore.open({ path: join(dir, 'junk.db') }), StoreError);
  });

  it('never reuses an integer id, even after the highest row is gone', (t) => {
    const store = SqliteStore.open({ path: join(tempDirectory(t), 'drover.db') });
    t.after(() => store.close());
    const insert = store.db.prepare("INSERT INTO fleets (name, created_at) VALUES ('f', 'now')");
    const first = Number(insert.run().lastInsertRowid);
    store.db.prepare('DELETE FROM fleets WHERE fleet_id = ?').run(first);
    assert.equal(Number(insert.run().lastInsertRowid), first + 1);
  });

  it('opens for reading without creating anything or taking the write lock, upgrading an older schema once', (t) => {
    const dir = tempDirectory(t);
    const missing = join(dir, 'typo', 'drover.db');
    assert.throws(() => SqliteStore.open({ path: missing, readOnly: true }), (error: unknown) => error instanceof StoreError && error.message.startsWith(`no drover database at ${missing}`));
    // The hint fits where the path came from: a typo in DROVER_DB, or a fleet never made.
    assert.throws(() => SqliteStore.open({ readOnly: true, env: { DROVER_DB: missing } }), /\(is DROVER_DB set to the file you mean\?\)$/);
    assert.throws(() => SqliteStore.open({ path: missing, readOnly: true, env: {} }), /\(no fleet has been created yet\)$/);
    assert.equal(existsSync(join(dir, 'typo')), false);

    const path = join(dir, 'drover.db');
    SqliteStore.open({ path }).db.close();
    const writer = new Database(path);
    t.after(() => writer.close());
    writer.exec('BEGIN IMMEDIATE');
    const reader = SqliteStore.open({ path, readOnly: true });
    t.after(() => reader.close());
    assert.equal(reader.readOnly, true);
    assert.deepEqual(reader.db.prepare('SELECT count(*) AS n FROM fleets').get(), { n: 0 });
    assert.throws(() => reader.db.prepare("INSERT INTO fleets (name, created_at) VALUES ('f', 'now')").run(), /readonly/);
    writer.exec('ROLLBACK');

    // A database an older drover wrote (schema 2) is upgraded before it is read.
    const old = join(dir, 'old.db');
    const raw = new Database(old);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const migration of SQLITE_MIGRATIONS.filter((m) => m.version <= 2)) {
      raw.exec(migration.sql);
      raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, 'then');
    }
    raw.prepare("INSERT INTO fleets (name, created_at) VALUES ('f', 'then')").run();
    raw.prepare("INSERT INTO members (fleet_id, name, status, coding_agent, registered_at) VALUES (1, 'kept', 'active', 'shell', 'then')").run();
    raw.prepare("INSERT INTO placements (member_id, backend, session, window, pane, created_at) VALUES (1, 'tmux', 's', '@1', '%1', 'then')").run();
    raw.close();
    const upgraded = SqliteStore.open({ path: old, readOnly: true });
    t.after(() => upgraded.close());
    assert.equal(upgraded.schema.current, LATEST_SQLITE_SCHEMA_VERSION);
    // Rows written before a column existed are kept, the new columns NULL (a pane on this machine).
    assert.deepEqual(upgraded.db.prepare('SELECT pane, server, stale_at, host FROM placements').all(), [{ pane: '%1', server: null, stale_at: null, host: null }]);
  });

  it('cuts the busy wait to a bounded call, says the store stayed busy, and restores the default', async (t) => {
    const path = join(tempDirectory(t), 'drover.db');
    const store = SqliteStore.open({ path });
    const broker = new SqlBroker(store);
    t.after(() => broker.close());
    const other = new Database(path);
    t.after(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    const started = Date.now();
    await assert.rejects(broker.within(100).createFleet({ name: 'f', codingAgent: 'shell', directorPlacement: { backend: 'tmux', session: 's', window: '@1', pane: '%1' } }), (error: unknown) => {
      assert.ok(error instanceof StoreUnavailableError);
      assert.match(error.message, /^the database stayed busy \(database is locked\)$/);
      return true;
    });
    assert.ok(Date.now() - started < 2000, 'the bounded call gave up at its budget, not the five-second default');
    other.exec('ROLLBACK');
    assert.equal(store.db.pragma('busy_timeout', { simple: true }), 5000);
    assert.equal((await broker.listFleets()).length, 0);
  });
});
