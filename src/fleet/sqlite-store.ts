import { closeSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ArgumentError } from '../process/index.js';
import { formatTimestamp, wallMicros } from './clock.js';
import { StoreError } from './errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from './migrations.js';

export const BUSY_TIMEOUT_MS = 5000;
const LOCK_DIRECTORY_NAME = '.pane-locks';

/** `DROVER_DB` as an absolute path, or `~/.local/share/drover/drover.db`. */
export function resolveDatabasePath(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.DROVER_DB;
  if (configured === undefined) return join(homedir(), '.local', 'share', 'drover', 'drover.db');
  if (configured.trim() === '') throw new ArgumentError('DROVER_DB is set but empty; set it to a database file path or unset it');
  if (configured.includes('\0')) throw new ArgumentError('DROVER_DB contains a NUL byte');
  return resolve(configured);
}

/** Where the pane input lock files live: `.pane-locks/` beside the database. */
export function paneLockDirectory(databasePath: string): string {
  return join(dirname(databasePath), LOCK_DIRECTORY_NAME);
}

export interface StoreOptions {
  /** The database file; defaults to `resolveDatabasePath(env)`. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  /** Wall-clock microseconds for timestamps; injectable for tests. */
  wallMicros?: () => number;
  /**
   * For commands that only read: the database must exist (nothing is created), and the
   * connection takes no write lock, so it reads while another process writes. A database at
   * an older schema is still upgraded first, once.
   */
  readOnly?: boolean;
}

export interface SchemaState {
  /** The version found when the database was opened (0: new). */
  openedAt: number;
  /** The version after the migrations applied on open. */
  current: number;
  latest: number;
}

/**
 * One connection to the drover database: WAL, a five-second busy timeout, foreign keys on,
 * migrated to the latest schema on open. Transactions are short and synchronous; nothing
 * waits on a lock or a process while one is open.
 */
export class FleetStore {
  readonly path: string;
  readonly lockDirectory: string;
  readonly db: Database.Database;
  readonly schema: SchemaState;
  readonly readOnly: boolean;
  private readonly clock: () => number;

  private constructor(path: string, db: Database.Database, schema: SchemaState, clock: () => number, readOnly: boolean) {
    this.path = path;
    this.lockDirectory = paneLockDirectory(path);
    this.db = db;
    this.schema = schema;
    this.clock = clock;
    this.readOnly = readOnly;
  }

  static open(options: StoreOptions = {}): FleetStore {
    const path = options.path === undefined ? resolveDatabasePath(options.env) : resolve(options.path);
    if (options.readOnly) return FleetStore.openForReading(path, options);
    createPrivateDirectory(dirname(path), 'the database directory');
    const existing = inspect(path);
    let db: Database.Database;
    try {
      // Messages are private: a new database (and the WAL files SQLite derives from it) is owner-only.
      if (!existing) closeSync(openSync(path, 'a', 0o600));
      db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
    } catch (cause) {
      throw new StoreError(`cannot open the drover database at ${path}: ${(cause as Error).message}`, { cause });
    }
    const clock = options.wallMicros ?? wallMicros;
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      const schema = migrate(db, path, clock);
      return new FleetStore(path, db, schema, clock, false);
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot use the drover database at ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  private static openForReading(path: string, options: StoreOptions): FleetStore {
    if (inspect(path) === undefined) {
      throw new StoreError(`no drover database at ${path}: nothing has been stored there (is DROVER_DB set to the file you mean?)`);
    }
    const clock = options.wallMicros ?? wallMicros;
    let db: Database.Database;
    try {
      db = new Database(path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
    } catch (cause) {
      throw new StoreError(`cannot open the drover database at ${path}: ${(cause as Error).message}`, { cause });
    }
    let version: number;
    try {
      db.pragma('foreign_keys = ON');
      version = schemaVersion(db, path);
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot use the drover database at ${path}: ${(error as Error).message}`, { cause: error });
    }
    if (version < LATEST_SCHEMA_VERSION) {
      // Written by an older drover: upgraded once, through a writing connection, then read.
      db.close();
      FleetStore.open({ ...options, path, readOnly: false }).close();
      return FleetStore.openForReading(path, options);
    }
    return new FleetStore(path, db, { openedAt: version, current: version, latest: LATEST_SCHEMA_VERSION }, clock, true);
  }

  /** The current time as stored in every timestamp column. */
  timestamp(): string {
    return formatTimestamp(this.clock());
  }

  /** A consistent read snapshot, committed before it returns. */
  read<T>(body: () => T): T {
    return this.db.transaction(body).deferred();
  }

  /** A write transaction that takes the write lock up front, so it never fails mid-way on upgrade. */
  write<T>(body: () => T): T {
    return this.db.transaction(body).immediate();
  }

  /**
   * Runs body with the connection's busy wait cut to `ms` (the caller's remaining budget),
   * then restores the default. A non-positive budget waits not at all.
   */
  withBusyTimeout<T>(ms: number, body: () => T): T {
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(ms))}`);
    try {
      return body();
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The database file's status: undefined when there is none; an error when the path is not a regular file. */
function inspect(path: string): Stats | undefined {
  let existing;
  try {
    existing = statSync(path, { throwIfNoEntry: false });
  } catch (cause) {
    throw new StoreError(`cannot inspect the drover database at ${path}: ${(cause as Error).message}`, { cause });
  }
  if (existing && !existing.isFile()) throw new StoreError(`the drover database path ${path} exists but is not a regular file`);
  return existing;
}

/** The schema version recorded in the database; refuses an unversioned database or one newer than this drover. */
function schemaVersion(db: Database.Database, path: string): number {
  const hasLedger = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  if (!hasLedger) {
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").get() as { n: number };
    if (tables.n > 0) throw new StoreError(`${path} has tables but no schema_migrations ledger; drover refuses to use an unversioned database`);
    return 0;
  }
  const row = db.prepare('SELECT max(version) AS version FROM schema_migrations').get() as { version: number | null };
  const version = row.version ?? 0;
  if (version > LATEST_SCHEMA_VERSION) {
    throw new StoreError(
      `the drover database at ${path} is at schema version ${version}, newer than this drover knows (${LATEST_SCHEMA_VERSION}); use a newer drover or another DROVER_DB`,
    );
  }
  return version;
}

function createPrivateDirectory(path: string, what: string): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StoreError(`cannot create ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
}

function migrate(db: Database.Database, path: string, clock: () => number): SchemaState {
  return db.transaction((): SchemaState => {
    const openedAt = schemaVersion(db, path);
    if (openedAt === 0) db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of MIGRATIONS) {
      if (migration.version <= openedAt) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, formatTimestamp(clock()));
    }
    return { openedAt, current: LATEST_SCHEMA_VERSION, latest: LATEST_SCHEMA_VERSION };
  }).immediate();
}
