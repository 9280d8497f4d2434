import { Option, type Command } from 'commander';
import { resolve as resolvePath } from 'node:path';
import {
  BrokerServer,
  CODING_AGENTS,
  DEFAULT_MEMBER_CAPTURE_LINES,
  FleetRuntime,
  MemberCreationError,
  WaitError,
  broadcastAndNotify,
  captureFleet,
  captureMember,
  checkMemberPanes,
  chooseStore,
  createFleetHere,
  createMember,
  deleteFleet,
  deleteMember,
  draftClearedWarning,
  execInMember,
  listenForMessages,
  messageJson,
  maxTextLength,
  openBroker,
  placementPaneKey,
  promptMember,
  remoteBrokerUrl,
  sendAndNotify,
  splitBeside,
  truncateForText,
  validateIdempotencyKey,
  validateLiteralLine,
  validateMessageText,
  waitForMessages,
  type CodingAgent,
  type Fleet,
  type FleetCapture,
  type Member,
  type MemberCapture,
  type Message,
  type NotNotified,
  type Placement,
  type RosterEntry,
} from '../../fleet/index.js';
import { LOCAL_HOST } from '../../mux/index.js';
import { foldBody } from '../../panes/index.js';
import { Hosts, LinkedRemotePanes, forwardedSocketProblem, readHostsConfig, type HostEntry } from '../../hosts/index.js';
import { droverCommand } from '../invocation.js';
import { outsideAnySession, resolveEndpoint, type SocketFlags } from '../endpoint.js';
import { EXIT, ExitError, UsageError, parseMilliseconds, writeJson, writeLine, writeWarning, type CliIO } from '../io.js';
import type { CommandContext } from '../program.js';
import { BROKER_SOCKET_HELP, defaultBrokerSocket } from '../state.js';

interface JsonFlag {
  json?: boolean;
}

interface CaptureFlags extends JsonFlag {
  lines?: string;
  ansi?: boolean;
}

function parseId(value: string | undefined, what: string): number {
  if (value === undefined || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value)) || Number(value) < 1) {
    throw new UsageError(`${what} must be a positive integer (got ${JSON.stringify(value ?? '')})`);
  }
  return Number(value);
}

function parseLines(value: string | undefined): number {
  if (value === undefined) return DEFAULT_MEMBER_CAPTURE_LINES;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new UsageError(`--lines must be a positive whole number (got ${JSON.stringify(value)})`);
  return Number(value);
}


/**
 * Opens the fleet runtime for one command (an explicit -L/-S names the tmux server) and always
 * closes it. A command that only reads opens the store read-only: it must exist already.
 */
async function withRuntime<T>(flags: SocketFlags, io: CliIO, body: (runtime: FleetRuntime) => Promise<T>, access: 'read' | 'write' = 'write'): Promise<T> {
  // -L/-S, or no multiplexer around this process: the tmux server every command would use.
  const explicit = flags.socketName !== undefined || flags.socketPath !== undefined;
  const tmuxEndpoint = explicit || outsideAnySession(flags, io.env) ? resolveEndpoint(flags, io).endpoint : undefined;
  // Members placed on other hosts are reached over those hosts' links, opened only when one is.
  const remote = new LinkedRemotePanes({ env: io.env, droverCommand: droverCommand(io.env), signal: io.signal });
  const runtime = await FleetRuntime.open({ env: io.env, tmuxEndpoint, readOnly: access === 'read', remote });
  try {
    return await body(runtime);
  } finally {
    await runtime.close();
    await remote.closeLinks();
  }
}

// ---- JSON documents (snake_case) -------------------------------------------------------------

function placementJson(placement: Placement | null): Record<string, unknown> | null {
  if (placement === null) return null;
  return {
    host: placement.host ?? LOCAL_HOST,
    backend: placement.backend,
    session_id: placement.session,
    window_id: placement.window,
    pane_id: placement.pane,
    pane_key: placementPaneKey(placement),
    created_at: placement.createdAt,
    gone_at: placement.goneAt,
    server: placement.server,
    stale_at: placement.staleAt,
  };
}

function memberJson(member: Member | RosterEntry): Record<string, unknown> {
  const json: Record<string, unknown> = {
    member_id: member.memberId,
    fleet_id: member.fleetId,
    name: member.name,
    description: member.description,
    kind: member.kind,
    status: member.status,
    coding_agent: member.codingAgent,
    registered_at: member.registeredAt,
    deregistered_at: member.deregisteredAt,
    placement: placementJson(member.placement),
  };
  if ('lastSent' in member) Object.assign(json, { last_sent: member.lastSent, last_recv: member.lastRecv, last_ack: member.lastAck });
  return json;
}

