/**
 * The fleet as the page sees it: fleets and their members, the Director's inbox (the messages
 * the Director owns), sending as the Director through the broker's own delivery, and
 * acknowledging. New messages are noticed by reading the store's latest message id whenever
 * the store signals a change (PostgreSQL), or every quarter second (SQLite, which cannot
 * signal other processes; a read is cheap).
 */
import {
  PANE_INPUT_WAIT_MS,
  PaneLockError,
  checkMemberPanes,
  placementPaneKey,
  type ChangeWatch,
  RegistryNotFoundError,
  RegistryStateError,
  paneInputKeys,
  holdingKeys,
  type PaneWriteTarget,
  sendAndNotify,
  type FleetRuntime,
  type Member,
  type Message,
} from '../fleet/index.js';
import { ArgumentError } from '../process/index.js';
import { BridgeError } from './errors.js';
import type { EventHub } from './events.js';
import type { FleetListView, FleetMessageView, FleetView, InboxView } from './protocol.js';

const INBOX_LIMIT = 50;
/** The longest the page's watch waits on a store that signals before it reads again anyway. */
const FLEET_IDLE_MS = 60_000;

export interface SendView {
  readonly message: FleetMessageView;
  readonly notification_sent: boolean;
  readonly diagnostic: string | null;
}

function messageView(message: Message, names: ReadonlyMap<number, string>): FleetMessageView {
  return {
    message_id: message.messageId,
    from_member_id: message.fromMemberId,
    from_name: names.get(message.fromMemberId) ?? null,
    to_member_id: message.toMemberId,
    created_at: message.createdAt,
    status_state: message.statusState,
    text: message.text,
    notified_at: message.notifiedAt,
  };
}

/** A broker refusal as the API answers it. */
function fleetError(error: unknown): unknown {
  if (error instanceof RegistryNotFoundError) return new BridgeError('not_found', error.message);
  if (error instanceof RegistryStateError) return new BridgeError('fleet_refused', error.message);
  if (error instanceof ArgumentError) return new BridgeError('bad_request', error.message);
  return error;
}

export class FleetApi {
  private watching: ChangeWatch | undefined;
  private readonly stop = new AbortController();
  private latest = new Map<number, number>();

  constructor(
    private readonly runtime: FleetRuntime,
    private readonly hub: EventHub,
  ) {}

  /**
   * Runs a write to a pane holding its input locks (paneInputKeys: every member's placed there
   * and the pane's where it stands now), the ones fleet deliveries and `drover pane deliver`
   * take: a reply is never typed into the middle of a message or a prompt, nor they into it.
   * Still held by another process after the wait, the write is refused with nothing sent.
   */
  async withPaneInput<T>(pane: PaneWriteTarget, write: () => Promise<T>): Promise<T> {
    const { broker, locks, clock } = this.runtime;
    const keys = await paneInputKeys(broker, pane);
    if (keys.length === 0) return write();
    const busy = (): Error => new BridgeError('pane_busy', 'a fleet message is being typed into this pane; nothing was sent, try again');
    try {
      return await holdingKeys(locks, keys, { deadline: clock.now() + PANE_INPUT_WAIT_MS, clock }, busy, write);
    } catch (error) {
      // Only taking a lock raises this; a write through the multiplexer never does.
      if (error instanceof PaneLockError) throw new BridgeError('fleet_unavailable', `cannot take the fleet member's pane input lock; nothing was sent: ${error.message}`);
      throw error;
    }
  }

  async list(): Promise<FleetListView> {
    const { broker } = this.runtime;
    const listed = await broker.listFleets();
    const everyMember = async (): Promise<Member[]> => (await Promise.all(listed.map((fleet) => broker.listMembers(fleet.fleetId)))).flat();
    // Checked against the panes there are now, as `drover fleet show` does (a closed pane or a
    // restarted server shows), in one roster: one listing per server for every fleet on it.
    const members = await checkMemberPanes(this.runtime, await everyMember(), everyMember);
    const fleets = listed.map(
      (fleet): FleetView => ({
        fleet_id: fleet.fleetId,
        name: fleet.name,
        director_member_id: fleet.directorMemberId,
        members: members
          .filter((member) => member.fleetId === fleet.fleetId)
          .map((member) => ({
            member_id: member.memberId,
            name: member.name,
            kind: member.kind,
            coding_agent: member.codingAgent,
            pane: member.placement?.pane ?? null,
            pane_key: placementPaneKey(member.placement),
            gone: member.placement?.goneAt !== null && member.placement?.goneAt !== undefined,
            stale: member.placement?.staleAt !== null && member.placement?.staleAt !== undefined,
          })),
      }),
    );
    return { available: true, reason: null, fleets };
  }

