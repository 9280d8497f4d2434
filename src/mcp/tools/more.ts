import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ArgumentError } from '../../process/index.js';
import { FleetRuntime, messageJson, messageJsonSchema, sendAndNotify } from '../../fleet/index.js';
import { LinkedRemotePanes } from '../../hosts/index.js';
import {
  DETACHED_BUILD_SIZE,
  applyPlan,
  applyResultJsonSchema,
  captureWorkspaceSnapshot,
  checkDirectories,
  loadWorkspaceFile,
  parseWorkspace,
  planConflictJsonSchema,
  planWorkspace,
  workspacePlanJsonSchema,
  type WorkspaceDocument,
  type WorkspacePlan,
} from '../../workspace/index.js';
import { defineTool, type ToolContext, type ToolDefinition } from '../tool.js';
import { LONGEST_TEXT } from './tmux.js';

const workspaceSource = {
  path: z.string().min(1).max(4096).optional().describe('an absolute path to a .yaml, .yml or .json workspace file'),
  content: z.string().min(1).max(LONGEST_TEXT).optional().describe('the workspace itself, instead of a path'),
  format: z.enum(['yaml', 'json']).optional().describe('with content: its format (default yaml)'),
  base_dir: z.string().min(1).max(4096).optional().describe('with content: the absolute directory relative paths resolve against'),
  expand_env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).max(256).optional().describe('environment variables ${NAME} may expand (off by default)'),
};

interface WorkspaceSource {
  path?: string;
  content?: string;
  format?: 'yaml' | 'json';
  base_dir?: string;
  expand_env?: string[];
}

async function readWorkspace(context: ToolContext, input: WorkspaceSource): Promise<WorkspaceDocument> {
  const options = { expandEnv: input.expand_env, env: context.env as Record<string, string> };
  if ((input.path === undefined) === (input.content === undefined)) throw new ArgumentError('give exactly one of path or content');
  if (input.path !== undefined) {
    if (!isAbsolute(input.path)) throw new ArgumentError('path must be absolute');
    return loadWorkspaceFile(input.path, options);
  }
  if (input.base_dir === undefined || !isAbsolute(input.base_dir)) throw new ArgumentError('content needs an absolute base_dir');
  return parseWorkspace(input.content!, { ...options, format: input.format ?? 'yaml', baseDir: input.base_dir });
}

/**
 * The plan of a build, as the CLI makes it without a terminal: a missing start directory is
 * refused here, before any tmux step, and the session gets a size its layouts fit in.
 */
async function planBuild(context: ToolContext, input: WorkspaceSource): Promise<WorkspacePlan> {
  const doc = await readWorkspace(context, input);
  const createDirectories = await checkDirectories(doc);
  const plan = planWorkspace(doc, { size: DETACHED_BUILD_SIZE, createDirectories });
  return plan.checkedAgainst(await captureWorkspaceSnapshot(context.server, { ...context.operation, plan }));
}

export const workspaceTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'workspace_plan',
    tier: 'readonly',
    group: 'workspace',
    title: 'Plan a workspace file',
    description:
      'Validates a tmuxp-style workspace (YAML or JSON) and returns the ordered steps loading it would take, with conflicts against the live server (e.g. the session name is taken). Runs nothing.',
    input: z.object(workspaceSource),
    output: z.strictObject({ plan: workspacePlanJsonSchema, conflicts: z.array(planConflictJsonSchema) }),
    async run(context, input) {
      const plan = await planBuild(context, input);
      const json = plan.toJSON();
      return { plan: json, conflicts: json.conflicts };
    },
  }),
  defineTool({
    name: 'workspace_load',
    tier: 'mutating',
    group: 'workspace',
    title: 'Load a workspace file',
    description:
      'Builds the workspace on the tmux server: session, windows, panes, layouts, options, environment, then types its shell commands (dispatch only). Reports every created id; with compensate, a failed load removes only what it created.',
    input: z.object({ ...workspaceSource, compensate: z.boolean().optional() }),
    output: z.strictObject({ result: applyResultJsonSchema }),
    async run(context, input) {
      const result = await applyPlan(await planBuild(context, input), context.server, {
        timeoutMs: context.deadlineMs,
        signal: context.signal,
        compensate: input.compensate === true,
      });
      return { result: result.toJSON() };
    },
  }),
];

/** Opens the fleet for one call; a call that only reads opens the store read-only (it must exist). */
async function withFleet<T>(context: ToolContext, fn: (runtime: FleetRuntime) => Promise<T>, access: 'read' | 'write' = 'write'): Promise<T> {
  // Members placed on other hosts are reached over those hosts' links, opened only when one is.
  const remote = new LinkedRemotePanes({ env: context.env });
  const runtime = await FleetRuntime.open({ env: context.env, tmuxEndpoint: context.server.endpoint, readOnly: access === 'read', remote });
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
    await remote.closeLinks();
  }
}

const memberId = z.number().int().min(1);

export const fleetTools: readonly ToolDefinition[] = [
  defineTool({
    name: 'message_send',
    tier: 'mutating',
    group: 'fleet',
    title: 'Send a fleet message',
    description:
      "Stores a message from one fleet member to another and pushes it into the recipient's pane (at least once; the recipient acknowledges it by id). notification_sent says whether this call typed it.",
    input: z.object({ from: memberId, to: memberId, text: z.string().min(1).max(LONGEST_TEXT) }),
    output: z.strictObject({ message: messageJsonSchema, notification_sent: z.boolean(), diagnostic: z.string().nullable() }),
    async run(context, input) {
      return withFleet(context, async (runtime) => {
        const result = await sendAndNotify({ ...runtime.notify, from: input.from, to: input.to, text: input.text });
        const diagnostic = [result.diagnostic, result.failure?.diagnostic].filter((d): d is string => typeof d === 'string').join('\n') || null;
        return { message: messageJson(result.message), notification_sent: result.notificationSent, diagnostic };
      });
    },
  }),
  defineTool({
    name: 'message_poll',
    tier: 'readonly',
    group: 'fleet',
    title: "Read a member's unacknowledged messages",
    description: 'Returns the messages addressed to a member that it has not acknowledged yet.',
    input: z.object({ member: memberId }),
    output: z.strictObject({ messages: z.array(messageJsonSchema) }),
    async run(context, input) {
      return withFleet(context, async (runtime) => ({ messages: (await runtime.broker.pollMessages(input.member)).map(messageJson) }), 'read');
    },
  }),
  defineTool({
    name: 'message_ack',
    tier: 'mutating',
    group: 'fleet',
    title: 'Acknowledge a fleet message',
    description: 'Marks a message as handled; only its recipient can.',
    input: z.object({ member: memberId, message_id: z.number().int().min(1) }),
    output: z.strictObject({ message: messageJsonSchema }),
    async run(context, input) {
      return withFleet(context, async (runtime) => ({ message: messageJson(await runtime.broker.ackMessage(input.member, input.message_id)) }));
    },
  }),
];
