import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseYamlFile } from '../agents/index.js';
import { ArgumentError } from '../process/index.js';

/** drover's user config file: `$DROVER_CONFIG`, else `$XDG_CONFIG_HOME/drover/config.yaml`, else `~/.config/drover/config.yaml`. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.DROVER_CONFIG !== undefined && env.DROVER_CONFIG !== '') return resolve(env.DROVER_CONFIG);
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'drover', 'config.yaml');
}

/**
 * The user config file's top-level mapping; empty when there is no file. A file that cannot be
 * read, is not YAML or is not a mapping is an error that names it.
 */
export function readUserConfig(env: NodeJS.ProcessEnv = process.env): { path: string; values: Record<string, unknown> } {
  const path = userConfigPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, values: {} };
    throw new ArgumentError(`cannot read drover's config file ${path}: ${(error as Error).message}`);
  }
  const parsed = parseYamlFile(path, text).toJS() as unknown;
  if (parsed === null || parsed === undefined) return { path, values: {} };
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ArgumentError(`drover's config file ${path} must be a mapping of keys to values`);
  return { path, values: parsed as Record<string, unknown> };
}

/** The config file's `broker:` key (the store's URL), with the file it came from; undefined when unset. */
export function configuredBroker(env: NodeJS.ProcessEnv = process.env): { value: string; path: string } | undefined {
  const { path, values } = readUserConfig(env);
  const value = values.broker;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new ArgumentError(`the broker key in drover's config file ${path} must be a URL string, such as postgresql://host/db`);
  return { value: value.trim(), path };
}
