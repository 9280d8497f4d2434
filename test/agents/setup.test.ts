import assert from 'node:assert/strict';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ArgumentError } from '../../src/process/index.js';
import { CLAUDE_HOOK_EVENTS, agentHookCommand, applyAgentSetup, claudeSettingsPath, mergeClaudeHooks, planAgentSetup } from '../../src/agents/index.js';

const drover = ['/usr/bin/node', '/opt/drover app/dist/cli/drover.js'];

describe('agentHookCommand', () => {
  it('is silent outside tmux, quotes paths, and never fails', () => {
    assert.equal(
      agentHookCommand(drover, 'waiting'),
      `[ -n "$TMUX_PANE" ] || exit 0; /usr/bin/node '/opt/drover app/dist/cli/drover.js' agent hook waiting >/dev/null 2>&1 || true # drover agent state`,
    );
  });
});

describe('mergeClaudeHooks', () => {
  it('maps each Claude Code event to its state', () => {
    const merged = mergeClaudeHooks({}, drover) as { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]> };
    assert.deepEqual(Object.keys(merged.hooks), ['UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Notification', 'Stop']);
    assert.deepEqual(merged.hooks.Notification!.map((group) => group.matcher), ['permission_prompt|elicitation_dialog|agent_needs_input', 'idle_prompt']);
    assert.match(merged.hooks.Notification![0]!.hooks[0]!.command, / agent hook waiting /);
    assert.match(merged.hooks.Stop![0]!.hooks[0]!.command, / agent hook idle /);
    assert.match(merged.hooks.PreToolUse![0]!.hooks[0]!.command, / agent hook active /);
    assert.equal(CLAUDE_HOOK_EVENTS.length, 7);
  });

  it('keeps every other setting and hook, replaces its own, and is idempotent', () => {
    const settings = {
      model: 'opus',
      permissions: { allow: ['Bash(npm test)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }],
        Stop: [{ hooks: [{ type: 'command', command: agentHookCommand(['/old/drover'], 'idle') }] }],
      },
    };
    const once = mergeClaudeHooks(settings, drover);
    const twice = mergeClaudeHooks(once, drover);
    assert.deepEqual(twice, once);
    assert.equal(once.model, 'opus');
    assert.deepEqual(once.permissions, settings.permissions);
    const hooks = once.hooks as Record<string, { hooks: { command: string }[] }[]>;
    assert.equal(hooks.PreToolUse![0]!.hooks[0]!.command, './check.sh', 'the user’s own hook stays first');
    assert.equal(hooks.PreToolUse!.length, 2);
    assert.equal(hooks.Stop!.length, 1, 'the old drover hook was replaced, not duplicated');
    assert.ok(!JSON.stringify(once).includes('/old/drover'));
    assert.equal(settings.hooks.Stop[0]!.hooks[0]!.command.includes('/old/drover'), true, 'the input is not modified');
  });

  it('refuses hooks it cannot read', () => {
    assert.throws(() => mergeClaudeHooks({ hooks: [] }, drover, 's.json'), /s\.json: "hooks" is not an object/);
    assert.throws(() => mergeClaudeHooks({ hooks: { Stop: {} } }, drover, 's.json'), /s\.json: hooks\.Stop is not a list/);
  });
});

describe('planning and applying the setup', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-claude-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the settings file under CLAUDE_CONFIG_DIR or ~/.claude', () => {
    assert.equal(claudeSettingsPath({ CLAUDE_CONFIG_DIR: '/cfg', HOME: '/home/me' }), '/cfg/settings.json');
    assert.equal(claudeSettingsPath({ HOME: '/home/me' }), '/home/me/.claude/settings.json');
  });

  it('creates the file, then finds nothing left to change', () => {
    const path = join(dir, '.claude', 'settings.json');
    const plan = planAgentSetup(drover, { path });
    assert.equal(plan.changed, true);
    assert.equal(existsSync(path), false, 'planning writes nothing');
    applyAgentSetup(plan);
    assert.equal(readFileSync(path, 'utf8'), plan.text);
    assert.equal(planAgentSetup(drover, { path }).changed, false);
  });

  it('leaves a file that is not JSON alone, naming it', () => {
    const path = join(dir, 'settings.json');
    writeFileSync(path, '{ "model": ');
    assert.throws(() => planAgentSetup(drover, { path }), (error) => error instanceof ArgumentError && error.message.startsWith(`${path} is not valid JSON`));
    assert.equal(readFileSync(path, 'utf8'), '{ "model": ');
  });
});

