import { TargetNotFoundError, isPaneId, parseFramedRows, rowFormat, type Pane, type Server } from '../tmux/index.js';
import { PaneNotFoundError } from './errors.js';
import type { PaneIO } from './pane-io.js';

/** A row format of plain text fields (user options included), framed so no value can break it. */
export function textRowFormat(fields: readonly string[]): string {
  return rowFormat('R', fields.map((wire) => ({ wire, type: 'string' as const, emptyIsNull: false })));
}

/** The fields of rows printed with textRowFormat, as lossy UTF-8 text. */
export function parseTextRows(output: Buffer, fields: readonly string[]): string[][] {
  return parseFramedRows(output, { R: fields.length }).map((row) => row.values.map((value) => value.toString('utf8')));
}

/**
 * The pane with exactly this id, and the given fields read in the same targeted
 * display-message: a missing pane (or a target that is not a pane id, such as a window
 * name, which tmux would resolve to some other pane) is PaneNotFoundError.
 */
export async function requirePane(server: Server, id: string, fields: readonly string[] = []): Promise<{ pane: Pane; values: string[] }> {
  if (!isPaneId(id)) throw new PaneNotFoundError(id);
  const pane = server.pane(id);
  try {
    const output = await pane.display(textRowFormat(fields));
    return { pane, values: parseTextRows(Buffer.concat([output, Buffer.from('\n')]), fields)[0] ?? [] };
  } catch (error) {
    if (error instanceof TargetNotFoundError) throw new PaneNotFoundError(id);
    throw error;
  }
}

/** The readiness probe's and delivery's view of a live tmux pane. */
export function tmuxPaneIO(pane: Pane): PaneIO {
  return {
    foregroundCommand: async () => (await pane.display('#{pane_current_command}')).toString('utf8'),
    capture: async (lines) => (await pane.capture({ start: -lines })).toString('utf8'),
    sendLiteral: async (text) => void (await pane.sendText(text)),
    sendKeys: async (keys) => void (await pane.sendKeys(keys)),
    inMode: () => pane.inMode(),
    cancelMode: async () => void (await pane.cancelMode()),
  };
}
