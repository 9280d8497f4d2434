import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Server } from '../../src/tmux/index.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

const READONLY = ['capture', 'get_environment', 'get_option', 'list_buffers', 'pane_map', 'questions', 'read_buffer', 'search_panes', 'snapshot', 'wait_for_text', 'workspace_plan'];
const MUTATING = ['deliver', 'ready', 'workspace_load', 'enter_copy_mode', 'exit_copy_mode', 'move_window', 'new_session', 'new_window', 'rename', 'select_layout', 'send_keys', 'send_text', 'set_environment', 'set_option', 'split_pane', 'write_buffer'];
const DESTRUCTIVE = ['delete_buffer', 'kill_pane', 'kill_session', 'kill_window', 'pipe_pane', 'respawn_pane'];

type Structured = Record<string, unknown>;

async function call(session: McpSession, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await session.client.callTool({ name, arguments: args })) as CallToolResult;
}

function ok(result: CallToolResult): Structured {
  assert.notEqual(result.isError, true, JSON.stringify(result.content));
  return result.structuredContent as Structured;
}

function failure(result: CallToolResult): string {
  assert.equal(result.isError, true, `expected an error, got ${JSON.stringify(result.structuredContent)}`);
  return (result.content as { text: string }[]).map((c) => c.text).join('\n');
}

