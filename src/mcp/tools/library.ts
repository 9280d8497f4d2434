import { z } from 'zod';
import { checkId, type Pane } from '../../tmux/index.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { argv, dispatched, env, force, guardSelf, paneId, sessionId, windowId } from './tmux.js';

const OBSERVED = 'observed' as const;

async function inCopyMode(context: ToolContext, pane: Pane): Promise<boolean> {
  return (await pane.display('#{pane_in_mode}', context.operation)).toString('latin1') === '1';
}

/** Pane pipes, copy mode, window moves and respawn: tmux operations beyond creating, typing and killing. */
export const libraryTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'pipe_pane',
    // The command runs on this machine with the user's rights: as strong as anything drover offers.
    tier: 'destructive',
    group: 'destroy',
    title: 'Pipe a pane to a shell command',
    description:
      "Starts a shell command (tmux runs it with the default shell, on this machine) that reads what the pane's program writes (output, the default) and/or whose own output is typed into the pane (input). shell_command null closes the pane's pipe; only_if_closed closes an open pipe and starts nothing. Reports whether a pipe is open afterwards, nothing about what the command did.",
    input: z.object({
      pane_id: paneId,
      shell_command: z.string().min(1).max(1024).nullable(),
      output: z.boolean().optional().describe('pipe what the pane shows to the command (default true)'),
      input: z.boolean().optional().describe("type the command's output into the pane (default false)"),
      only_if_closed: z.boolean().optional(),
      force,
    }),
    output: z.strictObject({ pane_id: z.string(), piping: z.boolean(), ...dispatched }),
    async run(context, input) {
      const id = input.input === true ? await guardSelf(context, input.pane_id, 'pipe input into', input.force) : checkId('pane', input.pane_id);
      const pane = context.server.pane(id);
      await pane.pipe(input.shell_command, { output: input.output, input: input.input, onlyIfClosed: input.only_if_closed, ...context.operation });
      const piping = (await pane.display('#{pane_pipe}', context.operation)).toString('latin1') === '1';
      return { pane_id: pane.id, piping, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'enter_copy_mode',
    tier: 'mutating',
    group: 'input',
    title: 'Enter copy mode',
    description:
      "Puts a pane in copy mode (scrolling its history without touching its program). scroll_up scrolls a page up on entering; exit_on_bottom leaves copy mode when scrolling reaches the bottom; source_pane_id shows another pane's contents. Flags this tmux lacks are refused.",
    input: z.object({
      pane_id: paneId,
      scroll_up: z.boolean().optional(),
      page_down: z.boolean().optional().describe('scroll a page down when already in copy mode (tmux 3.5+)'),
      exit_on_bottom: z.boolean().optional(),
      hide_position: z.boolean().optional(),
      source_pane_id: paneId.optional(),
    }),
    output: z.strictObject({ pane_id: z.string(), in_mode: z.boolean(), ...dispatched }),
    async run(context, input) {
      const pane = context.server.pane(checkId('pane', input.pane_id));
      await pane.copyMode({
        scrollUp: input.scroll_up,
        pageDown: input.page_down,
        exitOnBottom: input.exit_on_bottom,
        hidePosition: input.hide_position,
        source: input.source_pane_id === undefined ? undefined : context.server.pane(checkId('pane', input.source_pane_id)),
        ...context.operation,
      });
      return { pane_id: pane.id, in_mode: await inCopyMode(context, pane), delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'exit_copy_mode',
    tier: 'mutating',
    group: 'input',
    title: 'Leave copy mode',
    description: 'Takes a pane out of copy mode (or any other mode); a pane in no mode stays as it is.',
    input: z.object({ pane_id: paneId }),
    output: z.strictObject({ pane_id: z.string(), in_mode: z.boolean(), ...dispatched }),
    async run(context, input) {
      const pane = context.server.pane(checkId('pane', input.pane_id));
      await pane.copyMode({ cancel: true, ...context.operation });
      return { pane_id: pane.id, in_mode: await inCopyMode(context, pane), delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'move_window',
    tier: 'mutating',
    group: 'layout',
    title: 'Move a window',
    description: 'Moves a window to an explicit index of a session (the same session or another); an index in use is refused, never replaced.',
    input: z.object({ window_id: windowId, session_id: sessionId, index: z.number().int().min(0).max(1_000_000) }),
    output: z.strictObject({ window_id: z.string(), session_id: z.string(), index: z.number().int(), ...dispatched }),
    async run(context, input) {
      const session = context.server.session(checkId('session', input.session_id));
      await context.server.window(checkId('window', input.window_id)).move(session, input.index, context.operation);
      return { window_id: input.window_id, session_id: session.id, index: input.index, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'respawn_pane',
    tier: 'destructive',
    group: 'destroy',
    title: 'Run a new program in a pane',
    description:
      'Replaces the program of a pane whose program has exited with the command given (argv; one element runs that program directly, not through a shell). A pane whose program still runs refuses unless kill is true, which kills that program first.',
    input: z.object({ pane_id: paneId, command: argv, kill: z.boolean().optional(), cwd: z.string().min(1).max(4096).optional(), env: env.optional(), force }),
    output: z.strictObject({ pane_id: z.string(), ...dispatched }),
    async run(context, input) {
      const pane = context.server.pane(await guardSelf(context, input.pane_id, 'respawn', input.force));
      await pane.respawn({ command: input.command, kill: input.kill, cwd: input.cwd, env: input.env, ...context.operation });
      return { pane_id: pane.id, delivery: OBSERVED };
    },
  }),
];
