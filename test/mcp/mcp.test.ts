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

const CORE = ['capabilities', 'mux_snapshot', 'snapshot'];
const OBSERVE = ['capture', 'pane_map', 'pane_process', 'questions', 'search_panes', 'wait_for_text'];
const READONLY = [...CORE, ...OBSERVE, 'get_environment', 'get_option', 'list_buffers', 'read_buffer', 'workspace_plan'];
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

  it('lists only capabilities and snapshot by default, and more only as the flags allow', async () => {
    const names = async (...args: string[]): Promise<string[]> => (await (await open(...args)).client.listTools()).tools.map((t) => t.name).sort();
    assert.deepEqual(await names(), CORE);
    assert.deepEqual(await names('--allow', 'observe'), [...CORE, ...OBSERVE].sort());
    assert.deepEqual(await names('--allow', 'environment,buffers', '--allow', 'input'), [...CORE, 'deliver', 'enter_copy_mode', 'exit_copy_mode', 'get_environment', 'list_buffers', 'read_buffer', 'ready', 'send_keys', 'send_text'].sort());
    assert.deepEqual(await names('--tier', 'readonly'), [...READONLY].sort());
    assert.deepEqual(await names('--tier', 'mutating'), [...READONLY, ...MUTATING].sort());
    assert.deepEqual(await names('--tier', 'destructive'), [...READONLY, ...MUTATING, ...DESTRUCTIVE].sort());
    assert.deepEqual(await names('--enable-tool', 'kill_pane'), [...CORE, 'kill_pane'].sort());
    const tools = (await (await open('--tier', 'destructive')).client.listTools()).tools;
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.equal(tool.inputSchema.additionalProperties, false, `${tool.name} refuses arguments it does not name`);
      assert.equal(tool.outputSchema?.type, 'object', tool.name);
      assert.equal(tool.outputSchema?.additionalProperties, false, `${tool.name} declares every key it returns`);
    }
    assert.equal(tools.find((t) => t.name === 'kill_pane')!.annotations?.destructiveHint, true);
    assert.equal(tools.find((t) => t.name === 'snapshot')!.annotations?.readOnlyHint, true);
  });

  it("keeps tmux's environment, buffers and screens from a stock setup", async () => {
    await server.environment().set('AWS_SECRET_ACCESS_KEY', 'planted-secret-7f3a');
    await server.buffers().write('copied', Buffer.from('planted-buffer-7f3a'));
    try {
      const stock = await open();
      for (const [name, args] of [
        ['get_environment', {}],
        ['read_buffer', { name: 'copied' }],
        ['capture', { pane_id: '%0' }],
      ] as const) {
        const refused = await call(stock, name, args);
        assert.match(failure(refused), /not found|disabled/i, name);
        assert.doesNotMatch(JSON.stringify(refused), /planted/, name);
      }
      assert.doesNotMatch(JSON.stringify(ok(await call(stock, 'snapshot'))), /planted/);
      const allowed = await open('--allow', 'environment');
      assert.equal((ok(await call(allowed, 'get_environment')) as { variables: Record<string, string> }).variables.AWS_SECRET_ACCESS_KEY, 'planted-secret-7f3a');
    } finally {
      await server.environment().unset('AWS_SECRET_ACCESS_KEY');
      await server.buffers().delete('copied');
    }
  });

  it('says what it can do: groups on and off, every tool, the multiplexer and the bounds', async () => {
    const about = ok(await call(await open('--allow', 'observe'), 'capabilities')) as {
      policy: { tier: string | null; groups: { name: string; enabled: boolean; tools: string[] }[] };
      tools: { name: string; enabled: boolean }[];
      multiplexer: { reachable: boolean; version: string | null; declaration: { mux: string; supports: Record<string, boolean> } };
      limits: { request_timeout_ms: number; response_bytes: number; mutation_evidence_bytes: number; stdio: Record<string, number> };
    };
    assert.equal(about.policy.tier, null);
    assert.deepEqual(about.policy.groups.filter((group) => group.enabled).map((group) => group.name), ['core', 'observe']);
    assert.deepEqual(about.policy.groups.find((group) => group.name === 'environment')!.tools, ['get_environment']);
    assert.deepEqual(about.tools.filter((tool) => tool.enabled).map((tool) => tool.name).sort(), [...CORE, ...OBSERVE].sort());
    assert.ok(about.tools.some((tool) => tool.name === 'kill_pane' && !tool.enabled), 'tools that are off are listed too');
    assert.equal(about.multiplexer.reachable, true);
    assert.match(about.multiplexer.version ?? '', /^\d/);
    assert.equal(about.multiplexer.declaration.mux, 'tmux');
    assert.equal(about.multiplexer.declaration.supports.paste_text, true);
    assert.deepEqual([about.limits.request_timeout_ms, about.limits.response_bytes, about.limits.mutation_evidence_bytes], [5000, 1048576, 4096]);
    assert.deepEqual(about.limits.stdio, {
      max_active_requests: 4,
      max_requests: 32,
      max_frame_bytes: 1048576,
      max_queued_bytes: 4194304,
      request_timeout_ms: 5000,
      write_timeout_ms: 500,
      cleanup_timeout_ms: 500,
    });
  });

  it('fails at start on unknown tools, groups or tiers, naming the valid ones', async () => {
    const tool = await sandbox.drover(['mcp', ...socket, '--enable-tool', 'format_disk']);
    assert.equal(tool.exitCode, 2);
    assert.match(tool.stderrText(), /unknown tool "format_disk"; tools: .*kill_pane/);
    assert.equal(tool.stdout.length, 0);
    const tier = await sandbox.drover(['mcp', ...socket, '--tier', 'root']);
    assert.equal(tier.exitCode, 2);
    assert.match(tier.stderrText(), /tiers: readonly, mutating, destructive/);
    const group = await sandbox.drover(['mcp', ...socket, '--allow', 'observe,screens']);
    assert.equal(group.exitCode, 2);
    assert.match(group.stderrText(), /unknown group "screens"; groups: core, observe, environment, buffers, options, input, layout, workspace, configure, fleet, destroy/);
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
      // A pane id of no multiplexer's shape fails the schema; one of another multiplexer's shape fails as no tmux pane.
      assert.match(failure(await call(session, name, args)), /invalid|expected|validation|is not a tmux pane id/i, name);
    }
    assert.equal(JSON.stringify((await server.snapshot()).toJSON().panes), before);
    assert.equal(await pane.exists(), true);
  });

  it('refuses an argument the tool does not name, naming it, before touching tmux', async () => {
    const session = await open('--allow', 'layout');
    const sessionsBefore = (await server.snapshot()).sessions.size;
    const typo = failure(await call(session, 'new_session', { name: 'typo-session', windw_name: 'x' }));
    assert.match(typo, /unrecognized key.*windw_name/i);
    assert.equal((await server.snapshot()).sessions.size, sessionsBefore, 'nothing was created');
    assert.match(failure(await call(session, 'snapshot', { client: true })), /unrecognized key.*"client"/i);
  });

  it('refuses at start a response bound too small for the evidence of a change', async () => {
    for (const flags of [['--allow', 'input'], ['--tier', 'mutating'], ['--enable-tool', 'kill_pane']]) {
      const refused = await sandbox.drover(['mcp', ...socket, '--max-response-bytes', '4095', ...flags]);
      assert.equal(refused.exitCode, 2, flags.join(' '));
      assert.match(refused.stderrText(), /a response bound of 4095 bytes leaves no room .* need at least 4096/, flags.join(' '));
    }
    const tooSmall = await sandbox.drover(['mcp', ...socket, '--max-response-bytes', '100']);
    assert.equal(tooSmall.exitCode, 2);
    assert.match(tooSmall.stderrText(), /--max-response-bytes takes a whole number of bytes from 1024 to 4194304/);

    const writer = await open('--max-response-bytes', '4096', '--allow', 'input');
    assert.ok((await writer.client.listTools()).tools.some((tool) => tool.name === 'send_text'));
    const reader = await open('--max-response-bytes', '2000', '--allow', 'observe');
    const pane = (await (await server.newSession({ name: 'small-bound', command: ['sh', '-c', 'seq 100001 100800; exec cat'] })).listPanes())[0]!;
    await eventually('the pane to print its numbers', async () => (await pane.capture()).toString('utf8').includes('100800'));
    assert.match(failure(await call(reader, 'capture', { pane_id: pane.id, lines: 800 })), /larger than 2000 bytes/);
    assert.equal(ok(await call(reader, 'capture', { pane_id: pane.id, lines: 5 })).lines, 5);
  });

  it('reads no screen while tmux would run a command after the capture', async () => {
    const hooked = (await (await server.newSession({ name: 'hooked', command: ['sh', '-c', 'echo hook-guard-text; exec cat'] })).listPanes())[0]!;
    const other = (await (await server.newSession({ name: 'unhooked', command: ['cat'] })).listPanes())[0]!;
    await eventually('the pane to print its line', async () => (await hooked.capture()).toString('utf8').includes('hook-guard-text'));
    const session = await open('--allow', 'observe');
    const marker = async (): Promise<string | undefined> => (await server.options('global-session').getOrUndefined('@drover_captured'))?.raw.toString();
    const refused = async (name: string, args: Record<string, unknown>): Promise<void> => {
      const result = await call(session, name, args);
      const error = (JSON.parse(failure(result)) as { error: { code: string; message: string } }).error;
      assert.equal(error.code, 'refused', name);
      assert.match(error.message, /after-capture-pane is set/, name);
    };
    const hookCommand = 'set-option -g @drover_captured yes';
    for (const [where, set, unset] of [
      ['globally', ['set-hook', '-g', 'after-capture-pane', hookCommand], ['set-hook', '-gu', 'after-capture-pane']],
      ['on the session, at a sparse index', ['set-hook', '-t', 'hooked', 'after-capture-pane[3]', hookCommand], ['set-hook', '-u', '-t', 'hooked', 'after-capture-pane']],
      ['on the pane', ['set-hook', '-p', '-t', hooked.id, 'after-capture-pane', hookCommand], ['set-hook', '-pu', '-t', hooked.id, 'after-capture-pane']],
    ] as const) {
      await server.run(set);
      try {
        await refused('capture', { pane_id: hooked.id });
        await refused('wait_for_text', { pane_id: hooked.id, text: 'hook-guard-text', timeout_ms: 1000 });
        await refused('questions', { panes: [hooked.id] });
        await refused('pane_map', {});
        assert.equal(await marker(), undefined, `no capture ran with the hook set ${where}`);
      } finally {
        await server.run(unset);
      }
    }
    // A hook on another pane does not stop this one's screen from being read.
    await server.run(['set-hook', '-p', '-t', other.id, 'after-capture-pane', hookCommand]);
    try {
      await refused('capture', { pane_id: other.id });
      assert.match((ok(await call(session, 'capture', { pane_id: hooked.id })) as { content: string }).content, /hook-guard-text/);
    } finally {
      await server.run(['set-hook', '-pu', '-t', other.id, 'after-capture-pane']);
    }
    assert.equal(await marker(), undefined);
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
    const session = await open('--timeout-ms', '10000', '--allow', 'observe');
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
    const session = await open('--allow', 'options');
    const result = await call(session, 'get_option', { scope: 'global-session', name: '-g' });
    // Read as a flag, `show-options -g -g` would list every global option; read as a name, it is one tmux does not have.
    assert.deepEqual(ok(result), { name: '-g', present: false, value: null });
    assert.doesNotMatch(JSON.stringify(result), /history-limit|status-style/, 'no listing of every global option');
  });

  it('bounds responses', async () => {
    await server.options('global-session').set('history-limit', 7000);
    const big = await server.newSession({ command: ['sh', '-c', 'i=0; while [ $i -lt 6000 ]; do printf "%0250d\\n" $i; i=$((i+1)); done; exec sleep 60'], width: 260 });
    const pane = (await big.listPanes())[0]!;
    const session = await open('--allow', 'observe');
    await eventually('the history to hold 5900 lines', async () => Number((await pane.display('#{history_size}')).toString().trim()) >= 5900);
    assert.match(failure(await call(session, 'capture', { pane_id: pane.id, lines: 5000 })), /(larger|more) than 1048576 bytes/);
    const small = ok(await call(session, 'capture', { pane_id: pane.id, lines: 10 }));
    assert.equal(small.lines, 10);
  });

  it('waits for text event-driven, reporting the clamped timeout', async () => {
    // A request deadline well above what a loaded machine needs to start sh and the wait's own
    // control client; the clamp (deadline minus the 250 ms reply margin) is what is checked.
    const session = await open('--timeout-ms', '10000', '--allow', 'observe');
    const target = await server.newSession({ command: ['sh', '-c', 'sleep 0.3; echo drover-ready-marker; exec sleep 60'] });
    const pane = (await target.listPanes())[0]!;
    const matched = ok(await call(session, 'wait_for_text', { pane_id: pane.id, text: 'drover-ready-marker', timeout_ms: 60_000 }));
    assert.equal(matched.matched, true);
    // The deadline runs from when the request was read, so the clamp is a little under 9750.
    const used = matched.timeout_ms_used as number;
    assert.ok(used <= 9750 && used > 9000, `timeout_ms_used ${used}`);
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
