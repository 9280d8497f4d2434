import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ArgumentError } from '../../../src/process/index.js';
import { opencodeHookInstaller } from '../../../src/agents/hooks/opencode.js';
import { eventually } from '../../support/wait.js';

const drover = ['/usr/bin/node', '/opt/drover app/dist/cli/drover.js'];
const path = '/home/me/.config/opencode/plugins/drover-agent-state.js';

type BusEvent = { type: string; properties: Record<string, unknown> };
type Hooks = { event?: (input: { event: BusEvent }) => Promise<void> };
type PluginModule = { DroverAgentState: () => Promise<Hooks> };

/** Counts the processes started through child_process.spawn (which the plugin imports) until restored. */
function countSpawns(): { count: number; restore(): void } {
  const original = childProcess.spawn;
  const counter = {
    count: 0,
    restore(): void {
      childProcess.spawn = original;
      syncBuiltinESMExports();
    },
  };
  childProcess.spawn = ((...args: Parameters<typeof original>) => {
    counter.count += 1;
    return original(...args);
  }) as typeof original;
  syncBuiltinESMExports();
  return counter;
}

describe('opencodeHookInstaller', () => {
  it('writes into OPENCODE_CONFIG_DIR when set, else the XDG or ~/.config opencode directory', () => {
    assert.equal(opencodeHookInstaller.configPath({ HOME: '/home/me' }), path);
    assert.equal(opencodeHookInstaller.configPath({ HOME: '/home/me', XDG_CONFIG_HOME: '/xdg' }), '/xdg/opencode/plugins/drover-agent-state.js');
    assert.equal(opencodeHookInstaller.configPath({ HOME: '/home/me', OPENCODE_CONFIG_DIR: '/oc' }), '/oc/plugins/drover-agent-state.js');
    assert.deepEqual(opencodeHookInstaller.reports, ['active', 'waiting', 'idle']);
    assert.ok(opencodeHookInstaller.describe().some((line) => line.startsWith('permission.asked')));
  });

  it('writes the whole plugin, runs the drover argv it was given, and is idempotent', () => {
    const text = opencodeHookInstaller.plan(undefined, drover, path);
    assert.ok(text.includes(`const DROVER = ${JSON.stringify(drover)};`));
    assert.equal(opencodeHookInstaller.plan(text, drover, path), text);
    assert.equal(opencodeHookInstaller.plan('', drover, path), text);
    const moved = opencodeHookInstaller.plan(text, ['/usr/local/bin/drover'], path);
    assert.ok(moved.includes('const DROVER = ["/usr/local/bin/drover"];'));
    assert.ok(!moved.includes('/opt/drover app'));
  });

  it('refuses to replace a file drover did not write', () => {
    assert.throws(() => opencodeHookInstaller.plan('export const Mine = async () => ({});\n', drover, path), (error: unknown) => error instanceof ArgumentError && error.message.includes(path));
  });
});

describe('the opencode plugin', () => {
  let dir: string;
  let log: string;
  let paneBefore: string | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'drover-opencode-plugin-'));
    log = join(dir, 'states.log');
    paneBefore = process.env.TMUX_PANE;
  });
  afterEach(() => {
    if (paneBefore === undefined) delete process.env.TMUX_PANE;
    else process.env.TMUX_PANE = paneBefore;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Loads the planned plugin with a "drover" that appends the argv it gets to the log. */
  async function loadPlugin(): Promise<PluginModule> {
    const recorder = join(dir, 'recorder.mjs');
    writeFileSync(recorder, `import { appendFileSync } from 'node:fs';\nappendFileSync(${JSON.stringify(log)}, process.argv.slice(2).join(' ') + '\\n');\n`);
    writeFileSync(log, '');
    const plugin = join(dir, 'plugin.mjs');
    writeFileSync(plugin, opencodeHookInstaller.plan(undefined, [process.execPath, recorder], plugin));
    return (await import(pathToFileURL(plugin).href)) as PluginModule;
  }

  const status = (sessionID: string, type: string): BusEvent => ({ type: 'session.status', properties: { sessionID, status: { type } } });

  /**
   * The states reported for the events so far, which should be `expected`. The plugin reports one
   * state at a time, in order, so a final event that turns the agent active is reported last:
   * once it is in, every report before it is in too, and one too many would show (short of an
   * extra `active` right at the end, which the sentinel's own report could not be told from).
   */
  async function reportedStates(hooks: Hooks, expected: readonly string[]): Promise<string[]> {
    await hooks.event!({ event: status('ses_sentinel', 'busy') });
    // Each report starts a node process, one after another: on a loaded machine that is seconds each.
    const lines = (): string[] => readFileSync(log, 'utf8').split('\n').filter((line) => line !== '');
    const all = await eventually('the sentinel report', () => {
      const now = lines();
      return now.length > expected.length && now.at(-1) === 'agent hook active' ? now : undefined;
    }, 60_000);
    return all.slice(0, -1);
  }

  it('reports idle on load, active while any session is busy, waiting while a request is open, in order', async () => {
    process.env.TMUX_PANE = '%1';
    const hooks = await (await loadPlugin()).DroverAgentState();
    const events: BusEvent[] = [
      status('ses_main', 'busy'),
      { type: 'message.part.updated', properties: {} },
      { type: 'permission.asked', properties: { id: 'per_1', sessionID: 'ses_main' } },
      { type: 'permission.replied', properties: { sessionID: 'ses_main', requestID: 'per_1', reply: 'once' } },
      status('ses_subagent', 'busy'),
      status('ses_subagent', 'idle'),
      { type: 'question.asked', properties: { id: 'que_1', sessionID: 'ses_main' } },
      { type: 'question.rejected', properties: { sessionID: 'ses_main', requestID: 'que_1' } },
      status('ses_main', 'idle'),
    ];
    for (const event of events) await hooks.event!({ event });
    const expected = ['agent hook idle', 'agent hook active', 'agent hook waiting', 'agent hook active', 'agent hook waiting', 'agent hook active', 'agent hook idle'];
    assert.deepEqual(await reportedStates(hooks, expected), expected);
  });

  it('drops the open requests of a session that stops, as an interrupted turn leaves them', async () => {
    process.env.TMUX_PANE = '%1';
    const hooks = await (await loadPlugin()).DroverAgentState();
    for (const event of [status('ses_main', 'busy'), { type: 'permission.asked', properties: { id: 'per_1', sessionID: 'ses_main' } }, status('ses_main', 'idle')]) await hooks.event!({ event });
    const expected = ['agent hook idle', 'agent hook active', 'agent hook waiting', 'agent hook idle'];
    assert.deepEqual(await reportedStates(hooks, expected), expected);
  });

  it('does nothing outside tmux: no event hook, and nothing started at load', async () => {
    delete process.env.TMUX_PANE;
    const spawned = countSpawns();
    try {
      const hooks = await (await loadPlugin()).DroverAgentState();
      assert.equal(hooks.event, undefined);
      // A report at load would be started from a queued promise callback: let every one run.
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(spawned.count, 0, 'no drover agent hook was started');
    } finally {
      spawned.restore();
    }
    assert.equal(readFileSync(log, 'utf8'), '');
  });
});
