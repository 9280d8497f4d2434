/**
 * drover's own settings file for this user: `$DROVER_CONFIG`, else
 * `$XDG_CONFIG_HOME/drover/config.yaml`, else `~/.config/drover/config.yaml`. Its `hosts:`
 * mapping names the machines drover reaches over ssh:
 *
 *   hosts:
 *     gpu:
 *       ssh: gpu-box            # the destination ssh is given (an alias of ~/.ssh/config)
 *       drover: ~/bin/drover    # optional: the drover program there (~/ is that host's home)
 *       forward_broker: /home/me/.drover-hub.sock   # optional: see HostEntry.forwardBroker
 *
 * The file belongs to the user as much as to drover: edits go through yaml's document model, so
 * other keys, comments and layout stay as they were; a file that does not parse is never
 * rewritten; the new text replaces the old in one rename (a reader sees one or the other), with
 * the file's mode kept, through a symlink to wherever the file really lives.
 */
import { lstatSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Document } from 'yaml';
import { parseYamlFile, yaml } from '../agents/index.js';
import { ArgumentError, DroverError, writeFileBeside } from '../process/index.js';
import { LOCAL_HOST, isHostName } from '../mux/index.js';
import { userConfigPath } from '../fleet/config.js';
import { remoteProgramProblem, sshDestinationProblem } from './ssh.js';

/** One machine drover reaches over ssh. */
export interface HostEntry {
  /** drover's name for it (`gpu`): letters, digits, `.`, `_`, `-`; never `local`. */
  readonly name: string;
  /** What ssh is given to reach it: an alias of the user's ssh config, or `user@host`. */
  readonly ssh: string;
  /** The drover program there, when not `drover` on the PATH ssh commands get. */
  readonly drover?: string;
  /**
   * An absolute socket path on that host where the link `drover broker serve` holds puts this
   * machine's broker (ssh -R): members there set DROVER_BROKER=drover+unix://PATH.
   */
  readonly forwardBroker?: string;
}

export interface HostsConfig {
  /** The file read (it need not exist). */
  readonly path: string;
  readonly hosts: readonly HostEntry[];
}

/** A host name that is not in the config file. */
export class UnknownHostError extends DroverError {
  constructor(
    readonly host: string,
    readonly path: string,
    known: readonly string[],
  ) {
    super(`no host ${JSON.stringify(host)} in ${path}${known.length > 0 ? `; it has ${known.join(', ')}` : '; it has none yet (drover host add NAME --ssh ALIAS)'}`, { phase: 'config', delivery: 'not_sent' });
  }
}

const HOST_KEYS: readonly string[] = ['ssh', 'drover', 'forward_broker'];

/** The longest path a unix socket address holds. */
const MAX_SOCKET_PATH_BYTES = 107;

/**
 * What is wrong with a socket path on another host that ssh -R binds, or undefined. sshd takes
 * it as it is (no `~`, and a relative path would be relative to sshd's own directory), and ssh
 * splits its -R argument at colons.
 */
export function forwardedSocketProblem(path: unknown): string | undefined {
  if (typeof path !== 'string' || !path.startsWith('/')) return `${JSON.stringify(path)} is not an absolute path (sshd does not expand ~: write the home out)`;
  if (path.includes(':')) return `${JSON.stringify(path)} holds a colon, which ssh -R reads as a separator`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(path)) return `${JSON.stringify(path)} holds a control character`;
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) return `${JSON.stringify(path)} is longer than a unix socket address holds (${MAX_SOCKET_PATH_BYTES} bytes)`;
  return undefined;
}

/**
 * A host entry checked, or ArgumentError naming `where` (a flag, or the file and key) and what
 * is wrong. `ssh` defaults to the name.
 */
