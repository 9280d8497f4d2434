/**
 * ssh as drover runs it: the system's own OpenSSH client, so the user's ssh config, agent,
 * ProxyJump, ports and known_hosts all apply, with options that make it fail instead of ask.
 * Everything here is pure except finding the binary.
 */
import { executableOverride, findExecutable, shellQuote, type ChildExit } from '../process/index.js';
import { DroverError } from '../process/index.js';

/** Names another ssh client by absolute path (a wrapper, a client somewhere unusual). */
export const SSH_BIN_VARIABLE = 'DROVER_SSH_BIN';

/** What runs drover on a host when its entry names no program: `drover` on the PATH ssh commands get there. */
export const DEFAULT_REMOTE_DROVER = 'drover';

/** ssh's keepalive: a reply expected every 15 s, the link given up after 4 missed (60 s). */
const SERVER_ALIVE_INTERVAL_S = 15;
const SERVER_ALIVE_COUNT_MAX = 4;

/** No ssh client could be found or used; nothing was started. */
export class SshUnavailableError extends DroverError {
  constructor(message: string) {
    super(message, { phase: 'spawn', delivery: 'not_sent' });
  }
}

/**
 * What is wrong with an ssh destination, or undefined when it is one drover passes to ssh. A
 * destination is a word: an alias of the user's ssh config, or `user@host`. One that starts
 * with `-` would be read by ssh as an option (`-oProxyCommand=…` runs a command), and
 * whitespace or a control character has no place in a host name.
 */
export function sshDestinationProblem(destination: unknown): string | undefined {
  if (typeof destination !== 'string' || destination === '') return 'is empty';
  if (destination.startsWith('-')) return `${JSON.stringify(destination)} starts with "-", which ssh would take for an option`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(destination)) return `${JSON.stringify(destination)} holds a control character`;
  if (/\s/u.test(destination)) return `${JSON.stringify(destination)} holds whitespace`;
  if (destination.length > 255) return 'is longer than 255 characters';
  return undefined;
}

/**
 * What is wrong with the program that runs drover on a host, or undefined: a path there (`~/`
 * means that host's home) or a name on the PATH ssh commands get there.
 */
export function remoteProgramProblem(program: unknown): string | undefined {
  if (typeof program !== 'string' || program.trim() === '') return 'is empty';
  if (program.startsWith('-')) return `${JSON.stringify(program)} starts with "-"`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(program)) return `${JSON.stringify(program)} holds a control character`;
  if (program.length > 1024) return 'is longer than 1024 characters';
  return undefined;
}

/**
 * One word for the remote login shell. A leading `~/` stays outside the quotes, so the shell
 * THERE expands it to that host's home; everything else is quoted as it is.
 */
export function remoteWord(word: string): string {
  return word.startsWith('~/') && word.length > 2 ? `~/${shellQuote(word.slice(2))}` : shellQuote(word);
}

/** The command line ssh hands to the remote login shell: the program, then its arguments, each quoted. */
export function remoteCommandLine(program: string, args: readonly string[]): string {
  return [remoteWord(program), ...args.map(shellQuote)].join(' ');
}

export interface SshOptions {
  /** ssh's ConnectTimeout: reaching the host and its first protocol exchange. Whole seconds, rounded up. */
  readonly connectTimeoutMs: number;
  /** A unix socket of this machine put at an absolute path on the host for the session's life (ssh -R). */
  readonly forwardSocket?: { readonly remote: string; readonly local: string };
}

