/**
 * A merged view kept current for a long-lived reader (`drover web`): every host's rows are asked
 * for again at a modest interval over its long-lived link, and at once when a host's link comes
 * up or goes. Hosts push no row changes; polling a pane map over a link that is already open is
 * one small request per host per round, not an ssh login.
 *
 * The view is merged when read, with each link's health as it is then: rows a host answered
 * with before its link went are shown as stale from that moment, never as live until the next
 * round.
 */
import { wallMicros } from '../process/index.js';
import { gatherHostViews, type HostViewRequest, type RememberedRowsStore } from './gather.js';
import { mergeHostViews, type HostAnswer, type MergedView } from './merged.js';
import type { HostHealth, LinkState } from './link.js';
import type { Hosts } from './registry.js';

export const DEFAULT_HOST_POLL_MS = 5000;

export interface HostViewPollerOptions {
  /** Between the end of one round and the start of the next. */
  readonly intervalMs?: number;
  /** After every round, and on every change of a host's health. */
  readonly onChange?: () => void;
  readonly log?: (line: string) => void;
}

/**
 * The answers as they stand now: a host whose link is not up any more did not answer, whatever
 * it answered last round; its last rows are what it remembers.
 */
export function answersNow(answers: readonly HostAnswer[], healthOf: (host: string) => HostHealth): HostAnswer[] {
  return answers.map((answer) => {
    const { reachable, linkState, lastSeenAt, latencyMs, problem } = healthOf(answer.host);
    const link = { reachable, linkState, lastSeenAt, latencyMs };
    if (reachable || answer.fetched.kind !== 'answered') return { ...answer, link };
    const { lists, atMicros } = answer.fetched;
    return { ...answer, link, fetched: { kind: 'unreachable', error: `host ${answer.host} is ${linkState.replace('_', ' ')}${problem === undefined ? '' : `: ${problem}`}` }, remembered: { lists, atMicros } };
  });
}

export class HostViewPoller {
  private answers: HostAnswer[] = [];
  private timer: NodeJS.Timeout | undefined;
  private round: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly hosts: Hosts,
    private readonly request: HostViewRequest,
    private readonly store: RememberedRowsStore,
    private readonly options: HostViewPollerOptions = {},
  ) {
    const states = new Map<string, LinkState>();
    this.unsubscribe = hosts.onHealth((health) => {
      // Only a change of state matters here (a ping's new latency does not): a link that came up has rows to give now.
      if (states.get(health.name) === health.linkState) return;
      states.set(health.name, health.linkState);
      if (health.reachable) this.poll();
      this.options.onChange?.();
    });
  }

  /** The first round; resolves once it is done, the later rounds keep going by themselves. */
  async start(): Promise<void> {
    this.poll();
    await this.round;
  }

  /** The merged view as of now (see answersNow). */
  view(): MergedView {
    return mergeHostViews(answersNow(this.answers, (host) => this.hosts.link(host).health), this.request.listNames, wallMicros());
  }

  /** A round now, or one more right after the round running now. */
  poll(): void {
    if (this.closed) return;
    if (this.round !== undefined) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.round = this.gather().finally(() => {
      this.round = undefined;
      if (this.closed) return;
      if (this.again) {
        this.again = false;
        this.poll();
        return;
      }
      this.timer = setTimeout(() => this.poll(), this.options.intervalMs ?? DEFAULT_HOST_POLL_MS);
      this.timer.unref();
    });
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.unsubscribe();
  }

  private async gather(): Promise<void> {
    try {
      this.answers = await gatherHostViews(this.hosts, this.request, this.store, { waitForLinks: false });
    } catch (error) {
      this.options.log?.(`reading the hosts' ${this.request.method}: ${(error as Error).message}`);
      return;
    }
    if (!this.closed) this.options.onChange?.();
  }
}
