/**
 * drover mcp on every multiplexer, through the official SDK client (which checks each result
 * against the tool's declared output schema): the same cases against real tmux and against the
 * herdr and zellij fakes. Off tmux only the pane tools are listed, every pane row carries its
 * key, a prompt delivered into a pane that takes lines comes back with a receipt, and a key of
 * another server run is refused before anything is typed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { MuxName } from '../../src/mux/index.js';
import { openHerdrWorld } from '../fixtures/herdr/world.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { eventually } from '../panes/live.js';
import { cliSandbox, type CliSandbox } from '../support/cli.js';
import { connectMcp, type McpSession } from '../support/mcp.js';
import { startTestServer, testEnvironment } from '../support/tmux.js';

/** The tools that reach panes through the mux port: all a server off tmux offers. */
const PORT_TOOLS = ['capabilities', 'capture', 'deliver', 'kill_pane', 'mux_snapshot', 'pane_map', 'pane_process', 'questions', 'ready', 'send_keys', 'send_text', 'wait_for_text'];

interface McpWorld {
  /** How drover mcp is pointed at this multiplexer: its arguments and environment. */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** A pane that takes a line as `cat` does: typed text is echoed, Enter moves on. */
  readonly linePane: string;
  /** The receipt deliver gives there: submitted where the cursor shows the line left the input line. */
  readonly delivered: string;
  /** A pane the kill case may close. */
  readonly sparePane: string;
  /** A mark of the input the panes received, read around drover: it moves when anything is typed. */
  inputs(): Promise<unknown>;
  screen(pane: string): Promise<string>;
  close(): Promise<void>;
}

async function tmuxWorld(sandbox: CliSandbox): Promise<McpWorld> {
  const server = await startTestServer();
  const cat = (await server.newSession({ command: ['cat'], receipt: true })).pane;
  const spare = (await server.newSession({ command: ['sleep', '600'], receipt: true })).pane;
  const screen = async (pane: string): Promise<string> => (await server.pane(pane as `%${number}`).capture()).toString('utf8');
  return {
    args: ['-S', server.endpoint.socketPath],
    env: sandbox.env,
    linePane: cat.id,
    delivered: 'submitted',
    sparePane: spare.id,
    inputs: () => screen(cat.id),
    screen,
    close: () => server.close(),
  };
}

async function herdrWorld(sandbox: CliSandbox): Promise<McpWorld> {
  const herdr = await openHerdrWorld();
  const snapshot = await herdr.port.snapshot();
  const linePane = snapshot.panes.find((pane) => pane.spaceLabel === 'scratch')!.paneId;
  return {
    args: ['--mux', 'herdr'],
    env: { ...sandbox.env, DROVER_MUX_ENDPOINT_HERDR: herdr.socketPath },
    // herdr's shell panes echo what is typed and start a new line at Enter; herdr reports no cursor.
    linePane,
    delivered: 'staged_unconfirmed',
    sparePane: herdr.server.paneIds().find((pane) => pane !== linePane)!,
    inputs: async () => herdr.server.inputs().length,
    screen: async (pane) => herdr.server.screenOf(pane),
    close: () => herdr.close(),
  };
}

async function zellijWorld(sandbox: CliSandbox): Promise<McpWorld> {
  const zellij = await openZellijWorld();
  const env = testEnvironment({ ...zellij.fake.env, ...sandbox.env, PATH: zellij.fake.env.PATH, DROVER_MUX: 'zellij' });
  return {
    args: [],
    env,
    // The fake's shell pane echoes typed text but keeps its cursor where it was, so the line
    // cannot be seen leaving the input line: the receipt says so rather than claim it.
    linePane: 'terminal_1',
    delivered: 'staged_unconfirmed',
    sparePane: 'terminal_2',
    inputs: async () => zellij.fake.read().inputs.length,
    screen: async (pane) => zellij.screenOf(pane),
    close: () => zellij.close(),
  };
}

function ok(result: unknown): Record<string, unknown> {
  const call = result as CallToolResult;
  assert.notEqual(call.isError, true, JSON.stringify(call.content));
  return call.structuredContent as Record<string, unknown>;
}

