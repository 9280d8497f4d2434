import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { before, describe, it } from 'node:test';
import type { Command } from 'commander';
import { EXAMPLES, EXIT, buildProgram, type CliIO } from '../../src/cli/index.js';
import type { RunResult } from '../../src/process/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { useTestServer } from '../support/tmux.js';

/** Every command of the tree, groups included, as the words that name it (`['pane', 'map']`). */
function commandPaths(command: Command, prefix: readonly string[] = []): string[][] {
  return command.commands.flatMap((sub) => {
    const path = [...prefix, sub.name()];
    return [path, ...commandPaths(sub, path)];
  });
}

function leaves(program: Command): string[][] {
  return commandPaths(program).filter((path) => {
    let command = program;
    for (const word of path) command = command.commands.find((sub) => sub.name() === word)!;
    return command.commands.length === 0;
  });
}

/** An IO whose stdout is collected, for reading the help commander prints. */
function collectingIO(): { io: CliIO; output: () => string } {
  const stdout = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
  const io: CliIO = { stdin: new PassThrough(), stdout, stderr: new PassThrough(), env: {}, cwd: process.cwd(), stdinIsTTY: false, signal: new AbortController().signal };
  return { io, output: () => Buffer.concat(chunks).toString('utf8') };
}

/** A usage error as every command reports it: exit 2, one `drover: error:` line, and with --json one document. */
function assertUsageError(result: RunResult, what: string, json: boolean): void {
  assert.equal(result.exitCode, EXIT.usage, `${what}: exit ${result.exitCode}\n${result.stderrText()}`);
  assert.match(result.stderrText(), /^drover: error: \S/, what);
  assert.doesNotMatch(result.stderrText(), /ArgumentError|UsageError|\d\.\d{4,}/, `${what}: no class names or raw floats`);
  if (json) assert.equal((JSON.parse(result.text()) as { error: { code: string } }).error.code, 'usage', what);
  else assert.equal(result.text(), '', what);
}

describe('drover help', () => {
  const sandbox = cliSandbox();

  it('keeps a command that has its own action and subcommands (drover web) a command, not a group', async () => {
    const { program } = await buildProgram(collectingIO().io);
    const groups = commandPaths(program).filter((path) => {
      let command = program;
      for (const word of path) command = command.commands.find((sub) => sub.name() === word)!;
      return command.commands.length > 0 && command.options.length === 0;
    });
    assert.ok(!groups.some((path) => path.join(' ') === 'web'), 'drover web serves; it is no bare group');
    assert.ok(groups.some((path) => path.join(' ') === 'pane window-name'));
  });

  it('prints help to stdout for a bare drover and a bare command group, exit 0', async () => {
    for (const args of [[], ['pane'], ['fleet'], ['pane', 'window-name'], ['-L', 'x']]) {
      const result = await sandbox.drover(args);
      assert.equal(result.exitCode, 0, `drover ${args.join(' ')}: ${result.stderrText()}`);
      assert.match(result.text(), /^Usage: drover/, `drover ${args.join(' ')}`);
      assert.equal(result.stderrText(), '');
    }
    // A global option without its value is a usage error, not a request for help.
    const dangling = await sandbox.drover(['-L']);
    assert.equal(dangling.exitCode, 2);
    assert.match(dangling.stderrText(), /^drover: error: option '-L, --socket-name <name>' argument missing\n/);
  });

  it('ends every command’s --help with an example, and marks required options', async () => {
    const { program } = await buildProgram(collectingIO().io);
    const paths = commandPaths(program);
    assert.ok(paths.length > 40, `only ${paths.length} commands found`);
    assert.deepEqual(Object.keys(EXAMPLES).filter((key) => key !== '' && !paths.some((path) => path.join(' ') === key)), [], 'examples of commands that do not exist');
    for (const path of paths) {
      const { io, output } = collectingIO();
      const { program: fresh } = await buildProgram(io, path);
      let command = fresh;
      for (const word of path) command = command.commands.find((sub) => sub.name() === word)!;
      command.outputHelp();
      const help = output();
      assert.match(help, /\nExamples?:\n {2}drover \S/, `drover ${path.join(' ')} --help has no example`);
      // One block, the table's: a command that writes its own examples as well prints two.
      assert.equal(help.match(/\nExamples?:\n/g)?.length, 1, `drover ${path.join(' ')} --help has more than one examples block`);
      assert.ok(path.join(' ') in EXAMPLES, `drover ${path.join(' ')} has no examples in the table`);
      assert.ok((EXAMPLES[path.join(' ')] ?? []).every((line) => line.startsWith(`drover ${path.join(' ')}`.trim()) || path.length === 0 || line.startsWith('drover -')), `drover ${path.join(' ')}: an example of another command`);
      for (const option of command.options.filter((candidate) => candidate.mandatory)) {
        assert.ok(option.description.endsWith('(required)'), `drover ${path.join(' ')}: ${option.flags} is not marked required`);
        assert.ok(help.replace(/\s+/g, ' ').includes(`${option.flags} ${option.description}`), `drover ${path.join(' ')}: ${option.flags} is not in the help as required`);
      }
    }
  });
});

