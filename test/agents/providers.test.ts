import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import {
  BUILTIN_PROVIDERS,
  agentNames,
  fillCommand,
  fillForRole,
  isAssignmentWord,
  resolveLaunchCommand,
  splitShellWords,
  unquoteWord,
} from '../../src/agents/index.js';
import { plainCommand } from '../../src/panes/index.js';

describe('splitShellWords', () => {
  it('keeps quoted blanks, substitutions and escapes inside one word, with positions', () => {
    const line = `claude -n "$(basename "$(pwd)")" 'a b' c\\ d $(echo "x y") \`id -u\``;
    assert.deepEqual(
      splitShellWords(line).map((word) => word.raw),
      ['claude', '-n', '"$(basename "$(pwd)")"', "'a b'", 'c\\ d', '$(echo "x y")', '`id -u`'],
    );
    for (const word of splitShellWords(line)) assert.equal(line.slice(word.start, word.end), word.raw);
  });

  it('names an unterminated quote and where it starts', () => {
    assert.throws(() => splitShellWords(`claude "oops`), (error) => error instanceof ArgumentError && /unterminated double quote at offset 7/.test(error.message));
    assert.throws(() => splitShellWords(`x $(echo`), /unterminated \$\( substitution at offset 2/);
  });

  it('unquotes a word and recognises NAME=value prefixes', () => {
    assert.equal(unquoteWord(`"/opt/my agent"/bin/'run'\\ me`), '/opt/my agent/bin/run me');
    assert.ok(isAssignmentWord('FOO=1'));
    assert.ok(!isAssignmentWord('/opt/a=b/claude'));
    assert.ok(!isAssignmentWord('--model=x'));
  });
});

describe('fillCommand', () => {
  it('substitutes both placeholders', () => {
    assert.equal(
      fillCommand(BUILTIN_PROVIDERS.claude!.interactiveCommand!, { model: 'opus', effort: 'high' }),
      'claude --model opus --effort high',
    );
  });

  it('drops an empty fill with the flag before it, whatever shape the word has', () => {
    const codex = BUILTIN_PROVIDERS.codex!.interactiveCommand!;
    assert.equal(fillCommand(codex, { model: '', effort: 'low' }), 'codex --no-daemon -c model_reasoning_effort=low');
    assert.equal(fillCommand(codex, { model: '', effort: '' }), 'codex --no-daemon');
    assert.equal(fillCommand('kimi --auto -m{model} --x', { model: '', effort: '' }), 'kimi --auto --x');
    assert.equal(fillCommand('kimi --auto --model={model}', { model: '', effort: '' }), 'kimi --auto');
    assert.equal(fillCommand('agent {model} --go', { model: '', effort: '' }), 'agent --go');
  });

  it('keeps the rest of the line as written, newlines included', () => {
    assert.equal(fillCommand('cd "$HOME" &&  claude  --model {model}\necho done', { model: 'sonnet', effort: '' }), 'cd "$HOME" &&  claude  --model sonnet\necho done');
  });

  it('refuses a fill that would need shell quoting', () => {
    assert.throws(() => fillCommand('a --model {model}', { model: 'x; rm -rf ~', effort: '' }), ArgumentError);
  });
});

describe('fillForRole', () => {
  it('falls back field by field to the default role, then to empty', () => {
    const codex = BUILTIN_PROVIDERS.codex!;
    assert.deepEqual(fillForRole(codex, 'doing'), { model: '', effort: 'xhigh' });
    assert.deepEqual(fillForRole(BUILTIN_PROVIDERS.gemini!, 'review'), { model: 'gemini-2.5-pro', effort: '' });
    assert.deepEqual(fillForRole(BUILTIN_PROVIDERS.opencode!), { model: '', effort: '' });
  });
});

describe('resolveLaunchCommand', () => {
  it('resolves each built-in provider', () => {
    assert.deepEqual(resolveLaunchCommand(BUILTIN_PROVIDERS, 'claude', 'fast'), {
      provider: 'claude',
      role: 'fast',
      command: 'claude --model sonnet --effort low',
      fill: { model: 'sonnet', effort: 'low' },
      bypassesPermissions: false,
    });
    assert.equal(resolveLaunchCommand(BUILTIN_PROVIDERS, 'opencode').command, 'opencode');
    assert.equal(resolveLaunchCommand(BUILTIN_PROVIDERS, 'gemini').command, 'gemini --model gemini-2.5-pro');
    assert.equal(resolveLaunchCommand(BUILTIN_PROVIDERS, 'codex', 'operator').command, 'codex --no-daemon -c model_reasoning_effort=medium');
  });

  it('names the available providers for an unknown one', () => {
    assert.throws(() => resolveLaunchCommand(BUILTIN_PROVIDERS, 'toString'), /unknown provider "toString"; available: claude, codex, gemini, opencode/);
  });

  it('starts every built-in agent with its permission checks on, and adds the bypass flag only when opted in', () => {
    for (const provider of Object.values(BUILTIN_PROVIDERS)) {
      const launch = resolveLaunchCommand(BUILTIN_PROVIDERS, provider.name);
      assert.equal(launch.bypassesPermissions, false);
      assert.doesNotMatch(launch.command, /dangerously|--yolo/, provider.name);
    }
    const optedIn = { ...BUILTIN_PROVIDERS, gemini: { ...BUILTIN_PROVIDERS.gemini!, bypassPermissions: true } };
    const launch = resolveLaunchCommand(optedIn, 'gemini', 'fast');
    assert.equal(launch.command, 'gemini --yolo --model gemini-2.5-flash');
    assert.equal(launch.bypassesPermissions, true);
    const wrapped = { env: { name: 'env', interactiveCommand: 'FOO=1 claude --model {model}', profiles: {}, bypassFlag: '--skip', bypassPermissions: true } };
    assert.equal(resolveLaunchCommand(wrapped, 'env').command, 'FOO=1 claude --skip');
    const opencode = { ...BUILTIN_PROVIDERS, opencode: { ...BUILTIN_PROVIDERS.opencode!, bypassPermissions: true } };
    assert.equal(resolveLaunchCommand(opencode, 'opencode').command, 'opencode --auto');
    const custom = { mine: { name: 'mine', interactiveCommand: 'mine', profiles: {}, bypassPermissions: true } };
    assert.throws(() => resolveLaunchCommand(custom, 'mine'), /provider mine has no flag that turns its permission checks off/);
  });

  it('says how to configure a provider without an interactive command', () => {
    assert.throws(() => resolveLaunchCommand({ mine: { name: 'mine', profiles: {} } }, 'mine'), /configure providers\.mine\.interactive_command/);
  });
});

describe('agentNames', () => {
  it('is claude, claude-code and each provider command word, never a shell', () => {
    const names = agentNames({
      ...BUILTIN_PROVIDERS,
      wrapped: { name: 'wrapped', interactiveCommand: 'FOO=1 BAR="x y" "/opt/tools/my-agent" --fast', profiles: {} },
      shelled: { name: 'shelled', interactiveCommand: `sh -c 'agy --go'`, profiles: {} },
      bare: { name: 'bare', profiles: {} },
    });
    assert.deepEqual([...names].sort(), ['claude', 'claude-code', 'codex', 'gemini', 'my-agent', 'opencode']);
  });
});

describe('plainCommand', () => {
  it('runs a command line without a shell when none is needed: assignments become the environment', () => {
    assert.deepEqual(plainCommand(`FOO=1 BAR="x y" claude --model 'opus 4' --name a\\ b`), { env: { FOO: '1', BAR: 'x y' }, argv: ['claude', '--model', 'opus 4', '--name', 'a b'] });
  });

  it('leaves every line that needs a shell to one', () => {
    for (const line of ['cd app && claude', 'claude | tee log', 'claude $FLAGS', 'claude "$HOME/x"', 'claude `id -u`', 'claude *.md', 'claude > log', 'claude # comment', '~/bin/agent', 'FOO=1']) {
      assert.equal(plainCommand(line), undefined, line);
    }
  });
});