function errorOf(result: unknown): { code: string; message: string; delivery?: string } {
  const call = result as CallToolResult;
  assert.equal(call.isError, true, JSON.stringify(call.structuredContent));
  return (JSON.parse((call.content[0] as { text: string }).text) as { error: { code: string; message: string; delivery?: string } }).error;
}

function describeMcpOn(mux: MuxName, open: (sandbox: CliSandbox) => Promise<McpWorld>): void {
  describe(`drover mcp on ${mux}`, { concurrency: 1 }, () => {
    const sandbox = cliSandbox();
    let world: McpWorld;
    let session: McpSession;
    let keys: Map<string, string>;

    before(async () => {
      world = await open(sandbox);
      // A zellij call is a process start, and deliver makes several: more than the default deadline.
      session = await connectMcp([...world.args, '--tier', 'destructive', '--timeout-ms', '60000'], world.env);
    });
    after(async () => {
      await session?.close();
      await world?.close();
    });

    it('lists every tool on tmux, and off tmux the pane tools alone; capabilities names the multiplexer', async () => {
      const names = (await session.client.listTools()).tools.map((tool) => tool.name).sort();
      if (mux === 'tmux') assert.ok(PORT_TOOLS.every((name) => names.includes(name)) && names.includes('get_option') && names.includes('snapshot'), names.join(' '));
      else assert.deepEqual(names, PORT_TOOLS);
      const about = ok(await session.client.callTool({ name: 'capabilities', arguments: {} })) as { multiplexer: { reachable: boolean; declaration: { mux: string } } };
      assert.deepEqual([about.multiplexer.reachable, about.multiplexer.declaration.mux], [true, mux]);
    });

    it('pane_map: every row valid against the declared schema and carrying its key', async () => {
      // callTool checks structuredContent against the tool's output schema and throws on a mismatch.
      const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
      assert.ok(map.panes.some((row) => row.pane_id === world.linePane));
      const incarnation = /^local::[a-z]+::([^:]+)::/.exec(map.panes[0]!.pane_key)![1];
      for (const row of map.panes) assert.equal(row.pane_key, `local::${mux}::${incarnation}::${row.pane_id}`);
      keys = new Map(map.panes.map((row) => [row.pane_id, row.pane_key]));
    });

    if (mux === 'tmux') {
      it('snapshot and search_panes: every pane row carries the key pane_map gives', async () => {
        const snapshot = ok(await session.client.callTool({ name: 'snapshot', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
        assert.deepEqual(new Map(snapshot.panes.map((row) => [row.pane_id, row.pane_key])), keys);
        const criteria = { field: 'pane_id', op: 'eq', value: world.linePane };
        const found = ok(await session.client.callTool({ name: 'search_panes', arguments: { criteria } })) as { panes: { pane_id: string; pane_key: string }[] };
        assert.deepEqual(found.panes.map((row) => row.pane_key), [keys.get(world.linePane)]);
      });
    }

    it('mux_snapshot: the port’s panes with the keys pane_map gives', async () => {
      const snapshot = ok(await session.client.callTool({ name: 'mux_snapshot', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
      assert.deepEqual(new Map(snapshot.panes.map((row) => [row.pane_id, row.pane_key])), keys);
    });

    it('capture by key: the pane’s lines, with the key back', async () => {
      const captured = ok(await session.client.callTool({ name: 'capture', arguments: { pane_key: keys.get(world.linePane)!, lines: 5 } })) as {
        pane_id: string;
        pane_key: string;
        content: string;
      };
      assert.deepEqual([captured.pane_id, captured.pane_key], [world.linePane, keys.get(world.linePane)]);
      assert.ok((await world.screen(world.linePane)).includes(captured.content.split('\n').at(-1)!.trimEnd()));
    });

    it('pane_process: the tree under the pane where its pid is reported, else a refusal naming paneProcess', async () => {
      const result = await session.client.callTool({ name: 'pane_process', arguments: { pane_key: keys.get(world.linePane)! } });
      if (mux === 'tmux') {
        const report = ok(result) as { pane_key: string; processes: { comm: string }[] };
        assert.deepEqual([report.pane_key, report.processes.map((node) => node.comm)], [keys.get(world.linePane), ['cat']]);
      } else {
        const error = errorOf(result);
        assert.equal(error.code, 'unsupported');
        assert.match(error.message, /paneProcess/);
      }
    });

    it('deliver into a pane that takes lines: the line arrives and the receipt says so', async () => {
      const receipt = ok(await session.client.callTool({ name: 'deliver', arguments: { pane_key: keys.get(world.linePane)!, text: 'hello-drover-42' } })) as {
        status: string;
        pane_key: string;
        typed: boolean;
        reason: string | null;
      };
      assert.deepEqual([receipt.status, receipt.pane_key, receipt.typed], [world.delivered, keys.get(world.linePane), true], String(receipt.reason));
      await eventually('the line in the pane', async () => ((await world.screen(world.linePane)).includes('hello-drover-42') ? true : undefined));
    });

    it('send_text, wait_for_text and send_keys: the text shows, keys go in the multiplexer’s spelling', async () => {
      const pane_key = keys.get(world.linePane)!;
      const typed = ok(await session.client.callTool({ name: 'send_text', arguments: { pane_key, text: 'typed-by-send-text-7', enter: true } }));
      assert.deepEqual([typed.pane_id, typed.pane_key, typed.enter_sent], [world.linePane, pane_key, true]);
      const seen = ok(await session.client.callTool({ name: 'wait_for_text', arguments: { pane_key, text: 'typed-by-send-text-7', timeout_ms: 20_000 } }));
      assert.deepEqual([seen.matched, seen.pane_key], [true, pane_key]);
      const regex = ok(await session.client.callTool({ name: 'wait_for_text', arguments: { pane_id: world.linePane, regex: 'send-text-[0-9]', timeout_ms: 20_000 } }));
      assert.equal(regex.matched, true);
      const missing = ok(await session.client.callTool({ name: 'wait_for_text', arguments: { pane_key, text: 'never-shown-xyz', timeout_ms: 300 } }));
      assert.deepEqual([missing.matched, missing.timeout_ms_used], [false, 300]);
      assert.ok((missing.elapsed_ms as number) >= 300);
      const sent = ok(await session.client.callTool({ name: 'send_keys', arguments: { pane_key, keys: ['Enter'] } }));
      assert.deepEqual([sent.pane_key, sent.keys], [pane_key, 1]);
      // tmux takes its own key names; elsewhere a tmux spelling is refused before anything is sent.
      const inputs = await world.inputs();
      const chord = await session.client.callTool({ name: 'send_keys', arguments: { pane_key, keys: ['C-u'] } });
      if (mux === 'tmux') ok(chord);
      else {
        assert.match(errorOf(chord).message, /ctrl\+u/);
        assert.deepEqual(await world.inputs(), inputs);
      }
    });

    it('refuses a key of another server run with the replaced reason, typing nothing', async () => {
      const inputs = await world.inputs();
      const stale = `local::${mux}::another-run-1::${world.linePane}`;
      for (const [name, args] of [
        ['deliver', { pane_key: stale, text: 'must not be typed' }],
        ['ready', { pane_key: stale }],
        ['capture', { pane_key: stale }],
        ['kill_pane', { pane_key: stale }],
      ] as const) {
        const error = errorOf(await session.client.callTool({ name, arguments: args }));
        assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent'], name);
      }
      assert.deepEqual(await world.inputs(), inputs);
    });

    it('kill_pane by key closes the pane', async () => {
      const killed = ok(await session.client.callTool({ name: 'kill_pane', arguments: { pane_key: keys.get(world.sparePane)! } }));
      assert.deepEqual([killed.pane_id, killed.pane_key], [world.sparePane, keys.get(world.sparePane)]);
      await eventually('the pane to leave the map', async () => {
        const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string }[] };
        return map.panes.some((row) => row.pane_id === world.sparePane) ? undefined : true;
      });
    });

    if (mux !== 'tmux') {
      it('refuses to enable a tmux-library tool, naming what is missing', async () => {
        const result = await sandbox.drover(['mcp', ...world.args, '--enable-tool', 'get_option'], { env: world.env, input: '' });
        assert.equal(result.exitCode, 2);
        assert.match(result.stderrText(), new RegExp(`get_option needs the tmux library .*and ${mux} has none: it is offered on tmux only`));
      });
    }
  });
}

describe('drover mcp finds its tmux server as drover pane does', () => {
  const sandbox = cliSandbox();

  it('takes the server DROVER_MUX_ENDPOINT_TMUX names', async (t) => {
    const server = await startTestServer();
    t.after(() => server.close());
    await server.newSession({ command: ['sleep', '600'], receipt: true });
    const env = { ...sandbox.env, DROVER_MUX: 'tmux', DROVER_MUX_ENDPOINT_TMUX: server.endpoint.socketPath };
    const session = await connectMcp(['--allow', 'observe'], env);
    t.after(() => session.close());
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string }[] };
    const panes = (await server.snapshot()).panes.toArray().map((pane) => pane.paneId);
    assert.deepEqual(map.panes.map((row) => row.pane_id).sort(), [...panes].sort());
    assert.ok(panes.length > 0);
  });
});

describe('drover mcp across a restart of its multiplexer off tmux', () => {
  const sandbox = cliSandbox();

  it('zellij: the keys of the run it bound are refused once the session is started again, typing into and closing none of the new run’s panes', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const env: NodeJS.ProcessEnv = { ...zellij.fake.env, ...sandbox.env, PATH: zellij.fake.env.PATH, DROVER_MUX: 'zellij' };
    const session = await connectMcp(['--tier', 'destructive', '--timeout-ms', '60000'], env);
    t.after(() => session.close());
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
    const keys = new Map(map.panes.map((row) => [row.pane_id, row.pane_key]));
    // Started again without its first pane, the session numbers the rest from 0: the old
    // terminal_0 and terminal_1 keys carry ids that now name the old terminal_1 and terminal_2.
    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const screens = ['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane));
    const inputs = zellij.fake.read().inputs.length;
    for (const [name, args] of [
      ['deliver', { pane_key: keys.get('terminal_1')!, text: 'must not be typed' }],
      ['send_text', { pane_key: keys.get('terminal_1')!, text: 'must not be typed', enter: true }],
      ['kill_pane', { pane_key: keys.get('terminal_0')! }],
    ] as const) {
      const error = errorOf(await session.client.callTool({ name, arguments: args }));
      assert.deepEqual([error.code, error.delivery], ['server_replaced', 'not_sent'], `${name}: ${error.message}`);
    }
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed');
    assert.deepEqual(['terminal_0', 'terminal_1'].map((pane) => zellij.screenOf(pane)), screens, 'both panes are there, as they were');
  });

  it('herdr: a restart keeps the session’s run, so the keys it mapped still reach their own panes', async (t) => {
    const herdr = await openHerdrWorld();
    t.after(() => herdr.close());
    const session = await connectMcp(['--mux', 'herdr', '--tier', 'destructive'], { ...sandbox.env, DROVER_MUX_ENDPOINT_HERDR: herdr.socketPath });
    t.after(() => session.close());
    const map = ok(await session.client.callTool({ name: 'pane_map', arguments: {} })) as { panes: { pane_id: string; pane_key: string }[] };
    const shell = (await herdr.port.snapshot()).panes.find((pane) => pane.spaceLabel === 'scratch')!.paneId;
    const pane_key = map.panes.find((row) => row.pane_id === shell)!.pane_key;
    await herdr.server.restart();
    const typed = ok(await session.client.callTool({ name: 'send_text', arguments: { pane_key, text: 'after-the-restart', enter: true } }));
    assert.deepEqual([typed.pane_id, typed.pane_key], [shell, pane_key]);
    assert.deepEqual(herdr.server.inputs().filter((input) => JSON.stringify(input).includes('after-the-restart')).map((input) => input.paneId), [shell]);
  });
});

describeMcpOn('tmux', tmuxWorld);
describeMcpOn('herdr', herdrWorld);
describeMcpOn('zellij', zellijWorld);

