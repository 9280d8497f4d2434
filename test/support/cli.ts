import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after } from 'node:test';
import { run, type RunResult } from '../../src/process/index.js';
import { testEnvironment } from './tmux.js';

/** The `drover` bin as it ships (the bundle at dist/cli/drover.js), next to this compiled file's tree. */
export const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'drover.js');

export interface CliSandbox {
  /** A private directory for state, sockets and tmux's own socket directory. */
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  drover(args: readonly string[], options?: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string; timeoutMs?: number }): Promise<RunResult>;
}

/**
 * Sandboxes whose suite never ran its `after` hook (every test in it filtered out by name):
 * removed as the test process exits. Their CLI never ran, so no server can be left in them.
 */
const unremoved = new Set<string>();
process.once('exit', () => {
  for (const dir of unremoved) rmSync(dir, { recursive: true, force: true });
});

/**
 * An environment in which the CLI cannot reach the user's tmux: no $TMUX/$TMUX_PANE, tmux's
 * socket directory and drover's state directory inside a fresh temporary directory that is
 * removed after the test file.
 */
export function cliSandbox(): CliSandbox {
  const dir = mkdtempSync(join(tmpdir(), 'drover-cli-'));
  unremoved.add(dir);
  const env = testEnvironment({ ...process.env, TMUX_TMPDIR: dir, DROVER_STATE_DIR: join(dir, 'state'), DROVER_DB: join(dir, 'drover.db'), HOME: dir });
  // Certificates are loaded at every Node start when this is set; the CLI makes no network calls.
  delete env.NODE_EXTRA_CA_CERTS;
  // The user's own tmux configuration stays out too: `drover up` runs the one under HOME, and under XDG_CONFIG_HOME.
  delete env.XDG_CONFIG_HOME;
  after(async () => {
    // This hook may run before a test file's own: a tmux server left with its socket gone could never be reached again.
    await Promise.all(socketsUnder(dir).map((socket) => run(['tmux', '-S', socket, 'kill-server'], { env, timeoutMs: 5000 }).catch(() => undefined)));
    rmSync(dir, { recursive: true, force: true });
    unremoved.delete(dir);
  });
  return {
    dir,
    env,
    drover(args, options = {}) {
      return run([process.execPath, CLI_PATH, ...args], {
        env: { ...env, ...options.env },
        cwd: options.cwd ?? dir,
        input: options.input,
        timeoutMs: options.timeoutMs ?? 20_000,
      });
    },
  };
}

/** Every unix socket below `dir`: tmux's own (under TMUX_TMPDIR) and any a test put there. */
function socketsUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((entry) => join(dir, entry))
    .filter((path) => statSync(path, { throwIfNoEntry: false })?.isSocket() === true);
}
