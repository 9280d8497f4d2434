import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planCommandLine, planControlCommand, quoteArgument, resultOfBlocks, snapshotCommands, splitCommands, type GuardedBlock } from '../../../src/tmux/index.js';

function block(body: string, guardSuccess = true): GuardedBlock {
  return { time: 1, number: 2, flags: 1, guardSuccess, body: Buffer.from(body), opening: Buffer.alloc(0), closing: Buffer.alloc(0), bodyBytes: body.length, truncated: false };
}

describe('argv to control command lines', () => {
  it('splits commands the way tmux splits its own arguments', () => {
    assert.deepEqual(splitCommands(['display', '-p', 'a', ';', 'display', '-p', 'b']), [['display', '-p', 'a'], ['display', '-p', 'b']]);
    assert.deepEqual(splitCommands(['set', '-g', '@a', 'x;', 'show', '-gv', '@a']), [['set', '-g', '@a', 'x'], ['show', '-gv', '@a']]);
    assert.deepEqual(splitCommands(['set', '-g', '@a', 'x\\;']), [['set', '-g', '@a', 'x;']]);
    assert.deepEqual(splitCommands([';', 'list-sessions', ';', ';', 'list-windows']), [['list-sessions'], ['list-windows']]);
    assert.deepEqual(splitCommands(['send-keys', '-l', 'a;b']), [['send-keys', '-l', 'a;b']]);
  });

  it('leaves plain words bare and quotes everything tmux would interpret', () => {
    assert.equal(quoteArgument('display-message'), 'display-message');
    assert.equal(quoteArgument('%12'), '%12');
    assert.equal(quoteArgument('@3'), '@3');
    assert.equal(quoteArgument('$3'), "'$3'");
    assert.equal(quoteArgument('%if'), "'%if'");
    assert.equal(quoteArgument('~/x'), "'~/x'");
    assert.equal(quoteArgument('#{pane_id}'), "'#{pane_id}'");
    assert.equal(quoteArgument('NAME=value'), "'NAME=value'");
    assert.equal(quoteArgument(''), "''");
    assert.equal(quoteArgument("it's"), "'it'\\''s'");
    assert.equal(quoteArgument('a\nb\tc'), "'a'\\012'b'\\011'c'");
    assert.equal(quoteArgument('back\\slash ; {x} "q" 😀'), "'back\\slash ; {x} \"q\" 😀'");
  });

  it('refuses what cannot travel unchanged on one line', () => {
    assert.equal(planCommandLine(['set', '-g', '@a', 'bad \uD800 surrogate']).ok, false);
    assert.equal(planCommandLine(['set', '-g', '@a', 'x'.repeat(300 * 1024)]).ok, false);
    assert.equal(planCommandLine([';']).ok, false);
    const plan = planCommandLine(['display-message', '-p', '-t', '%1', '#{pane_id}']);
    assert.deepEqual(plan, { ok: true, line: "display-message -p -t %1 '#{pane_id}'", commands: [['display-message', '-p', '-t', '%1', '#{pane_id}']] });
  });
});

