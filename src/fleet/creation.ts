import { statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { ArgumentError, DroverError, messageOf } from '../process/index.js';
import { agentArgv, requireAgentProgram, spawnPrompt, takesPromptOnCommandLine, validateAgentOptions } from './agents.js';
import { COMPENSATION_BUDGET_MS, PaneSpawnError, SPAWN_DEADLINE_MS, type FleetBackend } from './backend.js';
import { sendAndNotify } from './delivery.js';
import { PlacementError, RegistryNotFoundError, RegistryStateError } from './errors.js';
import { isConcrete, type CodingAgent, type Member } from './model.js';
import type { FleetRuntime } from './runtime.js';

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
  /** The invoking process's working directory: where the member starts. */
  cwd: string;
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
    placement: { backend: directorPlacement.backend, session: directorPlacement.session, window: directorPlacement.window, server },
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
  const { broker, clock } = runtime;
  const deadline = clock.now() + COMPENSATION_BUDGET_MS;
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
  try {
    await broker.within(Math.max(1, Math.floor(deadline - clock.now()))).deregisterMember(memberId);
  } catch (deregisterError) {
    if (!(deregisterError instanceof RegistryNotFoundError)) diagnostics.push(`cleanup failed for member ${memberId}: ${messageOf(deregisterError)}`);
  }
  return new MemberCreationError(memberId, error, diagnostics);
}
