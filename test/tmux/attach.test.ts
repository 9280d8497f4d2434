import assert from 'node:assert/strict';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AbortedError, ArgumentError, type Server, type Session } from '../../src/tmux/index.js';
import { PseudoTerminal, PYTHON3 } from '../support/pty.js';
import { withServer } from '../support/tmux.js';
import { eventually } from '../support/wait.js';

const NO_PTY = PYTHON3 === undefined ? 'python3 (whose pty module opens the pseudo-terminal) is not installed' : false;
if (NO_PTY && process.env.CI === 'true') throw new Error(`${NO_PTY}; CI must run the attach tests`);

/** Runs fn with a real pseudo-terminal opened the way a caller opens its own: read-write, not made the controlling terminal. */
async function withTerminal(fn: (terminal: PseudoTerminal, fd: number) => Promise<void>): Promise<void> {
  const terminal = await PseudoTerminal.open();
  try {
    const fd = openSync(terminal.path, constants.O_RDWR | constants.O_NOCTTY);
    try {
      await fn(terminal, fd);
    } finally {
      closeSync(fd);
    }
  } finally {
    await terminal.close();
  }
}

/** The client attached on `tty`, failing at once if the attachment ended before one appeared. */
async function attachedClient(server: Server, tty: string, attachment: Promise<unknown>): Promise<{ clientTermname: string | null }> {
  const ended = attachment.then(
    (result) => Promise.reject(new Error(`the attachment ended before a client appeared: ${JSON.stringify(result)}`)),
    (error: unknown) => Promise.reject(error instanceof Error ? error : new Error(String(error))),
  );
  const found = eventually('a client on the terminal', async () => (await server.listClients()).find((client) => client.clientTty === tty));
  return Promise.race([found, ended]);
}

async function paneSession(server: Server): Promise<Session> {
  return server.newSession({ name: 'attached', command: ['sh', '-c', 'printf "attach-marker-%s\\n" 42; exec cat'] });
}

describe('attach', { skip: NO_PTY }, () => {
  it('attaches the terminal it is given with the TERM it is given, until the client detaches; the daemon stays', async () => {
    await withServer(async (server) => {
      const session = await paneSession(server);
      await withTerminal(async (terminal, fd) => {
        const attachment = server.attach(session, { terminal: fd, term: 'screen-256color' });
        const client = await attachedClient(server, terminal.path, attachment);
        assert.equal(client.clientTermname, 'screen-256color');
        await eventually("the pane's output on the given terminal", () => terminal.written().includes('attach-marker-42'));
        await server.run(['detach-client', '-t', terminal.path]);
        const result = await attachment;
        assert.equal(result.exitCode, 0);
        assert.deepEqual(await server.listClients(), []);
        assert.deepEqual((await server.listSessions()).map((s) => s.id), [session.id]);
      });
    });
  });

  it('an aborted attachment ends its client, leaves the terminal in the modes it had, and keeps the daemon', async () => {
    await withServer(async (server) => {
      const session = await paneSession(server);
      await withTerminal(async (terminal, fd) => {
        const before = await terminal.modes();
        const controller = new AbortController();
        const attachment = server.attach(session, { terminal: fd, term: 'xterm-256color', signal: controller.signal });
        await attachedClient(server, terminal.path, attachment);
        await eventually('tmux to put the terminal in raw mode', async () => (await terminal.modes()) !== before);
        controller.abort();
        await assert.rejects(attachment, AbortedError);
        assert.equal(await terminal.modes(), before);
        assert.deepEqual(await server.listClients(), []);
        assert.deepEqual((await server.listSessions()).map((s) => s.id), [session.id]);
      });
    });
  });

  it('refuses, before starting a client, a descriptor that is not a terminal and a missing or malformed TERM', async () => {
    await withServer(async (server) => {
      const session = await server.newSession({ command: ['cat'] });
      const dir = mkdtempSync(join(tmpdir(), 'drover-test-'));
      const file = openSync(join(dir, 'not-a-terminal'), 'w+');
      try {
        await assert.rejects(server.attach(session, { terminal: file, term: 'xterm' }), (error: unknown) => error instanceof ArgumentError && /terminal/.test(error.message));
        await withTerminal(async (_terminal, fd) => {
          for (const term of ['', 'xterm 256', 'xterm\0', undefined]) {
            await assert.rejects(server.attach(session, { terminal: fd, term: term as string }), (error: unknown) => error instanceof ArgumentError && /TERM/.test(error.message), String(term));
          }
        });
        assert.deepEqual(await server.listClients(), []);
      } finally {
        closeSync(file);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