function fleetJson(fleet: Fleet & { memberCount?: number }): Record<string, unknown> {
  const json: Record<string, unknown> = {
    fleet_id: fleet.fleetId,
    name: fleet.name,
    created_at: fleet.createdAt,
    deleted_at: fleet.deletedAt,
    director_member_id: fleet.directorMemberId,
  };
  if (fleet.memberCount !== undefined) json.member_count = fleet.memberCount;
  return json;
}


function captureJson(capture: MemberCapture): Record<string, unknown> {
  return {
    member_id: capture.memberId,
    pane_id: capture.paneId,
    pane_key: capture.paneKey,
    lines: capture.lines,
    content: capture.content,
    captured_at: capture.capturedAt,
    content_sha256: capture.contentSha256,
  };
}

function fleetCaptureJson(capture: FleetCapture): Record<string, unknown> {
  return {
    fleet_id: capture.fleetId,
    captured_at: capture.capturedAt,
    members: capture.members.map((entry) => ({
      member_id: entry.memberId,
      name: entry.name,
      kind: entry.kind,
      state: entry.state,
      ...(entry.capture === null ? {} : captureJson(entry.capture)),
      ...(entry.state === 'failed' ? { error: entry.error } : {}),
    })),
    unregistered_panes: capture.unregisteredPanes,
    unregistered_pane_keys: capture.unregisteredPaneKeys,
  };
}

// ---- text ------------------------------------------------------------------------------------