export function hostEntry(
  input: { readonly name: unknown; readonly ssh?: unknown; readonly drover?: unknown; readonly forwardBroker?: unknown },
  where: { readonly name: string; readonly ssh: string; readonly drover: string; readonly forwardBroker?: string },
): HostEntry {
  const { name } = input;
  if (!isHostName(name)) throw new ArgumentError(`${where.name}: ${JSON.stringify(name)} is not a host name (letters, digits, . _ -; at most 64, starting with a letter or digit)`);
  if (name.toLowerCase() === LOCAL_HOST) throw new ArgumentError(`${where.name}: "${name}" is reserved: it means this machine`);
  const ssh = input.ssh ?? name;
  const sshProblem = sshDestinationProblem(ssh);
  if (sshProblem !== undefined) throw new ArgumentError(`${where.ssh}: the ssh destination ${sshProblem}`);
  const forward = input.forwardBroker ?? undefined;
  const forwardProblem = forward === undefined ? undefined : forwardedSocketProblem(forward);
  if (forwardProblem !== undefined) throw new ArgumentError(`${where.forwardBroker ?? 'forward_broker'}: the socket path ${forwardProblem}`);
  const forwarding = forward === undefined ? {} : { forwardBroker: forward as string };
  if (input.drover === undefined || input.drover === null) return Object.freeze({ name, ssh: ssh as string, ...forwarding });
  const droverProblem = remoteProgramProblem(input.drover);
  if (droverProblem !== undefined) throw new ArgumentError(`${where.drover}: the drover program ${droverProblem}`);
  return Object.freeze({ name, ssh: ssh as string, drover: input.drover as string, ...forwarding });
}

