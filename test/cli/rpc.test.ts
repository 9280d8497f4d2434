import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RPC_PROTOCOL, RPC_VERSION, RpcClient, type RpcEvent, type RpcReply } from '../../src/hosts/index.js';
import { LongLivedChild } from '../../src/process/index.js';
import { packageVersion } from '../../src/cli/version.js';
import { CLI_PATH, cliSandbox } from '../support/cli.js';
import { RestartableServer, useTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

describe('drover rpc --stdio', () => {
  const sandbox = cliSandbox();
  const tmux = useTestServer();
  let child: LongLivedChild;
  let client: RpcClient;
  let socket: string;

  before(async () => {
    socket = tmux.server.endpoint.socketPath;
    await tmux.server.newSession({ name: 'rpc', receipt: true });
    child = await LongLivedChild.start([process.execPath, CLI_PATH, 'rpc', '--stdio'], { env: sandbox.env, cwd: sandbox.dir });
    client = await RpcClient.connect({ input: child.stdout, output: child.stdin }, { timeoutMs: 10_000 });
  });
  after(async () => {
    child.stdin.end();
    await child.stop(2000);
  });

  const ask = (method: string, params: Record<string, unknown>): Promise<RpcReply> => client.request(method, { socket_path: socket, ...params }, { timeoutMs: 20_000 });

  it('speaks first: protocol, version, this drover, its multiplexers and exactly the offered commands', () => {
    const handshake = client.handshake;
    assert.equal(handshake.protocol, RPC_PROTOCOL);
    assert.equal(handshake.version, RPC_VERSION);
    assert.equal(handshake.drover_version, packageVersion());
    assert.ok(handshake.muxes.some((mux) => mux.mux === 'tmux'), JSON.stringify(handshake.muxes));
    for (const method of ['pane.map', 'pane.capture', 'pane.ready', 'pane.deliver', 'pane.questions', 'pane.kill', 'pane.keys', 'mux.snapshot', 'message.send', 'message.poll', 'member.list', 'doctor', 'ping', 'watch', 'unwatch']) {
      assert.ok(handshake.capabilities.includes(method), `offers ${method}`);
    }
    for (const method of ['rpc', 'web', 'mcp', 'up', 'down', 'message.listen', 'agent.setup', 'agent.hook']) assert.ok(!handshake.capabilities.includes(method), `does not offer ${method}`);
  });

  it("answers a command with the very document and exit status the CLI prints for it", async () => {
    const reply = await ask('pane.map', { all_sessions: true });
    const cli = await sandbox.drover(['-S', socket, 'pane', 'map', '--all-sessions', '--json']);
    assert.equal(cli.exitCode, 0, cli.stderrText());
    assert.ok('result' in reply, JSON.stringify(reply));
    assert.equal(reply.exit_status, 0);
    assert.deepEqual(reply.result, JSON.parse(cli.text()));
    assert.ok(Array.isArray(reply.result) && reply.result.length > 0, 'the map has the test server’s pane');
  });

  it("answers a command's failure with the CLI's error code and exit status", async () => {
    const reply = await ask('pane.capture', { pane: '%999' });
    const cli = await sandbox.drover(['-S', socket, 'pane', 'capture', '%999', '--json']);
    const cliError = (JSON.parse(cli.text()) as { error: { code: string } }).error;
    assert.ok('error' in reply, JSON.stringify(reply));
    assert.equal(reply.error.code, 'pane_not_found');
    assert.equal(reply.error.code, cliError.code);
    assert.equal(reply.exit_status, cli.exitCode);
    assert.equal(reply.exit_status, 2);
  });

  it('refuses an unknown method and a param the command does not take, naming what it offers', async () => {
    const unknown = await ask('pane.frobnicate', {});
    assert.ok('error' in unknown && unknown.error.code === 'unknown_method', JSON.stringify(unknown));
    assert.match(unknown.error.message, /pane\.map/);
    const typo = await ask('pane.capture', { pane: '%0', line: 5 });
    assert.ok('error' in typo && typo.error.code === 'usage', JSON.stringify(typo));
    assert.match(typo.error.message, /takes no param line; it takes .*lines/);
    const web = await ask('web', {});
    assert.ok('error' in web && web.error.code === 'unknown_method', 'drover web is not offered over rpc');
    const fanOut = await ask('pane.map', { all_sessions: true, all_hosts: true });
    assert.ok('error' in fanOut && fanOut.error.code === 'usage', 'a host answers for itself only: links never chain');
    assert.match(fanOut.error.message, /takes no param all_hosts/);
  });

  it('passes an argument that looks like an option as an argument', async () => {
    const reply = await ask('pane.capture', { pane: '-x' });
    assert.ok('error' in reply, JSON.stringify(reply));
    assert.doesNotMatch(reply.error.message, /unknown option/, 'commander did not take it for an option');
    assert.match(reply.error.message, /"-x" does not name a pane/, 'the command itself judged it as a pane');
  });

  it('streams a pane event when the watched pane changes, until unwatch', async () => {
    const paneId = (await tmux.server.snapshot()).panes.toArray()[0]?.paneId;
    assert.ok(paneId);
    const pane = tmux.server.pane(paneId);
    const events: RpcEvent['event'][] = [];
    const watch = await client.watch({ socket_path: socket, panes: [pane.id] }, (event) => events.push(event), { timeoutMs: 20_000 });
    await pane.sendText('echo watched');
    await pane.sendKeys(['Enter']);
    await eventually('a pane event for the watched pane', () => events.some((event) => event.kind === 'pane' && event.pane_id === pane.id));
    await watch.close();
    const seen = events.length;
    // A second watch sees the next change; by then the first one would have seen it too.
    const later: RpcEvent['event'][] = [];
    const second = await client.watch({ socket_path: socket, panes: [pane.id] }, (event) => later.push(event), { timeoutMs: 20_000 });
    await pane.sendText('echo after');
    await pane.sendKeys(['Enter']);
    await eventually('the second watch to see the change', () => later.some((event) => event.kind === 'pane'));
    await second.close();
    assert.equal(events.length, seen, 'no events reach a closed watch');
  });
});

describe('drover rpc --stdio binds each tmux server once for all its calls', () => {
  const sandbox = cliSandbox();
  let tmux: RestartableServer;
  let child: LongLivedChild;
  let client: RpcClient;

  before(async () => {
    tmux = new RestartableServer();
    await tmux.start();
    child = await LongLivedChild.start([process.execPath, CLI_PATH, 'rpc', '--stdio'], { env: sandbox.env, cwd: sandbox.dir });
    client = await RpcClient.connect({ input: child.stdout, output: child.stdin }, { timeoutMs: 10_000 });
  });
  after(async () => {
    child?.stdin.end();
    await child?.stop(2000);
    await tmux?.dispose();
  });

  const ask = (method: string, params: Record<string, unknown>): Promise<RpcReply> => client.request(method, { socket_path: tmux.socketPath, ...params }, { timeoutMs: 20_000 });
  const controlClients = async (): Promise<string[]> =>
    (await tmux.tmuxCommand('list-clients', '-F', '#{client_control_mode} #{client_pid}'))
      .split('\n')
      .filter((line) => line.startsWith('1 '))
      .map((line) => line.slice(2));
  const keysOf = (reply: RpcReply): string[] => {
    assert.ok('result' in reply && reply.exit_status === 0, JSON.stringify(reply));
    return (reply.result as { pane_key: string }[]).map((row) => row.pane_key);
  };

  it('answers every call over one control client, binds a server started again at the socket, and leaves no client behind', async () => {
    const first = keysOf(await ask('pane.map', { all_sessions: true }));
    const held = await controlClients();
    assert.equal(held.length, 1, 'one control client stays attached between calls');
    assert.deepEqual(keysOf(await ask('pane.map', { all_sessions: true })), first);
    const snapshot = await ask('mux.snapshot', {});
    assert.equal(snapshot.exit_status, 0, JSON.stringify(snapshot));
    assert.deepEqual(await controlClients(), held, 'later calls, of any command, use the same client');

    // The same socket path, a new server: its panes are mapped, not refused as another run's.
    await tmux.restart();
    const second = keysOf(await ask('pane.map', { all_sessions: true }));
    assert.equal(second.length, 1);
    assert.notEqual(second[0], first[0], 'the new server run has other pane keys');
    const stale = await ask('pane.capture', { pane: first[0] });
    assert.ok('error' in stale, JSON.stringify(stale));
    assert.deepEqual([stale.error.code, stale.exit_status], ['server_replaced', 6]);

    child.stdin.end();
    await child.stop(5000);
    await eventually('the held control client to go', async () => ((await controlClients()).length === 0 ? true : undefined));
  });
});
