import { accessSync, constants, statSync } from 'node:fs';
import { MUX_DECLARATIONS, selectMux } from '../mux/index.js';
import { messageOf } from '../process/index.js';
import { fleetUnsupported } from './backend.js';
import type { StoreKind } from './broker.js';
import { inspectPostgres, LATEST_POSTGRES_SCHEMA_VERSION } from './postgres-store.js';
import { inspectSqliteSchema, LATEST_SQLITE_SCHEMA_VERSION, paneLockDirectory, resolveDatabasePath } from './sqlite-store.js';
import { RemoteBroker } from './remote-store.js';
import { chooseStore, describeChoice } from './stores.js';

export interface FleetDoctorSection {
  store: {
    kind: StoreKind | null;
    /** The SQLite file, or the PostgreSQL URL with its password masked. */
    location: string | null;
    /** What chose the store: DROVER_BROKER, the config file's broker key, DROVER_DB, or `default` (nothing set). */
    chosenBy: string | null;
    /** A SQLite file exists; a PostgreSQL server answered. */
    reachable: boolean;
    /** The applied schema version; 0 when nothing was stored yet; null when unversioned or unreadable. */
    schemaVersion: number | null;
    latestSchemaVersion: number | null;
    /** PostgreSQL: a notification came back to a listening connection (dispatchers wake on it); null for SQLite. */
    listens: boolean | null;
  };
  lockDirectory: { path: string | null; exists: boolean; writable: boolean };
  backend: { resolved: string | null; summary: string | null };
  /** Everything that would stop the fleet from working, one sentence each; empty when all is well. */
  problems: string[];
}

function isWritableDirectory(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The store the environment chooses, inspected without creating, migrating or writing anything. */
async function inspectStore(env: NodeJS.ProcessEnv, section: FleetDoctorSection, problems: string[]): Promise<void> {
  const choice = chooseStore(env);
  const location = describeChoice(choice);
  if (choice.kind === 'remote') {
    // Another drover's store: what it serves is asked through its socket, read only.
    section.store = { ...section.store, location, chosenBy: choice.source };
    try {
      const broker = await RemoteBroker.connect({ socketPath: choice.socketPath, readOnly: true });
      await broker.close();
      const { kind, location: served, schema } = broker.store;
      Object.assign(section.store, { kind, location: `${location} (serving ${kind} ${served})`, reachable: true, schemaVersion: schema.current, latestSchemaVersion: schema.latest });
    } catch (error) {
      problems.push(messageOf(error));
    }
    return;
  }
  section.store = { ...section.store, kind: choice.kind, location, chosenBy: choice.source };
  if (choice.kind === 'postgresql') {
    section.store.latestSchemaVersion = LATEST_POSTGRES_SCHEMA_VERSION;
    const found = await inspectPostgres(choice.url);
    Object.assign(section.store, { reachable: found.reachable, schemaVersion: found.schemaVersion, listens: found.reachable ? found.listens : null });
    if (found.problem !== null) problems.push(found.problem);
  } else {
    section.store.latestSchemaVersion = LATEST_SQLITE_SCHEMA_VERSION;
    section.store.reachable = statSync(choice.path, { throwIfNoEntry: false })?.isFile() === true;
    if (section.store.reachable) {
      section.store.schemaVersion = inspectSqliteSchema(choice.path);
      if (section.store.schemaVersion === null) problems.push(`the database ${location} has no schema_migrations ledger; drover will not use it`);
    } else section.store.schemaVersion = 0;
  }
  const { schemaVersion, latestSchemaVersion } = section.store;
  if (schemaVersion !== null && latestSchemaVersion !== null && schemaVersion > latestSchemaVersion) {
    problems.push(`the ${choice.kind === 'sqlite' ? 'database' : 'PostgreSQL store'} ${location} is at schema version ${schemaVersion}, newer than this drover knows (${latestSchemaVersion})`);
  }
}

/**
 * The fleet's part of `drover doctor`: which store the fleet uses and what chose it, whether
 * it answers and which schema it has (read only: nothing is created or migrated), whether a
 * PostgreSQL store's notifications arrive, where the pane input locks live, which backend
 * this environment resolves to.
 */
export async function fleetDoctorSection(env: NodeJS.ProcessEnv = process.env): Promise<FleetDoctorSection> {
  const problems: string[] = [];
  const section: FleetDoctorSection = {
    store: { kind: null, location: null, chosenBy: null, reachable: false, schemaVersion: null, latestSchemaVersion: null, listens: null },
    lockDirectory: { path: null, exists: false, writable: false },
    backend: { resolved: null, summary: null },
    problems,
  };

  try {
    await inspectStore(env, section, problems);
  } catch (error) {
    problems.push(`the fleet store cannot be inspected: ${messageOf(error)}`);
  }
  try {
    const lockDirectory = paneLockDirectory(resolveDatabasePath(env));
    section.lockDirectory.path = lockDirectory;
    section.lockDirectory.exists = statSync(lockDirectory, { throwIfNoEntry: false })?.isDirectory() === true;
    section.lockDirectory.writable = section.lockDirectory.exists && isWritableDirectory(lockDirectory);
    if (section.lockDirectory.exists && !section.lockDirectory.writable) problems.push(`the pane lock directory ${lockDirectory} is not writable`);
  } catch (error) {
    problems.push(`the pane lock directory cannot be inspected: ${messageOf(error)}`);
  }

  try {
    const selection = selectMux({ env });
    section.backend = { resolved: selection.mux, summary: selection.summary };
    const unsupported = fleetUnsupported(selection.mux, MUX_DECLARATIONS[selection.mux]);
    if (unsupported !== undefined) problems.push(unsupported);
  } catch (error) {
    problems.push(messageOf(error));
  }

  return section;
}
