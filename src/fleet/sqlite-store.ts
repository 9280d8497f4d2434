import { closeSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { ArgumentError, messageOf } from '../process/index.js';
import type { ChangeWatch, SchemaState, StoreInfo, WatchOptions } from './broker.js';
import { formatTimestamp, wallMicros } from './clock.js';
import { StoreError, StoreUnavailableError } from './errors.js';
import { latestVersion, SQLITE_MIGRATIONS } from './migrations.js';
import type { SqlDialect, SqlParams, SqlStore, SqlTransaction, TransactionMode } from './sql.js';

export const BUSY_TIMEOUT_MS = 5000;
/** How often a watcher of a SQLite store reads again: SQLite cannot tell another process of a change. */
export const SQLITE_POLL_MS = 250;
const LOCK_DIRECTORY_NAME = '.pane-locks';

/**
 * One SQLite transaction at a time in this process, on any connection. SQLite's busy wait
 * blocks the thread: a second connection of this process waiting on the first's lock would
 * stop the very event loop the first needs to commit. Other processes wait as SQLite has them.
 */
let processTurn: Promise<unknown> = Promise.resolve();
export const LATEST_SQLITE_SCHEMA_VERSION = latestVersion(SQLITE_MIGRATIONS);

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

export interface SqliteStoreOptions {
  /** The database file; defaults to `resolveDatabasePath(env)`. */
  path?: string;
  env?: NodeJS.ProcessEnv;
  /**
   * For commands that only read: the database must exist (nothing is created), and the
   * connection takes no write lock, so it reads while another process writes. A database at
   * an older schema is still upgraded first, once.
   */
  readOnly?: boolean;
}

/** Whether a better-sqlite3 error means another connection kept the database locked past the busy wait. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED');
}

const SQLITE_DIALECT: SqlDialect = {
  inIds: (column, param) => `${column} IN (SELECT value FROM json_each($${param}))`,
  ids: (list) => JSON.stringify([...list]),
  // A write transaction holds SQLite's one write lock: no other writer runs beside it.
  skipLocked: '',
  serializeMessages: '',
};

/** `$1` placeholders as better-sqlite3's named `@p1`, bound from the positional values. */
function named(sql: string): string {
  return sql.replace(/\$(\d+)/g, '@p$1');
}

function bindings(params: SqlParams): Record<string, unknown> {
  return Object.fromEntries(params.map((value, index) => [`p${index + 1}`, typeof value === 'boolean' ? Number(value) : value]));
}

/**
 * The embedded store: one SQLite file, WAL, a five-second busy timeout, foreign keys on,
 * migrated to the latest schema on open. Needs nothing started, and holds one machine's
 * fleets: WAL needs every writer on the same host. Transactions are short; one runs at a
 * time in a process, and nothing waits on a lock or a process while one is open.
 */
export class SqliteStore implements SqlStore {
  readonly path: string;
  readonly db: Database.Database;
  readonly info: StoreInfo;
  readonly dialect = SQLITE_DIALECT;
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(path: string, db: Database.Database, schema: SchemaState, readOnly: boolean) {
    this.path = path;
    this.db = db;
    this.info = { kind: 'sqlite', location: path, readOnly, schema };
  }

  get schema(): SchemaState {
    return this.info.schema;
  }

  get readOnly(): boolean {
    return this.info.readOnly;
  }

  static open(options: SqliteStoreOptions = {}): SqliteStore {
    const path = options.path === undefined ? resolveDatabasePath(options.env) : resolve(options.path);
    if (options.readOnly) return SqliteStore.openForReading(path, (options.env ?? process.env).DROVER_DB !== undefined);
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
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      return new SqliteStore(path, db, migrate(db, path), false);
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot use the drover database at ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** `namedByVariable`: DROVER_DB is set, so a missing file may be a typo in it rather than a fresh start. */
  private static openForReading(path: string, namedByVariable: boolean): SqliteStore {
    if (inspect(path) === undefined) {
      const hint = namedByVariable ? 'is DROVER_DB set to the file you mean?' : 'no fleet has been created yet';
      throw new StoreError(`no drover database at ${path}: nothing has been stored there (${hint})`);
    }
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
    if (version < LATEST_SQLITE_SCHEMA_VERSION) {
      // Written by an older drover: upgraded once, through a writing connection, then read.
      db.close();
      SqliteStore.open({ path }).db.close();
      return SqliteStore.openForReading(path, namedByVariable);
    }
    return new SqliteStore(path, db, { openedAt: version, current: version, latest: LATEST_SQLITE_SCHEMA_VERSION }, true);
  }

  /** Runs in this process's turn: the body's statements never interleave with another transaction's. */
  transaction<T>(mode: TransactionMode, body: (tx: SqlTransaction) => Promise<T>, timeoutMs?: number): Promise<T> {
    const turn = processTurn.then(() => this.runTransaction(mode, body, timeoutMs));
    processTurn = turn.catch(() => undefined);
    return turn;
  }

  private async runTransaction<T>(mode: TransactionMode, body: (tx: SqlTransaction) => Promise<T>, timeoutMs: number | undefined): Promise<T> {
    if (!this.db.open) throw new StoreError(`the drover database at ${this.path} is closed`);
    if (timeoutMs !== undefined) this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(timeoutMs))}`);
    try {
      // IMMEDIATE takes the write lock up front, so a write never fails mid-way on upgrade.
      this.db.exec(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN DEFERRED');
      try {
        const result = await body(this.session());
        this.db.exec('COMMIT');
        return result;
      } finally {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
      }
    } catch (error) {
      if (isBusy(error)) throw new StoreUnavailableError(`the database stayed busy (${messageOf(error)})`, { cause: error });
      throw error;
    } finally {
      if (timeoutMs !== undefined) this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  private session(): SqlTransaction {
    return {
      all: <T>(sql: string, params: SqlParams = []) => Promise.resolve(this.statement(sql).all(bindings(params)) as T[]),
      get: <T>(sql: string, params: SqlParams = []) => Promise.resolve(this.statement(sql).get(bindings(params)) as T | undefined),
      run: (sql: string, params: SqlParams = []) => Promise.resolve(this.statement(sql).run(bindings(params)).changes),
      // Other processes learn of changes by reading again (see watch).
      announce: () => undefined,
    };
  }

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(named(sql));
      this.statements.set(sql, statement);
    }
    return statement;
  }

  connectionEnvironment(): Record<string, string> {
    return { DROVER_BROKER: 'sqlite', DROVER_DB: this.path };
  }

  /** SQLite cannot signal another process: a watcher reads again every `pollMs`. */
  watch(options: WatchOptions): Promise<ChangeWatch> {
    const pollMs = options.pollMs ?? SQLITE_POLL_MS;
    return Promise.resolve({
      next: async (timeoutMs: number, signal?: AbortSignal) => {
        try {
          await delay(Math.max(0, Math.min(timeoutMs, pollMs)), undefined, { signal });
        } catch {
          // Aborted: the caller notices its signal.
        }
      },
      close: () => Promise.resolve(),
    });
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
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
  if (version > LATEST_SQLITE_SCHEMA_VERSION) {
    throw new StoreError(
      `the drover database at ${path} is at schema version ${version}, newer than this drover knows (${LATEST_SQLITE_SCHEMA_VERSION}); use a newer drover or another DROVER_DB`,
    );
  }
  return version;
}

/** The schema version of the SQLite database at `path`, read without creating or changing anything; null when unversioned. */
export function inspectSqliteSchema(path: string): number | null {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const ledger = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (ledger === undefined) return null;
    return (db.prepare('SELECT max(version) AS version FROM schema_migrations').get() as { version: number | null }).version;
  } finally {
    db.close();
  }
}

function createPrivateDirectory(path: string, what: string): void {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (cause) {
    throw new StoreError(`cannot create ${what} ${path}: ${(cause as Error).message}`, { cause });
  }
}

function migrate(db: Database.Database, path: string): SchemaState {
  return db.transaction((): SchemaState => {
    const openedAt = schemaVersion(db, path);
    if (openedAt === 0) db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of SQLITE_MIGRATIONS) {
      if (migration.version <= openedAt) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, formatTimestamp(wallMicros()));
    }
    return { openedAt, current: LATEST_SQLITE_SCHEMA_VERSION, latest: LATEST_SQLITE_SCHEMA_VERSION };
  }).immediate();
}
