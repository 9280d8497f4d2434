import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'smol-toml';
import { CODEX_HOOK_EVENTS, codexConfigPath, codexHookInstaller, codexHookTrustHash, type CodexHandler } from '../../../src/agents/hooks/codex.js';
import { agentHookCommand } from '../../../src/agents/index.js';
import { ArgumentError } from '../../../src/process/index.js';

const drover = ['/usr/bin/node', '/opt/drover app/dist/cli/drover.js'];
const path = '/home/me/.codex/config.toml';

type Group = { matcher?: string; hooks: CodexHandler[] };
interface Parsed {
  model?: string;
  hooks: Record<string, Group[]> & { state: Record<string, { trusted_hash: string; enabled?: boolean }> };
}

/** Parsed TOML as plain objects (smol-toml's tables have no prototype). */
function toml(text: string): unknown {
  return JSON.parse(JSON.stringify(parse(text)));
}

function planned(current: string | undefined, argv: readonly string[] = drover): { text: string; parsed: Parsed } {
  const text = codexHookInstaller.plan(current, argv, path);
  return { text, parsed: toml(text) as Parsed };
}

describe('codexHookTrustHash', () => {
  // Codex 0.171.0 accepted trust entries hashed this way: with them its hooks ran in the test
  // bed. The values below pin that canonical form for an install at a neutral path.
  const installedDrover = ['/usr/bin/node', '/opt/drover/dist/cli/drover.js'];
  for (const [label, state, hash] of [
    ['user_prompt_submit', 'active', 'sha256:275a95824c7141e42739bedd97c6c4844a07d765c1d038dd9d38226e3356e0a8'],
    ['permission_request', 'waiting', 'sha256:5b4a89de56d444920c9b7ce7a6b60dad3a31bf774d9eaf9201380e02ee396f32'],
    ['stop', 'idle', 'sha256:b343e06001b954ad55e59058cbdca339c67a76812e33a0dc8351b8c24f6ef0b2'],
  ] as const) {
    it(`keeps the trust hash of the ${label} handler in Codex's canonical form`, () => {
      assert.equal(codexHookTrustHash(label, { type: 'command', command: agentHookCommand(installedDrover, state), timeout: 10 }), hash);
    });
  }

  it('changes with the command, the event and the timeout', () => {
    const handler: CodexHandler = { type: 'command', command: 'true', timeout: 10 };
    const hashes = new Set([
      codexHookTrustHash('stop', handler),
      codexHookTrustHash('stop', { ...handler, command: 'false' }),
      codexHookTrustHash('session_start', handler),
      codexHookTrustHash('stop', { ...handler, timeout: 11 }),
    ]);
    assert.equal(hashes.size, 4);
  });
});