function describe(value: unknown): string {
  if (value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `${typeof value} ${JSON.stringify(value)}`;
}

/** The text of the file, or undefined when there is none. */
function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ArgumentError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

function parse(path: string, text: string): Document {
  const document = parseYamlFile(path, text);
  const top = document.toJS() as unknown;
  if (top !== null && top !== undefined && (typeof top !== 'object' || Array.isArray(top))) throw new ArgumentError(`${path}: the file must be a mapping (hosts: …), found ${describe(top)}`);
  return document;
}

/** The hosts a parsed document holds, each checked; errors name the file and the key. */
function hostsOf(path: string, document: Document): HostEntry[] {
  const hosts = document.get('hosts') === undefined ? undefined : (document.toJS() as { hosts?: unknown }).hosts;
  if (hosts === undefined || hosts === null) return [];
  if (typeof hosts !== 'object' || Array.isArray(hosts)) throw new ArgumentError(`${path}: hosts: expected a mapping of host names, found ${describe(hosts)}`);
  return Object.entries(hosts as Record<string, unknown>).map(([name, value]) => {
    const where = `${path}: hosts.${name}`;
    if (value === null) return hostEntry({ name }, { name: where, ssh: `${where}.ssh`, drover: `${where}.drover` });
    if (typeof value !== 'object' || Array.isArray(value)) throw new ArgumentError(`${where}: expected a mapping (ssh: ALIAS), found ${describe(value)}`);
    const fields = value as Record<string, unknown>;
    const unknown = Object.keys(fields).filter((key) => !HOST_KEYS.includes(key));
    if (unknown.length > 0) throw new ArgumentError(`${where}: unknown key ${unknown.join(', ')}; a host takes ${HOST_KEYS.join(', ')}`);
    return hostEntry(
      { name, ssh: fields.ssh, drover: fields.drover, forwardBroker: fields.forward_broker },
      { name: where, ssh: `${where}.ssh`, drover: `${where}.drover`, forwardBroker: `${where}.forward_broker` },
    );
  });
}

/** The hosts of this user's config file; none when there is no file. */
export function readHostsConfig(env: NodeJS.ProcessEnv = process.env): HostsConfig {
  const path = userConfigPath(env);
  const text = readText(path);
  return { path, hosts: text === undefined ? [] : hostsOf(path, parse(path, text)) };
}

/** The one entry named `name`; UnknownHostError when the file has none. */
export function findHost(config: HostsConfig, name: string): HostEntry {
  const entry = config.hosts.find((host) => host.name === name);
  if (entry === undefined) throw new UnknownHostError(name, config.path, config.hosts.map((host) => host.name));
  return entry;
}

/** The real file behind the configured path (a dotfiles symlink is followed, never replaced). */
function realTarget(path: string): string {
  try {
    return lstatSync(path).isSymbolicLink() ? realpathSync(path) : path;
  } catch {
    return path;
  }
}

const EDIT_ATTEMPTS = 5;
const NEW_FILE_HEADER = "# drover's settings for this user. `drover host add` and `host remove` edit it and keep\n# your comments and other keys.\n";

/**
 * Applies `edit` to the file's document and writes the result in one rename. If the file
 * changed between the read and the rename (another drover editing it), the edit is done again
 * on the new text, so neither change is lost.
 */
function editConfig<T>(env: NodeJS.ProcessEnv, edit: (document: Document, hosts: HostEntry[], path: string) => T): { path: string; result: T } {
  const path = userConfigPath(env);
  const target = realTarget(path);
  for (let attempt = 1; ; attempt += 1) {
    const before = readText(target);
    const document = parse(path, before ?? NEW_FILE_HEADER);
    const result = edit(document, hostsOf(path, document), path);
    const text = document.toString();
    if (text === before) return { path, result };
    const written = writeBeside(target, text, before !== undefined);
    if (readText(target) === before) {
      renameSync(written, target);
      return { path, result };
    }
    rmSync(written, { force: true });
    if (attempt >= EDIT_ATTEMPTS) throw new DroverError(`${path} kept changing while drover edited it; try again`, { phase: 'config', delivery: 'not_sent' });
  }
}

/** Writes `text` to a new file beside `target`, synced, with target's mode (0644 for a new file); returns its path. */
function writeBeside(target: string, text: string, exists: boolean): string {
  if (!exists) mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  return writeFileBeside(target, text, exists ? statSync(target).mode & 0o7777 : 0o644);
}

/** Ensures `hosts:` is a mapping the document can take keys into. */
function hostsNode(document: Document): void {
  const node = document.get('hosts', true);
  if (node === undefined || node === null || (yaml().isScalar(node) && node.value === null)) document.set('hosts', document.createNode({}));
}

export interface SavedHost {
  readonly path: string;
  /** What the file held under that name before, if anything. */
  readonly previous: HostEntry | undefined;
}

/**
 * Adds a host, or rewrites the entry of that name (`replace: true`). Without `replace`, an
 * entry already there with other settings is refused, naming them: nothing a user stored is
 * overwritten by accident.
 */
export function saveHost(entry: HostEntry, options: { readonly env?: NodeJS.ProcessEnv; readonly replace?: boolean } = {}): SavedHost {
  const { path, result } = editConfig(options.env ?? process.env, (document, hosts, file) => {
    const previous = hosts.find((host) => host.name === entry.name);
    const same = previous !== undefined && previous.ssh === entry.ssh && previous.drover === entry.drover && previous.forwardBroker === entry.forwardBroker;
    if (previous !== undefined && !options.replace && !same) {
      throw new ArgumentError(`${file}: host ${entry.name} is already there (ssh ${previous.ssh}${previous.drover === undefined ? '' : `, drover ${previous.drover}`}); remove it first (drover host remove ${entry.name})`);
    }
    if (same) return previous;
    hostsNode(document);
    if (previous === undefined) {
      document.setIn(
        ['hosts', entry.name],
        document.createNode({ ssh: entry.ssh, ...(entry.drover === undefined ? {} : { drover: entry.drover }), ...(entry.forwardBroker === undefined ? {} : { forward_broker: entry.forwardBroker }) }),
      );
    } else {
      // Only the fields change: comments on the entry and beside its keys stay.
      if (document.getIn(['hosts', entry.name]) === null) document.setIn(['hosts', entry.name], document.createNode({}));
      document.setIn(['hosts', entry.name, 'ssh'], entry.ssh);
      if (entry.drover === undefined) document.deleteIn(['hosts', entry.name, 'drover']);
      else document.setIn(['hosts', entry.name, 'drover'], entry.drover);
      if (entry.forwardBroker === undefined) document.deleteIn(['hosts', entry.name, 'forward_broker']);
      else document.setIn(['hosts', entry.name, 'forward_broker'], entry.forwardBroker);
    }
    return previous;
  });
  return { path, previous: result };
}

/** Removes a host; UnknownHostError when the file has none of that name (nothing is written). */
export function removeHost(name: string, options: { readonly env?: NodeJS.ProcessEnv } = {}): { readonly path: string; readonly removed: HostEntry } {
  const { path, result } = editConfig(options.env ?? process.env, (document, hosts, file) => {
    const removed = hosts.find((host) => host.name === name);
    if (removed === undefined) throw new UnknownHostError(name, file, hosts.map((host) => host.name));
    document.deleteIn(['hosts', name]);
    return removed;
  });
  return { path, removed: result };
}

/** A host entry as drover prints it in JSON (`drover: null` when it runs `drover` on the PATH there). */
export function hostEntryJson(entry: HostEntry): Record<string, unknown> {
  return { name: entry.name, ssh: entry.ssh, drover: entry.drover ?? null, forward_broker: entry.forwardBroker ?? null };
}
