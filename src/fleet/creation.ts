import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { ArgumentError, DroverError, messageOf } from '../process/index.js';
import { agentArgv, requireAgentProgram, spawnPrompt, takesPromptOnCommandLine, validateAgentOptions } from './agents.js';
import { COMPENSATION_BUDGET_MS, PaneSpawnError, SPAWN_DEADLINE_MS, type FleetBackend } from './backend.js';
import { sendAndNotify } from './delivery.js';
import { PlacementError, RegistryNotFoundError, RegistryStateError } from './errors.js';
import { isConcrete, placementHost, type CodingAgent, type Member } from './model.js';
import type { RemotePanes, RemoteSpawned } from './remote.js';
import type { FleetRuntime } from './runtime.js';
import { remoteBrokerUrl } from './remote-protocol.js';

export interface MemberRequest {
  fleetId: number;
  name: string;
  description?: string;
  /** Defaults to the Director's coding agent. */
  agent?: CodingAgent;
  /** Spawn prompt template; see PROMPT_PLACEHOLDERS. */
  prompt?: string;
  model?: string;
  effort?: string;
  /** The invoking process's working directory: where the member starts (on this machine). */
  cwd: string;
  /**
   * A configured host to place the member on instead of this machine (null or `local`: here).
   * Its pane is split off `beside` there, and its program is looked up on that host.
   */
  host?: string | null;
  /** On another host: the pane there the member's pane is split off (required with `host`). */
  beside?: string;
  /** On another host: the directory there the member starts in (default: where that host's drover runs). */
  hostCwd?: string;
}

export interface CreatedMember {
  member: Member;
  pane: string;
  /** Best-effort steps that failed without failing the creation. */
  warnings: string[];
}

/**
 * A member creation that failed after registration. The message is the primary failure;
 * `diagnostics` say what compensation could not do (`cleanup failed for pane …`,
 * `cleanup failed for member …`, or that pane compensation is unconfirmed).
 */
export class MemberCreationError extends DroverError {
  readonly memberId: number;
  readonly diagnostics: readonly string[];
  constructor(memberId: number, cause: unknown, diagnostics: readonly string[]) {
    super(`member ${memberId} was not created: ${messageOf(cause)}`, {
      phase: cause instanceof DroverError ? cause.phase : 'create',
      delivery: cause instanceof DroverError ? cause.delivery : 'possibly_sent',
      cause,
    });
    this.memberId = memberId;
    this.diagnostics = Object.freeze([...diagnostics]);
  }
}

function requireDirectory(cwd: string): void {
  if (!isAbsolute(cwd)) throw new ArgumentError(`the member's working directory ${cwd} is not an absolute path`);
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch (cause) {
    throw new DroverError(`the member's working directory ${cwd} cannot be used: ${messageOf(cause)}`, { phase: 'validate', cause });
  }
  if (!isDirectory) throw new DroverError(`the member's working directory ${cwd} is not a directory`, { phase: 'validate' });
}

/**
 * `member create`: validates everything first, registers the member with a pending
 * placement beside the Director, spawns its pane (one 30 s deadline) and records the pane.
 * Termination signals wait from the spawn until the registry commit or its compensation.
 * On failure only the pane this operation owns is closed, never a guessed one, and the
 * member is deregistered; what compensation could not do is reported, not hidden.
 */
