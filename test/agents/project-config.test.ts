import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import {
  BUILTIN_PROVIDERS,
  findProjectConfig,
  loadProjectConfig,
  mergeProviders,
  parseProjectConfig,
  providersFor,
  resolveLaunchCommand,
} from '../../src/agents/index.js';

describe('parseProjectConfig', () => {
  it('reads provider overrides and leaves other top-level keys alone', () => {
    const config = parseProjectConfig(
      [
        'fleet: { anything: goes }',
        'providers:',
        '  claude:',
        '    profiles:',
        '      default: { model: sonnet }',
        '  aider:',
        "    interactive_command: 'aider --model {model}'",
        '    profiles:',
        '      default: { model: gpt-4.1 }',
      ].join('\n'),
      'drover.yaml',
    );
    assert.deepEqual(config, {
      path: 'drover.yaml',
      providers: {
        claude: { profiles: { default: { model: 'sonnet' } } },
        aider: { interactiveCommand: 'aider --model {model}', profiles: { default: { model: 'gpt-4.1' } } },
      },
    });
  });

  it('accepts an empty file and empty blocks', () => {
    assert.deepEqual(parseProjectConfig('', 'drover.yaml').providers, {});
    assert.deepEqual(parseProjectConfig('providers:\n  claude:\n', 'drover.yaml').providers, { claude: {} });
  });

  const broken: [string, RegExp][] = [
    ['providers: [claude]', /^x\.yaml: providers: expected a mapping, found a list$/],
    ['providers:\n  claude:\n    interactive_comand: claude', /^x\.yaml: providers\.claude\.interactive_comand: unknown key; expected one of interactive_command, profiles, bypass_permissions$/],
    ['providers:\n  claude:\n    bypass_permissions: yes please', /providers\.claude\.bypass_permissions: expected true or false, found string "yes please"/],
    ['providers:\n  claude:\n    interactive_command: 42', /^x\.yaml: providers\.claude\.interactive_command: expected a string, found number 42$/],
    ['providers:\n  claude:\n    interactive_command: "  "', /providers\.claude\.interactive_command: is empty/],
    ['providers:\n  claude:\n    profiles:\n      fast: { model: [a] }', /providers\.claude\.profiles\.fast\.model: expected a string, found a list/],
    ['providers:\n  claude:\n    profiles:\n      fast: { model: "a b" }', /providers\.claude\.profiles\.fast\.model: may only contain/],
    ['providers:\n  claude:\n    profiles:\n      fast: { temperature: 1 }', /providers\.claude\.profiles\.fast\.temperature: unknown key/],
    ['providers:\n  "bad name":\n    profiles: {}', /providers\.bad name: a provider name may only contain/],
    ['providers:\n  claude: [\n', /^x\.yaml:3:1: not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a \] at line 3, column 1:$/],
    ['providers: {}\nproviders: {}\n', /^x\.yaml:2:1: not valid YAML: Map keys must be unique/],
    ['- a list', /^x\.yaml: \(top level\): expected a mapping/],
  ];
  for (const [text, message] of broken) {
    it(`rejects ${JSON.stringify(text)} naming where`, () => {
      assert.throws(() => parseProjectConfig(text, 'x.yaml'), (error) => error instanceof ArgumentError && message.test(error.message));
    });
  }
});

describe('mergeProviders', () => {
  it('merges field by field, fills per role and per field, and adds new providers', () => {
    const merged = mergeProviders({
      claude: { profiles: { default: { effort: 'medium' }, review: { model: 'sonnet' } } },
      codex: { interactiveCommand: 'codex -m {model}' },
      aider: { interactiveCommand: 'aider --model {model}', profiles: { default: { model: 'gpt-4.1' } } },
    });
    assert.equal(merged.claude!.interactiveCommand, BUILTIN_PROVIDERS.claude!.interactiveCommand);
    assert.deepEqual(merged.claude!.profiles.default, { model: 'opus', effort: 'medium' });
    assert.deepEqual(merged.claude!.profiles.review, { model: 'sonnet', effort: 'high' });
    assert.deepEqual(merged.claude!.profiles.fast, BUILTIN_PROVIDERS.claude!.profiles.fast);
    assert.equal(merged.codex!.interactiveCommand, 'codex -m {model}');
    assert.deepEqual(merged.codex!.profiles, BUILTIN_PROVIDERS.codex!.profiles);
    assert.equal(resolveLaunchCommand(merged, 'aider').command, 'aider --model gpt-4.1');
    assert.equal(BUILTIN_PROVIDERS.claude!.profiles.default!.effort, 'high', 'the built-ins are not modified');
  });

  it('lets a project opt in to an agent’s own permission bypass, and only that project', () => {
    const config = parseProjectConfig('providers:\n  codex:\n    bypass_permissions: true\n', 'drover.yaml');
    const merged = mergeProviders(config.providers);
    assert.equal(resolveLaunchCommand(merged, 'codex', 'fast').command, 'codex --dangerously-bypass-approvals-and-sandbox --no-daemon -c model_reasoning_effort=low');
    assert.equal(resolveLaunchCommand(mergeProviders({}), 'codex', 'fast').command, 'codex --no-daemon -c model_reasoning_effort=low');
  });
});

describe('finding the project config', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'drover-config-'));
    mkdirSync(join(root, 'a', 'b', 'c'), { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('walks up from the cwd to the nearest drover.yaml or .drover/config.yaml', () => {
    writeFileSync(join(root, 'drover.yaml'), 'providers:\n  claude:\n    profiles:\n      default: { model: haiku }\n');
    mkdirSync(join(root, 'a', '.drover'));
    writeFileSync(join(root, 'a', '.drover', 'config.yaml'), 'providers:\n  claude:\n    profiles:\n      default: { model: sonnet }\n');
    assert.equal(findProjectConfig(join(root, 'a', 'b', 'c')), join(root, 'a', '.drover', 'config.yaml'));
    assert.equal(findProjectConfig(root), join(root, 'drover.yaml'));
    assert.equal(resolveLaunchCommand(providersFor(join(root, 'a', 'b')), 'claude').fill.model, 'sonnet');
    assert.equal(loadProjectConfig(root)?.providers.claude?.profiles?.default?.model, 'haiku');
  });

  it('finds nothing outside a project and then uses the built-ins', () => {
    assert.equal(findProjectConfig(join(root, 'a')), undefined);
    assert.equal(loadProjectConfig(join(root, 'a')), undefined);
    assert.deepEqual(providersFor(join(root, 'a')), { ...BUILTIN_PROVIDERS });
  });

  it('refuses two config files in one directory', () => {
    writeFileSync(join(root, 'drover.yaml'), '');
    mkdirSync(join(root, '.drover'));
    writeFileSync(join(root, '.drover', 'config.yaml'), '');
    assert.throws(() => findProjectConfig(join(root, 'a')), /drover\.yaml and .*\.drover\/config\.yaml exist; keep one/);
  });

  it('names the file in a validation error', () => {
    writeFileSync(join(root, 'drover.yaml'), 'providers:\n  claude:\n    nope: 1\n');
    assert.throws(() => providersFor(root), (error) => error instanceof ArgumentError && error.message.startsWith(`${join(root, 'drover.yaml')}: providers.claude.nope: unknown key`));
  });
});
