import { randomBytes } from 'node:crypto';
import type { OperationOptions } from './deadline.js';
import type { Pane } from './handles.js';

export interface BufferPasteOptions extends OperationOptions {
  /**
   * true: paste-buffer -p, so a program that asked for bracketed paste reads the text as one
   * paste and its line breaks as line breaks, not as Enter. false: the bytes arrive as if typed.
   */
  readonly bracketed: boolean;
  /** What a line feed becomes (paste-buffer -s); tmux's default is a carriage return. */
  readonly separator?: string;
}

/**
 * Pastes text into a pane through a tmux buffer of its own: load-buffer, then paste-buffer -d,
 * which deletes the buffer. The name is unique, so concurrent pastes never paste each other's
 * text, and a paste that fails deletes its buffer afterwards. The text never travels as a
 * command argument, so its size is bounded by the runner's stdin limit, not tmux's command size.
 */
export async function pasteFromBuffer(pane: Pane, text: string, options: BufferPasteOptions): Promise<void> {
  const name = `drover-paste-${process.pid}-${randomBytes(6).toString('hex')}`;
  const operation = { timeoutMs: options.timeoutMs, signal: options.signal };
  await pane.server.buffers().write(name, text, operation);
  try {
    await pane.paste(name, { ...operation, delete: true, bracketed: options.bracketed, separator: options.separator });
  } catch (error) {
    await pane.server.buffers().delete(name, operation).catch(() => undefined);
    throw error;
  }
}
