import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ArgumentError, findExecutable } from '../../src/process/index.js';
import {
  DEFAULT_PROMPT_TEMPLATE,
  EFFORT_LEVELS,
  agentArgv,
  parsePromptTemplate,
  renderPromptTemplate,
  requireAgentProgram,
  shellCommandLine,
  validateAgentOptions,
  type LaunchRequest,
} from '../../src/fleet/index.js';
import { tempDirectory } from './support.js';

const VALUES = { fleet_id: 3, member_id: 7, director_member_id: 4, coding_agent: 'claude' } as const;

describe('prompt templates', () => {
  it('renders the four placeholders and keeps doubled braces literal', () => {
    assert.equal(
      renderPromptTemplate('fleet {fleet_id}, you are {member_id}, report to {director_member_id} ({coding_agent}); JSON: {{"a": 1}}', VALUES),
      'fleet 3, you are 7, report to 4 (claude); JSON: {"a": 1}',
    );
    assert.deepEqual(parsePromptTemplate('{member_id}!'), [{ placeholder: 'member_id' }, { literal: '!' }]);
  });

  it('names an unknown placeholder, an unclosed brace and a stray closing brace', () => {
    assert.throws(() => parsePromptTemplate('hi {name}'), {
      name: 'ArgumentError',
      message: "Unknown placeholder '{name}' in --prompt. Supported placeholders: {fleet_id}, {member_id}, {director_member_id}, {coding_agent}",
    });
    assert.throws(() => parsePromptTemplate('a {fleet_id'), /unclosed '\{' at offset 2 in --prompt/);
    assert.throws(() => parsePromptTemplate('a } b'), /single '\}' at offset 2 in --prompt/);
  });

  it('gives the default prompt every identity line', () => {
    const rendered = renderPromptTemplate(DEFAULT_PROMPT_TEMPLATE, VALUES);
    for (const line of ['FLEET ID: 3', 'YOUR MEMBER ID: 7', 'DIRECTOR MEMBER ID: 4', 'CODING AGENT: claude']) assert.ok(rendered.includes(`\n${line}\n`), line);
  });
});

describe('validateAgentOptions', () => {
  it('accepts each agent its own effort levels and model names, and the agent is started with them', () => {
    assert.deepEqual(EFFORT_LEVELS, { claude: ['low', 'medium', 'high', 'xhigh', 'max'], codex: ['minimal', 'low', 'medium', 'high', 'xhigh'], gemini: [], opencode: [], shell: [] });
    const models: Record<string, string> = { claude: 'claude-opus-4', codex: 'gpt-5.1-codex', gemini: 'gemini-2.5-pro', opencode: 'anthropic/claude-sonnet-4' };
    for (const [agent, model] of Object.entries(models) as [LaunchRequest['agent'], string][]) {
      for (const effort of [undefined, ...EFFORT_LEVELS[agent]]) {
        validateAgentOptions({ agent, model, effort });
        const argv = agentArgv({ agent, model, effort, memberName: 'alice', values: VALUES, env: {} });
        assert.equal(argv[argv.indexOf('--model') + 1], model, `${agent} starts with --model ${model}`);
        if (effort !== undefined) assert.ok(argv.some((word) => word === effort || word.endsWith(`=${effort}`)), `${agent} starts with effort ${effort}: ${argv.join(' ')}`);
      }
    }
    validateAgentOptions({ agent: 'shell' });
    assert.deepEqual(agentArgv({ agent: 'shell', memberName: 'alice', values: VALUES, env: { SHELL: '/bin/zsh' } }), ['/bin/zsh']);
  });

  it('refuses what an agent cannot take, as usage errors', () => {
    const cases: [Parameters<typeof validateAgentOptions>[0], RegExp][] = [
      [{ agent: 'claude', effort: 'minimal' }, /--effort for claude must be one of low, medium, high, xhigh, max \(got 'minimal'\)/],
      [{ agent: 'codex', effort: 'max' }, /--effort for codex must be one of minimal, low, medium, high, xhigh/],
      [{ agent: 'opencode', effort: 'high' }, /opencode takes no --effort/],
      [{ agent: 'opencode', model: 'sonnet' }, /--model for opencode must look like provider\/model/],
      [{ agent: 'claude', model: 'bad model' }, /--model 'bad model' is not a model name/],
      [{ agent: 'shell', prompt: 'x', model: 'm' }, /the shell agent takes no --prompt, --model/],
      [{ agent: 'codex', prompt: '   ' }, /--prompt may not be empty/],
      [{ agent: 'codex', prompt: 'do {thing}' }, /Unknown placeholder '\{thing\}'/],
    ];
    for (const [options, message] of cases) assert.throws(() => validateAgentOptions(options), (error: unknown) => error instanceof ArgumentError && message.test(error.message));
  });
});

describe('agentArgv', () => {
  const request = (extra: Partial<LaunchRequest>): LaunchRequest => ({ agent: 'claude', memberName: 'alice', values: VALUES, env: { SHELL: '/bin/zsh' }, ...extra });

  it('builds each coding agent its command line with the rendered prompt last', () => {
    assert.deepEqual(agentArgv(request({ prompt: 'hi {member_id}', model: 'opus', effort: 'high' })), [
      'claude',
      '--permission-mode',
      'dontAsk',
      '--allowedTools',
      'Bash(drover message *)',
      '--name',
      'alice',
      '--model',
      'opus',
      '--effort',
      'high',
      'hi 7',
    ]);
    assert.deepEqual(agentArgv(request({ agent: 'codex', prompt: 'go', effort: 'low' })), [
      'codex',
      '--no-daemon',
      '--ask-for-approval',
      'never',
      '--sandbox',
      'workspace-write',
      '--config=model_reasoning_effort=low',
      'go',
    ]);
    assert.deepEqual(agentArgv(request({ agent: 'opencode', prompt: 'go', model: 'a/b' })), ['opencode', '--model', 'a/b'], 'opencode gets its prompt as the first message');
    assert.deepEqual(agentArgv(request({ agent: 'gemini', prompt: 'go' })), ['gemini', '--allowed-tools', 'run_shell_command(drover message)', '--prompt-interactive', 'go']);
    assert.deepEqual(agentArgv(request({ agent: 'shell' })), ['/bin/zsh']);
    assert.deepEqual(agentArgv(request({ agent: 'shell', env: {} })), ['/bin/sh']);
    assert.match(agentArgv(request({})).at(-1)!, /^You are a member of a drover fleet/);
  });

  it('quotes an argv for a shell only where needed', () => {
    assert.equal(shellCommandLine(['codex', '--config=x=1', "it's a prompt", '']), "codex --config=x=1 'it'\\''s a prompt' ''");
  });
});

describe('agent programs', () => {
  it('finds programs on PATH and fails before anything runs when one is missing', (t) => {
    const dir = tempDirectory(t);
    const program = join(dir, 'claude');
    writeFileSync(program, '#!/bin/sh\n');
    chmodSync(program, 0o755);
    assert.equal(findExecutable('claude', { PATH: `/nonexistent:${dir}` }), program);
    assert.equal(requireAgentProgram('claude', { PATH: dir }), program);
    assert.throws(() => requireAgentProgram('codex', { PATH: dir }), { message: 'binary codex not found on PATH' });
    assert.throws(() => requireAgentProgram('shell', { SHELL: join(dir, 'no-such-shell'), PATH: dir }), { message: `binary ${join(dir, 'no-such-shell')} not found on PATH` });
  });
});
