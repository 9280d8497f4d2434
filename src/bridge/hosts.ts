/**
 * Other machines' panes in drover web. The hub (the machine serving the page) reads every host
 * of `drover host list` over that host's long-lived link: their pane maps and the questions
 * their panes ask (`pane questions`) at a modest interval (HostViewPoller), their health as it
 * changes. A write to a remote pane goes over the same link to that host's own drover (`pane
 * deliver`, `pane keys`), which types it under its own lock and answers with its own receipt;
 * the browser never reaches a host itself.
 *
 * A host that cannot be reached keeps its last panes, marked stale with their age, and a write
 * to one of them is refused before anything is sent.
 */
import { createHash } from 'node:crypto';
import {
  callOnHost,
  deliveryIdProblem,
  HostCallError,
  HostViewPoller,
  newDeliveryId,
  paneKeyOnHost,
  type HostCall,
  type HostLink,
  type HostViewRequest,
  type Hosts,
  type MergedHostStatus,
  type MergedRow,
  type RememberedRowsStore,
  type RpcReply,
  RPC_GLANCE_SINCE,
} from '../hosts/index.js';
import { isAgentState } from '../agents/index.js';
import { LOCAL_HOST, parsePaneKey } from '../mux/index.js';
import { questionLineAnswers } from '../panes/index.js';
import { BridgeError } from './errors.js';
import { ago } from './present.js';
import type { EventHub } from './events.js';
import type { HostView, PaneView, QuestionOption, QuestionView, StateSource } from './protocol.js';
import { statusOfAgentState, triageGroup } from './triage.js';

/** How long a host may take over its pane map (every session there). */
const MAP_BUDGET_MS = 60_000;
/** How long a host may take over a delivery: its own wait for the agent and its check of the screen. */
const DELIVER_BUDGET_MS = 60_000;
/** Keys, a capture: a few multiplexer calls there. */
const VERB_BUDGET_MS = 30_000;

/** The map with each pane's glance (branch, last line, screen digest) from hosts that offer it. */
const PANE_MAP: HostViewRequest = {
  method: 'pane.map',
  params: { all_sessions: true },
  paramsSince: { version: RPC_GLANCE_SINCE, params: { glance: true } },
  hostBudgetMs: MAP_BUDGET_MS,
  listNames: ['rows'],
};
/** Every pane's screen there, read by the host's own question scan: about as long as its map. */
const PANE_QUESTIONS: HostViewRequest = { method: 'pane.questions', params: { all_sessions: true }, hostBudgetMs: MAP_BUDGET_MS, listNames: ['matches'] };

export interface HostPanesOptions {
  readonly hosts: Hosts;
  /** Where each host's last rows are kept, so a host down since before drover web started still shows them (stale). */
  readonly store: RememberedRowsStore;
  readonly hub: EventHub;
  /** Between two reads of the hosts' pane maps. */
  readonly pollMs?: number;
  readonly log?: (line: string) => void;
}

/** A pane on another host, as a write to it names it. */
export interface RemotePane {
  readonly host: string;
  /** The key as the hub shows it (`HOST::MUX::INCARNATION::PANE`). */
  readonly paneKey: string;
  /** Its id on its host. */
  readonly paneId: string;
  /** The same key as that host's own drover takes it (`local::…`). */
  readonly keyOnHost: string;
}

