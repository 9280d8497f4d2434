/**
 * Fleet members' panes on other hosts, reached over each host's long-lived link (callOnHost): the host's own
 * drover types (`pane.deliver`, under the delivery id the fleet gives, so a resend is answered
 * from the host's record and never typed twice), splits (`member.split`), reads
 * (`pane.capture`) and closes (`pane.kill`). A host's link is opened on first use and closed
 * with the command.
 */
import { PLACEMENT_BACKENDS, RemotePaneError, type PlacementBackend, type RemotePanes, type RemoteDelivery, type RemoteReceipt, type RemoteSpawn, type RemoteSpawned } from '../fleet/index.js';
import { forwardedSocketProblem, readHostsConfig } from './config.js';
import { callOnHost, HostCallError, type HostCall } from './host-call.js';
import { HostUnreachableError, type HostLink } from './link.js';
import { RPC_TO_SHELL, type RpcParams } from './protocol.js';
import { Hosts } from './registry.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The receipt in a host's `pane deliver` document, or undefined when it holds none. */
export function receiptOf(document: unknown): RemoteReceipt | undefined {
  if (!isRecord(document)) return undefined;
  const { status, reason, typed, replayed } = document;
  if (status !== 'submitted' && status !== 'staged_unconfirmed' && status !== 'failed') return undefined;
  return { status, reason: typeof reason === 'string' ? reason : '', typed: typed !== false, replayed: replayed === true };
}

export class LinkedRemotePanes implements RemotePanes {
  private readonly opened = new Map<string, Hosts>();

  constructor(
    private readonly options: {
      readonly env: NodeJS.ProcessEnv;
      /** How the user runs drover here, for the commands problems tell them to run. */
      readonly droverCommand?: string;
      readonly signal?: AbortSignal;
    },
  ) {}

  private link(host: string): HostLink {
    let hosts = this.opened.get(host);
    if (hosts === undefined) {
      hosts = Hosts.open({ names: [host], env: this.options.env, droverCommand: this.options.droverCommand, timings: { downAfterFailures: 1 } });
      this.opened.set(host, hosts);
    }
    return hosts.link(host);
  }

  /**
   * One method on the host within `budgetMs` (the link's coming up, then the host's answer);
   * its result document, or RemotePaneError with what the host or the link said.
   */
  private async call(host: string, method: string, params: RpcParams, budgetMs: number, deliveryId?: string, needs?: HostCall['needs']): Promise<unknown> {
    let answer;
    try {
      const delivery = deliveryId === undefined ? undefined : { id: deliveryId, resend: 'the next message send to the member or message wait asks again under this id' };
      answer = await callOnHost(this.link(host), { method, params, hostBudgetMs: budgetMs, delivery, needs }, { linkDeadlineMs: budgetMs, signal: this.options.signal });
    } catch (error) {
      if (error instanceof HostCallError) throw new RemotePaneError(host, error.message, error.delivery === 'not_sent' ? 'not_sent' : 'possibly_sent', error.code);
      throw error;
    }
    const { reply } = answer;
    if ('error' in reply) {
      throw new RemotePaneError(host, `${method}: ${reply.error.message}`, reply.error.code === 'possibly_sent' ? 'possibly_sent' : 'not_sent', reply.error.code);
    }
    return reply.result;
  }

  async brokerPathOn(host: string, budgetMs: number): Promise<{ path: string; configured: boolean } | undefined> {
    const configured = readHostsConfig(this.options.env).hosts.find((entry) => entry.name === host)?.forwardBroker;
    if (configured !== undefined) return { path: configured, configured: true };
    let offered: string | undefined;
    try {
      offered = (await this.link(host).whenUp({ timeoutMs: budgetMs, signal: this.options.signal })).handshake.broker_socket;
    } catch (error) {
      if (error instanceof HostUnreachableError) return undefined;
      throw error;
    }
    return typeof offered === 'string' && forwardedSocketProblem(offered) === undefined ? { path: offered, configured: false } : undefined;
  }

  async deliver(request: RemoteDelivery): Promise<RemoteReceipt> {
    const params = { pane: request.pane, text: request.line, delivery_id: request.deliveryId, ...(request.toShell ? { to_shell: true } : {}) };
    const document = await this.call(request.host, 'pane.deliver', params, request.budgetMs, request.deliveryId, request.toShell ? RPC_TO_SHELL : undefined);
    const receipt = receiptOf(document);
    if (receipt === undefined) throw new RemotePaneError(request.host, `pane.deliver answered no receipt: ${JSON.stringify(document)}`, 'possibly_sent');
    return receipt;
  }

  async spawn(request: RemoteSpawn): Promise<RemoteSpawned> {
    const params: RpcParams = {
      beside: request.beside,
      command: [...request.command],
      env: Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
      ...(request.cwd === undefined ? {} : { cwd: request.cwd }),
    };
    const document = await this.call(request.host, 'member.split', params, request.budgetMs);
    if (!isRecord(document) || !(PLACEMENT_BACKENDS as readonly unknown[]).includes(document.backend) || typeof document.pane_id !== 'string' || typeof document.session !== 'string' || typeof document.window !== 'string' || typeof document.server !== 'string') {
      throw new RemotePaneError(request.host, `member.split answered no pane: ${JSON.stringify(document)}`, 'possibly_sent');
    }
    const warnings = Array.isArray(document.warnings) ? document.warnings.filter((warning): warning is string => typeof warning === 'string') : [];
    return { backend: document.backend as PlacementBackend, pane: document.pane_id, session: document.session, window: document.window, server: document.server, warnings };
  }

  async close(host: string, pane: string, budgetMs: number): Promise<void> {
    try {
      await this.call(host, 'pane.kill', { pane }, budgetMs);
    } catch (error) {
      // Already gone there: nothing is left to close.
      if (!(error instanceof RemotePaneError && error.code === 'pane_not_found')) throw error;
    }
  }

  async capture(host: string, pane: string, lines: number, budgetMs: number): Promise<string> {
    const document = await this.call(host, 'pane.capture', { pane, lines }, budgetMs);
    if (!isRecord(document) || typeof document.content !== 'string') throw new RemotePaneError(host, `pane.capture answered no content: ${JSON.stringify(document)}`, 'not_sent');
    return document.content;
  }

  async closeLinks(): Promise<void> {
    const opened = [...this.opened.values()];
    this.opened.clear();
    await Promise.all(opened.map((hosts) => hosts.close()));
  }
}
