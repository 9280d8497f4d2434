import { Option, type Command } from 'commander';
import { PassThrough, Writable } from 'node:stream';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { MUX_NAMES, muxBinary, selectMux, type MuxName } from '../../mux/index.js';
import { findExecutable } from '../../process/index.js';
import { forwardedSocketProblem, RPC_PING, RPC_PROTOCOL, RPC_UNWATCH, RPC_VERSION, RPC_WATCH, RpcRequestError, serveRpc, type RpcAnswer, type RpcHandshake, type RpcParams } from '../../hosts/index.js';
import { EXIT, UsageError, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { buildProgram, runCli } from '../program.js';
import { HeldTmuxBindings } from '../held-bindings.js';
import { hubBrokerSocket } from '../state.js';
import { packageVersion } from '../version.js';
import { watchPanes } from './rpc-watch.js';

/**
 * The command groups drover-rpc offers: what a hub needs of a host (its panes, its multiplexer,
 * its fleet and messages, its health). Serving, pairing, installing hooks and starting servers
 * stay with a person at that host's own terminal.
 */
const OFFERED_GROUPS: ReadonlySet<string> = new Set(['pane', 'mux', 'snapshot', 'fleet', 'member', 'message', 'doctor']);
/** Commands of those groups that run until stopped, and so cannot answer once. */
const NOT_OFFERED: ReadonlySet<string> = new Set(['message.listen']);

/** Options that fan out to other hosts: a host answering a hub answers for itself only, so links never chain or loop. */
const HUB_ONLY_OPTIONS: ReadonlySet<string> = new Set(['--all-hosts']);

/** One offered command: its path, and how params become its argv. */
export interface RpcMethod {
  readonly name: string;
  readonly path: readonly string[];
  /** Positional arguments in order: param name, whether it is variadic, required. */
  readonly positionals: readonly { readonly param: string; readonly variadic: boolean; readonly required: boolean }[];
  /** Options by param name (snake_case of the long flag without --). */
  readonly options: ReadonlyMap<string, { readonly flag: string; readonly takesValue: boolean; readonly variadic: boolean }>;
}

function snakeCase(name: string): string {
  return name.replace(/-/g, '_');
}

/** Options every command accepts through rpc: which tmux server (the CLI's global -L/-S). */
const GLOBAL_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['socket_name', '--socket-name'],
  ['socket_path', '--socket-path'],
]);

function describeMethod(path: readonly string[], command: Command): RpcMethod {
  const options = new Map<string, { flag: string; takesValue: boolean; variadic: boolean }>();
  for (const option of command.options as readonly Option[]) {
    if (option.long === undefined || option.long === '--json' || option.negate || HUB_ONLY_OPTIONS.has(option.long)) continue;
    options.set(snakeCase(option.long.slice(2)), { flag: option.long, takesValue: option.required || option.optional, variadic: option.variadic });
  }
  return {
    name: path.join('.'),
    path,
    positionals: command.registeredArguments.map((argument) => ({ param: snakeCase(argument.name()), variadic: argument.variadic, required: argument.required })),
    options,
  };
}

/** Every offered command of the program: the leaves of the offered groups that print --json. */
export function rpcMethods(program: Command): Map<string, RpcMethod> {
  const methods = new Map<string, RpcMethod>();
  const visit = (command: Command, path: string[]): void => {
    if (command.commands.length > 0) {
      for (const sub of command.commands) visit(sub, [...path, sub.name()]);
      return;
    }
    const name = path.join('.');
    const printsJson = (command.options as readonly Option[]).some((option) => option.long === '--json');
    if (printsJson && OFFERED_GROUPS.has(path[0]!) && !NOT_OFFERED.has(name)) methods.set(name, describeMethod(path, command));
  };
  for (const command of program.commands) visit(command, [command.name()]);
  return methods;
}

function scalar(param: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new RpcRequestError('usage', `param ${param} must be a string or a number, not ${JSON.stringify(value)}`);
}

/** The argv a request stands for: global options, the command path, its arguments and options, and --json. */
export function argvOf(method: RpcMethod, params: RpcParams): string[] {
  const globals: string[] = [];
  const flags: string[] = [];
  const positionals: string[] = [];
  const used = new Set<string>();
  for (const [param, flag] of GLOBAL_OPTIONS) {
    if (params[param] === undefined) continue;
    globals.push(flag, scalar(param, params[param]));
    used.add(param);
  }
  for (const positional of method.positionals) {
    const value = params[positional.param];
    used.add(positional.param);
    if (value === undefined) {
      if (positional.required) throw new RpcRequestError('usage', `${method.name} needs the param ${positional.param}`);
      continue;
    }
    if (positional.variadic && Array.isArray(value)) positionals.push(...value.map((item) => scalar(positional.param, item)));
    else positionals.push(scalar(positional.param, value));
  }
  for (const [param, option] of method.options) {
    const value = params[param];
    if (value === undefined || value === false) continue;
    used.add(param);
    if (!option.takesValue) {
      if (value !== true) throw new RpcRequestError('usage', `param ${param} of ${method.name} is a flag: true or false`);
      flags.push(option.flag);
    } else if (option.variadic && Array.isArray(value)) {
      for (const item of value) flags.push(option.flag, scalar(param, item));
    } else flags.push(option.flag, scalar(param, value));
  }
  const unknown = Object.keys(params).filter((param) => !used.has(param) && params[param] !== undefined);
  if (unknown.length > 0) {
    const known = [...GLOBAL_OPTIONS.keys(), ...method.positionals.map((p) => p.param), ...method.options.keys()];
    throw new RpcRequestError('usage', `${method.name} takes no param ${unknown.join(', ')}; it takes ${known.join(', ')}`);
  }
  // `--` keeps an argument that starts with a dash an argument, as at a terminal.
  return [...globals, ...method.path, ...flags, '--json', ...(positionals.length > 0 ? ['--', ...positionals] : [])];
}

