import { existsSync } from 'node:fs';
import { ArgumentError } from '../process/index.js';
import type { Broker } from './broker.js';
import { configuredBroker } from './config.js';
import { maskUrl, PostgresStore } from './postgres-store.js';
import { parseRemoteBrokerUrl, REMOTE_BROKER_SCHEME, remoteBrokerUrl } from './remote-protocol.js';
import { RemoteBroker } from './remote-store.js';
import { SqlBroker } from './sql-broker.js';
import { resolveDatabasePath, SqliteStore } from './sqlite-store.js';

/** Which store the fleet uses, and what chose it. */
export type StoreChoice =
  | { kind: 'sqlite'; path: string; source: string }
  | { kind: 'postgresql'; url: string; source: string }
  | { kind: 'remote'; socketPath: string; source: string };

/**
 * The store a setting names: `sqlite` (the SQLite file at DROVER_DB), a PostgreSQL URL
 * (`postgresql://…`, `postgres://…`, a unix socket directory as `?host=/dir`), or the socket
 * of a `drover broker serve` (`drover+unix:///absolute/path.sock`), usually another machine's
 * forwarded here by its host link.
 */
function parseSetting(value: string, source: string, env: NodeJS.ProcessEnv): StoreChoice {
  if (value === 'sqlite') return { kind: 'sqlite', path: resolveDatabasePath(env), source };
  if (/^postgres(ql)?:\/\//.test(value)) return { kind: 'postgresql', url: value, source };
  if (value.startsWith(REMOTE_BROKER_SCHEME)) return { kind: 'remote', socketPath: parseRemoteBrokerUrl(value, source), source };
  const shown = value.includes('://') ? maskUrl(value) : JSON.stringify(value);
  throw new ArgumentError(`${source} must be sqlite, a postgresql:// URL or a ${REMOTE_BROKER_SCHEME} socket URL (got ${shown})`);
}

/**
 * `DROVER_BROKER` when set, else the config file's `broker:` key, else the embedded default:
 * the SQLite file at DROVER_DB (or drover's default path).
 */
export function chooseStore(env: NodeJS.ProcessEnv = process.env): StoreChoice {
  const variable = env.DROVER_BROKER;
  if (variable !== undefined && variable.trim() !== '') return parseSetting(variable.trim(), 'DROVER_BROKER', env);
  const configured = configuredBroker(env);
  if (configured) return parseSetting(configured.value, `the broker key in ${configured.path}`, env);
  return { kind: 'sqlite', path: resolveDatabasePath(env), source: env.DROVER_DB === undefined ? 'default' : 'DROVER_DB' };
}

/** How a store choice may be shown: a path, or a URL with its password masked. */
export function describeChoice(choice: StoreChoice): string {
  if (choice.kind === 'remote') return remoteBrokerUrl(choice.socketPath);
  return choice.kind === 'sqlite' ? choice.path : maskUrl(choice.url);
}

export interface OpenBrokerOptions {
  env?: NodeJS.ProcessEnv;
  /** For commands that only read: nothing is created or changed, and the store must exist. */
  readOnly?: boolean;
  /** Wall-clock microseconds for timestamps; injectable for tests. */
  wallMicros?: () => number;
}

/** The broker over the store the environment chooses, migrated to the latest schema (or checked, read-only). */
export async function openBroker(options: OpenBrokerOptions = {}): Promise<Broker> {
  const choice = chooseStore(options.env ?? process.env);
  if (choice.kind === 'remote') return RemoteBroker.connect({ socketPath: choice.socketPath, readOnly: options.readOnly });
  const store =
    choice.kind === 'sqlite' ? SqliteStore.open({ path: choice.path, readOnly: options.readOnly, env: options.env }) : await PostgresStore.open({ url: choice.url, readOnly: options.readOnly });
  return new SqlBroker(store, { wallMicros: options.wallMicros });
}

/**
 * Whether the chosen store may hold fleets already, answered without opening it: a SQLite
 * file that exists, or a server's URL or socket (the server itself is asked when a call is made).
 * False for a setting that names no usable store.
 */
export function fleetStoreExists(env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    const choice = chooseStore(env);
    return choice.kind !== 'sqlite' || existsSync(choice.path);
  } catch {
    return false;
  }
}
