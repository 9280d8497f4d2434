import { randomBytes } from 'node:crypto';
import { TargetNotFoundError, isPaneId, parseFramedRows, rowFormat, type Pane, type Server } from '../tmux/index.js';
import { PaneNotFoundError } from './errors.js';
import { NO_AGENT, type PaneAgent, type PaneIO } from './pane-io.js';
import { createAgentNamer, firstAgent, knownAgentKind, readProcessTree, systemProcessLookup, type AgentNamer, type ProcessLookup } from './process-tree.js';
import { providersOrBuiltins } from './project-config.js';
import { agentNames } from './providers.js';
import { captureAgentScreen } from './screens/index.js';

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

/** The agent names in effect for a directory: the built-ins plus its project's providers. */
export function agentNamerFor(cwd: string = process.cwd()): AgentNamer {
  return createAgentNamer(agentNames(providersOrBuiltins(cwd)));
}

/** The agent a pane runs: the first agent of the process tree under its shell. */
export function paneAgent(panePid: number, nameAgent: AgentNamer, lookup: ProcessLookup): PaneAgent {
  const tree = Number.isSafeInteger(panePid) && panePid > 0 ? readProcessTree(panePid, nameAgent, lookup) : undefined;
  const agent = tree === undefined ? undefined : firstAgent(tree);
  if (agent === undefined || agent.agent === null) return NO_AGENT;
  return { name: agent.agent, kind: knownAgentKind(agent.agent) ?? null, pid: agent.pid };
}

/**
 * Pastes through a buffer of its own (a unique name, so concurrent deliveries never paste
 * each other's text), bracketed so the program reads it as one paste, deleted by the paste
 * itself or, when the paste fails, afterwards.
 */
export async function pasteText(pane: Pane, text: string): Promise<void> {
  const name = `drover-paste-${process.pid}-${randomBytes(6).toString('hex')}`;
  await pane.server.buffers().write(name, text);
  try {
    await pane.paste(name, { delete: true, bracketed: true });
  } catch (error) {
    await pane.server.buffers().delete(name).catch(() => undefined);
    throw error;
  }
}

/** The readiness probe's and delivery's view of a live tmux pane. */
export function tmuxPaneIO(pane: Pane, nameAgent: AgentNamer = agentNamerFor()): PaneIO {
  return {
    describe: async () => {
      const fields = ['pane_current_command', 'pane_dead', 'pane_pid'];
      const [foreground, dead, pid] = parseTextRows(Buffer.concat([await pane.display(textRowFormat(fields)), Buffer.from('\n')]), fields)[0] ?? [];
      return { foreground: foreground ?? '', dead: dead === '1', agent: dead === '1' ? NO_AGENT : paneAgent(Number(pid), nameAgent, await systemProcessLookup()) };
    },
    capture: async (lines) => (await pane.capture({ start: -lines })).toString('utf8'),
    screen: async () => (await captureAgentScreen(pane)).screen,
    sendLiteral: async (text) => void (await pane.sendText(text)),
    sendKeys: async (keys) => void (await pane.sendKeys(keys)),
    paste: (text) => pasteText(pane, text),
    inMode: () => pane.inMode(),
    cancelMode: async () => void (await pane.cancelMode()),
  };
}
