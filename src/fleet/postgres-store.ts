import { setTimeout as delay } from 'node:timers/promises';
import type { Client, ClientConfig, Pool, PoolClient } from 'pg';
import { messageOf } from '../process/index.js';
import type { ChangeWatch, SchemaState, StoreInfo, WatchOptions } from './broker.js';
import { formatTimestamp, wallMicros } from './clock.js';
import { StoreError, StoreUnavailableError } from './errors.js';
import { latestVersion, POSTGRES_MIGRATIONS } from './migrations.js';
import type { SqlDialect, SqlParams, SqlStore, SqlTransaction, TransactionMode } from './sql.js';

export const LATEST_POSTGRES_SCHEMA_VERSION = latestVersion(POSTGRES_MIGRATIONS);
/** How long a call waits for a connection, a row lock or a statement, unless told otherwise. */
export const POSTGRES_TIMEOUT_MS = 5000;
/** The channel every change is announced on; its payload is the fleet id. */
export const CHANGE_CHANNEL = 'drover_changes';
/** While the listening connection is lost, a watcher reads again this often (the only polling there is). */
export const LOST_SIGNAL_RECHECK_MS = 1000;
/** The longest wait between attempts to listen again. */
const RELISTEN_MAX_MS = 2000;
/** Keys of drover's transaction-scoped advisory locks: one for migrations, one for message ids. */
const MIGRATION_LOCK = 7_160_001;
const MESSAGE_LOCK = 7_160_002;
const POOL_SIZE = 4;
/** Pooled connections already given an error listener. */
const watchedClients = new WeakSet<PoolClient>();
const INT8_OID = 20;

/**
 * Failures after which a transaction is run again: a serialization failure, a deadlock, or
 * two sends with one idempotency key racing (the second then finds the first's message).
 */
function retryable(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40001' || code === '40P01' || (code === '23505' && (error as { constraint?: unknown }).constraint === 'messages_by_idempotency_key');
}
/** Connection and availability failures: the store could not be used just now. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOENT', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', '57P01', '57P02', '57P03', '53300', '55P03', '57014']);

/**
 * A PostgreSQL URL as drover may show it: the password, wherever it is given, masked; the rest
 * as written. Read as text, not as a WHATWG URL, which refuses libpq's socket form with no host
 * (`postgresql://user@/db?host=/run/postgresql`).
 */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:@/?#]*):[^@/?#]*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function unavailable(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(messageOf(error));
}

const POSTGRES_DIALECT: SqlDialect = {
  inIds: (column, param) => `${column} = ANY($${param}::bigint[])`,
  ids: (list) => [...list],
  skipLocked: 'FOR NO KEY UPDATE SKIP LOCKED',
  serializeMessages: `SELECT pg_advisory_xact_lock(${MESSAGE_LOCK})`,
};

type PgModule = typeof import('pg');

/** node-postgres, loaded when a PostgreSQL store is opened: SQLite users never pay for it. */
async function loadPg(): Promise<PgModule> {
  return ((await import('pg')) as unknown as { default: PgModule }).default;
}

export interface PostgresStoreOptions {
  url: string;
  /** Nothing is created or changed: the schema must exist, every transaction is read-only. */
  readOnly?: boolean;
}

/**
 * A fleet store on a PostgreSQL server, for fleets that outgrow one machine or where one is
 * run already: node-postgres, versioned migrations, serializable writes run again on a
 * conflict, claims that skip locked rows, and LISTEN/NOTIFY to wake waiting dispatchers.
 */
export class PostgresStore implements SqlStore {
  readonly url: string;
  readonly info: StoreInfo;
  readonly dialect = POSTGRES_DIALECT;
  private readonly pg: PgModule;
  private readonly pool: Pool;
  private readonly config: ClientConfig;
  private signals: ChangeSignals | undefined;