describe('drover exit codes', () => {
  const sandbox = cliSandbox();
  const owned = useTestServer();
  let socket: string;
  let pane: Pane;
  before(async () => {
    socket = owned.server.endpoint.socketPath;
    pane = (await owned.server.newSession({ name: 'work', command: ['sleep', '600'], receipt: true })).pane;
  });

  it('exits 2 with one error line, and one JSON document under --json, for an unknown option to any command', async () => {
    const { program } = await buildProgram(collectingIO().io);
    const commands = leaves(program);
    for (let i = 0; i < commands.length; i += 4) {
      await Promise.all(
        commands.slice(i, i + 4).map(async (path) => {
          const result = await sandbox.drover([...path, '--no-such-flag', '--json']);
          assertUsageError(result, `drover ${path.join(' ')} --no-such-flag --json`, true);
        }),
      );
    }
  });

  it('exits 2 for the usage errors a command finds in its values, before touching any pane', async () => {
    const cases: [string[], RegExp][] = [
      [['pane', 'capture', '%0', '-l', '0', '-S', socket], /-l\/--lines takes a whole number of lines from 1 to 1000000 \(got "0"\)/],
      [['pane', 'capture', '%0', '-l', '99999999999', '-S', socket], /-l\/--lines takes a whole number of lines from 1 to 1000000 \(got "99999999999"\)/],
      [['pane', 'window-name', 'ensure-prefix', pane.id, '\t', '-S', socket], /the prefix contains a control character \(\\x09 at offset 0\); a window name is one printable line/],
      [['pane', 'window-name', 'replace-prefix', pane.id, 'a', 'b\u001b', '-S', socket], /the new prefix contains a control character \(\\x1B at offset 1\)/],
      [['pane', 'open', '--provider', 'nope'], /unknown provider "nope"; available: claude, codex, gemini, opencode, shell/],
      [['pane', 'deliver', pane.id, '--text', '', '-S', socket], /empty/],
      [['pane', 'deliver', pane.id, '--text', 'bell\u0007', '-S', socket], /control character/],
      [['pane', 'window-name', 'ensure-prefix', pane.id, '', '-S', socket], /the prefix is empty/],
      [['pane', 'deliver', pane.id, '--text', 'x', '--wait-ms', '1.5', '-S', socket], /--wait-ms takes a whole number of milliseconds, 0 or more \(got "1\.5"\)/],
      [['member', 'create', '--fleet', '1', '--name', 'x', '--agent', 'nope'], /Allowed choices are claude, codex, gemini, opencode, shell/],
      [['member', 'capture', '1', '-l', '0'], /--lines must be a positive whole number/],
      [['member', 'prompt', '1', 'bell\u0007'], /text may not contain control characters \(\\x07 at offset 4\)/],
      [['message', 'send', '--from', '1', '--to', '2', ' '], /text may not be empty/],
      [['message', 'wait', '--member', '1', '--timeout-ms', '0'], /--timeout-ms takes a whole number of milliseconds, 1 or more \(got "0"\)/],
      [['mcp', '--timeout-ms', '5s'], /--timeout-ms takes a whole number of milliseconds, 100 or more \(got "5s"\)/],
      [['snapshot', '--where', '{bad', '-S', socket], /\S/],
      [['doctor', '-L', 'a', '-S', 'b'], /give either -L\/--socket-name or -S\/--socket-path, not both/],
      [['mcp', '-L', 'a', '-S', 'b'], /give either -L\/--socket-name or -S\/--socket-path, not both/],
    ];
    const windowName = (await pane.display('#W')).toString();
    for (const [args, message] of cases) {
      const [text, json] = await Promise.all([sandbox.drover(args), sandbox.drover([...args, '--json'])]);
      const what = `drover ${args.join(' ')}`;
      assertUsageError(text, what, false);
      assert.match(text.stderrText(), message, what);
      assertUsageError(json, `${what} --json`, true);
    }
    assert.equal(existsSync(sandbox.env.DROVER_DB!), false, 'no fleet database was created');
    assert.equal((await pane.capture()).toString('utf8').trim(), '', 'nothing was typed');
    assert.equal((await pane.display('#W')).toString(), windowName, 'the window was not renamed');
  });

  it('shows names and bodies printable in text, never as raw terminal controls', async () => {
    const original = (await pane.display('#W')).toString();
    await owned.server.run(['rename-window', '-t', pane.id, 'red\u001b[31m\u0007']);
    try {
      const [snapshot, map] = await Promise.all([sandbox.drover(['snapshot', '-S', socket]), sandbox.drover(['pane', 'map', '--all-sessions', '-S', socket])]);
      for (const result of [snapshot, map]) {
        assert.equal(result.exitCode, 0, result.stderrText());
        // tmux escapes controls in names itself (octal); drover prints what it gets, never a raw control.
        assert.ok(result.text().includes('red\\033[31m\\a'), result.text());
        assert.doesNotMatch(result.text(), /[\u0000-\u0009\u000b-\u001f\u007f]/);
      }
    } finally {
      await owned.server.run(['rename-window', '-t', pane.id, original]);
    }
  });

  it('exits 5 from message wait when nothing came before the timeout, 0 when a message came', async () => {
    const env = { TMUX: `${socket},1,0`, TMUX_PANE: pane.id };
    const created = await sandbox.drover(['fleet', 'create', 'crew', '--agent', 'shell', '--json'], { env });
    assert.equal(created.exitCode, 0, created.stderrText());
    const director = String((JSON.parse(created.text()) as { director: { member_id: number } }).director.member_id);
    const [text, json] = await Promise.all([
      sandbox.drover(['message', 'wait', '--member', director, '--timeout-ms', '500'], { env }),
      sandbox.drover(['message', 'wait', '--member', director, '--timeout-ms', '500', '--json'], { env }),
    ]);
    assert.equal(text.exitCode, EXIT.timedOut, text.stderrText());
    assert.equal(text.text(), `No messages for member ${director} within 500 ms.\n`);
    assert.equal(json.exitCode, EXIT.timedOut, json.stderrText());
    assert.deepEqual((JSON.parse(json.text()) as { timed_out: boolean; messages: unknown[] }).messages, []);

    // The Director gets no pane input: a message to it is only stored.
    const sent = await sandbox.drover(['message', 'send', '--from', director, '--to', director, 'two\nlines \u001b[31mred'], { env });
    assert.equal(sent.exitCode, 0, sent.stderrText());
    const waited = await sandbox.drover(['message', 'wait', '--member', director, '--timeout-ms', '500'], { env });
    assert.equal(waited.exitCode, 0, waited.stderrText());
    assert.match(waited.text(), /two⏎lines \\x1B\[31mred\n$/);
    assert.doesNotMatch(waited.text(), /\u001b/);
  });
});
