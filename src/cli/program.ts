import { Command, CommanderError, Option } from 'commander';
import { addExamples } from './examples.js';
import { EXIT, exitCodeOf, reportFailure, writeJson, type CliIO } from './io.js';
import type { SocketFlags } from './endpoint.js';
import { packageVersion } from './version.js';

/** What command modules get: the IO and a wrapper that turns a handler into a commander action. */
export interface CommandContext {
  readonly io: CliIO;
  action<O extends object>(handler: (options: O & SocketFlags, io: CliIO, ...positionals: string[]) => Promise<number | void>): (...args: unknown[]) => Promise<void>;
}

type Registrar = (program: Command, context: CommandContext) => void;

/**
 * Command modules by the top-level commands they register. Only the module of the command
 * being run is loaded, so `drover agent hook` (run by agents on every tool call) does not
 * pay for the MCP SDK or SQLite.
 */
const MODULES: readonly { commands: readonly string[]; load: () => Promise<Registrar> }[] = [
  { commands: ['up', 'down', 'snapshot'], load: async () => (await import('./commands/server.js')).registerServerCommands },
  { commands: ['mcp'], load: async () => (await import('./commands/mcp.js')).registerMcpCommands },
  { commands: ['fleet', 'member', 'message', 'broker'], load: async () => (await import('./commands/fleet.js')).registerFleetCommands },
  { commands: ['pane'], load: async () => (await import('./commands/pane.js')).registerPaneCommands },
  { commands: ['agent'], load: async () => (await import('./commands/agent.js')).registerAgentCommands },
  { commands: ['mux'], load: async () => (await import('./commands/mux.js')).registerMuxCommands },
  { commands: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctorCommands },
  { commands: ['workspace'], load: async () => (await import('./commands/workspace.js')).registerWorkspaceCommands },
  { commands: ['web'], load: async () => (await import('./commands/web.js')).registerWebCommands },
  { commands: ['rpc'], load: async () => (await import('./commands/rpc.js')).registerRpcCommands },
  { commands: ['host'], load: async () => (await import('./commands/host.js')).registerHostCommands },
];

const GLOBAL_OPTIONS_WITH_VALUES = new Set(['-L', '--socket-name', '-S', '--socket-path']);

/** The top-level command argv names, skipping global options; undefined when there is none. */
function commandName(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (GLOBAL_OPTIONS_WITH_VALUES.has(arg)) i += 1;
    else if (!arg.startsWith('-')) return arg;
  }
  return undefined;
}

export async function buildProgram(io: CliIO, argv: readonly string[] = []): Promise<{ program: Command; result: { exitCode: number } }> {
  const result: { exitCode: number } = { exitCode: EXIT.ok };
  const program = new Command('drover');
  const context: CommandContext = {
    io,
    action(handler) {
      return async (...args: unknown[]) => {
        const command = args.at(-1) as Command;
        const declared = args.slice(0, -2).flatMap((a) => (Array.isArray(a) ? a.map(String) : a === undefined ? [] : [String(a)]));
        // Operands past the declared ones reach here only where a command allows them, to refuse them itself with advice.
        const excess = command.registeredArguments.at(-1)?.variadic === true ? [] : command.args.slice(command.registeredArguments.length);
        const positionals = [...declared, ...excess];
        const options = command.optsWithGlobals() as Parameters<typeof handler>[0];
        try {
          const code = await handler(options, io, ...positionals);
          result.exitCode = typeof code === 'number' ? code : EXIT.ok;
        } catch (error) {
          result.exitCode = exitCodeOf(error);
          reportFailure(io, error, (options as { json?: boolean }).json === true);
        }
      };
    },
  };

  program
    .description('Drive coding agents that live in terminal-multiplexer panes.')
    .version(packageVersion(), '-V, --version')
    .addOption(new Option('-L, --socket-name <name>', 'tmux server socket name (tmux -L)'))
    .addOption(new Option('-S, --socket-path <path>', 'tmux server socket path (tmux -S)'))
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      // commander's own messages start with "error: ", so every error line reads `drover: error: …`.
      outputError: (text, write) => write(`drover: ${text}`),
    });

  const name = commandName(argv);
  const wanted = MODULES.filter((module) => name !== undefined && module.commands.includes(name));
  const versionOnly = name === undefined && argv.some((arg) => arg === '-V' || arg === '--version');
  // Help, unknown commands and `help CMD` need every command registered.
  for (const module of wanted.length > 0 || versionOnly ? wanted : MODULES) (await module.load())(program, context);

  for (const command of program.commands) command.exitOverride();
  markRequiredOptions(program);
  addExamples(program);
  return { program, result };
}

/** commander lists required options like any other; their help says so. */
function markRequiredOptions(command: Command): void {
  for (const option of command.options) if (option.mandatory && !option.description.endsWith('(required)')) option.description = `${option.description} (required)`;
  for (const sub of command.commands) markRequiredOptions(sub);
}

/**
 * The command a bare group invocation names (`drover`, `drover pane`): drover itself, or a
 * command that is only a group (subcommands, and no options or arguments of its own: `drover
 * web` serves), with nothing after it. Such an invocation asks for help, which goes to stdout.
 */
function bareGroup(program: Command, argv: readonly string[]): Command | undefined {
  let command = program;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (command === program && GLOBAL_OPTIONS_WITH_VALUES.has(arg)) {
      // `drover -L` lacks the option's value: commander reports that, not help.
      if (i + 1 === argv.length) return undefined;
      i += 1;
      continue;
    }
    if (arg.startsWith('-')) return undefined;
    const sub = command.commands.find((candidate) => candidate.name() === arg || candidate.aliases().includes(arg));
    if (sub === undefined) return undefined;
    command = sub;
  }
  const onlyAGroup = command === program || (command.options.length === 0 && command.registeredArguments.length === 0);
  return command.commands.length > 0 && onlyAGroup ? command : undefined;
}

/** `--json` before any `--`: the caller wants one JSON document, even for a usage error. */
function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

/** Runs the CLI on argv (without node and script) and returns the exit status. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const { program, result } = await buildProgram(io, argv);
  const group = bareGroup(program, argv);
  if (group !== undefined) {
    group.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code)) return EXIT.ok;
      if (error.exitCode === 0) return EXIT.ok;
      if (wantsJson(argv)) writeJson(io, { error: { code: 'usage', message: error.message.replace(/^error: /, '') } });
      return EXIT.usage;
    }
    throw error;
  }
  return result.exitCode;
}
