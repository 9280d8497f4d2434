import type { Server } from './server.js';
import {
  checkBufferName,
  checkEnvName,
  listOptionArgs,
  removeEnvironmentArgs,
  runHookArgs,
  setEnvironmentArgs,
  setHookArgs,
  setOptionArgs,
  showEnvironmentArgs,
  showHooksArgs,
  showOptionArgs,
  unsetEnvironmentArgs,
  unsetHookArgs,
  unsetOptionArgs,
  type EnvironmentScope,
  type HookScope,
  type OptionScope,
} from './commands.js';
import { Deadline, type OperationOptions } from './deadline.js';
import { ArgumentError, FieldDecodeError, NoMatchError, TargetNotFoundError } from './errors.js';
import { decodeUtf8 } from '../process/errors.js';
import { protectArgument } from './escape.js';
import { parseFramedRows, rowFormat } from './framing.js';
import type { CommandResult } from './transport.js';

/** One option's captured value: the raw bytes, with explicit conversions. */
export class OptionValue {
  constructor(
    readonly name: string,
    readonly raw: Buffer,
    /** True when the value is not set at the scope asked but inherited from a wider one. */
    readonly inherited: boolean,
    /** The entry's index in an array option (`status-format[1]`); null for a plain option. */
    readonly index: number | null = null,
  ) {
    Object.freeze(this);
  }

  as(type: 'bytes'): Buffer;
  as(type: 'string'): string;
  as(type: 'integer'): number;
  as(type: 'boolean'): boolean;
  as(type: 'bytes' | 'string' | 'integer' | 'boolean'): Buffer | string | number | boolean {
    switch (type) {
      case 'bytes':
        return this.raw;
      case 'string':
        try {
          return decodeUtf8(this.raw, `option ${this.name}`);
        } catch (cause) {
          throw new FieldDecodeError(`option ${this.name} is not valid UTF-8`, { cause });
        }
      case 'integer': {
        const text = this.raw.toString('latin1');
        if (!/^-?\d+$/.test(text)) throw new FieldDecodeError(`option ${this.name} is not an integer`);
        return Number(text);
      }
      case 'boolean': {
        const text = this.raw.toString('latin1');
        if (text === 'on' || text === '1') return true;
        if (text === 'off' || text === '0') return false;
        throw new FieldDecodeError(`option ${this.name} is not a boolean (on/off/1/0)`);
      }
      default:
        throw new ArgumentError(`unknown option value type ${JSON.stringify(type)}`);
    }
  }

  toString(): string {
    return this.as('string');
  }
}

function withoutFinalNewline(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, -1) : bytes;
}

/** One entry of a show-options listing: its name, array index and whether it is inherited (`*`). */
interface OptionEntry {
  readonly name: string;
  readonly index: number | null;
  readonly inherited: boolean;
}

/**
 * The entries a show-options listing (without -v) names for one option. tmux escapes line
 * breaks in these values, so every line starts with a name.
 */
function optionEntries(listing: string, base: string): OptionEntry[] {
  const entries: OptionEntry[] = [];
  for (const line of listing.split('\n')) {
    if (!line.startsWith(base)) continue;
    const match = /^(\[(\d+)\])?(\*)?( |$)/.exec(line.slice(base.length));
    if (match === null) continue;
    entries.push({ name: `${base}${match[1] ?? ''}`, index: match[2] === undefined ? null : Number(match[2]), inherited: match[3] === '*' });
  }
  return entries;
}

/** Checks a scope's context (a window link still in place) before each access. */
export type ScopeCheck = (deadline: Deadline) => Promise<void>;

/** Options at one explicit scope. Absent and empty are different answers. */
export class Options {
  constructor(
    private readonly server: Server,
    readonly scope: OptionScope,
    private readonly precondition?: ScopeCheck,
  ) {}

  /** Starts one access: its deadline, with the scope's context checked once under it. */
  private async access(options: OperationOptions): Promise<Deadline> {
    const deadline = Deadline.start(options);
    await this.precondition?.(deadline);
    return deadline;
  }

  private async command(args: readonly string[], options: OperationOptions): Promise<CommandResult> {
    return this.server.command(args, { deadline: await this.access(options) });
  }

  /** The option's value; NoMatchError when it is not set at this scope (or inherited, if asked). */
  async get(name: string, options: OperationOptions & { inherited?: boolean } = {}): Promise<OptionValue> {
    const value = await this.getOrUndefined(name, options);
    if (!value) throw new NoMatchError(`option ${name} is not set`);
    return value;
  }

  /**
   * The option's value, or undefined when absent. Inherited values count unless
   * `inherited: false`, and say so. An array option with several entries needs an index
   * (`status-format[1]`): which entry is meant is never guessed.
   */
  async getOrUndefined(name: string, options: OperationOptions & { inherited?: boolean } = {}): Promise<OptionValue | undefined> {
    const inherited = options.inherited ?? true;
    const deadline = await this.access(options);
    const listing = await this.server.command(listOptionArgs(this.scope, inherited, name), { deadline });
    const base = name.replace(/\[\d+\]$/, '');
    const entries = optionEntries(listing.lossyText(), base).filter((entry) => entry.name === name || name === base);
    if (entries.length === 0) return undefined;
    if (entries.length > 1) {
      throw new ArgumentError(`option ${name} is an array with ${entries.length} entries; name one, as ${entries[0]!.name}`);
    }
    const entry = entries[0]!;
    const result = await this.server.command(showOptionArgs(this.scope, entry.name, inherited), { deadline });
    // -q -v prints nothing for an absent option and a line (maybe empty) for a present one.
    if (result.stdout.length === 0) return undefined;
    return new OptionValue(entry.name, withoutFinalNewline(result.stdout), entry.inherited, entry.index);
  }