/** Rows as aligned columns; cells are shown printable, as names and bodies come from other people. */
function table(io: CliIO, rows: readonly (readonly string[])[]): void {
  const printable = rows.map((row) => row.map(foldBody));
  const widths = printable[0]!.map((_, column) => Math.max(...printable.map((row) => row[column]!.length)));
  for (const row of printable) writeLine(io.stdout, row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '));
}

function paneLabel(placement: Placement | null): string {
  if (placement === null) return '-';
  if (placement.pane === null) return '(pending)';
  if (placement.staleAt !== null) return `${placement.pane} (stale: its ${placement.backend} server was replaced)`;
  return placement.goneAt === null ? placement.pane : `${placement.pane} (gone)`;
}

function messageLine(message: Message, limit: number): string {
  const to = message.toMemberId === null ? 'all' : String(message.toMemberId);
  const notified = message.notifiedAt === null ? '' : ' notified';
  return `${message.messageId} from=${message.fromMemberId} to=${to} ${message.createdAt} ${message.statusState}${notified} ${truncateForText(foldBody(message.text), limit)}`;
}

/** Drafts cleared from members' composers are said on stderr as they happen. */
function draftWarnings(io: CliIO): { onDraftCleared: (memberId: number, draft: string) => void } {
  return { onDraftCleared: (memberId, draft) => writeWarning(io, draftClearedWarning(memberId, draft)) };
}

function reportDiagnostics(io: CliIO, diagnostics: readonly (NotNotified | string)[]): void {
  for (const entry of diagnostics) writeWarning(io, typeof entry === 'string' ? entry : entry.diagnostic);
}

function memberRows(members: readonly RosterEntry[]): string[][] {
  return [
    ['member_id', 'name', 'kind', 'agent', 'backend', 'pane'],
    ...members.map((m) => [String(m.memberId), m.name, m.kind, m.codingAgent, m.placement?.backend ?? '-', paneLabel(m.placement)]),
  ];
}

// ---- fleet -----------------------------------------------------------------------------------

function registerFleet(program: Command, context: CommandContext): void {
  const fleet = program.command('fleet').description('fleets: a Director pane and the members it places beside it');

  fleet
    .command('create <name>')
    .description('create a fleet whose root Director is the pane this runs in')
    .addOption(new Option('--agent <agent>', "the Director's coding agent (members inherit it)").choices(CODING_AGENTS).default('claude'))
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { agent: CodingAgent }, io, name) => {
        await withRuntime(options, io, async (runtime) => {
          const created = await createFleetHere(runtime, { name: name!, agent: options.agent });
          if (options.json) writeJson(io, { fleet: fleetJson(created.fleet), director: memberJson(created.director) });
          else {
            const placement = created.director.placement!;
            writeLine(io.stdout, `${created.fleet.fleetId} director=${created.director.memberId} backend=${placement.backend} pane=${placement.pane}`);
          }
        });
      }),
    );

  fleet
    .command('list')
    .description('fleets that are not deleted')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io) => {
        await withRuntime(options, io, async (runtime) => {
          const fleets = await runtime.broker.listFleets();
          if (options.json) writeJson(io, fleets.map(fleetJson));
          else if (fleets.length === 0) writeLine(io.stdout, '0 fleets.');
          else table(io, [['fleet_id', 'name', 'members', 'director', 'created_at'], ...fleets.map((f) => [String(f.fleetId), f.name, String(f.memberCount), String(f.directorMemberId), f.createdAt])]);
        }, 'read');
      }),
    );

  fleet
    .command('show <id>')
    .description('one fleet and its active members')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io, id) => {
        const fleetId = parseId(id, 'fleet id');
        await withRuntime(options, io, async (runtime) => {
          const shown = await runtime.broker.getFleet(fleetId);
          const members = shown.deletedAt === null ? await checkMemberPanes(runtime, await runtime.broker.listMembers(fleetId), () => runtime.broker.listMembers(fleetId)) : [];
          if (options.json) {
            writeJson(io, { fleet: fleetJson(shown), members: members.map(memberJson) });
            return;
          }
          const deleted = shown.deletedAt === null ? '' : ` deleted=${shown.deletedAt}`;
          writeLine(io.stdout, `fleet ${shown.fleetId} '${foldBody(shown.name)}' director=${shown.directorMemberId} created=${shown.createdAt}${deleted}`);
          if (members.length > 0) table(io, memberRows(members));
        }, 'read');
      }),
    );

  fleet
    .command('delete <id>')
    .description("close every member's pane and delete the fleet (its Director's pane stays)")
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io, id) => {
        const fleetId = parseId(id, 'fleet id');
        await withRuntime(options, io, async (runtime) => {
          const deleted = await deleteFleet(runtime, fleetId);
          reportDiagnostics(io, deleted.diagnostics);
          if (options.json) writeJson(io, { fleet_id: fleetId, deregistered_count: deleted.deregisteredCount });
          else writeLine(io.stdout, `Deleted fleet ${fleetId}. Deregistered ${deleted.deregisteredCount} members.`);
        });
      }),
    );

  fleet
    .command('capture <id>')
    .description("read every member's pane (read-only) and list unregistered panes beside the Director")
    .option('-l, --lines <n>', `lines per member (default ${DEFAULT_MEMBER_CAPTURE_LINES})`)
    .option('--ansi', 'keep escape sequences')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & CaptureFlags, io, id) => {
        const fleetId = parseId(id, 'fleet id');
        const lines = parseLines(options.lines);
        await withRuntime(options, io, async (runtime) => {
          const capture = await captureFleet(runtime, fleetId, { lines, ansi: options.ansi === true });
          if (options.json) {
            writeJson(io, fleetCaptureJson(capture));
            return;
          }
          for (const entry of capture.members) {
            const pane = entry.capture?.paneId ?? '-';
            writeLine(io.stdout, `== member ${entry.memberId} ${foldBody(entry.name)} (${entry.kind}) pane=${pane} ${entry.state} ==`);
            if (entry.state === 'captured') io.stdout.write(entry.capture.content);
            if (entry.state === 'failed') writeLine(io.stdout, entry.error);
          }
          if (capture.unregisteredPanes.length > 0) writeLine(io.stdout, `unregistered panes beside the Director: ${capture.unregisteredPanes.join(' ')}`);
        }, 'read');
      }),
    );
}

// ---- member ----------------------------------------------------------------------------------

interface MemberCreateFlags extends SocketFlags, JsonFlag {
  fleet?: string;
  name?: string;
  agent?: CodingAgent;
  description?: string;
  prompt?: string;
  model?: string;
  effort?: string;
  host?: string;
  beside?: string;
  cwd?: string;
}

interface MemberSplitFlags extends SocketFlags, JsonFlag {
  cwd?: string;
  env?: string[];
}

/** `NAME=VALUE` pairs as an environment; a UsageError names one that is not such a pair. */
function parseEnvironment(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(pair);
    if (match === null) throw new UsageError(`--env ${JSON.stringify(pair)} is not NAME=VALUE`);
    env[match[1]!] = match[2]!;
  }
  return env;
}