export async function createMember(runtime: FleetRuntime, request: MemberRequest): Promise<CreatedMember> {
  const { broker, clock, spans, env } = runtime;
  if (typeof request.name !== 'string' || request.name.trim() === '') throw new ArgumentError('member name may not be empty.');
  const options = { prompt: request.prompt, model: request.model, effort: request.effort };
  // Options for an explicit agent are checked before anything is read; an inherited agent once it is known.
  if (request.agent !== undefined) validateAgentOptions({ agent: request.agent, ...options });
  const host = placementHost(request.host);
  if (host !== null) return createRemoteMember(runtime, request, host);
  if (request.beside !== undefined || request.hostCwd !== undefined) throw new ArgumentError('--beside and --cwd place a member on another host; give --host HOST with them');
  requireDirectory(request.cwd);
  const fleet = await broker.getFleet(request.fleetId);
  if (fleet.deletedAt !== null) throw new RegistryStateError(`fleet ${fleet.fleetId} is deleted`);
  const director = await broker.getMember(fleet.directorMemberId!);
  const directorPlacement = director.placement;
  if (!isConcrete(directorPlacement)) throw new PlacementError(`fleet ${fleet.fleetId}'s Director has no pane to place members beside.`);
  const agent = request.agent ?? director.codingAgent;
  const agentOptions = { agent, ...options };
  validateAgentOptions(agentOptions);
  requireAgentProgram(agent, env);
  // The member's pane is split off the Director's: never off a pane of a server that replaced the Director's.
  const backend = await runtime.backendFor(directorPlacement);
  const server = await backend.serverIncarnation(clock.now() + COMPENSATION_BUDGET_MS);

  const member = await broker.registerMember({
    fleetId: fleet.fleetId,
    name: request.name,
    description: request.description,
    codingAgent: agent,
    placement: { backend: directorPlacement.backend, session: directorPlacement.session, window: directorPlacement.window, server, endpoint: backend.endpoint },
  });
  const launch = {
    ...agentOptions,
    memberName: request.name,
    env,
    values: { fleet_id: fleet.fleetId, member_id: member.memberId, director_member_id: director.memberId, coding_agent: agent },
  };
  const command = agentArgv(launch);

  spans.enter();
  try {
    let spawned;
    try {
      spawned = await backend.spawn({
        directorPane: directorPlacement.pane,
        command,
        cwd: request.cwd,
        env: runtime.memberEnvironment(),
        deadline: clock.now() + SPAWN_DEADLINE_MS,
      });
    } catch (error) {
      throw await compensate(runtime, backend, member.memberId, error, null);
    }
    try {
      await broker.recordPane(member.memberId, spawned.pane);
    } catch (error) {
      throw await compensate(runtime, backend, member.memberId, error, spawned.pane);
    }
    const warnings = [...spawned.warnings];
    if (agent !== 'shell' && !takesPromptOnCommandLine(agent)) warnings.push(...(await sendSpawnPrompt(runtime, director.memberId, member.memberId, spawnPrompt(launch))));
    return { member: await broker.getMember(member.memberId), pane: spawned.pane, warnings };
  } finally {
    spans.exit();
  }
}

/** What a creation on another host needs before anything is registered: the Director, the agent, the way there. */
function requireRemoteRequest(runtime: FleetRuntime, request: MemberRequest, host: string): RemotePanes {
  if (request.beside === undefined || request.beside.trim() === '') throw new ArgumentError(`a member on host ${host} needs --beside PANE: the pane on ${host} to split its pane off`);
  if (request.hostCwd !== undefined && !isAbsolute(request.hostCwd)) throw new ArgumentError(`the member's working directory ${request.hostCwd} on host ${host} is not an absolute path`);
  if (runtime.remote === undefined) throw new PlacementError(`this command cannot reach host ${host}`);
  return runtime.remote;
}

/**
 * `member create --host HOST`: the member is registered with a pending placement on HOST, its
 * pane split off `beside` there by that host's drover, and the pane recorded. The member's
 * program is looked up there; it reaches this fleet's store only through a server store it can
 * reach (its environment carries that store's connection, never this machine's SQLite path).
 * On failure the pane the host made is closed there and the member deregistered.
 */
