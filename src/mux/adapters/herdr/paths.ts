/**
 * Where herdr keeps its sockets: `<configRoot>/herdr.sock` for the default session and
 * `<configRoot>/sessions/<name>/herdr.sock` for a named one; a cleanly stopped session removes
 * its socket. The config root is $XDG_CONFIG_HOME/herdr, else ~/.config/herdr.
 */
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export const HERDR_SOCKET_FILE = 'herdr.sock';

export function herdrConfigRoot(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config'), 'herdr');
}

export function herdrSessionSocket(configRoot: string, session: string): string {
  return join(configRoot, 'sessions', session, HERDR_SOCKET_FILE);
}

/** A herdr session name is one path segment. */
export function isHerdrSessionName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\0]/.test(name);
}