function registerMember(program: Command, context: CommandContext): void {
  const member = program.command('member').description("a fleet's members: each in its own pane beside the Director");

  member
    .command('create')
    .description('register a member and start its coding agent in a new pane beside the Director')
    .requiredOption('--fleet <id>', 'the fleet')
    .requiredOption('--name <name>', "the member's name")
    .addOption(new Option('--agent <agent>', "coding agent (default: the Director's)").choices(CODING_AGENTS))
    .option('--description <text>', 'what the member is for')
    .option('--prompt <text>', 'spawn prompt; may use {fleet_id} {member_id} {director_member_id} {coding_agent}')
    .option('--model <model>', 'model for the coding agent')
    .option('--effort <level>', 'reasoning effort (claude, codex)')
    .option('--host <host>', 'place the member on this configured host (see drover host add) instead of this machine')
    .option('--beside <pane>', "with --host: the pane on that host to split the member's pane off (its Director or shell pane)")
    .option('--cwd <dir>', "with --host: the directory there the member starts in (default: the host drover's own)")
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: MemberCreateFlags, io) => {
        const fleetId = parseId(options.fleet, '--fleet');
        await withRuntime(options, io, async (runtime) => {
          let created;
          try {
            created = await createMember(runtime, {
              fleetId,
              name: options.name!,
              description: options.description,
              agent: options.agent,
              prompt: options.prompt,
              model: options.model,
              effort: options.effort,
              cwd: io.cwd,
              host: options.host,
              beside: options.beside,
              hostCwd: options.cwd,
            });
          } catch (error) {
            if (!(error instanceof MemberCreationError)) throw error;
            throw new ExitError([error.message, ...error.diagnostics].join('\n'), EXIT.failure, { code: 'failed', member_id: error.memberId, diagnostics: error.diagnostics });
          }
          reportDiagnostics(io, created.warnings);
          if (options.json) writeJson(io, { member: memberJson(created.member) });
          else writeLine(io.stdout, `${created.member.memberId} ${foldBody(created.member.name)} agent=${created.member.codingAgent} pane=${created.pane}`);
        });
      }),
    );

  member
    .command('split')
    .description("start a program in a new pane split off PANE on this machine, as a fleet member's pane (what a hub asks a host for by member create --host)")
    .argument('<beside>', 'the pane to split off')
    .argument('<command...>', 'the program and its arguments')
    .option('--cwd <dir>', 'the directory it starts in (default: this one)')
    .option('--env <pair...>', 'NAME=VALUE for its environment')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: MemberSplitFlags, io, beside, ...command) => {
        const env = parseEnvironment(options.env ?? []);
        await withRuntime(options, io, async (runtime) => {
          const split = await splitBeside(runtime, { beside: beside!, command, cwd: options.cwd ?? io.cwd, env });
          reportDiagnostics(io, split.warnings);
          if (options.json) writeJson(io, { pane_id: split.pane, backend: split.backend, session: split.session, window: split.window, server: split.server, warnings: split.warnings });
          else writeLine(io.stdout, split.pane);
        });
      }),
    );

  member
    .command('list')
    .description("a fleet's active members, Director first")
    .requiredOption('--fleet <id>', 'the fleet')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { fleet?: string }, io) => {
        const fleetId = parseId(options.fleet, '--fleet');
        await withRuntime(options, io, async (runtime) => {
          const members = await checkMemberPanes(runtime, await runtime.broker.listMembers(fleetId), () => runtime.broker.listMembers(fleetId));
          if (options.json) writeJson(io, members.map(memberJson));
          else table(io, memberRows(members));
        }, 'read');
      }),
    );

  member
    .command('show <id>')
    .description('one active member')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io, id) => {
        const memberId = parseId(id, 'member id');
        await withRuntime(options, io, async (runtime) => {
          const [shown] = await checkMemberPanes(runtime, [await runtime.broker.getMember(memberId)], async () => [await runtime.broker.getMember(memberId)]);
          if (shown === undefined) return;
          if (options.json) writeJson(io, memberJson(shown));
          else {
            writeLine(io.stdout, `member ${shown.memberId} '${foldBody(shown.name)}' ${shown.kind} fleet=${shown.fleetId} agent=${shown.codingAgent} pane=${paneLabel(shown.placement)}`);
            if (shown.description !== '') writeLine(io.stdout, foldBody(shown.description));
          }
        }, 'read');
      }),
    );

  member
    .command('delete <id>')
    .description("close the member's pane and deregister it")
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io, id) => {
        const memberId = parseId(id, 'member id');
        await withRuntime(options, io, async (runtime) => {
          const deleted = await deleteMember(runtime, memberId);
          reportDiagnostics(io, deleted.diagnostics);
          const status = deleted.placement === null ? 'no_placement' : deleted.placement.pane === null ? 'pending' : deleted.paneLeft !== null ? 'stale' : 'killed';
          if (options.json) writeJson(io, { member_id: memberId, status, pane_id: deleted.placement?.pane ?? null, pane_key: placementPaneKey(deleted.placement) });
          else {
            const how = { killed: 'killed', no_placement: 'no placement', pending: 'pending — no pane', stale: 'stale — its pane was left alone' }[status];
            writeLine(io.stdout, `Deregistered member ${memberId} (${how}).`);
          }
        });
      }),
    );

  for (const verb of ['prompt', 'exec'] as const) {
    member
      .command(`${verb} <id> <${verb === 'prompt' ? 'text' : 'command'}>`)
      .description(verb === 'prompt' ? "type a prompt into the member's pane and submit it" : 'have the member run a shell command natively (`! COMMAND`)')
      .option('--json', 'print one JSON document')
      .action(
        context.action(async (options: SocketFlags & JsonFlag, io, id, body) => {
          const memberId = parseId(id, 'member id');
          // Checked before the store is opened: a refused line changes nothing, not even the file.
          validateLiteralLine(body!, verb === 'prompt' ? 'text' : 'command');
          await withRuntime(options, io, async (runtime) => {
            const input = { broker: runtime.broker, locks: runtime.locks, memberId, openPort: runtime.openPort, remote: runtime.remote, clock: runtime.clock, spans: runtime.spans, signal: io.signal };
            const dispatched = verb === 'prompt' ? await promptMember({ ...input, text: body! }) : await execInMember({ ...input, command: body! });
            if (options.json) writeJson(io, { member_id: memberId, pane_id: dispatched.placement.pane, pane_key: placementPaneKey(dispatched.placement), line: dispatched.line });
            else writeLine(io.stdout, `${verb === 'prompt' ? 'Prompted' : 'Dispatched to'} member ${memberId} (pane ${dispatched.placement.pane}).`);
          });
        }),
      );
  }

  member
    .command('capture <id>')
    .description("read the member's pane (read-only)")
    .option('-l, --lines <n>', `lines (default ${DEFAULT_MEMBER_CAPTURE_LINES})`)
    .option('--ansi', 'keep escape sequences')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & CaptureFlags, io, id) => {
        const memberId = parseId(id, 'member id');
        const lines = parseLines(options.lines);
        await withRuntime(options, io, async (runtime) => {
          const capture = await captureMember(runtime, memberId, { lines, ansi: options.ansi === true });
          if (options.json) writeJson(io, captureJson(capture));
          else io.stdout.write(capture.content);
        }, 'read');
      }),
    );
}