function text(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** A match's answers as its host read them, or undefined when the row has none (a host before drover-rpc 1.2) or they are not answers. */
function answersOf(value: unknown): QuestionOption[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const answers: QuestionOption[] = [];
  for (const answer of value as unknown[]) {
    const { label, keys } = (answer ?? {}) as { label?: unknown; keys?: unknown };
    if (typeof label !== 'string' || !Array.isArray(keys) || keys.length === 0 || !keys.every((key) => typeof key === 'string')) return undefined;
    answers.push({ label, keys: keys as string[] });
  }
  return answers;
}

/**
 * A question a host's scan found in one of its panes, with the answers the host read off that
 * screen (a menu's entries with the keys its agent takes), sent as keys by the host's `pane
 * keys`. A host too old to send them is answered by what the question line itself offers.
 */
function remoteQuestion(merged: MergedRow, asking: MergedRow): QuestionView {
  const snippet = text(asking.row.snippet) ?? '';
  const indicator = text(asking.row.indicator) ?? 'question';
  const options = answersOf(asking.row.answers) ?? questionLineAnswers(snippet, indicator);
  return {
    // The answers are part of the question: a menu redrawn with other entries is another question.
    id: createHash('sha256').update([merged.host, text(asking.row.pane_key) ?? '', indicator, snippet, ...options.map((option) => option.label)].join('\u0000')).digest('hex').slice(0, 16),
    snippet,
    indicator,
    rule: text(asking.row.rule),
    options,
  };
}

/** When the hub saw a remote pane's screen change: between two of its host's answers, at the later one's time. */
export interface ScreenChange {
  readonly digest: string;
  /** null until a change is seen (the first answer shows the screen, not a change). */
  readonly changedAt: string | null;
}

/**
 * A host's pane-map row as the page's pane: what a pane map says (with its glance where the host
 * offers one), the question its host's scan found there (`asking`), when the hub saw its screen
 * change (`screen`), and nothing they do not.
 */
export function remotePaneView(merged: MergedRow, asking?: MergedRow, screen?: ScreenChange): PaneView {
  const { row } = merged;
  const question = asking === undefined ? null : remoteQuestion(merged, asking);
  const agentState = text(row.agent_state);
  const state = agentState !== null && isAgentState(agentState) ? statusOfAgentState(agentState) : 'unknown';
  const source: StateSource = agentState === null ? 'none' : row.agent_state_source === 'screen' ? 'screen' : 'hook';
  const session = text(row.session) ?? '';
  return {
    host: merged.host,
    pane_id: text(row.pane_id) ?? '',
    pane_key: text(row.pane_key) ?? '',
    stale: merged.stale,
    stale_age_ms: merged.staleAgeMs ?? null,
    space_id: `${merged.host}::${session}`,
    space_label: session,
    tab_id: `${merged.host}::${text(row.window_id) ?? ''}`,
    tab_label: text(row.tab),
    label: null,
    title: null,
    title_stale: false,
    foreground: null,
    cwd: text(row.worktree) ?? '',
    repo: text(row.repo),
    branch: text(row.branch),
    changed_at: screen?.changedAt ?? null,
    last_line: text(row.last_line),
    focused: false,
    alive: true,
    agent: text(row.agent),
    // The host checks its own deliveries; its receipt says whether it could.
    verifiable: false,
    state,
    state_source: source,
    question,
    finished_unseen: false,
    revision: text(row.screen_digest),
    group: triageGroup({ state, asking: question !== null, finishedUnseen: false }),
  };
}

export function hostView(status: MergedHostStatus): HostView {
  return {
    name: status.name,
    reachable: status.reachable,
    link_state: status.linkState ?? 'connecting',
    last_seen_at: status.lastSeenAt ?? null,
    latency_ms: status.latencyMs ?? null,
    stale: status.stale,
    stale_age_ms: status.staleAgeMs ?? null,
    error: status.error ?? null,
  };
}

/** The remote pane a path segment names, or undefined when it names one of this machine. */
export function remotePaneOf(segment: string): RemotePane | undefined {
  const parsed = parsePaneKey(segment);
  if (!parsed.ok || parsed.key.host === LOCAL_HOST) return undefined;
  return { host: parsed.key.host, paneKey: segment, paneId: parsed.key.paneId, keyOnHost: paneKeyOnHost(segment, LOCAL_HOST) };
}

function lastSeenText(lastSeenAt: string | undefined): string {
  return lastSeenAt === undefined ? 'never seen' : `last seen ${ago(lastSeenAt)}, at ${lastSeenAt}`;
}

export class HostPanes {
  private readonly poller: HostViewPoller;
  private readonly questions: HostViewPoller;
  /** Each remote pane's state and staleness as last announced, by key. */
  private announced = new Map<string, string>();
  /** Each remote pane's screen digest as last announced, by key. */
  private announcedScreens = new Map<string, string>();
  private linkStates = new Map<string, string>();
  /** Each remote pane's screen as last answered, and when it was last seen to change, by key. */
  private screens = new Map<string, ScreenChange>();

  constructor(private readonly options: HostPanesOptions) {
    const polling = { intervalMs: options.pollMs, onChange: () => this.announce(), log: options.log };
    this.poller = new HostViewPoller(options.hosts, PANE_MAP, options.store, polling);
    this.questions = new HostViewPoller(options.hosts, PANE_QUESTIONS, options.store, polling);
  }

  /** Reads every host once (a host not up yet answers with its last rows, stale). */
  async start(): Promise<void> {
    await Promise.all([this.poller.start(), this.questions.start()]);
  }

  close(): void {
    this.poller.close();
    this.questions.close();
  }

  /** Every host's panes and health, as of now. A host that cannot be reached asks nothing: its last questions may be answered already. */
  view(): { panes: PaneView[]; hosts: HostView[] } {
    const merged = this.poller.view();
    const asking = new Map((this.questions.view().lists.matches ?? []).filter((match) => !match.stale).map((match) => [text(match.row.pane_key), match]));
    const rows = merged.lists.rows ?? [];
    const listed = new Set(rows.map((row) => text(row.row.pane_key)));
    for (const key of this.screens.keys()) if (!listed.has(key)) this.screens.delete(key);
    return {
      panes: rows.map((row) => remotePaneView(row, row.stale ? undefined : asking.get(text(row.row.pane_key)), this.screenOf(row))),
      hosts: merged.hosts.map(hostView),
    };
  }

  /** Notes the screen digest a row carries; its change time moves when the digest differs from the last answer's. */
  private screenOf(merged: MergedRow): ScreenChange | undefined {
    const key = text(merged.row.pane_key);
    const digest = text(merged.row.screen_digest);
    if (key === null) return undefined;
    const known = this.screens.get(key);
    if (digest === null || merged.stale || known?.digest === digest) return known;
    const seen = { digest, changedAt: known === undefined ? null : merged.seenAt };
    this.screens.set(key, seen);
    return seen;
  }

  /**
   * Types `text` into a remote pane through its host's `pane deliver`, and answers with that
   * host's receipt. The delivery carries an id (the caller's, else a new one): the host records
   * it, so the same reply sent again with that id after a `possibly_sent` is never typed twice.
   */
  async deliver(pane: RemotePane, replyText: string, deliveryId: string = newDeliveryId()): Promise<Record<string, unknown>> {
    const problem = deliveryIdProblem(deliveryId);
    if (problem !== undefined) throw new BridgeError('bad_request', `delivery_id: ${problem}`);
    const resend = `POST the same reply to /api/panes/${encodeURIComponent(pane.paneKey)}/reply with "delivery_id": ${JSON.stringify(deliveryId)}`;
    const reply = await this.call(pane, { method: 'pane.deliver', params: { text: replyText, delivery_id: deliveryId }, hostBudgetMs: DELIVER_BUDGET_MS, delivery: { id: deliveryId, resend } });
    // A receipt that is not `submitted` is still a result; a refusal may carry the receipt as its document.
    const receipt = 'result' in reply ? reply.result : reply.error.document;
    if (receipt === null || typeof receipt !== 'object' || Array.isArray(receipt)) throw this.hostRefusal(pane, reply);
    return { ...receipt, host: pane.host, pane_key: pane.paneKey, delivery_id: deliveryId };
  }

  /** Sends key names to a remote pane through its host's `pane keys`; the host checks every key before sending any. */
  async keys(pane: RemotePane, keys: readonly string[]): Promise<Record<string, unknown>> {
    const client = this.linkOf(pane).client;
    if (client !== undefined && !client.handshake.capabilities.includes('pane.keys')) {
      throw new BridgeError('unsupported', `host ${pane.host} runs drover ${client.handshake.drover_version}, which cannot send keys over its link; nothing was sent: install this release there`, {
        details: { host: pane.host },
      });
    }
    const reply = await this.call(pane, { method: 'pane.keys', params: { keys: [...keys] }, hostBudgetMs: VERB_BUDGET_MS });
    if ('error' in reply) throw this.hostRefusal(pane, reply);
    return { sent: keys, host: pane.host, pane_key: pane.paneKey };
  }

  /**
   * Answers a remote pane's question with one of its options, sent as keys by the host. The
   * question must be the one the host's last scan found there (at most one poll old): an answer
   * meant for another question is refused with nothing sent.
   */
  async answer(pane: RemotePane, questionId: string, option: number): Promise<Record<string, unknown>> {
    const current = this.view().panes.find((candidate) => candidate.pane_key === pane.paneKey)?.question ?? null;
    if (current === null || current.id !== questionId) {
      throw new BridgeError(
        'question_changed',
        current === null ? `the pane on ${pane.host} no longer asks that question; nothing was sent` : `the pane on ${pane.host} now asks something else (${current.snippet}); nothing was sent`,
        { details: { current, host: pane.host } },
      );
    }
    const chosen = current.options[option];
    if (chosen === undefined) throw new BridgeError('bad_request', `the question offers ${current.options.length} answers; there is no answer ${option}`);
    await this.keys(pane, chosen.keys);
    // Looked at again now, so the page does not keep showing a question just answered.
    this.questions.poll();
    return { answered: questionId, keys: chosen.keys, host: pane.host, pane_key: pane.paneKey };
  }

  /** A remote pane's screen (its host's `pane capture`), its last `lines` lines. */
  async capture(pane: RemotePane, lines: number): Promise<string> {
    const reply = await this.call(pane, { method: 'pane.capture', params: { lines }, hostBudgetMs: VERB_BUDGET_MS });
    if ('error' in reply) throw this.hostRefusal(pane, reply);
    return text((reply.result as Record<string, unknown>).content) ?? '';
  }

  private linkOf(pane: RemotePane): HostLink {
    if (!this.options.hosts.names.includes(pane.host)) {
      throw new BridgeError('bad_request', `pane key ${pane.paneKey} names host ${pane.host}, which is not one of drover host list (${this.options.hosts.names.join(', ') || 'none'})`);
    }
    return this.options.hosts.link(pane.host);
  }

  /** One call over the host's link as it is now: a link that is not up refuses it before anything is sent (no wait for it to come up). */
  private async call(pane: RemotePane, call: HostCall): Promise<RpcReply> {
    const link = this.linkOf(pane);
    const health = link.health;
    try {
      return (await callOnHost(link, { ...call, params: { ...call.params, pane: pane.keyOnHost } }, { linkDeadlineMs: 0 })).reply;
    } catch (error) {
      if (!(error instanceof HostCallError)) throw error;
      const details = { host: pane.host, ...error.details };
      if (error.code === 'host_unreachable') {
        throw new BridgeError('host_unreachable', `host ${pane.host} cannot be reached (${health.linkState.replace('_', ' ')}, ${lastSeenText(health.lastSeenAt)}); nothing was sent`, {
          details: { ...details, last_seen_at: health.lastSeenAt ?? null },
          delivery: 'not_sent',
        });
      }
      if (error.code === 'host_incompatible') throw new BridgeError('unsupported', error.message, { details, delivery: 'not_sent' });
      // Sent and not answered: it may have been typed there.
      throw new BridgeError('possibly_sent', error.message, { details, delivery: 'possibly_sent' });
    }
  }

  /** A host's refusal as the API answers it, the host's own code and message kept. */
  private hostRefusal(pane: RemotePane, reply: RpcReply): BridgeError {
    const error = 'error' in reply ? reply.error : { code: 'internal', message: `${pane.host} answered something other than a document` };
    const code = error.code === 'server_replaced' ? 'server_replaced' : error.code === 'pane_not_found' ? 'gone' : 'refused';
    return new BridgeError(code, `on ${pane.host}: ${error.message}`, { details: { host: pane.host, host_code: error.code }, delivery: error.delivery === 'possibly_sent' ? 'possibly_sent' : 'not_sent' });
  }

  /** Says on the event stream what changed on the hosts: a link's state, a pane's state, the set of panes. */
  private announce(): void {
    const { panes, hosts } = this.view();
    for (const host of hosts) {
      if (this.linkStates.get(host.name) === host.link_state) continue;
      this.linkStates.set(host.name, host.link_state);
      this.options.hub.publish('host', { name: host.name, reachable: host.reachable, link_state: host.link_state, last_seen_at: host.last_seen_at });
    }
    const now = new Map(panes.map((pane) => [pane.pane_key, `${pane.state} ${pane.stale ? 'stale' : 'live'} ${pane.question?.id ?? 'asks nothing'}`]));
    const sameSet = now.size === this.announced.size && [...now.keys()].every((key) => this.announced.has(key));
    if (!sameSet) this.options.hub.publish('topology', {});
    else {
      for (const pane of panes) {
        if (this.announced.get(pane.pane_key) === now.get(pane.pane_key)) continue;
        this.options.hub.publish('agent', { pane_id: pane.pane_id, pane_key: pane.pane_key, state: pane.state, agent: pane.agent });
        this.options.hub.publish('question', { pane_id: pane.pane_id, pane_key: pane.pane_key, question: pane.question });
      }
      // A changed screen refreshes the rows' last lines and ages, and an open mirror of the pane.
      for (const pane of panes) {
        if (pane.revision === null || this.announcedScreens.get(pane.pane_key) === pane.revision) continue;
        if (this.announcedScreens.has(pane.pane_key)) this.options.hub.publish('pane', { pane_id: pane.pane_id, pane_key: pane.pane_key, revision: pane.revision });
      }
    }
    this.announced = now;
    this.announcedScreens = new Map(panes.flatMap((pane) => (pane.revision === null ? [] : [[pane.pane_key, pane.revision] as const])));
  }
}
