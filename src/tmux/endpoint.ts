import { realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { homedir } from 'node:os';
import { findExecutable } from '../process/index.js';
import { ArgumentError } from './errors.js';

/** Longest socket path a unix socket address holds on Linux (sun_path minus the NUL). */
const MAX_SOCKET_PATH_BYTES = 107;
const DEFAULT_SOCKET_NAME = 'default';

export interface EndpointOptions {
  /** The tmux executable: a path, or a name looked up on PATH. Defaults to "tmux". */
  executable?: string;
  /** Where socket names live; defaults to $TMUX_TMPDIR, then /tmp. */
  socketDirectory?: string;
  env?: NodeJS.ProcessEnv;
}

export type EndpointSpec = { socketName: string; socketPath?: undefined } | { socketPath: string; socketName?: undefined };

/** The tmux executable for a name or path, without starting it; a clear error when there is none. */
export function resolveExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string {
  if (name === '' || name.includes('\0')) throw new ArgumentError('the tmux executable name is empty or contains NUL');
  const found = findExecutable(name, env);
  if (found !== undefined) return found;
  throw new ArgumentError(
    name.includes('/')
      ? `tmux executable ${name} does not exist or is not executable`
      : `tmux executable "${name}" was not found on PATH; install tmux (e.g. apt-get install -y tmux)`,
  );
}

function validateSocketName(name: string): void {
  if (typeof name !== 'string' || name === '') throw new ArgumentError('socket name is empty');
  if (name.includes('/')) throw new ArgumentError(`socket name ${JSON.stringify(name)} contains "/"; pass it as a socket path instead`);
  if (name.includes('\0')) throw new ArgumentError('socket name contains NUL');
  if (name === '.' || name === '..') throw new ArgumentError(`socket name ${JSON.stringify(name)} is not a file name`);
}

function expandPath(path: string): string {
  if (typeof path !== 'string' || path === '') throw new ArgumentError('socket path is empty');
  if (path.includes('\0')) throw new ArgumentError('socket path contains NUL');
  const expanded = path === '~' || path.startsWith('~/') ? join(homedir(), path.slice(1)) : path;
  const absolute = resolve(expanded);
  if (Buffer.byteLength(absolute) > MAX_SOCKET_PATH_BYTES) {
    throw new ArgumentError(`socket path ${absolute} is ${Buffer.byteLength(absolute)} bytes; unix sockets allow at most ${MAX_SOCKET_PATH_BYTES}`);
  }
  return absolute;
}

function uid(): number {
  return typeof process.getuid === 'function' ? process.getuid() : 0;
}

/**
 * Where a tmux server listens and which tmux binary talks to it. Exactly one of a socket
 * name (tmux -L) or socket path (tmux -S); drover always addresses the server by its
 * resolved path. Constructing an endpoint starts nothing.
 */
export class Endpoint {
  readonly socketName: string | undefined;
  readonly socketPath: string;
  readonly executable: string;

  constructor(spec: EndpointSpec, options: EndpointOptions = {}) {
    const env = options.env ?? process.env;
    const hasName = spec.socketName !== undefined;
    const hasPath = spec.socketPath !== undefined;
    if (hasName === hasPath) throw new ArgumentError('an endpoint needs exactly one of socketName or socketPath');
    if (hasName) {
      validateSocketName(spec.socketName!);
      const base = options.socketDirectory ?? (env.TMUX_TMPDIR || '/tmp');
      if (!isAbsolute(base)) throw new ArgumentError(`socket directory ${JSON.stringify(base)} is not absolute`);
      this.socketName = spec.socketName;
      this.socketPath = expandPath(join(base, `tmux-${uid()}`, spec.socketName!));
    } else {
      this.socketName = undefined;
      this.socketPath = expandPath(spec.socketPath!);
    }
    this.executable = resolveExecutable(options.executable ?? 'tmux', env);
    Object.freeze(this);
  }

  static fromSocketName(name: string, options?: EndpointOptions): Endpoint {
    return new Endpoint({ socketName: name }, options);
  }

  static fromSocketPath(path: string, options?: EndpointOptions): Endpoint {
    return new Endpoint({ socketPath: path }, options);
  }

  /**
   * The explicit opt-in to environment discovery, and the only place $TMUX is read: the
   * socket of the tmux session this process runs in, else tmux's default socket name.
   */
  static fromEnv(options: EndpointOptions = {}): Endpoint {
    const env = options.env ?? process.env;
    const socketPath = tmuxVariable(env)?.socketPath;
    return socketPath !== undefined ? new Endpoint({ socketPath }, options) : new Endpoint({ socketName: DEFAULT_SOCKET_NAME }, options);
  }

  /** The leading tmux arguments that address this server. */
  get args(): readonly string[] {
    return ['-S', this.socketPath];
  }

  equals(other: Endpoint): boolean {
    return other.executable === this.executable && other.socketPath === this.socketPath;
  }

  toString(): string {
    return this.socketName !== undefined ? `tmux -L ${this.socketName}` : `tmux -S ${this.socketPath}`;
  }
}

/** $TMUX ("path,pid,index") read apart: the server's socket path and its pid, when given. */
export function tmuxVariable(env: NodeJS.ProcessEnv): { socketPath: string; pid: number | undefined } | undefined {
  const value = env.TMUX;
  if (!value) return undefined;
  const [path = '', pid] = value.split(',');
  if (path === '') return undefined;
  return { socketPath: path, pid: pid !== undefined && /^\d+$/.test(pid) ? Number(pid) : undefined };
}

/** A socket path with every symlink resolved, so two names of one socket compare equal; as given when it cannot be resolved. */
export function resolvedSocketPath(path: string): string {
  try {
    return realpathSync(resolve(path));
  } catch {
    return resolve(path);
  }
}
