/**
 * tmux clients started where no UTF-8 locale is named (a container, cron, a bare ssh command):
 * tmux then replaces control and non-ASCII characters of a client's output with "_" unless the
 * client says it takes UTF-8, which every client drover runs for its own reading does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMuxPort, TmuxAdapter } from '../../src/mux/index.js';
import { Server } from '../../src/tmux/index.js';
import { testEnvironment } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

/** The test environment with every locale variable removed: tmux's default is then not UTF-8. */
function withoutLocale(): NodeJS.ProcessEnv {
  const env = testEnvironment();
  for (const name of Object.keys(env)) if (name === 'LANG' || name.startsWith('LC_')) delete env[name];
  return env;
}

describe('tmux clients where no UTF-8 locale is named', () => {
  it('read non-ASCII names and what runs in a pane whole, over a client per command and over a control connection', async (t) => {
    const env = withoutLocale();
    const server = await Server.start({ env });
    t.after(() => server.close());
    const { session } = await server.newSession({ name: 'locale', width: 80, height: 24, command: ['sleep', '600'], receipt: true });
    const { pane } = await session.newWindow({ name: 'résumé ✓', command: ['sleep', '600'], receipt: true });

    for (const transport of ['spawn', 'control'] as const) {
      const binding = await Server.open(server.endpoint, { env, transport });
      t.after(() => binding.close());
      // A snapshot frames each field by its length in bytes: "_" for "é" used to break it.
      const record = (await binding.snapshot()).pane(pane.id);
      assert.equal(record?.window().windowName, 'résumé ✓', transport);
      const port = createMuxPort(new TmuxAdapter({ server: binding }));
      t.after(() => port.close());
      // Its fields are read apart at a control character, which tmux used to turn into "_".
      const process = await eventually(`${transport}: sleep in the pane`, async () => {
        const outcome = await port.readProcess(pane.id);
        return outcome.ok && outcome.value.foreground === 'sleep' ? outcome.value : undefined;
      });
      assert.equal(process.pid, record?.panePid, transport);
      assert.equal(process.dead, false, transport);
    }
  });
});
