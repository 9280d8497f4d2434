/**
 * A private PostgreSQL cluster for tests: initdb in a fresh temporary directory, listening on a
 * unix socket in that directory only (no TCP port), stopped and removed after the tests, even
 * when they fail. PostgreSQL refuses to run as root, so under root the cluster runs as the
 * `postgres` user (else `nobody`), which owns the directory.
 */
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { run } from '../../src/process/index.js';

/** The directory holding initdb, pg_ctl and postgres: pg_config's answer, else Debian's newest versioned directory. */
async function postgresBinaries(): Promise<string | undefined> {
  try {
    const answer = await run(['pg_config', '--bindir'], { timeoutMs: 5000 });
    const dir = answer.lossyText().trim();
    if (answer.exitCode === 0 && existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config on PATH
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/** The account the cluster runs as: the current one unless it is root. */
function serverAccount(): { name: string; uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const accounts = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .filter((fields) => fields.length >= 4);
  for (const wanted of ['postgres', 'nobody']) {
    const found = accounts.find((fields) => fields[0] === wanted);
    if (found) return { name: wanted, uid: Number(found[2]), gid: Number(found[3]) };
  }
  throw new Error('running as root, and neither a postgres nor a nobody account exists for PostgreSQL to run as');
}

export interface PostgresCluster {
  /** A URL for a new, empty database of its own on the cluster. */
  createDatabase(): Promise<string>;
  /** Stops the server at once (as a crash would) and starts it again on the same data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Why the PostgreSQL tests cannot run here, or undefined when they can. Under CI=true a
 * missing PostgreSQL is a failure, not a skip.
 */
export async function postgresSkipReason(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if ((await postgresBinaries()) !== undefined) return undefined;
  if (env.CI === 'true') throw new Error('PostgreSQL is not installed (no pg_config on PATH, no /usr/lib/postgresql/N/bin/initdb), and CI=true requires the PostgreSQL tests');
  return 'PostgreSQL is not installed';
}

const SUPERUSER = 'drover';

/** Starts a private cluster; `after` registers its stop-and-remove. */
export async function startPostgres(after: (fn: () => unknown) => void): Promise<PostgresCluster> {
  const bin = await postgresBinaries();
  if (bin === undefined) throw new Error('PostgreSQL is not installed');
  const account = serverAccount();
  const dir = mkdtempSync(join(tmpdir(), 'drover-pg-'));
  const data = join(dir, 'data');
  let running = false;
  const asServer = (argv: string[]): string[] => (account ? ['runuser', '-u', account.name, '--', ...argv] : argv);
  const pgCtl = async (args: string[], timeoutMs: number): Promise<void> => {
    const result = await run(asServer([join(bin, 'pg_ctl'), '-D', data, ...args]), { timeoutMs });
    if (result.exitCode !== 0) throw new Error(`pg_ctl ${args.join(' ')} failed: ${result.stderrText() || result.lossyText()}`);
  };
  const start = async (): Promise<void> => {
    // Unix socket in the cluster's own directory, no TCP listener; fsync off: test data need not survive a power cut.
    await pgCtl(['-l', join(dir, 'server.log'), '-o', `-k ${dir} -c listen_addresses= -c fsync=off -c max_connections=200`, '-w', '-t', '60', 'start'], 70_000);
    running = true;
  };
  const stop = async (): Promise<void> => {
    if (!running) return;
    running = false;
    await pgCtl(['-m', 'immediate', '-w', 'stop'], 30_000);
  };
  // Should the test process end before its hooks run, the server is still told to quit at once.
  const quitOnExit = (): void => {
    try {
      process.kill(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGQUIT');
    } catch {
      // not running
    }
  };
  process.once('exit', quitOnExit);
  after(async () => {
    try {
      await stop();
    } finally {
      process.off('exit', quitOnExit);
      rmSync(dir, { recursive: true, force: true });
    }
  });
  if (account) chownSync(dir, account.uid, account.gid);
  const init = await run(asServer([join(bin, 'initdb'), '-D', data, '-U', SUPERUSER, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']), { timeoutMs: 120_000 });
  if (init.exitCode !== 0) throw new Error(`initdb failed: ${init.stderrText() || init.lossyText()}`);
  await start();

  const url = (database: string): string => `postgresql://${SUPERUSER}@/${database}?host=${encodeURIComponent(dir)}`;
  let databases = 0;
  return {
    async createDatabase() {
      const name = `contract_${++databases}`;
      const admin = new pg.Client({ connectionString: url('postgres') });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${name}`);
      } finally {
        await admin.end();
      }
      return url(name);
    },
    async restart() {
      await stop();
      await start();
    },
    stop,
  };
}