  private constructor(pg: PgModule, url: string, config: ClientConfig, schema: SchemaState, readOnly: boolean) {
    this.pg = pg;
    this.url = url;
    this.config = config;
    this.info = { kind: 'postgresql', location: maskUrl(url), readOnly, schema };
    this.pool = new pg.Pool({ ...config, max: POOL_SIZE, idleTimeoutMillis: 10_000, allowExitOnIdle: true });
    // An idle connection the server closed (a restart) is dropped by the pool; it must not end the process.
    this.pool.on('error', () => undefined);
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pg = await loadPg();
    const where = maskUrl(options.url);
    const config: ClientConfig = {
      connectionString: options.url,
      application_name: 'drover',
      connectionTimeoutMillis: POSTGRES_TIMEOUT_MS,
      // Ids are bigint; drover's stay far below 2^53, so they are read as numbers.
      types: { getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format as 'text'))) as never },
      ...(options.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
    };
    const schema = await prepareSchema(pg, config, where, options.readOnly === true);
    return new PostgresStore(pg, options.url, config, schema, options.readOnly === true);
  }

  async transaction<T>(mode: TransactionMode, body: (tx: SqlTransaction) => Promise<T>, timeoutMs = POSTGRES_TIMEOUT_MS): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (let attempt = 1; ; attempt += 1) {
      const client = await this.connect(Math.max(1, deadline - Date.now()));
      let broken = false;
      try {
        return await this.attempt(client, mode, body, Math.max(1, deadline - Date.now()));
      } catch (error) {
        broken = unavailable(error);
        if (retryable(error) && Date.now() < deadline) {
          await delay(Math.min(deadline - Date.now(), 5 + Math.random() * 20 * attempt));
          continue;
        }
        if (broken || retryable(error)) {
          throw new StoreUnavailableError(`the PostgreSQL store ${this.info.location} could not be used (${messageOf(error)})`, { cause: error });
        }
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  private async attempt<T>(client: PoolClient, mode: TransactionMode, body: (tx: SqlTransaction) => Promise<T>, timeoutMs: number): Promise<T> {
    const fleets = new Set<number>();
    const query = async <R>(sql: string, params: SqlParams = []) => (await client.query<R & object>(sql, params as unknown[])).rows as R[];
    // Statements without parameters go together in one round trip: a delivery runs several
    // short transactions, and on a busy machine each round trip is a scheduling wait.
    const ms = Math.max(1, Math.floor(timeoutMs));
    const begin = mode === 'write' ? 'BEGIN ISOLATION LEVEL SERIALIZABLE' : 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
    try {
      await client.query(`${begin}; SET LOCAL lock_timeout = ${ms}; SET LOCAL statement_timeout = ${ms}`);
      const result = await body({
        all: <R>(sql: string, params?: SqlParams) => query<R>(sql, params),
        get: async <R>(sql: string, params?: SqlParams) => (await query<R>(sql, params))[0],
        run: async (sql, params) => (await client.query(sql, params as unknown[])).rowCount ?? 0,
        announce: (fleetId) => {
          fleets.add(fleetId);
        },
      });
      // Delivered to listeners when (and only if) the transaction commits. A fleet id is an
      // integer, so it is written into the statement as it is.
      const notices = [...fleets].map((fleetId) => `NOTIFY ${CHANGE_CHANNEL}, '${Math.trunc(fleetId)}'; `).join('');
      await client.query(`${notices}COMMIT`);
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** A pooled connection within `timeoutMs`, or StoreUnavailableError. */
  private async connect(timeoutMs: number): Promise<PoolClient> {
    const connecting = this.pool.connect();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no connection within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const client = await Promise.race([connecting, timeout]);
      // A connection the server drops while checked out fails the query that uses it; the
      // client's own error event, with no listener, would end the process.
      if (!watchedClients.has(client)) {
        watchedClients.add(client);
        client.on('error', () => undefined);
      }
      return client;
    } catch (error) {
      // A connection that arrives after the wait was given up goes back to the pool.
      connecting.then((late) => late.release(), () => undefined);
      throw new StoreUnavailableError(`the PostgreSQL store ${this.info.location} could not be reached (${messageOf(error)})`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** A member's pane reaches the same server by the same URL. */
  connectionEnvironment(): Record<string, string> {
    return { DROVER_BROKER: this.url };
  }

  async watch(options: WatchOptions): Promise<ChangeWatch> {
    this.signals ??= new ChangeSignals(this.pg, this.config);
    return this.signals.watch(options.fleetId);
  }

  async close(): Promise<void> {
    await this.signals?.close();
    await this.pool.end();
  }
}

/** Opens one connection for the schema work, migrating (or, read-only, checking) as needed. */
async function prepareSchema(pg: PgModule, config: ClientConfig, where: string, readOnly: boolean): Promise<SchemaState> {
  const client = new pg.Client({ ...config, options: undefined });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (cause) {
    throw new StoreUnavailableError(`cannot reach the PostgreSQL store ${where}: ${messageOf(cause)}`, { cause });
  }
  try {
    const version = await schemaVersion(client, where);
    if (readOnly) {
      if (version === 0) throw new StoreError(`no drover schema in the PostgreSQL store ${where}: nothing has been stored there (is DROVER_BROKER the database you mean?)`);
      // Written by an older drover: upgraded once, then read.
      if (version < LATEST_POSTGRES_SCHEMA_VERSION) await migrate(client, where);
      return { openedAt: LATEST_POSTGRES_SCHEMA_VERSION, current: LATEST_POSTGRES_SCHEMA_VERSION, latest: LATEST_POSTGRES_SCHEMA_VERSION };
    }
    if (version === LATEST_POSTGRES_SCHEMA_VERSION) return { openedAt: version, current: version, latest: version };
    return await migrate(client, where);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (unavailable(error)) throw new StoreUnavailableError(`the PostgreSQL store ${where} could not be used: ${messageOf(error)}`, { cause: error });
    throw new StoreError(`cannot use the PostgreSQL store ${where}: ${messageOf(error)}`, { cause: error });
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The schema version recorded in the current schema; refuses an unversioned database with tables, or one newer than this drover. */
async function schemaVersion(client: Client, where: string): Promise<number> {
  // One statement, one snapshot: read apart, a drover migrating meanwhile could commit between them.
  const found = await client.query<{ ledger: boolean; tables: number }>(
    "SELECT coalesce(bool_or(table_name = 'schema_migrations'), false) AS ledger, count(*)::int AS tables FROM information_schema.tables WHERE table_schema = current_schema()",
  );
  if (!found.rows[0]!.ledger) {
    if (found.rows[0]!.tables > 0) throw new StoreError(`${where} has tables but no schema_migrations ledger; drover refuses to use an unversioned database`);
    return 0;
  }
  const row = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  const version = row.rows[0]!.version ?? 0;
  if (version > LATEST_POSTGRES_SCHEMA_VERSION) {
    throw new StoreError(
      `the PostgreSQL store ${where} is at schema version ${version}, newer than this drover knows (${LATEST_POSTGRES_SCHEMA_VERSION}); use a newer drover or another DROVER_BROKER`,
    );
  }
  return version;
}

/** Applies the missing migrations in one transaction; concurrent drovers take turns, and the second finds nothing to do. */
async function migrate(client: Client, where: string): Promise<SchemaState> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const openedAt = await schemaVersion(client, where);
    if (openedAt === 0) await client.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
    for (const migration of POSTGRES_MIGRATIONS) {
      if (migration.version <= openedAt) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, formatTimestamp(wallMicros())]);
    }
    await client.query('COMMIT');
    return { openedAt, current: LATEST_POSTGRES_SCHEMA_VERSION, latest: LATEST_POSTGRES_SCHEMA_VERSION };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** What one watcher waits for: a change in its fleet (or any), reported once. */
class Watcher implements ChangeWatch {
  changed = false;
  private wake: (() => void) | undefined;

  constructor(
    readonly fleetId: number | undefined,
    private readonly signals: ChangeSignals,
  ) {}

  notify(): void {
    this.changed = true;
    this.wake?.();
  }

  async next(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.changed || signal?.aborted) {
      this.changed = false;
      return;
    }
    // Without a listening connection a change would go unheard: read again soon instead.
    const wait = this.signals.listening ? timeoutMs : Math.min(timeoutMs, LOST_SIGNAL_RECHECK_MS);
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, wait));
      signal?.addEventListener('abort', done, { once: true });
      this.wake = done;
    });
    this.changed = false;
  }

  close(): Promise<void> {
    this.signals.forget(this);
    this.wake?.();
    return Promise.resolve();
  }
}