// ---- message ---------------------------------------------------------------------------------

const DEFAULT_WAIT_MS = 300_000;

function registerMessage(program: Command, context: CommandContext): void {
  const message = program.command('message').description("messages between a fleet's members, pushed into ordinary members' panes");

  message
    .command('send <text>')
    .description('store a message and type its notification into the recipient pane')
    .requiredOption('--from <id>', 'the sending member')
    .option('--to <id>', 'the receiving member')
    .option('--broadcast', "to every other active member of the sender's fleet")
    .option('--idempotency-key <key>', 'a key of your own for this send: sending again with the same key stores nothing new')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { from?: string; to?: string; broadcast?: boolean; idempotencyKey?: string }, io, text) => {
        const from = parseId(options.from, '--from');
        validateMessageText(text!);
        const idempotencyKey = options.idempotencyKey;
        if (idempotencyKey !== undefined) validateIdempotencyKey(idempotencyKey);
        if ((options.to === undefined) === (options.broadcast !== true)) throw new UsageError('give exactly one of --to ID or --broadcast');
        const limit = maxTextLength(io.env);
        return withRuntime(options, io, async (runtime) => {
          if (options.broadcast) {
            const result = await broadcastAndNotify({ ...runtime.notify, ...draftWarnings(io), signal: io.signal, from, text: text!, idempotencyKey });
            reportDiagnostics(io, [...result.diagnostics, ...(result.failure ? [result.failure.diagnostic] : [])]);
            if (options.json) {
              writeJson(io, { summary: messageJson(result.summary), deliveries: result.deliveries.map(messageJson), recipients: result.recipients, delivered: result.delivered });
            } else writeLine(io.stdout, `broadcast id=${result.summary.messageId} recipients=${result.recipients} delivered=${result.delivered}`);
            return result.failure ? 1 : 0;
          }
          const result = await sendAndNotify({ ...runtime.notify, ...draftWarnings(io), signal: io.signal, from, to: parseId(options.to, '--to'), text: text!, idempotencyKey });
          reportDiagnostics(io, [...(result.diagnostic ? [result.diagnostic] : []), ...(result.failure ? [result.failure.diagnostic] : [])]);
          if (options.json) writeJson(io, { message: messageJson(result.message), notification_sent: result.notificationSent });
          else writeLine(io.stdout, `sent ${messageLine(result.message, limit)}${result.notificationSent ? ' (notified)' : ''}`);
          return result.failure ? 1 : 0;
        });
      }),
    );

  message
    .command('poll')
    .description("a member's unacknowledged messages, newest first")
    .requiredOption('--member <id>', 'the receiving member')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { member?: string }, io) => {
        const memberId = parseId(options.member, '--member');
        const limit = maxTextLength(io.env);
        await withRuntime(options, io, async (runtime) => {
          const messages = await runtime.broker.pollMessages(memberId);
          if (options.json) writeJson(io, messages.map(messageJson));
          else if (messages.length === 0) writeLine(io.stdout, 'No messages found.');
          else for (const entry of messages) writeLine(io.stdout, messageLine(entry, limit));
        }, 'read');
      }),
    );

  message
    .command('ack <id>')
    .description('acknowledge a message (only its recipient can)')
    .requiredOption('--member <id>', 'the recipient')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { member?: string }, io, id) => {
        const memberId = parseId(options.member, '--member');
        const messageId = parseId(id, 'message id');
        const limit = maxTextLength(io.env);
        await withRuntime(options, io, async (runtime) => {
          const acked = await runtime.broker.ackMessage(memberId, messageId);
          if (options.json) writeJson(io, messageJson(acked));
          else writeLine(io.stdout, `acked ${messageLine(acked, limit)}`);
        });
      }),
    );

  message
    .command('show <id>')
    .description('one message, exactly as stored')
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag, io, id) => {
        const messageId = parseId(id, 'message id');
        const limit = maxTextLength(io.env);
        await withRuntime(options, io, async (runtime) => {
          const shown = await runtime.broker.showMessage(messageId);
          if (options.json) writeJson(io, messageJson(shown));
          else writeLine(io.stdout, messageLine(shown, limit));
        }, 'read');
      }),
    );

  message
    .command('wait')
    .description("wait for a member's messages, retrying held deliveries to the fleet's other members meanwhile")
    .requiredOption('--member <id>', 'the member waiting')
    .option('--timeout-ms <ms>', `give up after this long (default ${DEFAULT_WAIT_MS})`)
    .option('--json', 'print one JSON document')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { member?: string; timeoutMs?: string }, io) => {
        const memberId = parseId(options.member, '--member');
        const timeoutMs = options.timeoutMs === undefined ? DEFAULT_WAIT_MS : parseMilliseconds('--timeout-ms', options.timeoutMs);
        const limit = maxTextLength(io.env);
        return withRuntime(options, io, async (runtime) => {
          let result;
          try {
            result = await waitForMessages({ ...runtime.notify, ...draftWarnings(io), memberId, timeoutMs, signal: io.signal });
          } catch (error) {
            if (error instanceof WaitError) reportDiagnostics(io, error.diagnostics);
            throw error;
          }
          reportDiagnostics(io, result.diagnostics);
          if (options.json) {
            writeJson(io, {
              member_id: memberId,
              messages: result.messages.map(messageJson),
              timed_out: result.timedOut,
              notified: result.notified,
              diagnostics: result.diagnostics.map((entry) => entry.diagnostic),
            });
          } else if (result.timedOut) writeLine(io.stdout, `No messages for member ${memberId} within ${timeoutMs} ms.`);
          else for (const entry of result.messages) writeLine(io.stdout, messageLine(entry, limit));
          // A script waiting in a loop tells "nothing came" from "messages came" by the status alone.
          return result.timedOut && result.messages.length === 0 ? EXIT.timedOut : EXIT.ok;
        });
      }),
    );

  message
    .command('listen')
    .description("stream a member's messages as JSON lines until interrupted: its unacknowledged ones, then each new one (no pane input)")
    .requiredOption('--member <id>', 'the member listening (usually the Director)')
    .option('--json', 'accepted for symmetry: the output is always JSON lines')
    .action(
      context.action(async (options: SocketFlags & JsonFlag & { member?: string }, io) => {
        const memberId = parseId(options.member, '--member');
        await withRuntime(options, io, async (runtime) => {
          for await (const entry of listenForMessages({ broker: runtime.broker, memberId, signal: io.signal })) {
            io.stdout.write(`${JSON.stringify(messageJson(entry))}\n`);
          }
        }, 'read');
      }),
    );
}

