import { z } from 'zod';
import { ArgumentError } from '../../process/index.js';
import {
  CLIENT_FIELDS,
  Criteria,
  PANE_FIELDS,
  SESSION_FIELDS,
  WINDOW_FIELDS,
  WINDOW_LINK_FIELDS,
  checkId,
  type FieldSpec,
  type FieldTable,
  type IdOf,
  type Options,
  type Pane,
  type PaneId,
} from '../../tmux/index.js';
import { tmuxPaneKeys, withPaneKeys } from '../../mux/index.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';

export const paneId = z.string().regex(/^%\d+$/, 'a tmux pane id like %3');
export const windowId = z.string().regex(/^@\d+$/, 'a tmux window id like @2');
export const sessionId = z.string().regex(/^\$\d+$/, 'a tmux session id like $1');
const anyId = z.string().regex(/^[$@%]\d+$/, 'a tmux id: $session, @window or %pane');
const name = z.string().min(1).max(1024);
export const argv = z.array(z.string().max(64 * 1024)).min(1).max(1024);
export const env = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string().max(64 * 1024));
export const force = z.boolean().optional().describe('allow acting on the pane this MCP server runs in');
const record = z.record(z.string(), z.unknown());

function fieldSchema(spec: FieldSpec): z.ZodType {
  const value = spec.type === 'int' || spec.type === 'time' ? z.number().int() : spec.type === 'bool' ? z.boolean() : z.string();
  return spec.emptyIsNull ? value.nullable() : value;
}

/**
 * A snapshot record as its toJSON prints it: one key per field of the catalog table the
 * record is read with, so the schema and the rows come from the same table and cannot differ.
 */
function recordSchema(table: FieldTable): z.ZodObject {
  return z.strictObject(Object.fromEntries(Object.values(table).map((spec) => [spec.wire, fieldSchema(spec)])));
}

/** A pane row: its catalog fields, and its key (its id on the server run it was read from). */
const paneRecord = recordSchema(PANE_FIELDS).extend({ pane_key: z.string().describe('the pane id with the server run it lives on: what the pane tools take as pane_key') });
const snapshotSchema = z.strictObject({
  capture_id: z.number().int(),
  sessions: z.array(recordSchema(SESSION_FIELDS)),
  window_links: z.array(recordSchema(WINDOW_LINK_FIELDS)),
  windows: z.array(recordSchema(WINDOW_FIELDS)),
  panes: z.array(paneRecord),
  clients: z.array(recordSchema(CLIENT_FIELDS)).optional(),
});
const optionScope = z.union([z.enum(['server', 'global-session', 'global-window', 'global-pane']), anyId]);

/**
 * The longest text argument a tool takes: with the request around it, and as ASCII, it fits in
 * one 1 MiB message, the longest the stdio transport reads.
 */
export const LONGEST_TEXT = 768 * 1024;

/** tmux accepted the command; that says nothing about what a program in the pane did with it. */
export const dispatched = { delivery: z.literal('observed') };
const OBSERVED = 'observed' as const;

export function refuseSelf(what: string, target: string): ArgumentError {
  return new ArgumentError(`refusing to ${what} ${target}: it is the pane this MCP server runs in (pass force: true to do it anyway)`);
}

/**
 * Refuses to type into or destroy the pane drover itself runs in, unless forced. The id is
 * compared as tmux itself resolves it (`%03` is `%3`), and the resolved id is what the tool
 * then acts on.
 */
export async function guardSelf(context: ToolContext, target: string, what: string, forced: boolean | undefined): Promise<PaneId> {
  if (forced || context.selfPane === undefined) return checkId('pane', target);
  const pane = await context.server.canonicalId('pane', target, context.operation);
  if (pane === context.selfPane) throw refuseSelf(what, target);
  return pane;
}

function paneOf(context: ToolContext, id: string): Pane {
  return context.server.pane(checkId('pane', id));
}

/**
 * Refuses to kill a window or session that holds the server's own pane, unless forced;
 * returns the id as tmux resolves it.
 */