/**
 * One listening connection per store, shared by its watchers. When it is lost (a server
 * restart), every watcher is woken, reads again at most LOST_SIGNAL_RECHECK_MS apart, and the
 * connection is opened again; once it listens again, everyone reads once more, since changes
 * made meanwhile were not heard.
 */
class ChangeSignals {
  private readonly watchers = new Set<Watcher>();
  private client: Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private relistening = false;
  listening = false;

  constructor(
    private readonly pg: PgModule,
    private readonly config: ClientConfig,
  ) {}

  async watch(fleetId: number | undefined): Promise<Watcher> {
    const watcher = new Watcher(fleetId, this);
    this.watchers.add(watcher);
    if (!this.listening) {
      await this.listen();
      if (!this.listening) void this.relisten();
    }
    return watcher;
  }

  forget(watcher: Watcher): void {
    this.watchers.delete(watcher);
  }

  private listen(): Promise<void> {
    this.connecting ??= this.connectOnce().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connectOnce(): Promise<void> {
    const client = new this.pg.Client({ ...this.config, options: undefined });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listening = false;
      for (const watcher of this.watchers) watcher.notify();
      void this.relisten();
    };
    client.on('error', lost);
    client.on('end', lost);
    client.on('notification', (message) => {
      const fleetId = Number(message.payload);
      for (const watcher of this.watchers) if (watcher.fleetId === undefined || watcher.fleetId === fleetId) watcher.notify();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch {
      await client.end().catch(() => undefined);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.listening = true;
  }

  /** Tries to listen again, backing off, while anyone watches; one such loop at a time. */
  private async relisten(): Promise<void> {
    if (this.relistening) return;
    this.relistening = true;
    try {
      for (let wait = 250; !this.closed && !this.listening && this.watchers.size > 0; wait = Math.min(RELISTEN_MAX_MS, wait * 2)) {
        await delay(wait, undefined, { ref: false });
        if (this.closed || this.listening) return;
        await this.listen();
        if (this.listening) for (const watcher of this.watchers) watcher.notify();
      }
    } finally {
      this.relistening = false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.watchers.clear();
    const client = this.client;
    this.client = undefined;
    this.listening = false;
    await client?.end().catch(() => undefined);
  }
}

/** What `drover doctor` finds at a PostgreSQL URL, read without creating or changing anything. */
export interface PostgresInspection {
  reachable: boolean;
  /** The applied schema version; 0 when drover has stored nothing there; null when unknown. */
  schemaVersion: number | null;
  /** A notification sent on a private channel came back to the listening connection. */
  listens: boolean;
  /** Why the server could not be used; null when it could. */
  problem: string | null;
}

/** The longest the doctor waits for its own notification to come back. */
const DOCTOR_NOTIFY_TIMEOUT_MS = 2000;

export async function inspectPostgres(url: string): Promise<PostgresInspection> {
  const pg = await loadPg();
  const client = new pg.Client({ connectionString: url, application_name: 'drover doctor', connectionTimeoutMillis: POSTGRES_TIMEOUT_MS });
  client.on('error', () => undefined);
  const found: PostgresInspection = { reachable: false, schemaVersion: null, listens: false, problem: null };
  try {
    await client.connect();
    found.reachable = true;
    const ledger = await client.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    found.schemaVersion = ledger.rows[0]!.present ? ((await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')).rows[0]!.version ?? 0) : 0;
    const channel = `drover_doctor_${process.pid}`;
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), DOCTOR_NOTIFY_TIMEOUT_MS);
      client.on('notification', (message) => {
        if (message.channel !== channel) return;
        clearTimeout(timer);
        resolve(true);
      });
    });
    await client.query(`LISTEN ${channel}`);
    await client.query('SELECT pg_notify($1, $2)', [channel, 'ping']);
    found.listens = await heard;
    if (!found.listens) found.problem = `LISTEN/NOTIFY does not work at ${maskUrl(url)}: a notification did not come back within ${DOCTOR_NOTIFY_TIMEOUT_MS} ms, so waiting dispatchers would not wake`;
  } catch (error) {
    found.problem = `the PostgreSQL store ${maskUrl(url)} ${found.reachable ? 'cannot be used' : 'cannot be reached'}: ${messageOf(error)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
  return found;
}
