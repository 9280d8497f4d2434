import { agentNames, captureAgentScreen, createAgentNamer, firstAgent, knownAgentKind, providersOrBuiltins, readProcessTree, systemProcessLookup, type AgentNamer, type ProcessLookup } from '../agents/index.js';
import { ArgumentError, TargetNotFoundError, failureOf, isPaneId, parseFramedRows, pasteFromBuffer, rowFormat, type Pane, type PaneId, type Server } from '../tmux/index.js';
import { PaneNotFoundError } from './errors.js';
import { NO_AGENT, type PaneAgent, type PaneIO } from './pane-io.js';

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

/** The ways a pane may be named wherever drover takes one, as its errors list them. */
export const PANE_TARGET_FORMS = 'a pane id such as %3, or SESSION:WINDOW[.PANE] with the window by index or name, such as work:0.1 or work:editor';

/** A tmux target a person types: `session:window` with an optional `.pane`, no control characters, not an option. */
const TARGET = /^[^\s:-][^:\u0000-\u001f\u007f]*:[^:\u0000-\u001f\u007f]*$/;

/**
 * The pane id a target names, asked of tmux once: `%3` as it is, `work:0.1` or `work:editor`
 * (that window's active pane) resolved to its `%id`, so everything after acts on that one pane
 * even if windows are renamed or moved meanwhile. A missing pane is PaneNotFoundError; a
 * target of another form is refused before tmux is asked.
 */
export async function resolvePaneTarget(server: Server, target: string): Promise<PaneId> {
  if (isPaneId(target)) return target;
  if (!TARGET.test(target)) throw new ArgumentError(`${JSON.stringify(target)} does not name a pane: give ${PANE_TARGET_FORMS}`);
  // display-message alone answers for the current pane when its target names none, so a
  // read-only command that fails on a missing pane (show-options -p) goes first, in the same client.
  const result = await server.run(['show-options', '-p', '-t', target, ';', 'display-message', '-p', '-t', target, '#{pane_id}']);
  if (!result.ok) {
    const failure = failureOf(result);
    // show-options reports a missing target as "no such pane: TARGET".
    const missing = failure instanceof TargetNotFoundError || /^no such pane: /m.test(result.stderrText());
    throw missing ? new PaneNotFoundError(target, `give ${PANE_TARGET_FORMS}`) : failure;
  }
  const id = result.text().trimEnd().split('\n').at(-1) ?? '';
  if (!isPaneId(id)) throw new PaneNotFoundError(target, `give ${PANE_TARGET_FORMS}`);
  return id;
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

/** A bracketed paste, so that the agent reads the text as one paste and its line breaks as line breaks. */
export function pasteText(pane: Pane, text: string): Promise<void> {
  return pasteFromBuffer(pane, text, { bracketed: true });
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
