import { accessSync, constants, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MUX_DECLARATIONS, selectMux } from '../mux/index.js';
import { run } from '../process/index.js';
import { fleetUnsupported } from './backend.js';
import { errorMessage } from './errors.js';
import { LATEST_SCHEMA_VERSION } from './migrations.js';
import { paneLockDirectory, resolveDatabasePath } from './store.js';

export interface FleetDoctorSection {
  database: {
    path: string | null;
    exists: boolean;
    /** The applied schema version; null when the database is missing, unversioned or unreadable. */
    schemaVersion: number | null;
    latestSchemaVersion: number;
  };
  lockDirectory: { path: string | null; exists: boolean; writable: boolean };
  backend: { resolved: string | null; summary: string | null };
  flock: { available: boolean; version: string | null };
  /** Everything that would stop the fleet from working, one sentence each; empty when all is well. */
  problems: string[];
}

function inspectSchema(path: string): number | null {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const ledger = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (ledger === undefined) return null;
    return (db.prepare('SELECT max(version) AS version FROM schema_migrations').get() as { version: number | null }).version;
  } finally {
    db.close();
  }
}

function isWritableDirectory(path: string): boolean {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The fleet's part of `drover doctor`: where the database is and which schema it has (read
 * only: nothing is created or migrated), where the pane input locks live, which backend this
 * environment resolves to, and whether util-linux flock (the pane input lock) works.
 */
export async function fleetDoctorSection(env: NodeJS.ProcessEnv = process.env): Promise<FleetDoctorSection> {
  const problems: string[] = [];
  const section: FleetDoctorSection = {
    database: { path: null, exists: false, schemaVersion: null, latestSchemaVersion: LATEST_SCHEMA_VERSION },
    lockDirectory: { path: null, exists: false, writable: false },
    backend: { resolved: null, summary: null },
    flock: { available: false, version: null },
    problems,
  };

  try {
    const path = resolveDatabasePath(env);
    section.database.path = path;
    section.database.exists = statSync(path, { throwIfNoEntry: false })?.isFile() === true;
    if (section.database.exists) {
      section.database.schemaVersion = inspectSchema(path);
      if (section.database.schemaVersion === null) problems.push(`the database ${path} has no schema_migrations ledger; drover will not use it`);
      else if (section.database.schemaVersion > LATEST_SCHEMA_VERSION) {
        problems.push(`the database ${path} is at schema version ${section.database.schemaVersion}, newer than this drover knows (${LATEST_SCHEMA_VERSION})`);
      }
    }
    const lockDirectory = paneLockDirectory(path);
    section.lockDirectory.path = lockDirectory;
    section.lockDirectory.exists = statSync(lockDirectory, { throwIfNoEntry: false })?.isDirectory() === true;
    section.lockDirectory.writable = section.lockDirectory.exists && isWritableDirectory(lockDirectory);
    if (section.lockDirectory.exists && !section.lockDirectory.writable) problems.push(`the pane lock directory ${lockDirectory} is not writable`);
  } catch (error) {
    problems.push(`the database cannot be inspected: ${errorMessage(error)}`);
  }

  try {
    const selection = selectMux({ env });
    section.backend = { resolved: selection.mux, summary: selection.summary };
    const unsupported = fleetUnsupported(selection.mux, MUX_DECLARATIONS[selection.mux]);
    if (unsupported !== undefined) problems.push(unsupported);
  } catch (error) {
    problems.push(errorMessage(error));
  }

  try {
    const result = await run(['flock', '--version'], { timeoutMs: 2000, env });
    section.flock = { available: result.ok, version: result.ok ? result.text().trim() : null };
    if (!result.ok) problems.push(`flock --version failed: ${result.stderrText().trim()}`);
  } catch (error) {
    problems.push(`util-linux flock, which the pane input lock needs, cannot be run: ${errorMessage(error)}`);
  }
  return section;
}