async function createRemoteMember(runtime: FleetRuntime, request: MemberRequest, host: string): Promise<CreatedMember> {
  const { broker, spans, env } = runtime;
  const remote = requireRemoteRequest(runtime, request, host);
  const fleet = await broker.getFleet(request.fleetId);
  if (fleet.deletedAt !== null) throw new RegistryStateError(`fleet ${fleet.fleetId} is deleted`);
  const director = await broker.getMember(fleet.directorMemberId!);
  const agent = request.agent ?? director.codingAgent;
  const agentOptions = { agent, prompt: request.prompt, model: request.model, effort: request.effort };
  validateAgentOptions(agentOptions);
  // Known once the host has split its pane; until then the placement is pending.
  const member = await broker.registerMember({
    fleetId: fleet.fleetId,
    name: request.name,
    description: request.description,
    codingAgent: agent,
    // tmux until the host says which multiplexer it split the pane on.
    placement: { host, backend: 'tmux', session: PENDING_REMOTE_LOCATION, window: PENDING_REMOTE_LOCATION },
  });
  const launch = {
    ...agentOptions,
    memberName: request.name,
    env,
    values: { fleet_id: fleet.fleetId, member_id: member.memberId, director_member_id: director.memberId, coding_agent: agent },
  };
  const reach = await storeFromHost(runtime, remote, host, request.name);
  spans.enter();
  try {
    let spawned;
    try {
      spawned = await remote.spawn({ host, beside: request.beside!, command: agentArgv(launch), cwd: request.hostCwd, env: reach.env, budgetMs: SPAWN_DEADLINE_MS });
    } catch (error) {
      throw await compensateRemote(runtime, remote, host, member.memberId, error, null);
    }
    try {
      await broker.setPlacement(member.memberId, { host, backend: spawned.backend, session: spawned.session, window: spawned.window, pane: spawned.pane, server: spawned.server });
    } catch (error) {
      throw await compensateRemote(runtime, remote, host, member.memberId, error, spawned.pane);
    }
    const warnings = [...reach.warnings, ...spawned.warnings];
    if (agent !== 'shell' && !takesPromptOnCommandLine(agent)) warnings.push(...(await sendSpawnPrompt(runtime, director.memberId, member.memberId, spawnPrompt(launch))));
    return { member: await broker.getMember(member.memberId), pane: spawned.pane, warnings };
  } finally {
    spans.exit();
  }
}

/**
 * How a member's pane on `host` reaches this fleet's store. Where the user had this machine's
 * broker forwarded there (forward_broker), through that socket; a server store (PostgreSQL)
 * through its own connection; else through the socket `drover broker serve` here forwards to
 * where drover there takes it. The forwarded socket works while `broker serve` runs here. A
 * host that names no such place (an older drover) leaves the member without a store, and a
 * warning says it can receive messages but not send or acknowledge them, and what would let it.
 */
async function storeFromHost(runtime: FleetRuntime, remote: RemotePanes, host: string, member: string): Promise<{ env: Record<string, string>; warnings: string[] }> {
  const { store } = runtime.broker;
  const serverStore = store.kind !== 'sqlite' && store.via === undefined;
  const forwarded = await remote.brokerPathOn(host, SPAWN_DEADLINE_MS);
  if (forwarded?.configured === true || (forwarded !== undefined && !serverStore)) return { env: { DROVER_BROKER: remoteBrokerUrl(forwarded.path) }, warnings: [] };
  if (serverStore) return { env: runtime.broker.connectionEnvironment(), warnings: [] };
  return {
    env: {},
    warnings: [
      `member ${member} on host ${host} receives messages but cannot send or acknowledge them: this fleet's store is ${store.via === undefined ? 'a SQLite file' : 'served'} on this machine, and the drover on host ${host} names no place for it; ` +
        `to let it, install this drover's release there (\`drover host add ${host} --install\`) or set forward_broker (an absolute socket path there) under hosts.${host} in drover's config file, run \`drover broker serve\` here, and create the member again`,
    ],
  };
}

/** A remote placement's session and window until its host says where the pane went. */
const PENDING_REMOTE_LOCATION = 'pending';