describe('codexHookInstaller.plan', () => {
  it('writes each event with its state and a trust entry keyed by this file, the event and the group', () => {
    const { parsed } = planned(undefined);
    for (const { event, label, state } of CODEX_HOOK_EVENTS) {
      const [group] = parsed.hooks[event]!;
      assert.equal(group!.matcher, undefined);
      assert.deepEqual(group!.hooks, [{ type: 'command', command: agentHookCommand(drover, state), timeout: 10 }]);
      assert.equal(parsed.hooks.state[`${path}:${label}:0:0`]!.trusted_hash, codexHookTrustHash(label, group!.hooks[0]!));
    }
    assert.deepEqual(
      CODEX_HOOK_EVENTS.map(({ event, state }) => `${event}:${state}`),
      ['UserPromptSubmit:active', 'PermissionRequest:waiting', 'PostToolUse:active', 'Stop:idle'],
    );
  });

  it('keeps the rest of the file byte for byte, comments included, and puts its block last', () => {
    const current = '# my codex\nmodel = "o3" # the good one\n\n[tui]\nnotifications = true\n';
    const { text, parsed } = planned(current);
    assert.ok(text.startsWith(current), 'the user text comes first, unchanged');
    assert.equal(parsed.model, 'o3');
    assert.deepEqual((toml(text) as { tui: unknown }).tui, { notifications: true });
  });

  it('counts the user’s own groups of an event, so its trust key names the right group', () => {
    const current = [
      '[[hooks.Stop]]',
      '[[hooks.Stop.hooks]]',
      'type = "command"',
      'command = "./notify.sh"',
      '',
      '[hooks.state."/home/me/.codex/config.toml:stop:0:0"]',
      'trusted_hash = "sha256:users-own"',
      '',
    ].join('\n');
    const { parsed } = planned(current);
    assert.equal(parsed.hooks.Stop!.length, 2);
    assert.equal(parsed.hooks.Stop![0]!.hooks[0]!.command, './notify.sh');
    assert.equal(parsed.hooks.state[`${path}:stop:0:0`]!.trusted_hash, 'sha256:users-own');
    assert.equal(parsed.hooks.state[`${path}:stop:1:0`]!.trusted_hash, codexHookTrustHash('stop', parsed.hooks.Stop![1]!.hooks[0]!));
    assert.ok(parsed.hooks.state[`${path}:user_prompt_submit:0:0`] !== undefined);
  });

  it('replaces its own block, is idempotent, and follows settings written after it', () => {
    const once = planned('model = "o3"\n', ['/old/drover']).text;
    const later = `${once}\n[notice]\nhide_rate_limit_model_nudge = true\n`;
    const twice = planned(later).text;
    assert.equal(planned(twice).text, twice);
    assert.ok(!twice.includes('/old/drover'));
    assert.equal(twice.split('# >>> drover agent state').length, 2, 'one block');
    assert.deepEqual((toml(twice) as { notice: unknown }).notice, { hide_rate_limit_model_nudge: true });
    assert.ok(twice.trimEnd().endsWith('# <<< drover agent state'));
  });

  it('refuses a file it cannot edit safely, naming the file', () => {
    const refuses = (current: string, reason: RegExp): void => {
      assert.throws(() => codexHookInstaller.plan(current, drover, path), (error: unknown) => error instanceof ArgumentError && error.message.startsWith(path) && reason.test(error.message));
    };
    refuses('model = \n', /not valid TOML/);
    refuses('hooks = "none"\n', /"hooks" is not a table/);
    refuses('[hooks]\nStop = { command = "x" }\n', /hooks\.Stop is not a list/);
    refuses('[hooks.state]\n"x" = 1\n[hooks]\nstate = 2\n', /not valid TOML/);
    const block = planned('').text;
    refuses(block.replace('# <<< drover agent state\n', ''), /no "# <<< drover agent state" line/);
    refuses(block.replace('# <<< drover agent state', '[hooks.state."/elsewhere:stop:0:0"]\nenabled = false\n# <<< drover agent state'), /settings drover did not write/);
  });
});

describe('codexConfigPath and describe', () => {
  it('finds config.toml under CODEX_HOME (its symlinks resolved, as Codex does) or ~/.codex', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drover-codex-home-'));
    try {
      mkdirSync(join(dir, 'real'));
      symlinkSync(join(dir, 'real'), join(dir, 'link'));
      assert.equal(codexConfigPath({ CODEX_HOME: join(dir, 'link'), HOME: '/home/me' }), join(dir, 'real', 'config.toml'));
      assert.equal(codexConfigPath({ CODEX_HOME: join(dir, 'missing'), HOME: '/home/me' }), join(dir, 'missing', 'config.toml'));
      assert.equal(codexConfigPath({ HOME: '/home/me' }), '/home/me/.codex/config.toml');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('describes one line per event and reports all three states', () => {
    assert.deepEqual(codexHookInstaller.describe(), ['UserPromptSubmit → active', 'PermissionRequest → waiting', 'PostToolUse → active', 'Stop → idle']);
    assert.deepEqual([...codexHookInstaller.reports].sort(), ['active', 'idle', 'waiting']);
  });
});