describe('which commands ride a control connection', () => {
  const PATH = '/opt/agents/bin:/usr/bin';
  const viaControl = (args: string[], sameAsSpawn = true): boolean => planControlCommand(args, sameAsSpawn ? { clientPath: PATH } : undefined) !== undefined;

  it('counts one block per command for the snapshot listing', () => {
    const args = snapshotCommands().flatMap((command, i) => (i === 0 ? command : [';', ...command]));
    assert.equal(planControlCommand(args, { clientPath: PATH })?.commands, 3);
  });

  it('sends commands that wait, queue more commands or use client stdio to a spawned client', () => {
    assert.equal(viaControl(['wait-for', 'chan']), false);
    assert.equal(viaControl(['wait-for', '-S', 'chan']), true);
    assert.equal(viaControl(['if-shell', '-F', '1', 'display -p x']), false);
    assert.equal(viaControl(['run-shell', 'true']), false);
    assert.equal(viaControl(['source-file', '/dev/null']), false);
    assert.equal(viaControl(['load-buffer', '-']), false);
    assert.equal(viaControl(['save-buffer', '-b', 'x', '-']), false);
    assert.equal(viaControl(['set-hook', '-g', '-R', 'after-new-window']), false);
    assert.equal(viaControl(['new-session', '-A', '-d', '-s', 'x']), false);
    assert.equal(viaControl(['display-message', 'no -p']), false);
  });

  it('keeps target-less commands off the transport but allows them on a connection', () => {
    assert.equal(viaControl(['display-message', '-p', '#{pane_id}']), false);
    assert.equal(viaControl(['display-message', '-p', '#{pane_id}'], false), true);
    assert.equal(viaControl(['display-message', '-p', '-t', '%1', '#{pane_id}']), true);
    assert.equal(viaControl(['list-windows', '-F', 'x']), false);
    assert.equal(viaControl(['list-windows', '-a', '-F', 'x']), true);
    assert.equal(viaControl(['show-options', '-gv', 'status']), true);
    assert.equal(viaControl(['show-options', '-v', 'status']), false);
    assert.equal(viaControl(['list-clients']), true, 'the connection is an attached client either way');
    assert.equal(viaControl(['display', '-p', '-t', '%1', 'x']), false);
  });

  it('sends new panes without an explicit directory, and new sessions, to a spawned client', () => {
    assert.equal(viaControl(['new-window', '-d', '-t', '$1:']), false);
    assert.equal(viaControl(['new-window', '-d', '-t', '$1:'], false), true);
    assert.equal(viaControl(['new-window', '-d', '-t', '$1:', '-c', '/tmp']), true);
    assert.equal(viaControl(['split-window', '-t', '%1', '-h', '-c', '/tmp']), true);
    assert.equal(viaControl(['respawn-pane', '-k', '-t', '%1', '-c', '/tmp']), true);
    assert.equal(viaControl(['new-session', '-d', '-c', '/tmp']), false, "-e PATH would stay in the session's environment");
    assert.equal(viaControl(['new-session', '-d']), false);
    assert.equal(viaControl(['new-session', '-d'], false), true);
  });

  it("hands a new pane the caller's PATH, as a spawned client would, unless the command names one", () => {
    const line = (args: string[]): string | undefined => planControlCommand(args, { clientPath: PATH })?.line;
    assert.equal(line(['split-window', '-t', '%1', '-c', '/tmp', 'agent']), `split-window -e 'PATH=${PATH}' -t %1 -c /tmp agent`);
    assert.equal(line(['split-window', '-t', '%1', '-c', '/tmp', '-e', 'PATH=/own', 'agent']), "split-window -t %1 -c /tmp -e 'PATH=/own' agent");
    assert.equal(line(['split-window', '-t', '%1', '-c', '/tmp', '-ePATH=/own']), "split-window -t %1 -c /tmp '-ePATH=/own'");
    assert.equal(planControlCommand(['split-window', '-t', '%1', '-c', '/tmp'], { clientPath: undefined })?.line, 'split-window -t %1 -c /tmp', 'a caller without a PATH hands none');
    // Only the command that makes a pane gets it, and the group keeps its commands apart.
    const group = planControlCommand(['new-window', '-d', '-t', '$1:', '-c', '/tmp', ';', 'display-message', '-p', '-t', '%1', 'x;'], { clientPath: PATH });
    assert.deepEqual(group && { line: group.line, commands: group.commands }, { line: `new-window -e 'PATH=${PATH}' -d -t '$1:' -c /tmp ; display-message -p -t %1 x`, commands: 2 });
    // A connection's own commands (no spawned client to match) are sent as they are.
    assert.equal(planControlCommand(['split-window', '-t', '%1'], undefined)?.line, 'split-window -t %1');
  });
});

describe('guarded replies as command results', () => {
  it('concatenates output in order and reports the failing command as a spawned client would', () => {
    const ok = resultOfBlocks(['x'], [block('a\n'), block(''), block('b\nc\n')], 1, 42);
    assert.equal(ok.stdout.toString(), 'a\nb\nc\n');
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.transport, 'control');
    const failed = resultOfBlocks(['x'], [block('a\n'), block("can't find pane: %9\n", false)], 1, 42);
    assert.equal(failed.stdout.toString(), 'a\n');
    assert.equal(failed.stderrText(), "can't find pane: %9");
    assert.equal(failed.exitCode, 1);
    const parse = resultOfBlocks(['x'], [block('parse error: command kill-pane: unknown flag -Z\n', false)], 1, 42);
    assert.equal(parse.stderrText(), 'command kill-pane: unknown flag -Z');
  });
});