/** Runs one command in this process with its output captured, exactly as `drover … --json` would print it. */
async function runCaptured(argv: readonly string[], io: CliIO, signal: AbortSignal): Promise<RpcAnswer> {
  const chunks: Buffer[] = [];
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  const stdin = new PassThrough();
  stdin.end();
  const exitStatus = await runCli(argv, { ...io, stdin, stdout, stderr: new PassThrough().resume(), stdinIsTTY: false, terminalSize: undefined, signal });
  const text = Buffer.concat(chunks).toString('utf8').trim();
  try {
    return { exitStatus, document: text === '' ? null : JSON.parse(text) };
  } catch {
    return { exitStatus, document: { error: { code: 'failed', message: `drover ${argv.join(' ')} printed something other than one JSON document` } } };
  }
}

/** Whether this host could drive the multiplexer: its binary is here, or (herdr) its socket is. */
function muxAvailable(mux: MuxName, env: NodeJS.ProcessEnv): boolean {
  try {
    if (mux === 'herdr') {
      const endpoint = selectMux({ mux, env }).endpoint;
      return endpoint.mux === 'herdr' && existsSync(endpoint.socketPath);
    }
    return findExecutable(muxBinary(mux, env), env) !== undefined;
  } catch {
    return false;
  }
}

/**
 * The socket path this host offers a hub's broker (see hubBrokerSocket), its directory made
 * private first so sshd can bind there; none when the path cannot be forwarded or made.
 */
function offeredBrokerSocket(env: NodeJS.ProcessEnv): { broker_socket?: string } {
  const path = hubBrokerSocket(env);
  if (forwardedSocketProblem(path) !== undefined) return {};
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch {
    return {};
  }
  return { broker_socket: path };
}

function handshakeOf(io: CliIO, methods: Iterable<string>): RpcHandshake {
  let selected: string | undefined;
  try {
    selected = selectMux({ env: io.env }).mux;
  } catch {
    selected = undefined;
  }
  const installed = MUX_NAMES.filter((mux) => mux === selected || muxAvailable(mux, io.env));
  return {
    protocol: RPC_PROTOCOL,
    version: RPC_VERSION,
    drover_version: packageVersion(),
    muxes: installed.map((mux) => ({ mux, selected: mux === selected })),
    capabilities: [...methods, RPC_PING, RPC_WATCH, RPC_UNWATCH].sort(),
    ...offeredBrokerSocket(io.env),
  };
}

export function registerRpcCommands(program: Command, context: CommandContext): void {
  program
    .command('rpc')
    .description("answer drover-rpc on stdin/stdout: the link another machine's drover opens over ssh")
    .addOption(new Option('--stdio', 'speak drover-rpc on stdin and stdout (the only transport)').makeOptionMandatory())
    .action(
      context.action<{ stdio: boolean }>(async (_options, io) => {
        if (io.stdinIsTTY) throw new UsageError('drover rpc --stdio speaks a line protocol for another drover, not for a terminal: it is what `drover host add` runs over ssh');
        // Every command module, so every offered method is known up front.
        const { program: full } = await buildProgram(io, []);
        const methods = rpcMethods(full);
        // A hub polls every few seconds for as long as the link lives: each tmux server is bound once for all its calls.
        const tmuxBindings = new HeldTmuxBindings();
        const lent: CliIO = { ...io, tmuxBindings };
        try {
          await serveRpc({
            input: io.stdin,
            output: io.stdout,
            handshake: handshakeOf(io, methods.keys()),
            signal: io.signal,
            call: async (name, params, signal) => {
              const method = methods.get(name);
              if (method === undefined) throw new RpcRequestError('unknown_method', `drover-rpc has no method ${JSON.stringify(name)}; it offers ${[...methods.keys()].join(', ')}`);
              return runCaptured(argvOf(method, params), lent, signal);
            },
            watch: (params, emit, signal) => watchPanes(params, io, emit, signal),
          });
        } finally {
          await tmuxBindings.close();
        }
        return EXIT.ok;
      }),
    );
}
