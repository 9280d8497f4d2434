import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseYamlFile } from './yaml.js';
import { ArgumentError } from '../process/index.js';
import { BUILTIN_PROVIDERS, FILL_VALUE, type Provider, type ProviderFill } from './providers.js';

/** Where a project keeps its drover settings, checked in each directory from the cwd upwards. */
export const PROJECT_CONFIG_FILES: readonly string[] = Object.freeze(['drover.yaml', join('.drover', 'config.yaml')]);

/** One `providers.<name>` block: every field optional, merged over the built-in entry. */
export interface ProviderOverride {
  interactiveCommand?: string;
  profiles?: Record<string, ProviderFill>;
  bypassPermissions?: boolean;
}

export interface ProjectConfig {
  path: string;
  providers: Record<string, ProviderOverride>;
}

/** The nearest project config file at or above `startDir`, if any. */
export function findProjectConfig(startDir: string): string | undefined {
  for (let dir = resolve(startDir); ; dir = dirname(dir)) {
    const present = PROJECT_CONFIG_FILES.map((name) => join(dir, name)).filter((path) => existsSync(path));
    if (present.length > 1) throw new ArgumentError(`both ${present.join(' and ')} exist; keep one`);
    if (present.length === 1) return present[0];
    if (dirname(dir) === dir) return undefined;
  }
}

type Mapping = Record<string, unknown>;

function isMapping(value: unknown): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `${typeof value} ${JSON.stringify(value)}`;
}

/** Validates and converts the document; every error names the file and the key path. */
class Validator {
  constructor(private readonly path: string) {}

  fail(where: string, problem: string): never {
    throw new ArgumentError(`${this.path}: ${where}: ${problem}`);
  }

  /** A mapping, or null/absent read as empty (`providers:` with nothing under it). */
  mapping(value: unknown, where: string): Mapping {
    if (value === undefined || value === null) return {};
    if (!isMapping(value)) this.fail(where, `expected a mapping, found ${describe(value)}`);
    return value;
  }

  onlyKeys(value: Mapping, where: string, allowed: readonly string[]): void {
    const unknown = Object.keys(value).find((key) => !allowed.includes(key));
    if (unknown !== undefined) this.fail(`${where}.${unknown}`, `unknown key; expected one of ${allowed.join(', ')}`);
  }

  string(value: unknown, where: string): string {
    if (typeof value !== 'string') this.fail(where, `expected a string, found ${describe(value)}`);
    return value;
  }

  fill(value: unknown, where: string): ProviderFill {
    const raw = this.mapping(value, where);
    this.onlyKeys(raw, where, ['model', 'effort']);
    const fill: ProviderFill = {};
    for (const field of ['model', 'effort'] as const) {
      if (raw[field] === undefined) continue;
      const text = this.string(raw[field], `${where}.${field}`);
      if (!FILL_VALUE.test(text)) this.fail(`${where}.${field}`, 'may only contain letters, digits and . _ : / @ + -');
      fill[field] = text;
    }
    return fill;
  }

  provider(value: unknown, where: string): ProviderOverride {
    const raw = this.mapping(value, where);
    this.onlyKeys(raw, where, ['interactive_command', 'profiles', 'bypass_permissions']);
    const override: ProviderOverride = {};
    if (raw.bypass_permissions !== undefined) {
      if (typeof raw.bypass_permissions !== 'boolean') this.fail(`${where}.bypass_permissions`, `expected true or false, found ${describe(raw.bypass_permissions)}`);
      override.bypassPermissions = raw.bypass_permissions;
    }
    if (raw.interactive_command !== undefined) {
      const command = this.string(raw.interactive_command, `${where}.interactive_command`);
      if (command.trim() === '') this.fail(`${where}.interactive_command`, 'is empty');
      override.interactiveCommand = command;
    }
    if (raw.profiles !== undefined) {
      const profiles = this.mapping(raw.profiles, `${where}.profiles`);
      override.profiles = Object.fromEntries(Object.entries(profiles).map(([role, fill]) => [role, this.fill(fill, `${where}.profiles.${role}`)]));
    }
    return override;
  }
}

/**
 * Parses a project config. Only `providers` is interpreted here; other top-level keys belong
 * to other parts of drover and are left alone.
 */
export function parseProjectConfig(text: string, path: string): ProjectConfig {
  const document = parseYamlFile(path, text);
  const validator = new Validator(path);
  const root = validator.mapping(document.toJS(), '(top level)');
  const providers = validator.mapping(root.providers, 'providers');
  for (const name of Object.keys(providers)) {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) validator.fail(`providers.${name}`, 'a provider name may only contain letters, digits and . _ -');
  }
  return {
    path,
    providers: Object.fromEntries(Object.entries(providers).map(([name, block]) => [name, validator.provider(block, `providers.${name}`)])),
  };
}

/** The nearest project config at or above `startDir`, parsed; undefined when there is none. */
export function loadProjectConfig(startDir: string): ProjectConfig | undefined {
  const path = findProjectConfig(startDir);
  return path === undefined ? undefined : parseProjectConfig(readFileSync(path, 'utf8'), path);
}

/** Project overrides merged field by field over the built-ins (fills per role, per field). */
export function mergeProviders(
  overrides: Readonly<Record<string, ProviderOverride>>,
  builtins: Readonly<Record<string, Provider>> = BUILTIN_PROVIDERS,
): Record<string, Provider> {
  const merged: Record<string, Provider> = { ...builtins };
  for (const [name, override] of Object.entries(overrides)) {
    const base: Provider = merged[name] ?? { name, profiles: {} };
    const profiles: Record<string, ProviderFill> = { ...base.profiles };
    for (const [role, fill] of Object.entries(override.profiles ?? {})) profiles[role] = { ...profiles[role], ...fill };
    merged[name] = {
      name,
      interactiveCommand: override.interactiveCommand ?? base.interactiveCommand,
      profiles,
      ...(base.bypassFlag === undefined ? {} : { bypassFlag: base.bypassFlag }),
      ...((override.bypassPermissions ?? base.bypassPermissions) ? { bypassPermissions: true } : {}),
    };
  }
  return merged;
}

/** The providers in effect for a directory: built-ins, plus the nearest project config. */
export function providersFor(startDir: string): Record<string, Provider> {
  return mergeProviders(loadProjectConfig(startDir)?.providers ?? {});
}

/**
 * The same, for callers that must keep working with a broken project config (process
 * classification, agent hooks): the built-ins then.
 */
export function providersOrBuiltins(startDir: string): Record<string, Provider> {
  try {
    return providersFor(startDir);
  } catch {
    return { ...BUILTIN_PROVIDERS };
  }
}