/**
 * The argv of one ssh session that runs `remoteCommand` on `destination`:
 * - `-T`: no terminal; stdin and stdout are the session's byte stream.
 * - BatchMode: never a password, passphrase or host-key question (stdin is drover's pipe, and
 *   a background link must fail and say why rather than wait for an answer).
 * - ServerAlive: ssh itself gives up a dead connection after about a minute.
 * - ControlMaster=no: this session never becomes a shared master for the user's other ssh
 *   sessions (its lifetime is drover's), while a master the user opened by hand (after MFA,
 *   say) is still used.
 * - `--` before the destination, which is also checked (sshDestinationProblem).
 * - With a forwarded socket: `-R REMOTE:LOCAL`, and StreamLocalBindUnlink so a socket file left
 *   by an earlier session is replaced (for a remote path, sshd applies its own
 *   StreamLocalBindUnlink too, which the host's sshd_config must allow).
 */
export function sshArgv(ssh: string, destination: string, remoteCommand: string, options: SshOptions): string[] {
  const problem = sshDestinationProblem(destination);
  if (problem !== undefined) throw new SshUnavailableError(`the ssh destination ${problem}`);
  return [
    ssh,
    '-T',
    '-o',
    'BatchMode=yes',
    '-o',
    `ConnectTimeout=${Math.max(1, Math.ceil(options.connectTimeoutMs / 1000))}`,
    '-o',
    `ServerAliveInterval=${SERVER_ALIVE_INTERVAL_S}`,
    '-o',
    `ServerAliveCountMax=${SERVER_ALIVE_COUNT_MAX}`,
    '-o',
    'ControlMaster=no',
    ...(options.forwardSocket === undefined ? [] : ['-o', 'StreamLocalBindUnlink=yes', '-R', `${options.forwardSocket.remote}:${options.forwardSocket.local}`]),
    '--',
    destination,
    remoteCommand,
  ];
}

/** The ssh client to run: DROVER_SSH_BIN when set (checked), else `ssh` on PATH. */
export function sshBinary(env: NodeJS.ProcessEnv = process.env): string {
  const override = executableOverride(SSH_BIN_VARIABLE, 'ssh', env);
  if (override !== undefined) {
    if ('problem' in override) throw new SshUnavailableError(override.problem);
    return override.path;
  }
  const found = findExecutable('ssh', env);
  if (found === undefined) throw new SshUnavailableError(`no ssh on PATH: install OpenSSH's client, or name one with ${SSH_BIN_VARIABLE}=/absolute/path/to/ssh`);
  return found;
}

/**
 * Why an ssh session ended before drover-rpc began, judged from its exit and its last stderr:
 * - `auth`: ssh could not log in (a key refused, an unknown or changed host key). Retrying
 *   cannot help until the user acts, and repeated failed logins get an address banned.
 * - `missing`: the remote shell did not find or could not run the drover program (127, 126).
 * - `exited`: the program ran there and exited without speaking (an old Node refused, say).
 * - `transient`: ssh's own failure otherwise (no route, refused, timed out, closed), or ssh
 *   stopped by drover: worth retrying.
 */
export type SshFailureKind = 'auth' | 'missing' | 'exited' | 'transient';

const AUTH_FAILURES = [
  /Permission denied/i,
  /Host key verification failed/i,
  /REMOTE HOST IDENTIFICATION HAS CHANGED/i,
  /No \S+ host key is known/i,
  /Too many authentication failures/i,
  /Authentication failed/i,
];

/** ssh's own status for its own failures; any other status is the remote command's. */
const SSH_FAILED = 255;

export function classifySshExit(exit: ChildExit | undefined, stderr: string): SshFailureKind {
  if (exit?.exitCode === SSH_FAILED && AUTH_FAILURES.some((pattern) => pattern.test(stderr))) return 'auth';
  if (exit?.exitCode === 127 || exit?.exitCode === 126) return 'missing';
  if (typeof exit?.exitCode === 'number' && exit.exitCode !== SSH_FAILED) return 'exited';
  return 'transient';
}

/** The line of ssh's stderr that says most: the last one that is not a routine warning. */
export function sshStderrSummary(stderr: string): string | undefined {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^Warning: Permanently added/i.test(line));
  const auth = lines.find((line) => AUTH_FAILURES.some((pattern) => pattern.test(line)));
  return auth ?? lines.at(-1);
}
