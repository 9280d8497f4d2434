import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ArgumentError } from '../../../src/process/index.js';
import { geminiHookInstaller } from '../../../src/agents/hooks/gemini.js';
import { agentHookCommand } from '../../../src/agents/hooks/command.js';

const drover = ['/usr/bin/node', '/opt/drover app/dist/cli/drover.js'];
const path = '/home/me/.gemini/settings.json';

type Hook = { name?: string; type: string; command: string };
type Settings = { hooks: Record<string, { matcher?: string; hooks: Hook[] }[]>; [key: string]: unknown };

function planned(current: string | undefined): Settings {
  return JSON.parse(geminiHookInstaller.plan(current, drover, path)) as Settings;
}

/** The state each event's drover hook reports, as `Event(matcher)=state`. */
function reported(settings: Settings): string[] {
  return Object.entries(settings.hooks).flatMap(([event, definitions]) =>
    definitions.flatMap((definition) =>
      definition.hooks.flatMap((hook) => {
        const state = / agent hook (\w+) /.exec(hook.command)?.[1];
        return state === undefined ? [] : [`${event}${definition.matcher === undefined ? '' : `(${definition.matcher})`}=${state}`];
      }),
    ),
  );
}

describe('geminiHookInstaller', () => {
  it('edits the user settings.json under GEMINI_CLI_HOME, else HOME', () => {
    assert.equal(geminiHookInstaller.configPath({ GEMINI_CLI_HOME: '/cfg', HOME: '/home/me' }), '/cfg/.gemini/settings.json');
    assert.equal(geminiHookInstaller.configPath({ HOME: '/home/me' }), path);
  });

  it('reports each state from the events Gemini CLI 0.61 fires', () => {
    assert.deepEqual(reported(planned(undefined)), [
      'SessionStart=idle',
      'BeforeAgent=active',
      'Notification(ToolPermission)=waiting',
      'AfterTool=active',
      'AfterAgent=idle',
    ]);
    assert.deepEqual(geminiHookInstaller.reports, ['active', 'waiting', 'idle']);
    assert.ok(geminiHookInstaller.describe().includes('Notification (ToolPermission) → waiting'));
    assert.equal(geminiHookInstaller.describe().length, 5);
  });

  it('runs drover with the argv it was given, as a named command hook', () => {
    const [hook] = planned(undefined).hooks.AfterAgent![0]!.hooks;
    assert.deepEqual(hook, { name: 'drover agent state', type: 'command', command: agentHookCommand(drover, 'idle') });
    assert.match(hook!.command, /'\/opt\/drover app\/dist\/cli\/drover\.js' agent hook idle >\/dev\/null 2>&1 \|\| true # drover agent state$/);
  });

  it('keeps the rest of the file, replaces its own hooks, and leaves a file that has them as it was', () => {
    const current = `${JSON.stringify(
      {
        security: { auth: { selectedType: 'gemini-api-key' } },
        hooksConfig: { notifications: false },
        hooks: {
          BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: './check.sh' }] }],
          AfterAgent: [{ hooks: [{ type: 'command', command: `old drover hook # drover agent state` }] }],
        },
      },
      null,
      2,
    )}\n`;
    const once = geminiHookInstaller.plan(current, drover, path);
    const settings = JSON.parse(once) as Settings;
    assert.deepEqual(settings.security, { auth: { selectedType: 'gemini-api-key' } });
    assert.deepEqual(settings.hooksConfig, { notifications: false });
    assert.deepEqual(settings.hooks.BeforeTool, [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command: './check.sh' }] }]);
    assert.equal(settings.hooks.AfterAgent!.length, 1, 'the old drover hook is replaced, not kept beside the new one');
    assert.equal(settings.hooks.AfterAgent![0]!.hooks[0]!.command, agentHookCommand(drover, 'idle'));
    assert.equal(geminiHookInstaller.plan(once, drover, path), once);
  });

  it('refuses a file it cannot edit safely, naming it', () => {
    assert.throws(() => geminiHookInstaller.plan('{ "ui": ', drover, path), (error: unknown) => error instanceof ArgumentError && error.message.startsWith(`${path} is not valid JSON`));
    assert.throws(() => geminiHookInstaller.plan('[]', drover, path), ArgumentError);
    assert.throws(() => geminiHookInstaller.plan('{ "hooks": [] }', drover, path), /"hooks" is not an object/);
    assert.throws(() => geminiHookInstaller.plan('{ "hooks": { "AfterAgent": {} } }', drover, path), /hooks\.AfterAgent is not a list/);
  });
});
