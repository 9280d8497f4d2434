import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Application, ToolPolicy, libraryTools, toolCatalog } from '../../src/mcp/index.js';
import { versionAtLeast, type Pane, type Server } from '../../src/tmux/index.js';
import { startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

type Structured = Record<string, unknown>;

/** An in-process MCP client talking to an application over the library tools. */
async function connect(server: Server, tier: string, env: NodeJS.ProcessEnv = {}): Promise<{ client: Client; close(): Promise<void> }> {
  const application = new Application({ server, tools: libraryTools, policy: ToolPolicy.resolve({ tier }, toolCatalog(libraryTools)), env });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await application.mcp.connect(serverSide);
  const client = new Client({ name: 'library-test', version: '1' });
  await client.connect(clientSide);
  return {
    client,
    async close() {
      await client.close();
      await application.close();
    },
  };
}

describe('MCP tools for pipes, copy mode, window moves and respawn', () => {
  let server: Server;
  let mcp: Awaited<ReturnType<typeof connect>>;
  let dir: string;

  async function call(name: string, args: Structured): Promise<CallToolResult> {
    return (await mcp.client.callTool({ name, arguments: args })) as CallToolResult;
  }

  async function ok(name: string, args: Structured): Promise<Structured> {
    const result = await call(name, args);
    assert.notEqual(result.isError, true, JSON.stringify(result.content));
    return result.structuredContent as Structured;
  }

  async function refused(name: string, args: Structured): Promise<string> {
    const result = await call(name, args);
    assert.equal(result.isError, true, `expected ${name} to fail, got ${JSON.stringify(result.structuredContent)}`);
    return (result.content as { text: string }[]).map((c) => c.text).join('\n');
  }

  async function newPane(command: string[]): Promise<Pane> {
    return (await (await server.newSession({ command })).listPanes())[0]!;
  }

  before(async () => {
    server = await startTestServer();
    mcp = await connect(server, 'destructive');
    dir = mkdtempSync(join(tmpdir(), 'drover-mcp-library-'));
  });

  after(async () => {
    await mcp.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the operations that change panes as mutating or destructive, never read-only', async () => {
    assert.deepEqual(
      [...toolCatalog(libraryTools)].map(([name, entry]) => [name, entry.tier, entry.group]).sort(),
      [
        ['capabilities', 'readonly', 'core'],
        ['enter_copy_mode', 'mutating', 'input'],
        ['exit_copy_mode', 'mutating', 'input'],
        ['move_window', 'mutating', 'layout'],
        ['pipe_pane', 'destructive', 'destroy'],
        ['respawn_pane', 'destructive', 'destroy'],
      ],
    );
    const tools = (await mcp.client.listTools()).tools;
    const destructive = tools.filter((tool) => tool.annotations?.destructiveHint === true).map((tool) => tool.name).sort();
    assert.deepEqual(destructive, ['pipe_pane', 'respawn_pane']);
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['capabilities', 'enter_copy_mode', 'exit_copy_mode', 'move_window', 'pipe_pane', 'respawn_pane']);
  });

  it('pipes a pane to a command, reports whether a pipe is open, and closes it', async () => {
    const pane = await newPane(['cat']);
    const log = join(dir, 'pipe.log');
    assert.deepEqual(await ok('pipe_pane', { pane_id: pane.id, shell_command: `cat >> '${log}'` }), { pane_id: pane.id, piping: true, delivery: 'observed' });
    await pane.sendText('through-the-pipe');
    await eventually('the pane output in the log', () => existsSync(log) && readFileSync(log, 'utf8').includes('through-the-pipe'));
    assert.equal((await ok('pipe_pane', { pane_id: pane.id, shell_command: 'cat > /dev/null', only_if_closed: true })).piping, false, 'only_if_closed closed the open pipe');
    await ok('pipe_pane', { pane_id: pane.id, shell_command: `cat >> '${log}'` });
    assert.equal((await ok('pipe_pane', { pane_id: pane.id, shell_command: null })).piping, false);
    assert.match(await refused('pipe_pane', { pane_id: pane.id, shell_command: 'cat', output: false }), /direction/);
    assert.equal((await pane.display('#{pane_pipe}')).toString(), '0', 'a refused pipe started nothing');
  });

  it('enters and leaves copy mode, refusing flags this tmux lacks', async () => {
    const pane = await newPane(['sh', '-c', 'seq 1 200; exec cat']);
    await eventually('history to scroll into', async () => Number((await pane.display('#{history_size}')).toString()) > 0);
    assert.deepEqual(await ok('enter_copy_mode', { pane_id: pane.id, scroll_up: true }), { pane_id: pane.id, in_mode: true, delivery: 'observed' });
    assert.ok(Number((await pane.display('#{scroll_position}')).toString()) > 0);
    assert.deepEqual(await ok('exit_copy_mode', { pane_id: pane.id }), { pane_id: pane.id, in_mode: false, delivery: 'observed' });
    assert.equal((await ok('exit_copy_mode', { pane_id: pane.id })).in_mode, false, 'leaving when in no mode is harmless');
    if (!versionAtLeast(await server.version(), '3.5')) {
      assert.match(await refused('enter_copy_mode', { pane_id: pane.id, page_down: true }), /3\.5/);
      assert.equal((await pane.display('#{pane_in_mode}')).toString(), '0');
    }
  });

  it('moves a window to an explicit index, never over another', async () => {
    const home = await server.newSession();
    const away = await server.newSession();
    const [window] = await home.listWindows();
    assert.deepEqual(await ok('move_window', { window_id: window!.id, session_id: away.id, index: 5 }), { window_id: window!.id, session_id: away.id, index: 5, delivery: 'observed' });
    assert.deepEqual((await away.listWindowLinks()).map((link) => [link.index, link.windowId]).at(-1), [5, window!.id]);
    const other = await (await server.newSession()).newWindow({ index: 2 });
    await refused('move_window', { window_id: other.id, session_id: away.id, index: 5 });
    assert.equal((await away.listWindowLinks()).find((link) => link.index === 5)!.windowId, window!.id, 'index 5 kept its window');
  });

  it('respawns a pane only with a command, killing a live program only when told', async () => {
    const pane = await newPane(['cat']);
    assert.match(await refused('respawn_pane', { pane_id: pane.id }), /command/);
    await refused('respawn_pane', { pane_id: pane.id, command: ['sh', '-c', 'echo respawned; exec cat'] });
    assert.equal((await pane.snapshot()).paneCurrentCommand, 'cat', 'a live program is not killed without kill');
    await ok('respawn_pane', { pane_id: pane.id, command: ['sh', '-c', 'echo respawned; exec cat'], kill: true });
    await eventually('the new program to run', async () => (await pane.capture()).toString().includes('respawned'));
  });

  it('refuses to respawn its own pane, or pipe input into it, unless forced', async () => {
    const pane = await newPane(['cat']);
    const self = await connect(server, 'destructive', { TMUX: `${server.endpoint.socketPath},${server.ownedRecord!.pid},0`, TMUX_PANE: pane.id });
    try {
      const call = async (name: string, args: Structured): Promise<CallToolResult> => (await self.client.callTool({ name, arguments: args })) as CallToolResult;
      for (const [name, args] of [
        ['respawn_pane', { pane_id: pane.id, command: ['true'], kill: true }],
        ['pipe_pane', { pane_id: pane.id, shell_command: 'echo typed', input: true }],
      ] as const) {
        const result = await call(name, args);
        assert.equal(result.isError, true, name);
        assert.match((result.content as { text: string }[])[0]!.text, /this MCP server runs in/);
      }
      assert.equal((await pane.display('#{pane_pipe}')).toString(), '0');
      assert.equal((await pane.snapshot()).paneCurrentCommand, 'cat');
      const forced = await call('respawn_pane', { pane_id: pane.id, command: ['sh', '-c', 'echo forced; exec cat'], kill: true, force: true });
      assert.notEqual(forced.isError, true);
      await eventually('the forced respawn to run', async () => (await pane.capture()).toString().includes('forced'));
    } finally {
      await self.close();
    }
  });
});