/** `drover fleet …`, `drover member …` and `drover message …`. */
// ---- broker ----------------------------------------------------------------------------------

/**
 * The links to every configured host, held while serving: each puts the socket on that host
 * (ssh -R) at the entry's forward_broker, else where that host's drover says it takes a hub's
 * broker, and reconnects on its own when cut.
 */
function forwardingLinks(io: CliIO, socketPath: string): { hosts: Hosts; entries: HostEntry[] } | undefined {
  const entries = [...readHostsConfig(io.env).hosts];
  if (entries.length === 0) return undefined;
  const problem = forwardedSocketProblem(socketPath);
  if (problem !== undefined) throw new UsageError(`the broker socket cannot be forwarded over ssh: ${problem}`);
  return { hosts: Hosts.of(entries, { env: io.env, droverCommand: droverCommand(io.env), brokerSocket: socketPath }), entries };
}

function registerBroker(program: Command, context: CommandContext): void {
  const broker = program.command('broker').description("the fleet's store, served to drover on other machines");
  broker
    .command('serve')
    .description('serve the store this environment chooses on a unix socket (members on other hosts reach it through the host link)')
    .option('--socket <path>', `the socket to serve on (default: ${BROKER_SOCKET_HELP})`)
    .option('--json', 'print one JSON document once serving')
    .action(
      context.action(async (options: JsonFlag & { socket?: string }, io) => {
        const socketPath = resolvePath(io.cwd, options.socket ?? defaultBrokerSocket(io.env));
        if (chooseStore(io.env).kind === 'remote') throw new UsageError('DROVER_BROKER names another broker\'s socket; `drover broker serve` serves a store of this machine (sqlite or postgresql)');
        const served = await openBroker({ env: io.env });
        try {
          const server = await BrokerServer.listen({ broker: served, socketPath });
          const links = forwardingLinks(io, server.socketPath);
          try {
            const url = remoteBrokerUrl(server.socketPath);
            if (options.json) writeJson(io, { socket: server.socketPath, url, store: { kind: served.store.kind, location: served.store.location } });
            else {
              writeLine(io.stdout, `drover broker: serving ${served.store.kind} ${served.store.location} at ${server.socketPath}`);
              writeLine(io.stdout, `members on this machine: DROVER_BROKER=${url}`);
              for (const entry of links?.entries ?? []) {
                if (entry.forwardBroker !== undefined) writeLine(io.stdout, `host ${entry.name}: forwarded to ${entry.forwardBroker} (members there: DROVER_BROKER=${remoteBrokerUrl(entry.forwardBroker)})`);
                else writeLine(io.stdout, `host ${entry.name}: forwarded where drover there takes it, once its link is up (member create --host ${entry.name} gives members the address)`);
              }
              writeLine(io.stdout, 'stop: Ctrl-C');
            }
            // A service manager stops it with SIGTERM: the links' ssh must end with it, not linger holding the hosts' sockets.
            let stop = (): void => undefined;
            const stopped = new Promise<void>((resolve) => (stop = resolve));
            process.once('SIGTERM', stop);
            io.signal.addEventListener('abort', stop, { once: true });
            if (io.signal.aborted) stop();
            await stopped;
            process.off('SIGTERM', stop);
          } finally {
            await links?.hosts.close();
            await server.close();
          }
        } finally {
          await served.close();
        }
        return io.signal.aborted ? EXIT.interrupted : EXIT.ok;
      }),
    );
}

export function registerFleetCommands(program: Command, context: CommandContext): void {
  registerFleet(program, context);
  registerMember(program, context);
  registerMessage(program, context);
  registerBroker(program, context);
}
