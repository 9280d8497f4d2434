import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Endpoint, Server, ServerReplacedError } from '../../src/tmux/index.js';
import { RestartableServer } from '../support/tmux.js';

describe('server identity', () => {
  for (const transport of ['spawn', 'control'] as const) {
    it(`refuses a server restarted at the same socket path (${transport} transport): nothing is typed`, async () => {
      const tmux = new RestartableServer();
      try {
        await tmux.start();
        const server = await Server.open(Endpoint.fromSocketPath(tmux.socketPath), { transport });
        try {
          await server.pane('%0').sendText('first-server');
          const firstPid = Number((await server.display('#{pid}')).toString('latin1'));
          await tmux.restart();
          await assert.rejects(server.pane('%0').sendText('typed-into-a-stranger'), ServerReplacedError);
          await assert.rejects(server.pane('%0').kill(), ServerReplacedError);
          await assert.rejects(server.snapshot(), ServerReplacedError);
          await assert.rejects(server.openControl(), ServerReplacedError);
          // With its session named, a control client is started at once: its own guard refuses to attach.
          await assert.rejects(server.openControl({ session: server.session('$0') }), ServerReplacedError);
          assert.doesNotMatch(await tmux.history('%0'), /typed-into-a-stranger/);
          assert.equal((await server.incarnation()).pid, firstPid, 'the binding keeps the server it was opened on');
        } finally {
          await server.close();
        }
      } finally {
        await tmux.dispose();
      }
    });
  }

  it('knows a $TMUX that names its server through another path, and not one of another server', async () => {
    const tmux = new RestartableServer();
    try {
      await tmux.start();
      const link = join(tmux.dir, 'link.sock');
      symlinkSync(tmux.socketPath, link);
      const server = await Server.open(Endpoint.fromSocketPath(link));
      try {
        const { pid } = await server.incarnation();
        assert.equal(await server.hosts({ TMUX: `${tmux.socketPath},${pid},0` }), true);
        assert.equal(await server.hosts({ TMUX: `${link},${pid},0` }), true);
        assert.equal(await server.hosts({ TMUX: `${tmux.socketPath},${pid + 1},0` }), false, 'another server once listened there');
        assert.equal(await server.hosts({ TMUX: `${join(tmux.dir, 'other.sock')},${pid},0` }), false);
        assert.equal(await server.hosts({}), false);
      } finally {
        await server.close();
      }
    } finally {
      await tmux.dispose();
    }
  });
});