/** compensate's twin for a pane on another host: closed there (never guessed), then the member deregistered. */
async function compensateRemote(runtime: FleetRuntime, remote: RemotePanes, host: string, memberId: number, error: unknown, ownedPane: string | null): Promise<MemberCreationError> {
  const diagnostics: string[] = [];
  if (ownedPane !== null) {
    try {
      await remote.close(host, ownedPane, COMPENSATION_BUDGET_MS);
    } catch (closeError) {
      diagnostics.push(`cleanup failed for pane ${ownedPane} on host ${host}: ${messageOf(closeError)}`);
    }
  } else if (!(error instanceof DroverError && error.delivery === 'not_sent')) {
    diagnostics.push(`pane compensation is unconfirmed for member ${memberId} on host ${host}: ${messageOf(error)}; no pane was closed`);
  }
  return new MemberCreationError(memberId, error, [...diagnostics, ...(await deregisterForCompensation(runtime, memberId, runtime.clock.now() + COMPENSATION_BUDGET_MS))]);
}

/**
 * `member split`, what a hub asks a host for to place a member there: `command` started in a
 * new pane split off `beside` on this machine's multiplexer, as a member's pane beside its
 * Director. Says where the pane went and which run of the multiplexer holds it.
 */
export async function splitBeside(runtime: FleetRuntime, request: { beside: string; command: readonly string[]; cwd: string; env: Readonly<Record<string, string>> }): Promise<RemoteSpawned> {
  requireDirectory(request.cwd);
  const deadline = runtime.clock.now() + SPAWN_DEADLINE_MS;
  const { backend, incarnation } = await runtime.current(runtime.invokingBackend(), deadline);
  const location = await backend.locate(request.beside, deadline);
  const spawned = await backend.spawn({ directorPane: request.beside, command: request.command, cwd: request.cwd, env: request.env, deadline });
  return { backend: backend.name, pane: spawned.pane, session: location.session, window: location.window, server: incarnation, warnings: spawned.warnings };
}

/**
 * The spawn prompt of an agent that takes none on its command line, as the member's first
 * message from the Director: stored first, so it is delivered at least once like any other
 * (now, if the agent reaches its composer within the budget, else by the next send or wait).
 */
async function sendSpawnPrompt(runtime: FleetRuntime, directorId: number, memberId: number, prompt: string): Promise<string[]> {
  const sent = await sendAndNotify({ ...runtime.notify, from: directorId, to: memberId, text: prompt });
  if (sent.failure !== null) return [sent.failure.diagnostic];
  return sent.diagnostic === null ? [] : [sent.diagnostic.diagnostic];
}

/**
 * Undoes what a failed creation left, within its own five-second budget: closes `ownedPane`
 * (a pane the spawn returned; a failed spawn left none for it to close), then deregisters the
 * member. A member someone else deregistered meanwhile needs nothing more.
 */
async function compensate(runtime: FleetRuntime, backend: FleetBackend, memberId: number, error: unknown, ownedPane: string | null): Promise<MemberCreationError> {
  const deadline = runtime.clock.now() + COMPENSATION_BUDGET_MS;
  const diagnostics: string[] = [];
  if (ownedPane !== null) {
    try {
      await backend.closePane(ownedPane, deadline);
    } catch (closeError) {
      diagnostics.push(`cleanup failed for pane ${ownedPane}: ${messageOf(closeError)}`);
    }
  } else {
    const cleanup = error instanceof PaneSpawnError ? error.cleanup : { kind: 'unknown' as const, detail: messageOf(error) };
    if (cleanup.kind === 'unknown') diagnostics.push(`pane compensation is unconfirmed for member ${memberId}: ${cleanup.detail}; no pane was closed`);
  }
  return new MemberCreationError(memberId, error, [...diagnostics, ...(await deregisterForCompensation(runtime, memberId, deadline))]);
}

/** Deregisters a member whose creation failed, by `deadline`; what it could not do, as diagnostics. */
async function deregisterForCompensation(runtime: FleetRuntime, memberId: number, deadline: number): Promise<string[]> {
  try {
    await runtime.broker.within(Math.max(1, Math.floor(deadline - runtime.clock.now()))).deregisterMember(memberId);
  } catch (deregisterError) {
    // A member someone else deregistered meanwhile needs nothing more.
    if (!(deregisterError instanceof RegistryNotFoundError)) return [`cleanup failed for member ${memberId}: ${messageOf(deregisterError)}`];
  }
  return [];
}
