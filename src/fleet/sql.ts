import type { ChangeWatch, StoreInfo, WatchOptions } from './broker.js';

/** Positional values for `$1`, `$2`, … in a statement. */
export type SqlParams = readonly unknown[];

/** The statements of one transaction. SQL is written once, with `$n` placeholders, for every store. */
export interface SqlTransaction {
  all<T>(sql: string, params?: SqlParams): Promise<T[]>;
  get<T>(sql: string, params?: SqlParams): Promise<T | undefined>;
  /** Runs a statement; the number of rows it changed. */
  run(sql: string, params?: SqlParams): Promise<number>;
  /** Tells the store's watchers, once the transaction commits, that this fleet changed. */
  announce(fleetId: number): void;
}

/** Where the SQL of two stores differs. */
export interface SqlDialect {
  /** A condition: `column` is one of the ids bound at `$param` (bound with `ids`). */
  inIds(column: string, param: number): string;
  ids(list: Iterable<number>): unknown;
  /**
   * A statement that locks the row it reads, skipping it when another transaction holds it;
   * empty where a write transaction already excludes every other writer.
   */
  readonly skipLocked: string;
  /**
   * The first statement of a transaction that stores messages, so that message ids commit in
   * the order they are handed out (a listener reading past the highest id never skips one);
   * empty where writers are serial anyway.
   */
  readonly serializeMessages: string;
}

export type TransactionMode = 'read' | 'write';

/**
 * A store the SQL broker runs on: SQLite (a file, embedded) or PostgreSQL (a server).
 * A store that stays busy or cannot be reached fails a transaction with StoreUnavailableError.
 */
export interface SqlStore {
  readonly info: StoreInfo;
  readonly dialect: SqlDialect;
  /**
   * Runs body in one transaction: `read` sees one consistent snapshot, `write` is isolated
   * from every other writer. Waits at most `timeoutMs` (default: the store's own) for locks.
   */
  transaction<T>(mode: TransactionMode, body: (tx: SqlTransaction) => Promise<T>, timeoutMs?: number): Promise<T>;
  connectionEnvironment(): Record<string, string>;
  watch(options: WatchOptions): Promise<ChangeWatch>;
  close(): Promise<void>;
}
