import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { LongLivedChild, type RunResult } from '../../src/process/index.js';
import { request } from '../bridge/support.js';
import { openZellijWorld } from '../fixtures/zellij/world.js';
import { CLI_PATH, cliSandbox, type CliSandbox } from '../support/cli.js';
import { RestartableServer, startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

function json<T>(result: RunResult, code = 0): T {
  assert.equal(result.exitCode, code, `exit ${result.exitCode}: ${result.stderrText()}${result.text()}`);
  return JSON.parse(result.text()) as T;
}

type RestartSnapshot = { server: { incarnation: string; restarted: { previous_incarnation: string } | null }; panes: { pane_id: string; pane_key: string }[] };

/** `drover web --json` started with `args` and `env`, once it printed its address, and a device paired with it through `drover web pair`. */
async function pairedWeb(t: TestContext, sandbox: CliSandbox, args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ child: LongLivedChild; origin: string; token: string }> {
  const child = await LongLivedChild.start([process.execPath, CLI_PATH, ...args, 'web', '--port', '0', '--json'], { env, cwd: sandbox.dir });
  t.after(() => child.stop(2000, 'SIGKILL').then(() => undefined));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const { url } = await eventually('drover web to print its address', () => {
    try {
      return JSON.parse(out) as { url: string };
    } catch {
      return undefined;
    }
  });
  const origin = url.replace(/\/$/, '');
  const { code } = json<{ code: string }>(await sandbox.drover(['web', 'pair', '--json'], { env }));
  const paired = await request(`${origin}/api/pair`, { method: 'POST', body: { code }, headers: { Origin: origin } });
  return { child, origin, token: /drover_device=([^;]+)/.exec(String(paired.headers['set-cookie']))![1]! };
}

describe('drover web (the bundled CLI)', () => {
  const sandbox = cliSandbox();

  it('serves over the server -S names, pairs with the code `drover web pair` prints, lists and revokes devices, and stops on Ctrl-C', async (t) => {
    const tmux = await startTestServer();
    t.after(() => tmux.close());
    await tmux.newSession({ name: 'cli', command: ['sh', '-c', 'echo web-cli-ready; exec cat'] });
    const child = await LongLivedChild.start([process.execPath, CLI_PATH, '-S', tmux.endpoint.socketPath, 'web', '--port', '0', '--json'], { env: sandbox.env, cwd: sandbox.dir });
    t.after(() => child.stop(2000, 'SIGKILL').then(() => undefined));
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const started = await eventually('drover web to print its address', () => {
      try {
        return JSON.parse(out) as { url: string; port: number; mux: string; read_only: boolean; audit_log: string };
      } catch {
        return undefined;
      }
    });
    assert.equal(started.mux, 'tmux');
    assert.match(started.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const origin = started.url.replace(/\/$/, '');

    const pairing = json<{ code: string; expires_at: string; url: string }>(await sandbox.drover(['web', 'pair', '--json']));
    assert.equal(pairing.url, `${started.url}#pair=${pairing.code}`, 'the address to open carries the code after #');
    const text = await sandbox.drover(['web', 'pair']);
    assert.match(text.text(), /^pairing code: [A-Z2-9]{4}-[A-Z2-9]{4} \(valid 10 minutes, once\)\nopen: http/);
    const code = /pairing code: (\S+)/.exec(text.text())![1]!;
    const paired = await request(`${origin}/api/pair`, { method: 'POST', body: { code, name: 'laptop' }, headers: { Origin: origin } });
    assert.equal(paired.status, 200, paired.text);
    const token = /drover_device=([^;]+)/.exec(String(paired.headers['set-cookie']))![1]!;

    const snapshot = await request(`${origin}/api/snapshot`, { token });
    assert.equal(snapshot.status, 200);
    assert.deepEqual((snapshot.json.spaces as { label: string }[]).map((space) => space.label), ['cli']);
    const page = await request(`${origin}/`);
    assert.match(page.text, /<script type="module" src="\/assets\/page.js"><\/script>/, 'the page is bundled beside the CLI');
    assert.equal((await request(`${origin}/assets/page.js`)).status, 200);

    const devices = json<{ devices: { device_id: string; name: string; revoked_at: string | null }[] }>(await sandbox.drover(['web', 'devices', '--json']));
    assert.deepEqual(
      devices.devices.map((device) => [device.name, device.revoked_at]),
      [['laptop', null]],
    );
    const revoked = await sandbox.drover(['web', 'revoke', devices.devices[0]!.device_id]);
    assert.equal(revoked.exitCode, 0, revoked.stderrText());
    assert.match(revoked.text(), /^revoked [0-9a-f]{8} \(laptop\)/);
    assert.equal((await request(`${origin}/api/snapshot`, { token })).json.error?.code, 'unauthorized', 'revoked from another process, refused at once');
    const unknown = await sandbox.drover(['web', 'revoke', 'nope']);
    assert.equal(unknown.exitCode, 1);
    assert.match(unknown.stderrText(), /no paired device has the id "nope"/);

    const serverRecord = join(sandbox.env.DROVER_STATE_DIR!, 'web', 'server.json');
    assert.equal(existsSync(serverRecord), true);
    const exit = await child.stop(10_000, 'SIGINT');
    assert.equal(exit.exitCode, 130);
    assert.equal(existsSync(serverRecord), false, 'a stopped server leaves no address behind');
  });

  it('refuses a non-loopback address before pairing, and bad flags as usage errors', async (t) => {
    const tmux = await startTestServer();
    t.after(() => tmux.close());
    const isolated = { DROVER_STATE_DIR: join(sandbox.dir, 'fresh-state') };
    const wide = await sandbox.drover(['-S', tmux.endpoint.socketPath, 'web', '--host', '0.0.0.0', '--port', '0'], { env: isolated });
    assert.equal(wide.exitCode, 1);
    assert.match(wide.stderrText(), /drover web listens on 0\.0\.0\.0 \(other machines can reach it\) only once pairing is set up: run `drover web pair` first/);
    const badPort = await sandbox.drover(['-S', tmux.endpoint.socketPath, 'web', '--port', 'eighty']);
    assert.equal(badPort.exitCode, 2);
    assert.match(badPort.stderrText(), /--port must be a whole number from 0 to 65535/);
    const noId = await sandbox.drover(['web', 'revoke']);
    assert.equal(noId.exitCode, 2);
  });

  it('keeps serving across a tmux server restarted at the same socket: the new server’s panes, and the old %0’s key refused', async (t) => {
    const tmux = new RestartableServer();
    t.after(() => tmux.dispose());
    await tmux.start(['cat']);
    const state = { DROVER_STATE_DIR: join(sandbox.dir, 'restart-state') };
    const { child, origin, token } = await pairedWeb(t, sandbox, ['-S', tmux.socketPath], { ...sandbox.env, ...state });
    const first = (await request(`${origin}/api/snapshot`, { token })).json as unknown as RestartSnapshot;
    const oldKey = first.panes.find((pane) => pane.pane_id === '%0')!.pane_key;

    await tmux.restart(['cat']);
    const after = await eventually('the snapshot of the new server', async () => {
      const view = (await request(`${origin}/api/snapshot`, { token })).json as unknown as RestartSnapshot;
      return view.server?.restarted === null || view.server === undefined ? undefined : view;
    });
    assert.equal(after.server.restarted?.previous_incarnation, first.server.incarnation);
    assert.deepEqual(after.panes.map((pane) => pane.pane_key), [`local::tmux::${after.server.incarnation}::%0`]);
    const refused = await request(`${origin}/api/panes/${encodeURIComponent(oldKey)}/reply`, { method: 'POST', token, body: { text: 'meant-for-the-old-server' }, headers: { Origin: origin } });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.error?.code, 'server_replaced');
    assert.doesNotMatch(await tmux.history('%0'), /meant-for-the-old-server/);
    assert.equal((await child.stop(10_000, 'SIGINT')).exitCode, 130);
  });

  it('keeps serving across a zellij session started again under its name: the old keys refused with nothing typed, then the new run’s panes', async (t) => {
    const zellij = await openZellijWorld();
    t.after(() => zellij.close());
    const env: NodeJS.ProcessEnv = { ...zellij.fake.env, ...sandbox.env, PATH: zellij.fake.env.PATH, DROVER_MUX: 'zellij', DROVER_STATE_DIR: join(sandbox.dir, 'zellij-state') };
    const { child, origin, token } = await pairedWeb(t, sandbox, [], env);
    const first = (await request(`${origin}/api/snapshot`, { token })).json as unknown as RestartSnapshot;
    const oldKey = first.panes.find((pane) => pane.pane_id === 'terminal_1')!.pane_key;

    // Started again without its first pane: the new run's terminal_1 is the old terminal_2.
    await zellij.endPane('terminal_0');
    await zellij.restartMux();
    const inputs = zellij.fake.read().inputs.length;
    const refused = await request(`${origin}/api/panes/${encodeURIComponent(oldKey)}/reply`, { method: 'POST', token, body: { text: 'meant-for-the-old-run' }, headers: { Origin: origin } });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.error?.code, 'server_replaced');
    assert.equal(zellij.fake.read().inputs.length, inputs, 'nothing was typed');
    const after = await eventually('the snapshot of the new run', async () => {
      const answer = await request(`${origin}/api/snapshot`, { token });
      const view = answer.json as unknown as RestartSnapshot;
      return answer.status === 200 && view.server.restarted !== null ? view : undefined;
    });
    assert.equal(after.server.restarted?.previous_incarnation, first.server.incarnation);
    assert.deepEqual(after.panes.map((pane) => pane.pane_key).sort(), ['terminal_0', 'terminal_1'].map((pane) => `local::zellij::${after.server.incarnation}::${pane}`));
    assert.equal((await child.stop(10_000, 'SIGINT')).exitCode, 130);
  });
});