  async set(name: string, value: string | number | boolean, options: OperationOptions & { append?: boolean } = {}): Promise<CommandResult> {
    return this.command(setOptionArgs(this.scope, name, value, options.append), options);
  }

  async unset(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.command(unsetOptionArgs(this.scope, name), options);
  }

  /** Option names and raw value text as tmux lists them at this scope. */
  async list(options: OperationOptions & { inherited?: boolean } = {}): Promise<string[]> {
    const result = await this.command(listOptionArgs(this.scope, options.inherited ?? false), options);
    return result.lossyText().split('\n').filter((line) => line !== '');
  }
}

/** Hooks at one explicit scope: authored tmux command text that tmux runs. */
export class Hooks {
  constructor(
    private readonly server: Server,
    readonly scope: HookScope,
    private readonly precondition?: ScopeCheck,
  ) {}

  private async command(args: readonly string[], options: OperationOptions): Promise<CommandResult> {
    const deadline = Deadline.start(options);
    await this.precondition?.(deadline);
    return this.server.command(args, { deadline });
  }

  async list(options: OperationOptions = {}): Promise<string[]> {
    const result = await this.command(showHooksArgs(this.scope), options);
    return result.lossyText().split('\n').filter((line) => line !== '');
  }

  async set(name: string, command: string, options: OperationOptions & { append?: boolean } = {}): Promise<CommandResult> {
    return this.command(setHookArgs(this.scope, name, command, options.append), options);
  }

  async unset(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.command(unsetHookArgs(this.scope, name), options);
  }

  /** Runs the hook's commands now (tmux set-hook -R). */
  async run(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.command(runHookArgs(this.scope, name), options);
  }
}

/** Environment variables at the global or a session scope; values are literal. */
export class Environment {
  constructor(
    private readonly server: Server,
    readonly scope: EnvironmentScope,
  ) {}

  /** The value, or null when the variable is recorded as unset (`-NAME`); NoMatchError when absent. */
  async get(name: string, options: OperationOptions = {}): Promise<string | null> {
    checkEnvName(name);
    let result: CommandResult;
    try {
      result = await this.server.command(showEnvironmentArgs(this.scope, name), options);
    } catch (error) {
      if (error instanceof Error && /unknown variable/.test(error.message) && !(error instanceof TargetNotFoundError)) {
        throw new NoMatchError(`environment variable ${name} is not set`);
      }
      throw error;
    }
    const line = withoutFinalNewline(result.stdout).toString('utf8');
    if (line === `-${name}`) return null;
    if (!line.startsWith(`${name}=`)) throw new FieldDecodeError(`unexpected show-environment reply for ${name}`);
    return line.slice(name.length + 1);
  }

  async set(name: string, value: string, options: OperationOptions & { hidden?: boolean } = {}): Promise<CommandResult> {
    return this.server.command(setEnvironmentArgs(this.scope, name, value, options.hidden), options);
  }

  /** Records the variable as unset here: get() then answers null, and processes started in this scope do not have it. */
  async unset(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(unsetEnvironmentArgs(this.scope, name), options);
  }

  /** Removes this scope's entry for the variable (get() then finds none): a wider scope's value applies again. */
  async remove(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    return this.server.command(removeEnvironmentArgs(this.scope, name), options);
  }

  /** All variables at this scope; null marks a variable recorded as unset. */
  async list(options: OperationOptions = {}): Promise<Map<string, string | null>> {
    const result = await this.server.command(showEnvironmentArgs(this.scope), options);
    const out = new Map<string, string | null>();
    for (const line of result.lossyText().split('\n')) {
      if (line === '') continue;
      if (line.startsWith('-')) out.set(line.slice(1), null);
      else {
        const eq = line.indexOf('=');
        if (eq > 0) out.set(line.slice(0, eq), line.slice(eq + 1));
      }
    }
    return out;
  }
}

export interface BufferInfo {
  readonly name: string;
  readonly size: number;
  readonly created: number;
}

const BUFFER_SPECS = [
  { wire: 'buffer_name', type: 'string', emptyIsNull: false },
  { wire: 'buffer_size', type: 'int', emptyIsNull: false },
  { wire: 'buffer_created', type: 'time', emptyIsNull: false },
] as const;

/** Named paste buffers; contents are bytes, never passed through a temporary file. */
export class Buffers {
  constructor(private readonly server: Server) {}

  async write(name: string, data: Uint8Array | string, options: OperationOptions = {}): Promise<CommandResult> {
    checkBufferName(name);
    const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
    return this.server.command(['load-buffer', '-b', protectArgument(name), '-'], { ...options, input: bytes.length > 0 ? bytes : Buffer.alloc(0) });
  }

  async read(name: string, options: OperationOptions = {}): Promise<Buffer> {
    checkBufferName(name);
    return (await this.server.command(['save-buffer', '-b', protectArgument(name), '-'], options)).stdout;
  }

  async delete(name: string, options: OperationOptions = {}): Promise<CommandResult> {
    checkBufferName(name);
    return this.server.command(['delete-buffer', '-b', protectArgument(name)], options);
  }

  async list(options: OperationOptions = {}): Promise<BufferInfo[]> {
    const result = await this.server.command(['list-buffers', '-F', rowFormat('B', BUFFER_SPECS)], options);
    return parseFramedRows(result.stdout, { B: BUFFER_SPECS }).map((row) => ({
      name: row.field(0).toString('utf8'),
      size: Number(row.field(1).toString('latin1')),
      created: Number(row.field(2).toString('latin1')),
    }));
  }
}