  inbox(fleetId: number): Promise<InboxView> {
    return this.guard(async () => {
      const director = await this.director(fleetId);
      const names = await this.names(fleetId);
      const messages = (await this.runtime.broker.deliveriesAfter(director.memberId, 0)).messages;
      const pending = messages.filter((message) => message.statusState === 'input_required').reverse();
      const done = messages.filter((message) => message.statusState === 'completed').reverse();
      return { fleet_id: fleetId, director_member_id: director.memberId, messages: [...pending, ...done].slice(0, INBOX_LIMIT).map((message) => messageView(message, names)) };
    });
  }

  /** Sends as the fleet's Director; the message is stored before any pane is typed into. */
  async send(fleetId: number, to: number, text: string): Promise<SendView> {
    let director: Member;
    try {
      director = await this.director(fleetId);
    } catch (error) {
      throw fleetError(error);
    }
    let result;
    try {
      result = await sendAndNotify({ ...this.runtime.notify, from: director.memberId, to, text });
    } catch (error) {
      throw fleetError(error);
    }
    this.hub.publish('fleet', { fleet_id: fleetId, message_id: result.message.messageId, change: 'message' });
    return {
      message: messageView(result.message, await this.names(fleetId)),
      notification_sent: result.notificationSent,
      diagnostic: result.diagnostic?.diagnostic ?? result.failure?.diagnostic ?? null,
    };
  }

  /** Acknowledges a message the Director owns. */
  ack(fleetId: number, messageId: number): Promise<FleetMessageView> {
    return this.guard(async () => {
      const director = await this.director(fleetId);
      const message = await this.runtime.broker.ackMessage(director.memberId, messageId);
      this.hub.publish('fleet', { fleet_id: fleetId, message_id: messageId, change: 'ack' });
      return messageView(message, await this.names(fleetId));
    });
  }

  /** Publishes a hint for every message stored since the last look, by any process, until closed. */
  watch(): void {
    void this.watchLoop();
  }

  private async watchLoop(): Promise<void> {
    try {
      this.watching = await this.runtime.broker.watch();
      while (!this.stop.signal.aborted) {
        await this.look();
        await this.watching.next(FLEET_IDLE_MS, this.stop.signal);
      }
    } catch {
      // A store that cannot be watched leaves the page to its own reloads.
    }
  }

  close(): void {
    this.stop.abort();
    void this.watching?.close();
  }

  private async look(): Promise<void> {
    try {
      for (const fleet of await this.runtime.broker.listFleets()) {
        if (fleet.directorMemberId === null) continue;
        const seen = this.latest.get(fleet.fleetId);
        const fresh = await this.runtime.broker.deliveriesAfter(fleet.directorMemberId, seen ?? 0);
        this.latest.set(fleet.fleetId, fresh.latestMessageId);
        if (seen === undefined) continue;
        for (const message of fresh.messages) this.hub.publish('fleet', { fleet_id: fleet.fleetId, message_id: message.messageId, change: 'message' });
      }
    } catch {
      // A busy or briefly unreachable store is looked at again on the next change.
    }
  }

  private async director(fleetId: number): Promise<Member> {
    const fleet = await this.runtime.broker.getFleet(fleetId);
    if (fleet.deletedAt !== null) throw new RegistryStateError(`fleet ${fleetId} is deleted`);
    if (fleet.directorMemberId === null) throw new RegistryStateError(`fleet ${fleetId} has no Director`);
    return this.runtime.broker.getMember(fleet.directorMemberId);
  }

  private async names(fleetId: number): Promise<Map<number, string>> {
    return new Map((await this.runtime.broker.listMembers(fleetId)).map((member) => [member.memberId, member.name]));
  }

  private async guard<T>(body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      throw fleetError(error);
    }
  }
}
