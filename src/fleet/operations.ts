import { createHash } from 'node:crypto';
import { ArgumentError, DroverError, messageOf } from '../process/index.js';
import type { ClosedPane, FleetBackend } from './backend.js';
import { TRANSPORT_BUDGET_MS } from './dispatch.js';
import { PlacementElsewhereError, PlacementError, PlacementStaleError } from './errors.js';
import { deleteFleetLocked, deleteMemberLocked, type FleetDeleted, type LayoutTidy, type MemberDeleted } from './lifecycle.js';
import { CODING_AGENTS, isConcrete, isRemote, placementPaneKey, type CodingAgent, type ConcretePlacement, type Fleet, type Member, type Placement } from './model.js';
import { INVOKING_PANE_VARIABLE, invokingPane, serverVerdict, type FleetRuntime } from './runtime.js';
import { hostPaneTarget, noRemotePanes, remoteRefusal } from './remote.js';

/** Default `--lines` of a capture. */
export const DEFAULT_MEMBER_CAPTURE_LINES = 20;
const CAPTURE_TIMEOUT_MS = 5000;
/** A host's own read of a member's pane, the link's round trips and a login when the link was down. */
const REMOTE_CAPTURE_BUDGET_MS = 30_000;

/**
 * `fleet create`: a fleet whose root Director is the pane this process runs in ($TMUX_PANE
 * on tmux, $HERDR_PANE_ID on herdr), on a multiplexer that has what a fleet needs.
 */
export async function createFleetHere(runtime: FleetRuntime, request: { name: string; agent: CodingAgent }): Promise<{ fleet: Fleet; director: Member }> {
  if (typeof request.name !== 'string' || request.name.trim() === '') throw new ArgumentError('fleet name may not be empty.');
  if (!(CODING_AGENTS as readonly string[]).includes(request.agent)) throw new ArgumentError(`coding agent must be one of ${CODING_AGENTS.join(', ')} (got '${request.agent}')`);
  const backendName = runtime.invokingBackend();
  // Refuses a multiplexer that lacks what a fleet needs, naming it, before anything is asked of it.
  await runtime.openBackend(backendName);
  const pane = invokingPane(backendName, runtime.env);
  if (pane === undefined) {
    throw new DroverError(`drover fleet create must be run inside a tmux or herdr session (${INVOKING_PANE_VARIABLE[backendName]} is not set)`, { phase: 'select', delivery: 'not_sent' });
  }
  const deadline = runtime.clock.now() + TRANSPORT_BUDGET_MS;
  const { backend, incarnation } = await runtime.current(backendName, deadline);
  const location = await backend.locate(pane, deadline);
  return await runtime.broker.createFleet({ name: request.name, codingAgent: request.agent, directorPlacement: { backend: backendName, ...location, server: incarnation, endpoint: backend.endpoint } });
}

/** How long a roster waits for each multiplexer's pane list. */
const LIVENESS_TIMEOUT_MS = 2000;

/**
 * A member or Director placed in a pane on this machine not yet found gone or stale: the ones a
 * roster checks (a pane id of another host names nothing on this machine's multiplexer). The
 * Director is checked too: a roster never shows a pane of a restarted server as live.
 */
function checkable(member: Member): member is Member & { placement: ConcretePlacement } {
  return isConcrete(member.placement) && !isRemote(member.placement) && member.placement.goneAt === null && member.placement.staleAt === null;
}

/**
 * Finds members whose pane is gone, or whose pane's server was replaced by another (stale),
 * from one pane listing per server the roster names, and returns the members as they now
 * stand: re-read after marking them, or, on a read-only store, with what was found shown but
 * not recorded. Best effort: a multiplexer that cannot be asked leaves its members as stored
 * (an unreachable server is not proof that a pane is gone), and so does a server other than
 * the member's that cannot be told from a replacement (serverVerdict).
 */