describe('drover mcp', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let socket: string[];
  const sessions: McpSession[] = [];

  async function open(...args: string[]): Promise<McpSession> {
    const session = await connectMcp([...socket, ...args], sandbox.env);
    sessions.push(session);
    return session;
  }

  before(async () => {
    server = await startTestServer();
    socket = ['-S', server.endpoint.socketPath];
  });

  after(async () => {
    for (const session of sessions) await session.close().catch(() => undefined);
    await server.close();
  });

  it('lists only the tools the policy allows', async () => {
    const names = async (...args: string[]): Promise<string[]> => (await (await open(...args)).client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(await names(), READONLY);
    assert.deepEqual(await names('--tier', 'mutating'), [...READONLY, ...MUTATING].sort());
    assert.deepEqual(await names('--tier', 'destructive'), [...READONLY, ...MUTATING, ...DESTRUCTIVE].sort());
    assert.deepEqual(await names('--enable-tool', 'kill_pane'), [...READONLY, 'kill_pane'].sort());
    const tools = (await (await open('--tier', 'destructive')).client.listTools()).tools;
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
    }
    assert.equal(tools.find((t) => t.name === 'kill_pane')!.annotations?.destructiveHint, true);
    assert.equal(tools.find((t) => t.name === 'snapshot')!.annotations?.readOnlyHint, true);
  });

  it('fails at start on unknown tools or tiers, naming the valid ones', async () => {
    const tool = await sandbox.drover(['mcp', ...socket, '--enable-tool', 'format_disk']);
    assert.equal(tool.exitCode, 2);
    assert.match(tool.stderrText(), /unknown tool "format_disk"; tools: .*kill_pane/);
    assert.equal(tool.stdout.length, 0);
    const tier = await sandbox.drover(['mcp', ...socket, '--tier', 'root']);
    assert.equal(tier.exitCode, 2);
    assert.match(tier.stderrText(), /tiers: readonly, mutating, destructive/);
    assert.equal((await sandbox.drover(['mcp', '--help'])).exitCode, 0);
  });

  it('refuses hidden tools and leaves the server untouched', async () => {
    const session = await open();
    const before = (await server.snapshot()).panes.size;
    const refused = await call(session, 'new_session', { name: 'should-not-exist' });
    assert.match(failure(refused), /not found|disabled/i);
    assert.equal((await server.snapshot()).panes.size, before);
  });

  it('rejects bad arguments before touching tmux', async () => {
    const session = await open('--tier', 'destructive');
    const target = await server.newSession({ name: 'schema', command: ['cat'] });
    const pane = (await target.listPanes())[0]!;
    // The pane starts as env, which execs cat a moment later; compare once it is cat for good.
    await eventually('the pane to run cat', async () => (await pane.display('#{pane_current_command}')).toString().trim() === 'cat');
    const before = JSON.stringify((await server.snapshot()).toJSON().panes);
    for (const [name, args] of [
      ['send_text', { pane_id: 'not-a-pane', text: 'x' }],
      ['send_text', { pane_id: pane.id }],
      ['kill_pane', { pane_id: 7 }],
      ['split_pane', { pane_id: pane.id, direction: 'diagonal' }],
      ['new_session', { name: 'x', surprise: true, cwd: '' }],
    ] as const) {
      assert.match(failure(await call(session, name, args)), /invalid|expected|validation/i, name);
    }
    assert.equal(JSON.stringify((await server.snapshot()).toJSON().panes), before);
    assert.equal(await pane.exists(), true);
  });

  it('creates, drives, reads and removes tmux objects', async () => {
    const session = await open('--tier', 'destructive');
    const created = ok(await call(session, 'new_session', { name: 'mcp-drive', command: ['cat'] })) as { session_id: string; window_id: string; pane_id: string };
    const window = ok(await call(session, 'new_window', { session_id: created.session_id, name: 'second' })) as { window_id: string; pane_id: string };
    const split = ok(await call(session, 'split_pane', { pane_id: window.pane_id, direction: 'vertical' })) as { pane_id: string };
    ok(await call(session, 'select_layout', { window_id: window.window_id, layout: 'even-vertical' }));
    ok(await call(session, 'rename', { target_id: window.window_id, name: 'renamed' }));
    const found = ok(await call(session, 'search_panes', { criteria: { some: { relation: 'window', where: { field: 'window_name', op: 'eq', value: 'renamed' } } } })) as { panes: { pane_id: string }[] };
    assert.deepEqual(found.panes.map((p) => p.pane_id).sort(), [window.pane_id, split.pane_id].sort());
    const snapshot = ok(await call(session, 'snapshot')) as { sessions: { session_name: string }[] };
    assert.ok(snapshot.sessions.some((s) => s.session_name === 'mcp-drive'));

    const sent = ok(await call(session, 'send_text', { pane_id: created.pane_id, text: 'hello from mcp', enter: true }));
    assert.equal(sent.delivery, 'observed');
    const first = await eventually('the pane to show it', async () => {
      const capture = ok(await call(session, 'capture', { pane_id: created.pane_id })) as { content: string; cursor: string };
      return capture.content.split('\n').filter((l) => l === 'hello from mcp').length === 2 ? capture : undefined;
    });
    ok(await call(session, 'send_keys', { pane_id: created.pane_id, keys: ['n', 'e', 'w', 'Enter'] }));
    // Every capture keeps a cursor and only the newest 16 survive, so polling through capture
    // could evict `first`: wait on tmux itself until cat has repeated the line, then read once.
    await eventually('cat to repeat the keys', async () => (await server.pane(created.pane_id).capture()).toString().split('\n').filter((l) => l === 'new').length === 2);
    const fresh = ok(await call(session, 'capture', { pane_id: created.pane_id, since: first.cursor })) as { content: string; since_cursor: boolean };
    assert.match(fresh.content, /new/);
    assert.equal(fresh.since_cursor, true);
    assert.doesNotMatch(fresh.content, /hello from mcp/);
    assert.match(failure(await call(session, 'capture', { pane_id: created.pane_id, since: 'c_unknown' })), /unknown or expired/);

    ok(await call(session, 'set_option', { scope: created.pane_id, name: '@drover_mcp', value: '' }));
    assert.deepEqual(ok(await call(session, 'get_option', { scope: created.pane_id, name: '@drover_mcp' })), { name: '@drover_mcp', present: true, value: '' });
    ok(await call(session, 'set_option', { scope: created.pane_id, name: '@drover_mcp', value: null }));
    assert.equal(ok(await call(session, 'get_option', { scope: created.pane_id, name: '@drover_mcp' })).present, false);
    ok(await call(session, 'set_environment', { session_id: created.session_id, name: 'DROVER_MCP', value: 'v' }));
    assert.equal((ok(await call(session, 'get_environment', { session_id: created.session_id })) as { variables: Record<string, string> }).variables.DROVER_MCP, 'v');
    ok(await call(session, 'write_buffer', { name: 'mcp-buf', base64: Buffer.from([0, 255, 10]).toString('base64') }));
    assert.equal(ok(await call(session, 'read_buffer', { name: 'mcp-buf' })).base64, Buffer.from([0, 255, 10]).toString('base64'));
    assert.ok((ok(await call(session, 'list_buffers')) as { buffers: { name: string }[] }).buffers.some((b) => b.name === 'mcp-buf'));
    ok(await call(session, 'delete_buffer', { name: 'mcp-buf' }));

    ok(await call(session, 'kill_pane', { pane_id: split.pane_id }));
    assert.match(failure(await call(session, 'kill_pane', { pane_id: split.pane_id })), /not found/);
    ok(await call(session, 'kill_window', { window_id: window.window_id }));
    ok(await call(session, 'kill_session', { session_id: created.session_id }));
    assert.equal(await server.session(created.session_id).exists(), false);
  });

  it('refuses to type into or kill its own pane unless forced', async () => {
    const target = await server.newSession({ name: 'self', command: ['cat'] });
    const pane = (await target.listPanes())[0]!;
    const session = await connectMcp([...socket, '--tier', 'destructive'], { ...sandbox.env, TMUX: `${server.endpoint.socketPath},${server.ownedRecord!.pid},0`, TMUX_PANE: pane.id });
    sessions.push(session);
    assert.match(failure(await call(session, 'send_text', { pane_id: pane.id, text: 'x' })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'kill_session', { session_id: target.id })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'kill_pane', { pane_id: pane.id })), /force/);
    ok(await call(session, 'send_text', { pane_id: pane.id, text: 'forced', force: true }));
    ok(await call(session, 'kill_pane', { pane_id: pane.id, force: true }));
  });

  it('knows its own pane behind zero-padded ids and behind another path to its server', async () => {
    const target = await server.newSession({ name: 'self-padded', command: ['cat'] });
    const pane = (await target.listPanes())[0]!;
    const window = (await target.listWindows())[0]!;
    const link = join(sandbox.dir, 'link-to-server.sock');
    symlinkSync(server.endpoint.socketPath, link);
    const pad = (id: string): string => `${id[0]}000${id.slice(1)}`;
    const session = await connectMcp(['-S', link, '--tier', 'destructive'], { ...sandbox.env, TMUX: `${server.endpoint.socketPath},${server.ownedRecord!.pid},0`, TMUX_PANE: pane.id });
    sessions.push(session);
    assert.match(failure(await call(session, 'send_text', { pane_id: pad(pane.id), text: 'padded' })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'send_keys', { pane_id: pad(pane.id), keys: ['Enter'] })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'kill_pane', { pane_id: pad(pane.id) })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'kill_window', { window_id: pad(window.id) })), /this MCP server runs in/);
    assert.match(failure(await call(session, 'kill_session', { session_id: pad(target.id) })), /this MCP server runs in/);
    assert.equal(await pane.exists(), true);
    assert.doesNotMatch((await pane.capture()).toString('utf8'), /padded/);
  });

  it('stays responsive while a pattern that backtracks forever is matched against pane text', { timeout: 60_000 }, async () => {
    const target = await server.newSession({ name: 'runaway', command: ['sh', '-c', `printf '%s!\\n' ${'a'.repeat(40)}; exec cat`] });
    const pane = (await target.listPanes())[0]!;
    await pane.setTitle(`${'a'.repeat(40)}!`);
    await eventually('the pane to print its line', async () => (await pane.capture()).toString('utf8').includes('a!'));
    const session = await open('--timeout-ms', '10000');
    const criteria = { field: 'pane_title', op: 'regex', value: '^(a+)+$' };
    const [search, wait, snapshot] = await Promise.all([
      call(session, 'search_panes', { criteria }),
      call(session, 'wait_for_text', { pane_id: pane.id, regex: '^(a+)+$', timeout_ms: 300 }),
      call(session, 'snapshot'),
    ]);
    assert.deepEqual((ok(search) as { panes: unknown[] }).panes, []);
    assert.equal(ok(wait).matched, false);
    assert.ok((ok(snapshot) as { panes: unknown[] }).panes.length > 0);
  });

  it('reads an option whose name looks like a flag as that name, not as a flag', async () => {
    const session = await open();
    const result = await call(session, 'get_option', { scope: 'global-session', name: '-g' });
    assert.doesNotMatch(JSON.stringify(result), /history-limit|status-style/, 'no listing of every global option');
  });

  it('bounds responses', async () => {
    await server.options('global-session').set('history-limit', 7000);
    const big = await server.newSession({ command: ['sh', '-c', 'i=0; while [ $i -lt 6000 ]; do printf "%0250d\\n" $i; i=$((i+1)); done; exec sleep 60'], width: 260 });
    const pane = (await big.listPanes())[0]!;
    const session = await open();
    await eventually('the history to hold 5900 lines', async () => Number((await pane.display('#{history_size}')).toString().trim()) >= 5900);
    assert.match(failure(await call(session, 'capture', { pane_id: pane.id, lines: 5000 })), /(larger|more) than 1048576 bytes/);
    const small = ok(await call(session, 'capture', { pane_id: pane.id, lines: 10 }));
    assert.equal(small.lines, 10);
  });

  it('waits for text event-driven, reporting the clamped timeout', async () => {
    // A request deadline well above what a loaded machine needs to start sh and the wait's own
    // control client; the clamp (deadline minus the 250 ms reply margin) is what is checked.
    const session = await open('--timeout-ms', '10000');
    const target = await server.newSession({ command: ['sh', '-c', 'sleep 0.3; echo drover-ready-marker; exec sleep 60'] });
    const pane = (await target.listPanes())[0]!;
    const matched = ok(await call(session, 'wait_for_text', { pane_id: pane.id, text: 'drover-ready-marker', timeout_ms: 60_000 }));
    assert.equal(matched.matched, true);
    assert.equal(matched.timeout_ms_used, 9750);
    const missed = ok(await call(session, 'wait_for_text', { pane_id: pane.id, regex: '^never \\d+$', timeout_ms: 300 }));
    assert.deepEqual([missed.matched, missed.timeout_ms_used], [false, 300]);
    assert.ok((missed.elapsed_ms as number) >= 250);
    assert.match(failure(await call(session, 'wait_for_text', { pane_id: pane.id, text: 'a', regex: 'b' })), /exactly one of text or regex/);
  });

  it('plans and loads workspaces, refusing bad files with their path', async () => {
    const session = await open('--tier', 'mutating');
    const content = 'session_name: mcp-ws\nwindows:\n  - window_name: one\n    layout: even-horizontal\n    panes: [null, null]\n  - window_name: two\n    panes: [null]\n';
    const planned = ok(await call(session, 'workspace_plan', { content, base_dir: sandbox.dir })) as { plan: { steps: unknown[] }; conflicts: unknown[] };
    assert.ok(planned.plan.steps.length >= 4);
    assert.deepEqual(planned.conflicts, []);
    const loaded = ok(await call(session, 'workspace_load', { content, base_dir: sandbox.dir })) as { result: { success: boolean; session_id: string } };
    assert.equal(loaded.result.success, true);
    const record = (await server.snapshot()).session(loaded.result.session_id as never)!;
    assert.deepEqual(record.windows().toArray().map((w) => [w.windowName, w.windowPanes]), [['one', 2], ['two', 1]]);
    const again = ok(await call(session, 'workspace_plan', { content, base_dir: sandbox.dir })) as { conflicts: unknown[] };
    assert.equal(again.conflicts.length, 1);
    assert.match(failure(await call(session, 'workspace_plan', { content: 'session_name: x\nwindows:\n  - panes: [{shell_command: 1}]\n', base_dir: sandbox.dir })), /windows\[0\]\.panes\[0\]\.shell_command/);
    assert.match(failure(await call(session, 'workspace_plan', { path: 'relative.yaml' })), /absolute/);

    // A missing start directory is refused before any step, and the build gets room for its layouts.
    const sessionsBefore = (await server.snapshot()).sessions.toArray().length;
    const missing = 'session_name: mcp-missing\nstart_directory: ./not-there\nwindows:\n  - panes: [null]\n';
    assert.match(failure(await call(session, 'workspace_load', { content: missing, base_dir: sandbox.dir })), /start_directory.*does not exist/s);
    assert.equal((await server.snapshot()).sessions.toArray().length, sessionsBefore);
    const sized = ok(await call(session, 'workspace_plan', { content: content.replace('mcp-ws', 'mcp-sized'), base_dir: sandbox.dir })) as { plan: { size: { width: number; height: number } } };
    assert.deepEqual([sized.plan.size.width, sized.plan.size.height], [200, 50]);
  });
});
