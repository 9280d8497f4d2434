import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../../src/process/index.js';
import { claudeHookInstaller } from '../../../src/agents/hooks/claude.js';
import { agentHookCommand } from '../../../src/agents/hooks/command.js';

const drover = ['/usr/bin/node', '/opt/drover app/dist/cli/drover.js'];
const path = '/home/me/.claude/settings.json';

type Settings = { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]>; [key: string]: unknown };

function planned(current: string | undefined): Settings {
  return JSON.parse(claudeHookInstaller.plan(current, drover, path)) as Settings;
}

/** The state each event's drover hook reports, as `Event(matcher)=state`. */
function reported(settings: Settings): string[] {
  return Object.entries(settings.hooks).flatMap(([event, groups]) =>
    groups.flatMap((group) =>
      group.hooks.flatMap((hook) => {
        const state = / agent hook (\w+) /.exec(hook.command)?.[1];
        return state === undefined ? [] : [`${event}${group.matcher === undefined ? '' : `(${group.matcher})`}=${state}`];
      }),
    ),
  );
}

describe('claudeHookInstaller', () => {
  it('reads settings.json under CLAUDE_CONFIG_DIR, else ~/.claude', () => {
    assert.equal(claudeHookInstaller.configPath({ CLAUDE_CONFIG_DIR: '/cfg', HOME: '/home/me' }), '/cfg/settings.json');
    assert.equal(claudeHookInstaller.configPath({ HOME: '/home/me' }), path);
  });

  it('reports each state from the events Claude Code 2.1 fires', () => {
    assert.deepEqual(reported(planned(undefined)), [
      'UserPromptSubmit=active',
      'PreToolUse=active',
      'PermissionRequest=waiting',
      'PostToolUse=active',
      'Notification(permission_prompt|elicitation_dialog|agent_needs_input)=waiting',
      'Notification(idle_prompt)=idle',
      'Stop=idle',
    ]);
    assert.deepEqual(claudeHookInstaller.reports, ['active', 'waiting', 'idle']);
    assert.equal(claudeHookInstaller.describe().length, 7);
    assert.ok(claudeHookInstaller.describe().includes('PermissionRequest → waiting'));
  });

  it('runs drover with the argv it was given, quoted, silently', () => {
    const command = planned(undefined).hooks.Stop![0]!.hooks[0]!.command;
    assert.equal(command, agentHookCommand(drover, 'idle'));
    assert.match(command, /'\/opt\/drover app\/dist\/cli\/drover\.js' agent hook idle >\/dev\/null 2>&1 \|\| true # drover agent state$/);
  });

  it('keeps the rest of the file, replaces its own hooks, and leaves a file that has them as it was', () => {
    const current = `${JSON.stringify(
      {
        permissions: { defaultMode: 'default', ask: ['Bash'] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }],
          Stop: [{ hooks: [{ type: 'command', command: agentHookCommand(['/old/drover'], 'idle') }] }],
        },
      },
      null,
      4,
    )}\n`;
    const once = claudeHookInstaller.plan(current, drover, path);
    const settings = JSON.parse(once) as Settings;
    assert.deepEqual(settings.permissions, { defaultMode: 'default', ask: ['Bash'] });
    assert.equal(settings.hooks.PreToolUse![0]!.hooks[0]!.command, './check.sh', 'the user’s own hook stays, first');
    assert.equal(settings.hooks.Stop!.length, 1, 'the old drover hook was replaced, not added to');
    assert.ok(!once.includes('/old/drover'));
    assert.equal(claudeHookInstaller.plan(once, drover, path), once, 'applying it again changes nothing');
    const reformatted = `${JSON.stringify(settings)}\n`;
    assert.equal(claudeHookInstaller.plan(reformatted, drover, path), reformatted, 'a file that already has the hooks keeps its formatting');
  });

  it('creates the file from nothing or from a blank one', () => {
    assert.equal(claudeHookInstaller.plan(undefined, drover, path), claudeHookInstaller.plan('  \n', drover, path));
  });

  it('refuses a file it cannot edit safely, naming it', () => {
    const refused = (text: string, message: RegExp): void => {
      assert.throws(() => claudeHookInstaller.plan(text, drover, path), (error) => error instanceof ArgumentError && message.test(error.message));
    };
    refused('{ "model": ', /^\/home\/me\/\.claude\/settings\.json is not valid JSON/);
    refused('[]', /does not hold a JSON object/);
    refused('{ "hooks": [] }', /settings\.json: "hooks" is not an object/);
    refused('{ "hooks": { "Stop": {} } }', /settings\.json: hooks\.Stop is not a list/);
  });
});
