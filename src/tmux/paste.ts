import { randomBytes } from 'node:crypto';
import { leaveModeArgs, pasteBufferArgs } from './commands.js';
import { Deadline, type OperationOptions } from './deadline.js';
import type { Pane } from './handles.js';

export interface BufferPasteOptions extends OperationOptions {
  /**
   * true: paste-buffer -p, so a program that asked for bracketed paste reads the text as one
   * paste and its line breaks as line breaks, not as Enter. false: the bytes arrive as if typed.
   */
  readonly bracketed: boolean;
  /** What a line feed becomes (paste-buffer -s); tmux's default is a carriage return. */
  readonly separator?: string;
  /**
   * First return a pane that a mode holds (copy mode…) to its live input, in the same tmux
   * invocation, so a person entering copy mode a moment earlier does not keep the pane there.
   */
  readonly leaveMode?: boolean;
}

/**
 * Pastes text into a pane through a tmux buffer of its own, in one tmux invocation under one
 * deadline: load-buffer (the text on the client's stdin), then paste-buffer -d, which deletes
 * the buffer. The name is unique, so concurrent pastes never paste each other's text. The text
 * never travels as a command argument, so its size is bounded by the runner's stdin limit, not
 * tmux's command size. A paste that fails deletes its buffer with what is left of the deadline
 * (a paste that ran out of time may leave it, under a name that says whose it is).
 */
export async function pasteFromBuffer(pane: Pane, text: string, options: BufferPasteOptions): Promise<void> {
  const deadline = Deadline.start(options);
  const name = `drover-paste-${process.pid}-${randomBytes(6).toString('hex')}`;
  const paste = pasteBufferArgs(pane.id, name, { delete: true, bracketed: options.bracketed, separator: options.separator });
  const args = [...(options.leaveMode ? [...leaveModeArgs(pane.id), ';'] : []), 'load-buffer', '-b', name, '-', ';', ...paste];
  try {
    await pane.server.command(args, { deadline, input: Buffer.from(text) });
  } catch (error) {
    await deleteWithin(pane, name, deadline).catch(() => undefined);
    throw error;
  }
}

async function deleteWithin(pane: Pane, name: string, deadline: Deadline): Promise<void> {
  if (!deadline.expired) await pane.server.buffers().delete(name, { timeoutMs: deadline.remaining(), signal: deadline.signal });
}
