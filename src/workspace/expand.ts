import { isAbsolute, resolve } from 'node:path';
import { WorkspaceError, unsupported } from './errors.js';

/** What a parse may substitute into non-command strings. */
export interface ExpansionContext {
  /** `true`: any variable; a set: only these names; null: expansion is off. */
  readonly enabled: true | ReadonlySet<string> | null;
  readonly env: Readonly<Record<string, string>>;
  readonly homeDir: string;
  /** The workspace file's directory; relative paths resolve against it. */
  readonly baseDir: string;
}

const NAME_START = /[A-Za-z_]/;
const NAME_RUN = /[A-Za-z_][A-Za-z0-9_]*/y;
const PLACEHOLDER = /\{[A-Za-z_][A-Za-z0-9_]*\}/y;

/**
 * Substitutes `${NAME}` and `$NAME` from the supplied mapping, only for names expansion was
 * enabled for. Anything that looks like templating and is not expanded is refused by name,
 * so a file never silently means something else than it would under tmuxp. Shell command
 * text never comes here: it stays as authored.
 */
export function expandVariables(value: string, path: string, context: ExpansionContext): string {
  if (!value.includes('$') && !value.includes('{')) return value;
  let out = '';
  let i = 0;
  while (i < value.length) {
    const char = value[i];
    if (char === '$' && value[i + 1] === '{') {
      const end = value.indexOf('}', i + 2);
      const name = end === -1 ? '' : value.slice(i + 2, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        throw unsupported(path, 'environment_expansion', 'only ${NAME} and $NAME variable references can be expanded');
      }
      out += lookup(name, path, context);
      i = end + 1;
    } else if (char === '$' && /[0-9]/.test(value[i + 1] ?? '')) {
      throw unsupported(path, 'environment_expansion', 'positional $N references are not supported');
    } else if (char === '$' && NAME_START.test(value[i + 1] ?? '')) {
      NAME_RUN.lastIndex = i + 1;
      const name = NAME_RUN.exec(value)?.[0] ?? '';
      out += lookup(name, path, context);
      i += 1 + name.length;
    } else if (char === '{' && value[i - 1] !== '#' && matchesAt(PLACEHOLDER, value, i)) {
      throw unsupported(path, 'template_placeholder', 'template placeholders such as {NAME} are not supported');
    } else {
      out += char;
      i += 1;
    }
  }
  return out;
}

function matchesAt(pattern: RegExp, value: string, index: number): boolean {
  pattern.lastIndex = index;
  return pattern.test(value);
}

function lookup(name: string, path: string, context: ExpansionContext): string {
  const allowed = context.enabled === true || (context.enabled?.has(name) ?? false);
  if (!allowed) {
    throw unsupported(
      path,
      'environment_expansion',
      `refers to the variable ${name}, which is only expanded when asked: pass --expand-env ${name} (expandEnv in the library)`,
    );
  }
  if (!Object.hasOwn(context.env, name)) {
    throw new WorkspaceError(`refers to the variable ${name}, which is not in the supplied environment`, {
      path,
      code: 'expansion',
    });
  }
  return context.env[name] ?? '';
}

/** `~` and `~/…` become the home directory; other values are returned unchanged. */
export function expandHome(value: string, context: ExpansionContext): string {
  if (value === '~') return context.homeDir;
  if (value.startsWith('~/')) return context.homeDir + value.slice(1);
  return value;
}

/** An environment or option value that is a relative path (`./x`, `../x`) resolves against the file. */
export function resolveRelativeValue(value: string, context: ExpansionContext): string {
  const relative = value === '.' || value === '..' || value.startsWith('./') || value.startsWith('../');
  return relative ? resolve(context.baseDir, value) : value;
}

/**
 * A start directory: home and variables expanded, then made absolute against `parent`
 * (the enclosing level's directory, else the file's directory) and normalized.
 */
export function resolveDirectory(value: string, path: string, parent: string, context: ExpansionContext): string {
  if (value === '') throw new WorkspaceError('a start directory must not be empty', { path, code: 'value' });
  if (value.startsWith('~') && value !== '~' && !value.startsWith('~/')) {
    throw unsupported(path, 'user_home', 'only ~ and ~/… are expanded; ~user is not supported');
  }
  const expanded = expandVariables(expandHome(value, context), path, context);
  if (expanded.includes('\0')) throw new WorkspaceError('a start directory must not contain NUL', { path, code: 'value' });
  return isAbsolute(expanded) ? resolve(expanded) : resolve(parent, expanded);
}