export async function checkMemberPanes<M extends Member>(runtime: FleetRuntime, members: readonly M[], reread: () => Promise<M[]>): Promise<M[]> {
  const found = new Map<number, { pane: string; finding: 'goneAt' | 'staleAt' }>();
  // One reach and one listing per server: members recorded at the same endpoint share them.
  const servers = new Map<string, Promise<{ backend: FleetBackend; incarnation: string; live: Set<string> } | undefined>>();
  for (const member of members) {
    if (!checkable(member)) continue;
    const placement = member.placement;
    const key = `${placement.backend} ${placement.endpoint ?? ''}`;
    let server = servers.get(key);
    if (server === undefined) {
      const deadline = runtime.clock.now() + LIVENESS_TIMEOUT_MS;
      server = runtime.livePanesOf(placement, deadline).catch(() => undefined);
      servers.set(key, server);
    }
    const current = await server;
    if (current === undefined) continue;
    const { pane, server: placedOn } = placement;
    const verdict = placedOn === null ? 'same' : serverVerdict({ server: placedOn, endpoint: placement.endpoint }, current.backend, current.incarnation);
    // Pane ids of a replaced server name other panes: such a pane is stale, never looked up.
    if (verdict === 'replaced') found.set(member.memberId, { pane, finding: 'staleAt' });
    else if (verdict === 'same' && !current.live.has(pane)) found.set(member.memberId, { pane, finding: 'goneAt' });
  }
  if (found.size === 0) return [...members];
  if (!runtime.broker.store.readOnly) {
    for (const [memberId, { pane, finding }] of found) {
      if (finding === 'staleAt') await runtime.broker.markServerReplaced(memberId, pane);
      else await runtime.broker.markPaneGone(memberId, pane);
    }
    return reread();
  }
  const now = runtime.broker.timestamp();
  return members.map((member) => {
    const finding = found.get(member.memberId)?.finding;
    return finding === undefined ? member : { ...member, placement: { ...member.placement!, [finding]: now } };
  });
}

/** What deleting leaves of a stale member's pane: it names a pane of another server now, so it is never closed. */
function leftAlone(error: PlacementStaleError): string {
  return `${error.message}; the pane was not closed`;
}

/**
 * The Director's pane for the layout tidy after closing `member`'s pane: only a Director placed
 * on the member's own server run, and not found gone or stale there. Any other pane id would
 * name a pane the tidy must not resize.
 */
function directorTidyPane(director: Placement | null | undefined, member: ConcretePlacement): string | null {
  if (director === undefined || !isConcrete(director) || isRemote(director) || director.goneAt !== null || director.staleAt !== null) return null;
  // A run is named by its server; placements recorded before drover kept it by their endpoint.
  const sameRun = director.server !== null && member.server !== null ? director.server === member.server : director.endpoint === member.endpoint;
  return director.backend === member.backend && sameRun ? director.pane : null;
}

/** The Director's placement of a fleet, if it has one. */
async function directorPlacement(runtime: FleetRuntime, fleetId: number): Promise<Placement | null> {
  const fleet = await runtime.broker.getFleet(fleetId);
  return fleet.directorMemberId === null ? null : (await runtime.broker.getMember(fleet.directorMemberId)).placement;
}

function tidyAfterClosing(closed: readonly { backend: FleetBackend; pane: ClosedPane }[], directorPane: string | null): LayoutTidy {
  return async (deadline) => {
    if (directorPane === null) return;
    const seenTabs = new Set<string | null>();
    for (const { backend, pane } of closed) {
      if (seenTabs.has(pane.tab)) continue;
      seenTabs.add(pane.tab);
      await backend.rebalance(pane, directorPane, deadline);
    }
  };
}

export interface MemberDeletion extends MemberDeleted {
  /** Why the member's pane was not closed (its server was replaced); null when it was closed or there was none. */
  paneLeft: string | null;
}

/**
 * Closes a member's pane on another host through that host's drover (no layout to tidy here).
 * A pane of another run of the host's multiplexer is left alone: the reason why, else null.
 */
async function closeRemotePane(runtime: FleetRuntime, placement: ConcretePlacement & { host: string }, deadline: number): Promise<string | null> {
  if (runtime.remote === undefined) throw noRemotePanes(placement.memberId, placement.host);
  if (placement.staleAt !== null) return leftAlone(new PlacementStaleError(placement.memberId, placement.pane, placement.backend));
  try {
    await runtime.remote.close(placement.host, hostPaneTarget(placement), Math.max(1, deadline - runtime.clock.now()));
  } catch (error) {
    const refusal = await remoteRefusal(runtime.broker, placement.memberId, placement, error);
    if (refusal instanceof PlacementStaleError) return leftAlone(refusal);
    throw refusal;
  }
  return null;
}

/**
 * `member delete`: closes the member's pane under its lock, deregisters it and tidies the
 * layout. A stale member is deregistered with its pane id left alone.
 */
