/**
 * The schema of each store, one step per version. A step is never edited once released; a
 * change is a new step. `schema_migrations` records each applied version; a store at a version
 * newer than this drover knows is refused, never used.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** The newest version a list of migrations reaches. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations[migrations.length - 1]!.version;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'fleets, members, placements and messages',
    // members is created first: it references fleets, and fleets references its director
    // member; SQLite checks foreign keys when rows change, not when tables are created.
    sql: `
      CREATE TABLE members (
        member_id INTEGER PRIMARY KEY AUTOINCREMENT,
        fleet_id INTEGER NOT NULL REFERENCES fleets(fleet_id) ON DELETE RESTRICT,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL CHECK (status IN ('active', 'deregistered')),
        coding_agent TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        deregistered_at TEXT
      );
      CREATE TABLE fleets (
        fleet_id INTEGER PRIMARY KEY AUTOINCREMENT,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        deleted_at TEXT,
        director_member_id INTEGER REFERENCES members(member_id) ON DELETE RESTRICT
      );
      CREATE TABLE placements (
        member_id INTEGER PRIMARY KEY REFERENCES members(member_id) ON DELETE CASCADE,
        backend TEXT NOT NULL,
        session TEXT NOT NULL,
        window TEXT NOT NULL,
        pane TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE messages (
        message_id INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_member_id INTEGER NOT NULL REFERENCES members(member_id) ON DELETE RESTRICT,
        from_member_id INTEGER NOT NULL,
        to_member_id INTEGER,
        type TEXT NOT NULL CHECK (type IN ('unicast', 'broadcast_summary')),
        created_at TEXT NOT NULL,
        status_state TEXT NOT NULL CHECK (status_state IN ('input_required', 'completed')),
        status_timestamp TEXT NOT NULL,
        origin_message_id INTEGER,
        text TEXT NOT NULL,
        notified_at TEXT
      );
      CREATE INDEX members_by_fleet ON members (fleet_id, status);
      CREATE INDEX messages_by_owner ON messages (owner_member_id, status_state, status_timestamp);
      CREATE INDEX messages_by_sender ON messages (from_member_id, status_timestamp);
      CREATE INDEX messages_awaiting_notification ON messages (owner_member_id, created_at, message_id)
        WHERE status_state = 'input_required' AND notified_at IS NULL;
    `,
  },
  {
    version: 2,
    name: 'placements remember when their pane was found gone',
    sql: `ALTER TABLE placements ADD COLUMN gone_at TEXT;`,
  },
  {
    version: 3,
    name: 'placements remember which multiplexer server their pane lives on, and when that server was found replaced',
    sql: `
      ALTER TABLE placements ADD COLUMN server TEXT;
      ALTER TABLE placements ADD COLUMN stale_at TEXT;
    `,
  },
  {
    version: 4,
    name: 'messages carry the client idempotency key they were sent with, and the delivery claim on them',
    sql: `
      ALTER TABLE messages ADD COLUMN idempotency_key TEXT;
      ALTER TABLE messages ADD COLUMN claimed_by TEXT;
      ALTER TABLE messages ADD COLUMN claimed_until TEXT;
      CREATE UNIQUE INDEX messages_by_idempotency_key ON messages (from_member_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 5,
    name: 'placements name the host their pane is on (NULL: this machine)',
    sql: `ALTER TABLE placements ADD COLUMN host TEXT;`,
  },
  {
    version: 6,
    name: 'placements name where their multiplexer server is reached (NULL: recorded before drover kept it)',
    sql: `ALTER TABLE placements ADD COLUMN endpoint TEXT;`,
  },
]);

/**
 * PostgreSQL's schema: the same tables, columns and meanings as SQLite's (its version 1 is SQLite's 4; then step for step)
 * (timestamps are the same sortable text, written by drover), with ids from identity columns
 * that are never reused.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    version: 1,
    name: 'fleets, members, placements and messages, with idempotency keys and delivery claims',
    sql: `
      CREATE TABLE fleets (
        fleet_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        deleted_at TEXT,
        director_member_id BIGINT
      );
      CREATE TABLE members (
        member_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        fleet_id BIGINT NOT NULL REFERENCES fleets (fleet_id) ON DELETE RESTRICT,
        name TEXT NOT NULL,
        description TEXT NOT NULL DEFAULT '',
        status TEXT NOT NULL CHECK (status IN ('active', 'deregistered')),
        coding_agent TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        deregistered_at TEXT
      );
      ALTER TABLE fleets ADD FOREIGN KEY (director_member_id) REFERENCES members (member_id) ON DELETE RESTRICT;
      CREATE TABLE placements (
        member_id BIGINT PRIMARY KEY REFERENCES members (member_id) ON DELETE CASCADE,
        backend TEXT NOT NULL,
        session TEXT NOT NULL,
        "window" TEXT NOT NULL,
        pane TEXT,
        created_at TEXT NOT NULL,
        gone_at TEXT,
        server TEXT,
        stale_at TEXT
      );
      CREATE TABLE messages (
        message_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        owner_member_id BIGINT NOT NULL REFERENCES members (member_id) ON DELETE RESTRICT,
        from_member_id BIGINT NOT NULL,
        to_member_id BIGINT,
        type TEXT NOT NULL CHECK (type IN ('unicast', 'broadcast_summary')),
        created_at TEXT NOT NULL,
        status_state TEXT NOT NULL CHECK (status_state IN ('input_required', 'completed')),
        status_timestamp TEXT NOT NULL,
        origin_message_id BIGINT,
        text TEXT NOT NULL,
        notified_at TEXT,
        idempotency_key TEXT,
        claimed_by TEXT,
        claimed_until TEXT
      );
      CREATE INDEX members_by_fleet ON members (fleet_id, status);
      CREATE INDEX messages_by_owner ON messages (owner_member_id, status_state, status_timestamp);
      CREATE INDEX messages_by_sender ON messages (from_member_id, status_timestamp);
      CREATE INDEX messages_by_origin ON messages (origin_message_id);
      CREATE INDEX messages_awaiting_notification ON messages (owner_member_id, created_at, message_id)
        WHERE status_state = 'input_required' AND notified_at IS NULL;
      CREATE UNIQUE INDEX messages_by_idempotency_key ON messages (from_member_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    `,
  },
  {
    version: 2,
    name: 'placements name the host their pane is on (NULL: this machine)',
    sql: `ALTER TABLE placements ADD COLUMN host TEXT;`,
  },
  {
    version: 3,
    name: 'placements name where their multiplexer server is reached (NULL: recorded before drover kept it)',
    sql: `ALTER TABLE placements ADD COLUMN endpoint TEXT;`,
  },
]);
