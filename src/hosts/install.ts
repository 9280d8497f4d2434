/**
 * `drover host add --install`: the one way drover installs anything on a host, and only when
 * asked. It installs the very release that is running here: this drover's own package is
 * packed (npm pack of its package root, as it is installed or built), the tarball goes over
 * the same ssh the link uses, and the host's npm installs it globally. Nothing is fetched by
 * the name `drover` from a registry, where that name may be someone else's package.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DroverError, findExecutable, run, shellQuote } from '../process/index.js';
import type { HostEntry } from './config.js';
import { sshArgv, sshBinary, sshStderrSummary } from './ssh.js';

/** A tarball name as npm pack makes it; nothing else is put into the remote script. */
const TARBALL_NAME = /^[A-Za-z0-9._-]+\.tgz$/;

const PACK_TIMEOUT_MS = 120_000;
/** npm on a slow host, fetching the dependencies: generous, and still a deadline. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;
const CONNECT_TIMEOUT_MS = 10_000;
const MARK_INSTALLED = 'drover-installed:';
const MARK_ON_PATH = 'drover-on-path:';

/** The install could not be done; `delivery` says whether anything may have changed there. */
export class InstallError extends DroverError {}

/**
 * The script the host's login shell runs (as `sh -c SCRIPT`), the tarball on its stdin: save
 * it in a fresh temporary directory (removed whatever happens), install it with npm, and say
 * where the drover bin landed and which `drover` the PATH of ssh commands finds there.
 */
export function remoteInstallScript(tarball: string): string {
  if (!TARBALL_NAME.test(tarball)) throw new InstallError(`${JSON.stringify(tarball)} is not a tarball name npm pack makes`, { phase: 'pack' });
  return [
    'set -e',
    'dir=$(mktemp -d)',
    `trap 'rm -rf "$dir"' EXIT`,
    `cat > "$dir/${tarball}"`,
    `npm install --global --no-audit --no-fund "$dir/${tarball}" >&2`,
    `printf '${MARK_INSTALLED} %s\\n' "$(npm prefix --global)/bin/drover"`,
    `printf '${MARK_ON_PATH} %s\\n' "$(command -v drover || true)"`,
  ].join('\n');
}

/** The commands an install runs, for the user to read before anything runs. */
export interface InstallPlan {
  /** Here, in the package root: packs this drover into `destination`. */
  pack(destination: string): string[];
  readonly tarball: string;
  readonly packageRoot: string;
  /** Over ssh, the tarball on stdin. */
  readonly ssh: readonly string[];
}

function npmBinary(env: NodeJS.ProcessEnv): string {
  // The npm beside this Node first: it is the one that matches the Node running drover.
  const beside = findExecutable(join(dirname(process.execPath), 'npm'), env);
  const found = beside ?? findExecutable('npm', env);
  if (found === undefined) throw new InstallError('no npm here to pack this drover with (it comes with Node.js)', { phase: 'pack' });
  return found;
}

export function installPlan(entry: HostEntry, options: { readonly packageRoot: string; readonly tarball: string; readonly env?: NodeJS.ProcessEnv }): InstallPlan {
  const env = options.env ?? process.env;
  const npm = npmBinary(env);
  return {
    pack: (destination) => [npm, 'pack', '--json', '--ignore-scripts', '--pack-destination', destination],
    tarball: options.tarball,
    packageRoot: options.packageRoot,
    ssh: sshArgv(sshBinary(env), entry.ssh, `sh -c ${shellQuote(remoteInstallScript(options.tarball))}`, { connectTimeoutMs: CONNECT_TIMEOUT_MS }),
  };
}

/** The tarball npm pack names for a package. */
export function tarballName(name: string, version: string): string {
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

export interface InstallResult {
  /** Where the drover bin landed on the host. */
  readonly installed: string;
  /** The `drover` the PATH of ssh commands finds there, if any. */
  readonly onPath: string | undefined;
}

interface PackageManifest {
  readonly name: string;
  readonly version: string;
}

/**
 * Packs this drover and installs it on the host. `announce` is told each command before it
 * runs. Fails with InstallError saying which step failed and what the host said.
 */
export async function installDrover(
  entry: HostEntry,
  options: { readonly packageRoot: string; readonly env?: NodeJS.ProcessEnv; readonly announce: (line: string) => void; readonly signal?: AbortSignal },
): Promise<InstallResult> {
  const env = options.env ?? process.env;
  const manifest = JSON.parse(readFileSync(join(options.packageRoot, 'package.json'), 'utf8')) as PackageManifest;
  const plan = installPlan(entry, { packageRoot: options.packageRoot, tarball: tarballName(manifest.name, manifest.version), env });
  options.announce(`packing this drover (${manifest.name} ${manifest.version}) in ${options.packageRoot}: ${plan.pack('TEMPORARY_DIRECTORY').map(shellQuote).join(' ')}`);
  options.announce(`then on ${entry.name}, over ssh with the tarball on stdin: ${plan.ssh.map(shellQuote).join(' ')}`);
  const directory = mkdtempSync(join(tmpdir(), 'drover-pack-'));
  try {
    const pack = await run(plan.pack(directory), { cwd: options.packageRoot, env, timeoutMs: PACK_TIMEOUT_MS, signal: options.signal });
    if (pack.exitCode !== 0) throw new InstallError(`npm pack failed (exit ${pack.exitCode}): ${pack.stderrText().trim().split('\n').at(-1) ?? ''}`, { phase: 'pack' });
    const [packed] = JSON.parse(pack.text()) as { filename: string; name: string; version: string }[];
    if (packed === undefined || packed.name !== manifest.name || packed.version !== manifest.version || packed.filename !== plan.tarball) {
      throw new InstallError(`npm pack made ${packed?.filename ?? 'nothing'}, not ${plan.tarball}`, { phase: 'pack' });
    }
    const tarball = readFileSync(join(directory, packed.filename));
    const install = await run(plan.ssh, { input: tarball, env, timeoutMs: INSTALL_TIMEOUT_MS, signal: options.signal, limits: { stdinBytes: tarball.length } });
    const output = install.text();
    const installed = output.split('\n').find((line) => line.startsWith(MARK_INSTALLED))?.slice(MARK_INSTALLED.length).trim();
    if (install.exitCode !== 0 || installed === undefined) {
      const said = install.exitCode === 255 ? sshStderrSummary(install.stderrText()) : install.stderrText().trim().split('\n').slice(-5).join('\n');
      throw new InstallError(`installing on ${entry.name} failed (exit ${install.exitCode})${said ? `:\n${said}` : ''}`, { phase: 'install', delivery: 'possibly_sent' });
    }
    const onPath = output.split('\n').find((line) => line.startsWith(MARK_ON_PATH))?.slice(MARK_ON_PATH.length).trim();
    return { installed, onPath: onPath === '' ? undefined : onPath };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