describe('editing an agent configuration file safely', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-setup-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Plans and applies for `agent` on the file at `path`, returning the plan. */
  const setUp = (agent: 'claude' | 'gemini' | 'codex' | 'opencode', path: string) => {
    const plan = planAgentSetup(drover, { agent, path });
    applyAgentSetup(plan);
    return plan;
  };

  for (const agent of ['claude', 'gemini', 'codex', 'opencode'] as const) {
    const name = { claude: 'settings.json', gemini: 'settings.json', codex: 'config.toml', opencode: 'drover-agent-state.js' }[agent];
    const original = { claude: '{ "model": "opus" }\n', gemini: '{ "theme": "dark" }\n', codex: 'model = "o3"\n', opencode: '' }[agent];

    it(`${agent}: edits through a symlink, keeps the file's mode and leaves a backup beside it`, () => {
      mkdirSync(join(dir, 'dotfiles'));
      mkdirSync(join(dir, 'config'));
      const real = join(dir, 'dotfiles', name);
      const link = join(dir, 'config', name);
      writeFileSync(real, original);
      chmodSync(real, 0o640);
      symlinkSync(real, link);
      const plan = setUp(agent, link);
      assert.equal(lstatSync(link).isSymbolicLink(), true, 'the link is still a link');
      assert.equal(readFileSync(real, 'utf8'), plan.text, 'the file it points to was edited');
      assert.equal(statSync(real).mode & 0o777, 0o640, 'the mode is kept');
      assert.equal(readFileSync(`${real}.drover-backup`, 'utf8'), original, 'the backup holds the file as it was');
      assert.equal(statSync(`${real}.drover-backup`).mode & 0o777, 0o640);
    });
  }

  it('preserves every number of a JSON settings file exactly', () => {
    const path = join(dir, 'settings.json');
    const text = '{"big": 12345678901234567890, "float": 1.0, "exp": 1e3, "neg": -0.50, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": 9007199254740993}]}]}}';
    writeFileSync(path, text);
    for (const agent of ['claude', 'gemini'] as const) {
      const written = setUp(agent, path).text;
      for (const literal of ['12345678901234567890', '1.0', '1e3', '-0.50', '9007199254740993']) assert.ok(written.includes(literal), `${agent} kept ${literal}: ${written}`);
      assert.equal(planAgentSetup(drover, { agent, path }).changed, false, 'and a second run changes nothing');
    }
  });

  it('preserves big integers in a TOML config', () => {
    const path = join(dir, 'config.toml');
    writeFileSync(path, 'max_tokens = 9007199254740993\nratio = 1.50\n');
    const written = setUp('codex', path).text;
    assert.ok(written.startsWith('max_tokens = 9007199254740993\nratio = 1.50\n'), written);
  });

  it('refuses a JSON settings file with a duplicate key, naming it, and changes nothing', () => {
    const path = join(dir, 'settings.json');
    const text = '{ "model": "opus", "hooks": {}, "model": "sonnet" }';
    writeFileSync(path, text);
    for (const agent of ['claude', 'gemini'] as const) {
      assert.throws(
        () => planAgentSetup(drover, { agent, path }),
        (error: unknown) => error instanceof ArgumentError && error.message.includes(path) && /duplicate key "model"/.test(error.message),
      );
    }
    assert.equal(readFileSync(path, 'utf8'), text);
    assert.equal(existsSync(`${path}.drover-backup`), false);
  });
});
