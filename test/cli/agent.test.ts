import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { before, describe, it } from 'node:test';
import { runCli, type CliIO } from '../../src/cli/index.js';
import { AGENT_STATE_OPTION, LEGACY_AGENT_STATE_OPTION } from '../../src/agents/index.js';
import { run } from '../../src/process/index.js';
import type { Pane } from '../../src/tmux/index.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { useTestServer } from '../support/tmux.js';

type Settings = { hooks: Record<string, { matcher?: string; hooks: { type: string; command: string }[] }[]>; [key: string]: unknown };

function readSettings(path: string): Settings {
  return JSON.parse(readFileSync(path, 'utf8')) as Settings;
}

/** The hook command setup installed for one event. */
function installedCommand(settings: Settings, event: string): string {
  return settings.hooks[event]!.at(-1)!.hooks[0]!.command;
}

describe('drover agent hook', () => {
  const sandbox = cliSandbox();
  const live = useTestServer();
  let target: Pane;

  before(async () => {
    target = (await live.server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
  });

  async function option(name: string): Promise<string | undefined> {
    return (await target.options().getOrUndefined(name, { inherited: false }))?.as('string');
  }

  it('records the state under both option names for the pane in $TMUX_PANE', async () => {
    const before = Math.floor(Date.now() / 1000);
    const result = await sandbox.drover(['agent', 'hook', 'waiting'], { env: { TMUX: `${live.server.endpoint.socketPath},1,0`, TMUX_PANE: target.id } });
    assert.equal(result.exitCode, 0, result.stderrText());
    assert.equal(result.text() + result.stderrText(), '');
    const value = await option(AGENT_STATE_OPTION);
    assert.match(value ?? '', /^waiting:\d+$/);
    assert.ok(Number(value!.split(':')[1]) >= before);
    assert.equal(await option(LEGACY_AGENT_STATE_OPTION), value);
  });

  it('always exits 0: silent outside tmux, a note on stderr when the pane is gone; only an unknown state is refused', async () => {
    const [outside, gone, unknown] = await Promise.all([
      sandbox.drover(['agent', 'hook', 'idle']),
      sandbox.drover(['agent', 'hook', 'idle'], { env: { TMUX: `${live.server.endpoint.socketPath},1,0`, TMUX_PANE: '%999' } }),
      sandbox.drover(['agent', 'hook', 'thinking']),
    ]);
    assert.deepEqual([outside.exitCode, outside.text(), outside.stderrText()], [0, '', '']);
    assert.equal(gone.exitCode, 0);
    assert.match(gone.stderrText(), /^drover: warning: agent state not recorded: .*%999/);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderrText(), /unknown agent state "thinking"; use active, waiting, idle/);
  });
});