export async function deleteMember(runtime: FleetRuntime, memberId: number): Promise<MemberDeletion> {
  let paneLeft: string | null = null;
  const deleted = await deleteMemberLocked({
    broker: runtime.broker,
    locks: runtime.locks,
    clock: runtime.clock,
    spans: runtime.spans,
    memberId,
    closePane: async (placement, deadline) => {
      if (isRemote(placement)) {
        paneLeft = await closeRemotePane(runtime, placement, deadline);
        return;
      }
      const directorPane = directorTidyPane(await directorPlacement(runtime, (await runtime.broker.getMember(placement.memberId)).fleetId), placement);
      let backend: FleetBackend;
      try {
        backend = await runtime.backendFor(placement, deadline);
      } catch (error) {
        if (!(error instanceof PlacementStaleError)) throw error;
        paneLeft = leftAlone(error);
        return;
      }
      const pane = await backend.closePane(placement.pane, deadline);
      return tidyAfterClosing([{ backend, pane }], directorPane);
    },
  });
  return { ...deleted, paneLeft, diagnostics: paneLeft === null ? deleted.diagnostics : [paneLeft, ...deleted.diagnostics] };
}

/**
 * `fleet delete`: closes every ordinary member's pane under the fleet's locks, then
 * soft-deletes the fleet. Stale members' pane ids are left alone, each said in a diagnostic.
 */
export async function deleteFleet(runtime: FleetRuntime, fleetId: number): Promise<FleetDeleted> {
  const panesLeft: string[] = [];
  const deleted = await deleteFleetLocked({
    broker: runtime.broker,
    locks: runtime.locks,
    clock: runtime.clock,
    spans: runtime.spans,
    fleetId,
    closePanes: async (placements, deadline) => {
      const fleet = await runtime.broker.getFleet(fleetId);
      const directorEntry = placements.find((entry) => entry.memberId === fleet.directorMemberId);
      const closed: { backend: FleetBackend; pane: ClosedPane; placement: ConcretePlacement }[] = [];
      for (const { memberId, placement } of placements) {
        if (memberId === fleet.directorMemberId) continue;
        if (isRemote(placement)) {
          const left = await closeRemotePane(runtime, placement, deadline);
          if (left !== null) panesLeft.push(left);
          continue;
        }
        let backend: FleetBackend;
        try {
          backend = await runtime.backendFor(placement, deadline);
        } catch (error) {
          if (!(error instanceof PlacementStaleError)) throw error;
          panesLeft.push(leftAlone(error));
          continue;
        }
        closed.push({ backend, pane: await backend.closePane(placement.pane, deadline), placement });
      }
      const beside = closed.filter((entry) => directorTidyPane(directorEntry?.placement, entry.placement) !== null);
      return tidyAfterClosing(beside, directorEntry?.placement.pane ?? null);
    },
  });
  return { ...deleted, diagnostics: [...panesLeft, ...deleted.diagnostics] };
}

// ---- capture ---------------------------------------------------------------------------------

/** CSI, OSC (BEL or ST terminated), and the other escape sequences (intermediates, then a final byte). */
const ESCAPE_SEQUENCE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]/gu;

/** Capture text for people: escape sequences removed, and of a line redrawn with CR only what the last redraw left. */
export function plainCapture(text: string): string {
  return text
    .replace(ESCAPE_SEQUENCE, '')
    .split('\n')
    .map((line) => {
      const redraws = line.replace(/\r+$/u, '').split('\r');
      return redraws[redraws.length - 1]!;
    })
    .join('\n');
}

export interface CaptureOptions {
  lines?: number;
  /** Keep escape sequences and CR redraws. */
  ansi?: boolean;
}

export interface MemberCapture {
  memberId: number;
  paneId: string;
  /** The pane's key (placementPaneKey); null for a placement recorded before drover kept its server. */
  paneKey: string | null;
  lines: number;
  content: string;
  capturedAt: string;
  contentSha256: string;
}

function captureLines(options: CaptureOptions): number {
  const lines = options.lines ?? DEFAULT_MEMBER_CAPTURE_LINES;
  if (!Number.isInteger(lines) || lines < 1 || lines > 100_000) throw new ArgumentError(`--lines must be a whole number from 1 to 100000 (got ${lines})`);
  return lines;
}

async function capturePlacement(runtime: FleetRuntime, memberId: number, placement: ConcretePlacement, lines: number, ansi: boolean): Promise<MemberCapture> {
  const raw = isRemote(placement) ? await captureOnHost(runtime, placement, lines, ansi) : await captureHere(runtime, placement, lines);
  const content = ansi ? raw : plainCapture(raw);
  return {
    memberId,
    paneId: placement.pane,
    paneKey: placementPaneKey(placement),
    lines,
    content,
    capturedAt: runtime.broker.timestamp(),
    contentSha256: createHash('sha256').update(content, 'utf8').digest('hex'),
  };
}

async function captureHere(runtime: FleetRuntime, placement: ConcretePlacement, lines: number): Promise<string> {
  const deadline = runtime.clock.now() + CAPTURE_TIMEOUT_MS;
  const backend = await runtime.backendFor(placement, deadline);
  return backend.capture(placement.pane, { lines, deadline });
}

