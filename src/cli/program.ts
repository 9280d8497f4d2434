import { Command, CommanderError, Option } from 'commander';
import { EXIT, errorDocument, exitCodeOf, writeJson, writeLine, type CliIO } from './io.js';
import type { SocketFlags } from './endpoint.js';
import { registerServerCommands } from './commands/server.js';
import { registerMcpCommands } from './commands/mcp.js';
import { registerFleetCommands } from './commands/fleet.js';
import { registerPaneCommands } from './commands/pane.js';
import { registerAgentCommands } from './commands/agent.js';
import { packageVersion } from './version.js';

/** What command modules get: the IO and a wrapper that turns a handler into a commander action. */
export interface CommandContext {
  readonly io: CliIO;
  action<O extends object>(handler: (options: O & SocketFlags, io: CliIO, ...positionals: string[]) => Promise<number | void>): (...args: unknown[]) => Promise<void>;
}


export function buildProgram(io: CliIO): { program: Command; result: { exitCode: number } } {
  const result: { exitCode: number } = { exitCode: EXIT.ok };
  const program = new Command('drover');
  const context: CommandContext = {
    io,
    action(handler) {
      return async (...args: unknown[]) => {
        const command = args.at(-1) as Command;
        const positionals = args.slice(0, -2).flatMap((a) => (Array.isArray(a) ? a.map(String) : a === undefined ? [] : [String(a)]));
        const options = command.optsWithGlobals() as Parameters<typeof handler>[0];
        try {
          const code = await handler(options, io, ...positionals);
          result.exitCode = typeof code === 'number' ? code : EXIT.ok;
        } catch (error) {
          result.exitCode = exitCodeOf(error);
          if ((options as { json?: boolean }).json) writeJson(io, errorDocument(error));
          writeLine(io.stderr, `drover: ${error instanceof Error ? error.message : String(error)}`);
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
    });

  registerServerCommands(program, context);
  registerMcpCommands(program, context);
  registerFleetCommands(program, context);
  registerPaneCommands(program, context);
  registerAgentCommands(program, context);

  for (const command of program.commands) command.exitOverride();
  return { program, result };
}

/** Runs the CLI on argv (without node and script) and returns the exit status. */
export async function runCli(argv: readonly string[], io: CliIO): Promise<number> {
  const { program, result } = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(error.code)) return EXIT.ok;
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    throw error;
  }
  return result.exitCode;
}
