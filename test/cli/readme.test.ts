import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram, type CliIO } from '../../src/cli/index.js';
import { cliSandbox } from '../support/cli.js';
import { useTestServer } from '../support/tmux.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));
const REPOSITORY = dirname(README);

/** The words of a shell command line as the README writes them: plain words, '…' and "…". */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"((?:[^"\\]|\\.)*)"|(\S+)/g)) words.push(match[1] ?? match[2]?.replace(/\\(.)/g, '$1') ?? match[3]!);
  return words;
}

/**
 * Every `drover …` command in the README's fenced shell blocks, as argv after `drover`: a
 * trailing `# comment` and an input redirection dropped, `a && b` taken as two commands.
 */
function readmeCommands(): string[][] {
  const blocks = [...readFileSync(README, 'utf8').matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
  return blocks
    .flatMap((block) => block.split('\n'))
    .map((line) => line.replace(/\s+#\s.*$/, '').trim())
    .flatMap((line) => line.split(/\s+&&\s+/))
    .map((command) => shellWords(command.replace(/\s+<\s+\S+$/, '')))
    .filter((words) => words[0] === 'drover' || (words[0] === 'npx' && words[1] === 'drover'))
    .map((words) => words.slice(words[0] === 'npx' ? 2 : 1));
}

function quietIO(): CliIO {
  return { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: REPOSITORY, stdinIsTTY: false, signal: new AbortController().signal };
}

/** Every command of the tree answers parse errors by throwing, and runs nothing (`drover web` would serve). */
function parseOnly(command: Command, root = true): void {
  command.exitOverride();
  command.configureOutput({ writeOut: () => undefined, writeErr: () => undefined });
  if (!root) command.action(() => undefined);
  for (const sub of command.commands) parseOnly(sub, false);
}

describe('the README examples', () => {
  const commands = readmeCommands();

  it('are found: the set-up, the criteria, the fleet walk-through, workspaces, MCP', () => {
    assert.ok(commands.length >= 20, `only ${commands.length} drover commands found in README.md`);
    assert.deepEqual(commands[0], ['up']);
  });

  it('each name a command drover has, with options and arguments it accepts', async () => {
    for (const argv of commands) {
      const { program } = await buildProgram(quietIO(), argv);
      parseOnly(program);
      await assert.doesNotReject(program.parseAsync([...argv], { from: 'user' }), `drover ${argv.join(' ')}`);
    }
  });

  describe('that need no agent, terminal or lasting server, run against an owned server', () => {
    const sandbox = cliSandbox();
    const owned = useTestServer();
    // What they write stays in the sandbox: HOME (agent settings) and drover's state directory (web pairing).
    const configHomes = { XDG_CONFIG_HOME: '', CODEX_HOME: '', OPENCODE_CONFIG_DIR: '' };
    const selfContained = (argv: readonly string[]): boolean =>
      (argv[0] === 'snapshot' && argv.includes('--where')) ||
      (argv[0] === 'workspace' && (argv[1] === 'validate' || argv[1] === 'plan')) ||
      (argv[0] === 'agent' && argv[1] === 'setup') ||
      (argv[0] === 'web' && (argv[1] === 'pair' || argv[1] === 'devices'));

    it('exit 0 and print what they promise', async () => {
      await owned.server.newSession({ name: 'work', command: ['sleep', '600'] });
      const runnable = commands.filter(selfContained);
      assert.ok(runnable.length >= 11, `only ${runnable.length} self-contained examples`);
      for (const argv of runnable) {
        const result = await sandbox.drover([...argv, '-S', owned.server.endpoint.socketPath], { cwd: REPOSITORY, env: configHomes });
        assert.equal(result.exitCode, 0, `drover ${argv.join(' ')}: ${result.stderrText()}`);
        assert.notEqual(result.text(), '', `drover ${argv.join(' ')} printed nothing`);
        if (argv.includes('--json')) JSON.parse(result.text());
      }
    });
  });
});
