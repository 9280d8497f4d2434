import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { openBroker } from '../../src/fleet/index.js';
import type { Pane, Server } from '../../src/tmux/index.js';
import { eventually, screenShows, startFakeAgent } from '../panes/live.js';
import { cliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer } from '../support/tmux.js';

type Structured = Record<string, unknown>;

/**
 * Every tool drover mcp offers, called through the official SDK client (which checks each
 * result against the tool's output schema once it has listed the tools), each under the one
 * group that enables it, against a private tmux server; a change is checked on tmux itself.
 */
describe('drover mcp: every tool through the SDK client', () => {
  const sandbox = cliSandbox();
  let server: Server;
  let agent: Pane;
  let director: number;
  let member: number;
  const sessions = new Map<string, McpSession>();
  const called = new Set<string>();

  before(async () => {
    server = await startTestServer();
    const broker = await openBroker({ env: sandbox.env });
    try {
      const created = await broker.createFleet({ name: 'every-tool', codingAgent: 'shell', directorPlacement: { backend: 'tmux', session: 'x', window: '@1', pane: '%1' } });
      director = created.director.memberId;
      member = (await broker.registerMember({ fleetId: created.fleet.fleetId, name: 'worker', codingAgent: 'shell', placement: { backend: 'tmux', session: 'x', window: '@1' } })).memberId;
    } finally {
      await broker.close();
    }
    agent = await startFakeAgent(server, ['--busy-ms', '300'], { hook: true });
  });

  after(async () => {
    for (const session of sessions.values()) await session.close().catch(() => undefined);
    await server.close();
  });

  /** A session with one group allowed, its tools listed so the client validates their results. */
  async function group(name: string): Promise<McpSession> {
    let session = sessions.get(name);
    if (session === undefined) {
      session = await connectMcp(['-S', server.endpoint.socketPath, '--allow', name, '--timeout-ms', '20000'], sandbox.env);
      sessions.set(name, session);
      const listed = (await session.client.listTools()).tools.map((tool) => tool.name);
      assert.ok(listed.includes('capabilities') && listed.includes('snapshot'), `core is on beside ${name}`);
    }
    return session;
  }

  async function ok(groupName: string, tool: string, args: Structured = {}): Promise<Structured> {
    const result = (await (await group(groupName)).client.callTool({ name: tool, arguments: args })) as CallToolResult;
    assert.notEqual(result.isError, true, `${tool}: ${JSON.stringify(result.content)}`);
    assert.equal(typeof result.structuredContent, 'object', `${tool} returns structured content`);
    called.add(tool);
    return result.structuredContent as Structured;
  }

  async function newPane(command: string[], name?: string): Promise<Pane> {
    return (await (await server.newSession({ name, command })).listPanes())[0]!;
  }

  async function agentState(): Promise<string | null | undefined> {
    const map = (await ok('observe', 'pane_map')) as { panes: { pane_id: string; agent_state: string | null; agent: string | null; agent_state_source: string | null }[] };
    return map.panes.find((row) => row.pane_id === agent.id)?.agent_state;
  }

  it('core: capabilities, snapshot and mux_snapshot', async () => {
    const about = (await ok('core', 'capabilities')) as { policy: { groups: { name: string; enabled: boolean }[] } };
    assert.deepEqual(about.policy.groups.filter((entry) => entry.enabled).map((entry) => entry.name), ['core']);
    const snapshot = (await ok('core', 'snapshot', { clients: true })) as { panes: { pane_id: string; pane_key: string }[] };
    assert.ok(snapshot.panes.some((pane) => pane.pane_id === agent.id));
    const port = (await ok('core', 'mux_snapshot')) as { panes: { pane_id: string; pane_key: string }[] };
    assert.deepEqual(port.panes.map((pane) => [pane.pane_id, pane.pane_key]).sort(), snapshot.panes.map((pane) => [pane.pane_id, pane.pane_key]).sort());
  });

  it('observe and input: the agent tools, screens and keys', async () => {
    // The agent reports idle through its hook after its first screen: ready then reads a settled composer.
    await eventually('the agent to report idle', async () => ((await agentState()) === 'idle' ? true : undefined));
    const ready = await ok('input', 'ready', { pane_id: agent.id });
    assert.equal(ready.state, 'ready');
    const delivered = await ok('input', 'deliver', { pane_id: agent.id, text: 'please ask:yes_no' });
    assert.equal(delivered.status, 'submitted', String(delivered.reason));
    await screenShows(agent, '[y/n]');
    await eventually('the agent to report waiting', async () => ((await agentState()) === 'waiting' ? true : undefined));
    const sweep = (await ok('observe', 'questions', { panes: [agent.id] })) as { matches: { pane_id: string; indicator: string }[] };
    assert.deepEqual(sweep.matches.map((match) => [match.pane_id, match.indicator]), [[agent.id, 'yes_no']]);

    const cat = await newPane(['cat'], 'typing');
    const sent = await ok('input', 'send_text', { pane_id: cat.id, text: 'typed-by-mcp', enter: true });
    assert.equal(sent.enter_sent, true);
    await ok('input', 'send_keys', { pane_id: cat.id, keys: ['k', 'e', 'y', 's', 'Enter'] });
    const waited = await ok('observe', 'wait_for_text', { pane_id: cat.id, text: 'keys', timeout_ms: 5000 });
    const processes = (await ok('observe', 'pane_process', { pane_id: cat.id })) as { processes: { comm: string }[]; has_agent: boolean };
    assert.deepEqual([processes.processes.map((node) => node.comm), processes.has_agent], [['cat'], false]);
    assert.equal(waited.matched, true);
    const captured = (await ok('observe', 'capture', { pane_id: cat.id })) as { content: string };
    assert.equal(captured.content.split('\n').filter((line) => line === 'typed-by-mcp').length, 2, 'typed and echoed by cat');
    const found = (await ok('observe', 'search_panes', { criteria: { field: 'pane_id', op: 'eq', value: cat.id } })) as { panes: { pane_id: string }[] };
    assert.deepEqual(found.panes.map((pane) => pane.pane_id), [cat.id]);

    const scroll = await newPane(['sh', '-c', 'seq 1 200; exec cat']);
    await eventually('history to scroll into', async () => Number((await scroll.display('#{history_size}')).toString()) > 0);
    assert.equal((await ok('input', 'enter_copy_mode', { pane_id: scroll.id, scroll_up: true })).in_mode, true);
    assert.equal((await scroll.display('#{pane_in_mode}')).toString(), '1');
    assert.equal((await ok('input', 'exit_copy_mode', { pane_id: scroll.id })).in_mode, false);
    assert.equal((await scroll.display('#{pane_in_mode}')).toString(), '0');
  });

  it('environment, buffers and options: reads', async () => {
    await server.environment().set('EVERY_TOOL_VAR', 'seen');
    assert.equal(((await ok('environment', 'get_environment')) as { variables: Record<string, string> }).variables.EVERY_TOOL_VAR, 'seen');
    await server.buffers().write('every-tool', Buffer.from('buffered'));
    assert.ok(((await ok('buffers', 'list_buffers')) as { buffers: { name: string }[] }).buffers.some((buffer) => buffer.name === 'every-tool'));
    assert.equal((await ok('buffers', 'read_buffer', { name: 'every-tool' })).text, 'buffered');
    await server.options('global-session').set('@every_tool', 'option-value');
    assert.deepEqual(await ok('options', 'get_option', { scope: 'global-session', name: '@every_tool' }), { name: '@every_tool', present: true, value: 'option-value' });
  });

  it('configure: options, environment and buffers set', async () => {
    await ok('configure', 'set_option', { scope: 'global-session', name: '@every_tool_set', value: 'on' });
    assert.equal((await server.options('global-session').getOrUndefined('@every_tool_set'))?.raw.toString(), 'on');
    await ok('configure', 'set_environment', { name: 'EVERY_TOOL_SET', value: 'yes' });
    assert.equal(await server.environment().get('EVERY_TOOL_SET'), 'yes');
    assert.equal((await ok('configure', 'write_buffer', { name: 'every-tool-written', text: 'written' })).size, 7);
    assert.equal((await server.buffers().read('every-tool-written')).toString(), 'written');
  });

  it('layout: sessions, windows, panes, names, layouts and moves', async () => {
    const created = (await ok('layout', 'new_session', { name: 'every-layout', command: ['cat'] })) as { session_id: string; window_id: string; pane_id: string };
    assert.equal(await server.session(created.session_id).exists(), true);
    const window = (await ok('layout', 'new_window', { session_id: created.session_id, name: 'second', command: ['cat'] })) as { window_id: string; pane_id: string };
    const split = (await ok('layout', 'split_pane', { pane_id: window.pane_id, direction: 'horizontal', command: ['cat'] })) as { pane_id: string };
    assert.equal((await server.pane(split.pane_id).display('#{window_id}')).toString(), window.window_id);
    await ok('layout', 'select_layout', { window_id: window.window_id, layout: 'even-vertical' });
    assert.match((await server.window(window.window_id).display('#{window_layout}')).toString(), /\[/, 'panes stacked');
    await ok('layout', 'rename', { target_id: window.window_id, name: 'renamed' });
    assert.equal((await server.window(window.window_id).display('#{window_name}')).toString(), 'renamed');
    await ok('layout', 'move_window', { window_id: window.window_id, session_id: created.session_id, index: 7 });
    assert.equal((await server.window(window.window_id).display('#{window_index}')).toString(), '7');
  });

  it('workspace: plan and load', async () => {
    const content = 'session_name: every-ws\nwindows:\n  - window_name: one\n    panes: [null, null]\n';
    const planned = (await ok('workspace', 'workspace_plan', { content, base_dir: sandbox.dir })) as { plan: { steps: unknown[] }; conflicts: unknown[] };
    assert.ok(planned.plan.steps.length > 0);
    assert.deepEqual(planned.conflicts, []);
    const loaded = (await ok('workspace', 'workspace_load', { content, base_dir: sandbox.dir })) as { result: { success: boolean; session_id: string } };
    assert.equal(loaded.result.success, true);
    assert.equal((await server.snapshot()).session(loaded.result.session_id as never)?.sessionName, 'every-ws');
  });

  it('fleet: send, poll and acknowledge', async () => {
    const sent = (await ok('fleet', 'message_send', { from: director, to: member, text: 'every tool' })) as { message: { message_id: number } };
    const polled = (await ok('fleet', 'message_poll', { member })) as { messages: { message_id: number }[] };
    assert.deepEqual(polled.messages.map((message) => message.message_id), [sent.message.message_id]);
    const acked = (await ok('fleet', 'message_ack', { member, message_id: sent.message.message_id })) as { message: { status_state: string } };
    assert.equal(acked.message.status_state, 'completed');
  });

  it('destroy: pipes, respawns, buffers, panes, windows and sessions', async () => {
    const piped = await newPane(['cat']);
    const log = join(sandbox.dir, 'every-pipe.log');
    assert.equal((await ok('destroy', 'pipe_pane', { pane_id: piped.id, shell_command: `cat >> '${log}'` })).piping, true);
    await piped.sendText('through-the-pipe');
    await eventually('the pane output in the log', () => existsSync(log) && readFileSync(log, 'utf8').includes('through-the-pipe'));
    await ok('destroy', 'respawn_pane', { pane_id: piped.id, command: ['sh', '-c', 'echo respawned; exec cat'], kill: true });
    await eventually('the new program to run', async () => (await piped.capture()).toString().includes('respawned'));
    await server.buffers().write('every-tool-doomed', Buffer.from('x'));
    await ok('destroy', 'delete_buffer', { name: 'every-tool-doomed' });
    assert.ok(!(await server.buffers().list()).some((buffer) => buffer.name === 'every-tool-doomed'));

    const doomed = await server.newSession({ name: 'every-doomed', command: ['cat'] });
    const second = await doomed.newWindow({ command: ['cat'] });
    const [secondPane] = await second.listPanes();
    const extra = await secondPane!.split({ direction: 'vertical', command: ['cat'] });
    await ok('destroy', 'kill_pane', { pane_id: extra.id });
    assert.equal(await extra.exists(), false);
    await ok('destroy', 'kill_window', { window_id: second.id });
    assert.equal(await second.exists(), false);
    await ok('destroy', 'kill_session', { session_id: doomed.id });
    assert.equal(await doomed.exists(), false);
  });

  it('left no tool uncalled', async () => {
    const everything = await connectMcp(['-S', server.endpoint.socketPath, '--tier', 'destructive'], sandbox.env);
    sessions.set('everything', everything);
    const listed = (await everything.client.listTools()).tools.map((tool) => tool.name).sort();
    assert.deepEqual([...called].sort(), listed);
  });
});
