/**
 * A conformance world over a real tmux server owned by the test (test/support/tmux.ts): the
 * TmuxAdapter behind the gate, perturbed with tmux's own commands. A terminal client, in a
 * pane of a second owned server (the pty it needs), shows the first session, so that focusing
 * a pane of the other session must bring that space to the front. A pane of the other session
 * runs a raw-mode recorder of its input. The port opens its own binding from the socket path,
 * as drover's CLI and web do. A restart kills the server and starts another at the same socket
 * path with four shells (%0–%3): a new run whose ids name other panes. A killed tmux server
 * cannot come back with the same panes, so this world offers no revival.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processDiagnostics } from '../../src/process/index.js';
import type { Server } from '../../src/tmux/index.js';
import { createMuxPort, TmuxAdapter, tmuxIds, type conformance } from '../../src/mux/index.js';
import { RestartableServer, startTestServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

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

function native(paneId: string): string {
  const id = tmuxIds.nativePane(paneId);
  if (id === undefined) throw new Error(`${paneId} is not a tmux pane id`);
  return id;
}

/**
 * A pane program that asks for bracketed paste (ESC[?2004h, as agents' composers do) and hands
 * every byte its terminal delivers, unchanged, to a file.
 */
function recorderCommand(file: string): string[] {
  return ['/bin/sh', '-c', 'stty raw -echo && printf "\\033[?2004h" && : > "$1.part" && mv "$1.part" "$1" && exec cat >> "$1"', 'recorder', file];
}

/** Attaches a terminal client of `server` to `session` inside a pane of `host`, and waits for it. */
async function attachTerminal(server: Server, host: Server, session: string): Promise<void> {
  const { executable, socketPath } = server.endpoint;
  await host.newSession({ name: 'terminal', width: 120, height: 40, command: ['env', '-u', 'TMUX', '-u', 'TMUX_PANE', executable, '-S', socketPath, 'attach-session', '-t', session] });
  await eventually('the world to attach a terminal client', async () =>
    (await server.snapshot({ clients: true })).clients.toArray().some((client) => !client.clientControlMode),
  );
}

/** Runs `body` while a terminal client of `server` shows `session` (from a pane of a second owned server). */
export async function withAttachedTerminal<T>(server: Server, session: string, body: () => Promise<T>): Promise<T> {
  const host = await startTestServer();
  try {
    await attachTerminal(server, host, session);
    return await body();
  } finally {
    await host.close();
  }
}

/** Seeds the world, attaches its terminal and starts its recorder; returns the recorder's tmux pane id. */
async function prepare(server: Server, host: Server, inputFile: string): Promise<string> {
  await seed(server);
  await attachTerminal(server, host, 'work');
  const scratch = (await server.snapshot()).sessions.toArray().find((session) => session.sessionName === 'scratch')!;
  const recorder = await server.session(scratch.sessionId).newWindow({ name: 'input', command: recorderCommand(inputFile) });
  const [recorderPane] = await recorder.listPanes();
  await eventually('the input recorder to start', () => readFile(inputFile).then(() => true, () => false));
  // Some scrollback, so that a recent read reaches further than the screen.
  const logs = (await server.snapshot()).panes.toArray().find((pane) => pane.window().windowName === 'logs')!;
  await server.pane(logs.paneId).sendText('seq 1 200');
  await server.pane(logs.paneId).sendKeys(['Enter']);
  await eventually('scrollback in the logs pane', async () => Number((await server.pane(logs.paneId).display('#{history_size}')).toString('utf8').trim()) > 0);
  // A shell draws its prompt on its own schedule; a check that compares two reads of a pane
  // must not start while one is still doing so.
  const shells = (await server.snapshot()).panes.toArray().filter((pane) => pane.paneId !== recorderPane!.id);
  await eventually('every shell of the world to draw its prompt', async () => {
    for (const pane of shells) if ((await server.pane(pane.paneId).capture()).toString('utf8').trim() === '') return false;
    return true;
  });
  return recorderPane!.id;
}

export async function openTmuxWorld(): Promise<conformance.MuxConformanceWorld> {
  const server = await startTestServer();
  const host = await startTestServer();
  const scratchDir = await mkdtemp(join(tmpdir(), 'drover-world-'));
  const inputFile = join(scratchDir, 'input');
  const successor = new RestartableServer(server.endpoint.socketPath);
  const retire = async (): Promise<void> => {
    try {
      await successor.dispose();
      await server.close();
    } finally {
      await host.close();
      await rm(scratchDir, { recursive: true, force: true });
    }
  };
  let recorderPane: string;
  try {
    recorderPane = await prepare(server, host, inputFile);
  } catch (error) {
    await retire();
    throw error;
  }
  const openPort = () => createMuxPort(new TmuxAdapter({ endpoint: server.endpoint, resyncMs: 500 }));
  const port = openPort();
  let printed = 0;
  return {
    port,
    recorder: { paneId: tmuxIds.pane(recorderPane), received: () => readFile(inputFile) },
    transportUses: async () => processDiagnostics().spawned,
    reconnect: async () => undefined,
    restartMux: async () => {
      await successor.restart(SHELL);
      for (let i = 0; i < 3; i += 1) await successor.tmuxCommand('split-window', '-d', ...SHELL);
    },
    openPort,
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
      await eventually(`changed-${printed} on the pane`, async () => {
        const screen = (await pane.capture()).toString('utf8');
        return screen !== before && screen.includes(`\nchanged-${printed}`);
      });
    },
    endPane: async (paneId) => {
      await server.pane(native(paneId)).kill();
    },
    focusOutOfBand: async (paneId) => {
      // What an operator's choose-tree does: the pane's window and pane, and their own screen to its session.
      const [session, window] = (await server.pane(native(paneId)).display('#{session_id} #{window_id}')).toString('utf8').trim().split(' ');
      const terminals = (await server.snapshot({ clients: true })).clients.toArray().filter((client) => !client.clientControlMode && client.clientTty !== null);
      await server.runGroup([
        ['select-window', '-t', window!],
        ['select-pane', '-t', native(paneId)],
        ...terminals.map((client) => ['switch-client', '-c', client.clientTty!, '-t', session!]),
      ]);
    },
    close: async () => {
      try {
        await port.close();
      } finally {
        await retire();
      }
    },
  };
}
