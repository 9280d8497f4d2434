/**
 * A conformance world over a real tmux server owned by the test (test/support/tmux.ts): the
 * TmuxAdapter behind the gate, perturbed with tmux's own commands. A killed tmux server cannot
 * come back with the same panes, and no terminal is attached, so this world offers neither a
 * restart nor a revival and cannot bring a space to the front.
 */
import { processDiagnostics } from '../../src/process/index.js';
import type { Server } from '../../src/tmux/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type conformance } from '../../src/mux/index.js';
import { startTestServer } from '../support/tmux.js';

/** A plain POSIX shell, so that no rc file of the machine's own shell slows or colours the panes. */
export const SHELL = ['/bin/sh'];

/** Two sessions; the first has two windows, its first window two panes. */
export async function seed(server: Server): Promise<void> {
  const work = await server.newSession({ name: 'work', windowName: 'editor', width: 120, height: 40, command: SHELL });
  const [editor] = await work.listWindows();
  await editor!.split({ direction: 'horizontal', command: SHELL });
  await work.newWindow({ name: 'logs', command: SHELL });
  await server.newSession({ name: 'scratch', width: 100, height: 30, command: SHELL });
}

/** Waits, within a bound, for something a pane's shell makes true eventually. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > until) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function native(paneId: string): string {
  const id = tmuxIds.nativePane(paneId);
  if (id === undefined) throw new Error(`${paneId} is not a tmux pane id`);
  return id;
}

export async function openTmuxWorld(): Promise<conformance.MuxConformanceWorld> {
  const server = await startTestServer();
  await seed(server);
  // Some scrollback, so that a recent read reaches further than the screen.
  const logs = (await server.snapshot()).panes.toArray().find((pane) => pane.window().windowName === 'logs')!;
  await server.pane(logs.paneId).sendText('seq 1 200');
  await server.pane(logs.paneId).sendKeys(['Enter']);
  await eventually(
    async () => (await server.pane(logs.paneId).display('#{history_size}')).toString('utf8').trim(),
    (size) => Number(size) > 0,
  );
  const port = createMuxPort(new TmuxAdapter({ server, resyncMs: 500 }));
  let printed = 0;
  return {
    port,
    screenless: true,
    transportUses: async () => processDiagnostics().spawned,
    reconnect: async () => undefined,
    takeDown: async () => {
      await server.run(['kill-server']).catch(() => undefined);
    },
    renameTabOutOfBand: async (tabId, label) => {
      await server.window(tmuxIds.nativeTab(tabId)!).rename(label);
    },
    setProgramTitle: async (paneId, title) => {
      await server.pane(native(paneId)).setTitle(title);
    },
    changePane: async (paneId) => {
      printed += 1;
      const pane = server.pane(native(paneId));
      const before = (await pane.capture()).toString('utf8');
      await pane.sendText(`echo changed-${printed}`);
      await pane.sendKeys(['Enter']);
      await eventually(async () => (await pane.capture()).toString('utf8'), (screen) => screen !== before && screen.includes(`\nchanged-${printed}`));
    },
    endPane: async (paneId) => {
      await server.pane(native(paneId)).kill();
    },
    focusOutOfBand: async (paneId) => {
      const window = (await server.pane(native(paneId)).display('#{window_id}')).toString('utf8').trim();
      await server.runGroup([
        ['select-window', '-t', window],
        ['select-pane', '-t', native(paneId)],
      ]);
    },
    close: async () => {
      await port.close();
      await server.close();
    },
  };
}