describe('drover agent setup', () => {
  const sandbox = cliSandbox();

  it('refuses to write without --yes when stdin is not a terminal, and --dry-run writes nothing', async () => {
    const home = join(sandbox.dir, 'refuse');
    mkdirSync(home);
    const path = join(home, '.claude', 'settings.json');
    const [refused, dryRun, dryJson, both] = await Promise.all([
      sandbox.drover(['agent', 'setup'], { env: { HOME: home } }),
      sandbox.drover(['agent', 'setup', '--dry-run'], { env: { HOME: home } }),
      sandbox.drover(['agent', 'setup', '--dry-run', '--json'], { env: { HOME: home } }),
      sandbox.drover(['agent', 'setup', '--yes', '--dry-run'], { env: { HOME: home } }),
    ]);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.stderrText(), /not changing .*settings\.json without confirmation: stdin is not a terminal; pass --yes/);
    assert.equal(dryRun.exitCode, 0, dryRun.stderrText());
    assert.match(dryRun.text(), new RegExp(`^would write ${path}\\n`));
    assert.ok(dryRun.text().includes(`each runs: ${process.execPath} ${CLI_PATH} agent hook <state>\n`), dryRun.text());
    assert.match(dryRun.text(), /\n {2}Notification \(permission_prompt\|elicitation_dialog\|agent_needs_input\) → waiting\n/);
    const planned = JSON.parse(dryJson.text()) as { agent: string; path: string; changed: boolean; written: boolean; dry_run: boolean; hooks: string[]; text: string };
    assert.deepEqual([planned.agent, planned.path, planned.changed, planned.written, planned.dry_run], ['claude', path, true, false, true]);
    assert.deepEqual(planned.hooks, [
      'UserPromptSubmit → active',
      'PreToolUse → active',
      'PermissionRequest → waiting',
      'PostToolUse → active',
      'Notification (permission_prompt|elicitation_dialog|agent_needs_input) → waiting',
      'Notification (idle_prompt) → idle',
      'Stop → idle',
    ]);
    assert.deepEqual(Object.keys((JSON.parse(planned.text) as Settings).hooks), ['UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Notification', 'Stop']);
    assert.equal(both.exitCode, 2);
    assert.equal(existsSync(path), false);
  });

  it('installs each agent’s hooks where that agent reads them, and refuses an agent it does not know', async () => {
    const home = join(sandbox.dir, 'each');
    mkdirSync(home);
    const setups = await Promise.all(
      ['codex', 'gemini', 'opencode'].map((agent) => sandbox.drover(['agent', 'setup', '--agent', agent, '--yes', '--json'], { env: { HOME: home } })),
    );
    const written = setups.map((result) => JSON.parse(result.text()) as { agent: string; path: string; written: boolean });
    assert.deepEqual(
      written.map((plan) => [plan.agent, plan.path, plan.written]),
      [
        ['codex', join(home, '.codex', 'config.toml'), true],
        ['gemini', join(home, '.gemini', 'settings.json'), true],
        ['opencode', join(home, '.config', 'opencode', 'plugins', 'drover-agent-state.js'), true],
      ],
    );
    for (const plan of written) assert.match(readFileSync(plan.path, 'utf8'), /agent.{0,4}hook/, plan.path);
    const unknown = await sandbox.drover(['agent', 'setup', '--agent', 'aider', '--yes'], { env: { HOME: home } });
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.stderrText(), /aider/);
  });

  it('merges the hooks with --yes keeping every other setting, then finds nothing to change', async () => {
    const config = join(sandbox.dir, 'claude-config');
    mkdirSync(config);
    const path = join(config, 'settings.json');
    const own = { matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] };
    writeFileSync(path, JSON.stringify({ model: 'opus', permissions: { allow: ['Bash(npm test)'] }, hooks: { PreToolUse: [own] } }));
    const env = { CLAUDE_CONFIG_DIR: config };

    const first = await sandbox.drover(['agent', 'setup', '--yes'], { env });
    assert.equal(first.exitCode, 0, first.stderrText());
    assert.match(first.text(), /^installed drover's agent hooks\nClaude Code settings: .*claude-config\/settings\.json\n/);
    const settings = readSettings(path);
    assert.equal(settings.model, 'opus');
    assert.deepEqual(settings.permissions, { allow: ['Bash(npm test)'] });
    assert.deepEqual(settings.hooks.PreToolUse![0], own, 'the user’s own hook is kept, first');
    assert.equal(
      installedCommand(settings, 'Stop'),
      `[ -n "$TMUX_PANE" ] || exit 0; ${process.execPath} ${CLI_PATH} agent hook idle >/dev/null 2>&1 || true # drover agent state`,
    );
    const written = readFileSync(path, 'utf8');

    const again = await sandbox.drover(['agent', 'setup', '--yes', '--json'], { env });
    const document = JSON.parse(again.text()) as { changed: boolean; written: boolean };
    assert.deepEqual([document.changed, document.written], [false, false]);
    assert.equal(readFileSync(path, 'utf8'), written);
    const plain = await sandbox.drover(['agent', 'setup'], { env });
    assert.equal(plain.exitCode, 0, 'nothing to write needs no confirmation');
    assert.equal(plain.text(), `${path} already has drover's agent hooks; nothing to change\n`);
  });

  describe('the installed hook command', () => {
    const live = useTestServer();

    it('records the state through this drover when Claude Code runs it in a pane, and does nothing outside one', async () => {
      const home = join(sandbox.dir, 'hooked');
      mkdirSync(home);
      const setup = await sandbox.drover(['agent', 'setup', '--yes'], { env: { HOME: home } });
      assert.equal(setup.exitCode, 0, setup.stderrText());
      const command = installedCommand(readSettings(join(home, '.claude', 'settings.json')), 'UserPromptSubmit');
      const pane = (await live.server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
      // Claude Code runs a hook command with /bin/sh, in the agent's environment.
      const env = { ...sandbox.env, TMUX: `${live.server.endpoint.socketPath},1,0`, TMUX_PANE: pane.id };
      const inPane = await run(['/bin/sh', '-c', command], { env, timeoutMs: 20_000 });
      assert.equal(inPane.exitCode, 0);
      assert.match((await pane.options().get(AGENT_STATE_OPTION, { inherited: false })).as('string'), /^active:\d+$/);
      const outside = await run(['/bin/sh', '-c', command], { env: sandbox.env, timeoutMs: 20_000 });
      assert.deepEqual([outside.exitCode, outside.text(), outside.stderrText()], [0, '', '']);
    });
  });

  describe('at a terminal', () => {
    async function answer(reply: string, home: string, args: readonly string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
      const stdout = new PassThrough();
      const stderr = new PassThrough();
      const chunks = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
      stdout.on('data', (chunk: Buffer) => chunks.stdout.push(chunk));
      stderr.on('data', (chunk: Buffer) => chunks.stderr.push(chunk));
      const stdin = new PassThrough();
      stdin.end(reply);
      const io: CliIO = { stdin, stdout, stderr, env: { ...sandbox.env, HOME: home }, cwd: home, stdinIsTTY: true, stderrTerminal: { columns: 80 }, signal: new AbortController().signal };
      const code = await runCli(['agent', 'setup', ...args], io);
      return { code, stdout: Buffer.concat(chunks.stdout).toString(), stderr: Buffer.concat(chunks.stderr).toString() };
    }

    it('shows the change and writes only after a yes', async () => {
      const home = join(sandbox.dir, 'tty');
      mkdirSync(home);
      const path = join(home, '.claude', 'settings.json');
      const declined = await answer('n\n', home);
      assert.equal(declined.code, 1);
      assert.match(declined.stderr, /hooks \(agent event → state\):\n {2}UserPromptSubmit → active\n[\s\S]*Write these hooks to .*settings\.json\? \[y\/N\] drover: error: left .* unchanged\n$/);
      assert.equal(existsSync(path), false);
      const accepted = await answer('y\n', home);
      assert.equal(accepted.code, 0, accepted.stderr);
      assert.match(accepted.stdout, /^installed drover's agent hooks\n/);
      assert.deepEqual(Object.keys(readSettings(path).hooks), ['UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Notification', 'Stop']);
    });

    it('installs several agents after one yes, each noted on stderr as it is done, and with --json notes nothing', async () => {
      const home = join(sandbox.dir, 'several');
      mkdirSync(home);
      const shown = await answer('y\n', home, ['--agent', 'claude', 'codex']);
      assert.equal(shown.code, 0, shown.stderr);
      assert.equal(shown.stderr.match(/Write these hooks/g)?.length, 1, shown.stderr);
      assert.ok(shown.stderr.endsWith(`claude: hooks installed in ${join(home, '.claude', 'settings.json')}\ncodex: hooks installed in ${join(home, '.codex', 'config.toml')}\n`), shown.stderr);
      const quiet = await answer('', home, ['--agent', 'gemini', 'opencode', '--yes', '--json']);
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.equal(quiet.stderr, '');
      const documents = (JSON.parse(quiet.stdout) as { agents: { agent: string; written: boolean }[] }).agents;
      assert.deepEqual(
        documents.map((document) => [document.agent, document.written]),
        [
          ['gemini', true],
          ['opencode', true],
        ],
      );
    });
  });
});