/** A member's pane on another host, read by that host's drover (which sends text without escape sequences). */
async function captureOnHost(runtime: FleetRuntime, placement: ConcretePlacement & { host: string }, lines: number, ansi: boolean): Promise<string> {
  if (ansi) throw new ArgumentError(`--ansi reads a pane on this machine; member ${placement.memberId}'s pane is on host ${placement.host}, whose drover sends the text without escape sequences`);
  if (runtime.remote === undefined) throw noRemotePanes(placement.memberId, placement.host);
  if (placement.staleAt !== null) throw new PlacementStaleError(placement.memberId, placement.pane, placement.backend);
  try {
    return await runtime.remote.capture(placement.host, hostPaneTarget(placement), lines, REMOTE_CAPTURE_BUDGET_MS);
  } catch (error) {
    throw await remoteRefusal(runtime.broker, placement.memberId, placement, error);
  }
}

function requirePane(member: Member, verb: string): ConcretePlacement {
  if (member.placement === null) throw new PlacementError(`member ${member.memberId} has no placement row; it was not spawned via \`drover member create\`.`);
  if (!isConcrete(member.placement)) throw new PlacementError(`member ${member.memberId} has no pane yet (pending placement) — nothing to ${verb}.`);
  return member.placement;
}

/** `member capture`: read-only, no input lock. */
export async function captureMember(runtime: FleetRuntime, memberId: number, options: CaptureOptions = {}): Promise<MemberCapture> {
  const lines = captureLines(options);
  return capturePlacement(runtime, memberId, requirePane(await runtime.broker.getMember(memberId), 'capture'), lines, options.ansi === true);
}

export type FleetCaptureEntry =
  | { memberId: number; name: string; kind: Member['kind']; state: 'captured'; capture: MemberCapture }
  | { memberId: number; name: string; kind: Member['kind']; state: 'pending' | 'no_placement'; capture: null }
  | { memberId: number; name: string; kind: Member['kind']; state: 'failed'; capture: null; error: string };

export interface FleetCapture {
  fleetId: number;
  capturedAt: string;
  members: FleetCaptureEntry[];
  /** Panes beside the Director that no active member of the fleet is placed in (e.g. left by a killed `member create`). */
  unregisteredPanes: string[];
  /** Their pane keys, in the same order, on the server the Director's pane lives on. */
  unregisteredPaneKeys: string[];
}

/** `fleet capture`: every active member's pane, read-only, plus the unregistered panes beside the Director. */
export async function captureFleet(runtime: FleetRuntime, fleetId: number, options: CaptureOptions = {}): Promise<FleetCapture> {
  const lines = captureLines(options);
  const fleet = await runtime.broker.getFleet(fleetId);
  const roster = await runtime.broker.listMembers(fleetId);
  const members: FleetCaptureEntry[] = [];
  for (const member of roster) {
    const base = { memberId: member.memberId, name: member.name, kind: member.kind };
    if (member.placement === null) members.push({ ...base, state: 'no_placement', capture: null });
    else if (!isConcrete(member.placement)) members.push({ ...base, state: 'pending', capture: null });
    else {
      try {
        members.push({ ...base, state: 'captured', capture: await capturePlacement(runtime, member.memberId, member.placement, lines, options.ansi === true) });
      } catch (error) {
        members.push({ ...base, state: 'failed', capture: null, error: messageOf(error) });
      }
    }
  }
  const director = roster.find((member) => member.kind === 'director')?.placement ?? null;
  let unregisteredPanes: string[] = [];
  let unregisteredPaneKeys: string[] = [];
  if (isConcrete(director)) {
    const registered = new Set(roster.flatMap((member) => (isConcrete(member.placement) && !isRemote(member.placement) && member.placement.backend === director.backend ? [member.placement.pane] : [])));
    const deadline = runtime.clock.now() + CAPTURE_TIMEOUT_MS;
    const backend = await runtime.backendFor(director, deadline).catch((error: unknown) => {
      // A stale Director's pane id names another server's pane: its neighbours are not the fleet's.
      if (error instanceof PlacementStaleError || error instanceof PlacementElsewhereError) return undefined;
      throw error;
    });
    if (backend !== undefined) {
      unregisteredPanes = (await backend.neighbours(director.pane, deadline)).filter((pane) => !registered.has(pane));
      const server = await backend.serverIncarnation(deadline);
      unregisteredPaneKeys = unregisteredPanes.map((pane) => placementPaneKey({ ...director, pane, server })!);
    }
  }
  return { fleetId: fleet.fleetId, capturedAt: runtime.broker.timestamp(), members, unregisteredPanes, unregisteredPaneKeys };
}