async function guardSelfHolder<K extends 'window' | 'session'>(context: ToolContext, kind: K, target: string, forced: boolean | undefined): Promise<IdOf<K>> {
  if (forced || context.selfPane === undefined) return checkId(kind, target);
  const id = await context.server.canonicalId(kind, target, context.operation);
  const self = (await context.server.snapshot(context.operation)).pane(checkId('pane', context.selfPane));
  const holds = self !== undefined && (kind === 'window' ? self.windowId === id : self.sessions().toArray().some((s) => s.sessionId === id));
  if (holds) throw refuseSelf(`kill ${kind} ${target} holding`, context.selfPane);
  return id;
}

function optionsFor(context: ToolContext, scope: string): Options {
  if (scope === 'server' || scope.startsWith('global-')) return context.server.options(scope as 'server');
  if (scope.startsWith('$')) return context.server.session(scope).options();
  if (scope.startsWith('@')) return context.server.window(scope).options();
  return context.server.pane(scope).options();
}

export const tmuxTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'snapshot',
    tier: 'readonly',
    group: 'core',
    title: 'Snapshot sessions, windows and panes',
    description: 'Reads every session, window link, window and pane (and optionally clients) of the tmux server in one call. Field names are tmux format names.',
    input: z.object({ clients: z.boolean().optional() }),
    output: snapshotSchema,
    async run(context, input) {
      const snapshot = await context.server.snapshot({ clients: input.clients === true, timeoutMs: context.deadlineMs, signal: context.signal });
      const keyOf = await tmuxPaneKeys(context.server, context.operation);
      return { ...(snapshot.toJSON() as z.infer<typeof snapshotSchema>), panes: withPaneKeys(snapshot.panes.toJSON() as { pane_id: string }[], keyOf) };
    },
  }),
  defineTool({
    name: 'search_panes',
    tier: 'readonly',
    group: 'observe',
    title: 'Search panes with criteria',
    description:
      'Returns panes matching criteria: a pane expression like {"field":"pane_current_command","op":"eq","value":"claude"} or the versioned form {"version":1,"entity":"pane","where":…}. Operators eq ne lt le gt ge startsWith endsWith contains regex isNull notNull; and/or/not; some/every/none over the relations window and sessions.',
    input: z.object({ criteria: record }),
    output: z.strictObject({ panes: z.array(paneRecord) }),
    async run(context, input) {
      const criteria = 'version' in input.criteria ? Criteria.fromJSON(input.criteria) : Criteria.build('pane', input.criteria);
      const panes = await context.server.searchPanes(criteria, context.operation);
      const keyOf = await tmuxPaneKeys(context.server, context.operation);
      return { panes: withPaneKeys(panes.toJSON() as { pane_id: string }[], keyOf) as z.infer<typeof paneRecord>[] };
    },
  }),
  defineTool({
    name: 'new_session',
    tier: 'mutating',
    group: 'layout',
    title: 'Create a session',
    description: 'Creates a detached session. command is argv (a single element runs that program directly, not through a shell).',
    input: z.object({ name: name.optional(), window_name: name.optional(), cwd: z.string().min(1).max(4096).optional(), command: argv.optional(), env: env.optional() }),
    output: z.strictObject({ session_id: z.string(), window_id: z.string(), pane_id: z.string() }),
    async run(context, input) {
      const receipt = await context.server.newSession({
        name: input.name,
        windowName: input.window_name,
        cwd: input.cwd,
        command: input.command,
        env: input.env,
        receipt: true,
        timeoutMs: context.deadlineMs,
        signal: context.signal,
      });
      return { session_id: receipt.session.id, window_id: receipt.window.id, pane_id: receipt.pane.id };
    },
  }),
  defineTool({
    name: 'new_window',
    tier: 'mutating',
    group: 'layout',
    title: 'Create a window',
    description: 'Creates a window in a session without switching to it.',
    input: z.object({ session_id: sessionId, name: name.optional(), index: z.number().int().min(0).optional(), cwd: z.string().min(1).max(4096).optional(), command: argv.optional(), env: env.optional() }),
    output: z.strictObject({ window_id: z.string(), pane_id: z.string() }),
    async run(context, input) {
      const receipt = await context.server.session(input.session_id).newWindow({
        name: input.name,
        index: input.index,
        cwd: input.cwd,
        command: input.command,
        env: input.env,
        receipt: true,
        timeoutMs: context.deadlineMs,
        signal: context.signal,
      });
      return { window_id: receipt.window.id, pane_id: receipt.pane.id };
    },
  }),
  defineTool({
    name: 'split_pane',
    tier: 'mutating',
    group: 'layout',
    title: 'Split a pane',
    description: 'Splits a pane: horizontal puts the new pane beside it, vertical below it (before: left of / above it). The new pane does not take focus.',
    input: z.object({
      pane_id: paneId,
      direction: z.enum(['horizontal', 'vertical']),
      before: z.boolean().optional(),
      size: z.union([z.number().int().min(1), z.string().regex(/^\d{1,3}%$/)]).optional(),
      cwd: z.string().min(1).max(4096).optional(),
      command: argv.optional(),
      env: env.optional(),
    }),
    output: z.strictObject({ pane_id: z.string() }),
    async run(context, input) {
      const pane = await paneOf(context, input.pane_id).split({
        direction: input.direction,
        before: input.before,
        size: input.size,
        cwd: input.cwd,
        command: input.command,
        env: input.env,
        timeoutMs: context.deadlineMs,
        signal: context.signal,
      });
      return { pane_id: pane.id };
    },
  }),
  defineTool({
    name: 'rename',
    tier: 'mutating',
    group: 'layout',
    title: 'Rename a session or window, or title a pane',
    description: 'Renames the session ($id) or window (@id), or sets the title of a pane (%id).',
    input: z.object({ target_id: anyId, name }),
    output: z.strictObject({ target_id: z.string(), ...dispatched }),
    async run(context, input) {
      if (input.target_id.startsWith('$')) await context.server.session(input.target_id).rename(input.name, context.operation);
      else if (input.target_id.startsWith('@')) await context.server.window(input.target_id).rename(input.name, context.operation);
      else await context.server.pane(input.target_id).setTitle(input.name, context.operation);
      return { target_id: input.target_id, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'select_layout',
    tier: 'mutating',
    group: 'layout',
    title: 'Apply a window layout',
    description: 'Applies even-horizontal, even-vertical, main-horizontal, main-vertical, tiled (or an unambiguous prefix, or a saved layout string) to a window.',
    input: z.object({ window_id: windowId, layout: z.string().min(1).max(4096) }),
    output: z.strictObject({ window_id: z.string(), ...dispatched }),
    async run(context, input) {
      await context.server.window(input.window_id).selectLayout(input.layout, context.operation);
      return { window_id: input.window_id, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'get_option',
    tier: 'readonly',
    group: 'options',
    title: 'Read a tmux option',
    description:
      'Reads an option at an explicit scope (server, global-session, global-window, global-pane, or a $session/@window/%pane id). An absent option is present: false, distinct from an empty value.',
    input: z.object({ scope: optionScope, name: z.string().min(1).max(256), inherited: z.boolean().optional() }),
    output: z.strictObject({ name: z.string(), present: z.boolean(), value: z.string().nullable() }),
    async run(context, input) {
      const value = await optionsFor(context, input.scope).getOrUndefined(input.name, { inherited: input.inherited, timeoutMs: context.deadlineMs, signal: context.signal });
      return { name: input.name, present: value !== undefined, value: value === undefined ? null : value.raw.toString('utf8') };
    },
  }),
  defineTool({
    name: 'set_option',
    tier: 'mutating',
    group: 'configure',
    title: 'Set or unset a tmux option',
    description: 'Sets an option at an explicit scope; value null unsets it.',
    input: z.object({ scope: optionScope, name: z.string().min(1).max(256), value: z.union([z.string().max(64 * 1024), z.number().int(), z.boolean(), z.null()]) }),
    output: z.strictObject({ name: z.string(), unset: z.boolean(), ...dispatched }),
    async run(context, input) {
      const options = optionsFor(context, input.scope);
      if (input.value === null) await options.unset(input.name, context.operation);
      else await options.set(input.name, input.value, context.operation);
      return { name: input.name, unset: input.value === null, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'get_environment',
    tier: 'readonly',
    group: 'environment',
    title: 'Read environment variables',
    description: 'Lists the global environment, or a session ($id) environment; null marks a variable set to be removed.',
    input: z.object({ session_id: sessionId.optional() }),
    output: z.strictObject({ variables: z.record(z.string(), z.string().nullable()) }),
    async run(context, input) {
      const environment = input.session_id ? context.server.session(input.session_id).environment() : context.server.environment();
      return { variables: Object.fromEntries(await environment.list(context.operation)) };
    },
  }),
  defineTool({
    name: 'set_environment',
    tier: 'mutating',
    group: 'configure',
    title: 'Set or unset an environment variable',
    description: 'Sets a variable in the global or a session environment (new panes inherit it); value null unsets it.',
    input: z.object({ session_id: sessionId.optional(), name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), value: z.string().max(64 * 1024).nullable() }),
    output: z.strictObject({ name: z.string(), unset: z.boolean(), ...dispatched }),
    async run(context, input) {
      const environment = input.session_id ? context.server.session(input.session_id).environment() : context.server.environment();
      if (input.value === null) await environment.unset(input.name, context.operation);
      else await environment.set(input.name, input.value, context.operation);
      return { name: input.name, unset: input.value === null, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'list_buffers',
    tier: 'readonly',
    group: 'buffers',
    title: 'List paste buffers',
    description: 'Lists tmux paste buffers with their sizes.',
    input: z.object({}),
    output: z.strictObject({ buffers: z.array(z.strictObject({ name: z.string(), size: z.number().int(), created: z.number().int() })) }),
    async run(context) {
      return { buffers: await context.server.buffers().list(context.operation) };
    },
  }),
  defineTool({
    name: 'read_buffer',
    tier: 'readonly',
    group: 'buffers',
    title: 'Read a paste buffer',
    description: 'Returns a named paste buffer as UTF-8 text (invalid bytes replaced) and as base64.',
    input: z.object({ name: z.string().min(1).max(256) }),
    output: z.strictObject({ name: z.string(), text: z.string(), base64: z.string(), size: z.number().int() }),
    async run(context, input) {
      const bytes = await context.server.buffers().read(input.name, context.operation);
      return { name: input.name, text: bytes.toString('utf8'), base64: bytes.toString('base64'), size: bytes.length };
    },
  }),
  defineTool({
    name: 'write_buffer',
    tier: 'mutating',
    group: 'configure',
    title: 'Write a paste buffer',
    description: 'Creates or replaces a named paste buffer with text (or base64 bytes).',
    input: z.object({ name: z.string().min(1).max(256), text: z.string().max(LONGEST_TEXT).optional(), base64: z.string().max((LONGEST_TEXT / 3) * 4).optional() }),
    output: z.strictObject({ name: z.string(), size: z.number().int(), ...dispatched }),
    async run(context, input) {
      if ((input.text === undefined) === (input.base64 === undefined)) throw new ArgumentError('give exactly one of text or base64');
      const bytes = input.text !== undefined ? Buffer.from(input.text) : Buffer.from(input.base64!, 'base64');
      await context.server.buffers().write(input.name, bytes, context.operation);
      return { name: input.name, size: bytes.length, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'delete_buffer',
    tier: 'destructive',
    group: 'destroy',
    title: 'Delete a paste buffer',
    description: 'Deletes a named paste buffer.',
    input: z.object({ name: z.string().min(1).max(256) }),
    output: z.strictObject({ name: z.string(), ...dispatched }),
    async run(context, input) {
      await context.server.buffers().delete(input.name, context.operation);
      return { name: input.name, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'kill_window',
    tier: 'destructive',
    group: 'destroy',
    title: 'Kill a window',
    description: 'Kills a window and all its panes.',
    input: z.object({ window_id: windowId, force }),
    output: z.strictObject({ window_id: z.string(), ...dispatched }),
    async run(context, input) {
      await context.server.window(await guardSelfHolder(context, 'window', input.window_id, input.force)).kill(context.operation);
      return { window_id: input.window_id, delivery: OBSERVED };
    },
  }),
  defineTool({
    name: 'kill_session',
    tier: 'destructive',
    group: 'destroy',
    title: 'Kill a session',
    description: 'Kills a session and the windows only it holds.',
    input: z.object({ session_id: sessionId, force }),
    output: z.strictObject({ session_id: z.string(), ...dispatched }),
    async run(context, input) {
      await context.server.session(await guardSelfHolder(context, 'session', input.session_id, input.force)).kill(context.operation);
      return { session_id: input.session_id, delivery: OBSERVED };
    },
  }),
];
