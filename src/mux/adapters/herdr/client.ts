/**
 * The only code that knows herdr's wire. One request per connection, each bounded by a
 * deadline and a response-size cap; events.subscribe keeps its connection open as a stream.
 * A socket is not a child process, so this uses node:net directly.
 *
 * Failures are HerdrErrors carrying the refusal they stand for: anything wrong with the
 * transport (cannot connect, closed before answering, no answer in time) is `unreachable`;
 * herdr's own error codes are `gone` for a missing target and `refused` otherwise.
 */
import { createConnection, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { AbortedError } from '../../../process/index.js';
import { HerdrError } from '../../errors.js';
import {
  expectResultType,
  field,
  isArray,
  isObject,
  isString,
  paneInfo,
  reasonForCode,
  tabInfo,
  workspaceInfo,
  type HerdrDirection,
  type HerdrEvent,
  type HerdrLayout,
  type HerdrPaneInfo,
  type HerdrReadFormat,
  type HerdrReadResult,
  type HerdrReadSource,
  type HerdrSessionSnapshot,
  type HerdrSplitDirection,
  type HerdrSubscription,
  type HerdrTabInfo,
  type HerdrWorkspaceInfo,
  type HerdrWorktreeInfo,
  type ResultObject,
} from './protocol.js';

export const HERDR_DEFAULT_TIMEOUT_MS = 5_000;
/** Worktree verbs run git; herdr itself allows them longer. */
export const HERDR_WORKTREE_TIMEOUT_MS = 60_000;
export const HERDR_DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

export interface HerdrClientOptions {
  readonly socketPath: string;
  readonly timeoutMs?: number;
  readonly maxResponseBytes?: number;
}

export interface HerdrRequestOptions {
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface HerdrStreamHandlers {
  onEvent(event: HerdrEvent): void;
  /** The stream ended without close() being called; at most once. */
  onClose(reason: string): void;
}

export interface HerdrStream {
  close(): void;
}

/** Splits a byte stream into lines, refusing a line longer than the cap. */
class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** The complete lines in this chunk; throws when a line outgrows the cap. */
  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      this.pending.push(chunk.subarray(start, newline));
      lines.push(Buffer.concat(this.pending).toString('utf8'));
      this.pending = [];
      this.pendingBytes = 0;
      start = newline + 1;
    }
    if (start < chunk.length) {
      this.pending.push(chunk.subarray(start));
      this.pendingBytes += chunk.length - start;
    }
    if (this.pendingBytes > this.maxLineBytes) throw new RangeError(`a line from herdr exceeded ${this.maxLineBytes} bytes`);
    return lines;
  }
}

function unreachable(message: string, delivery: 'not_sent' | 'possibly_sent', cause?: unknown): HerdrError {
  return new HerdrError(message, { phase: 'transport', delivery, reason: 'unreachable', cause });
}

/** Decodes one reply line: a result object, or the HerdrError herdr's error stands for. */
function decodeReply(line: string, id: string, method: string): ResultObject {
  let reply: unknown;
  try {
    reply = JSON.parse(line);
  } catch (cause) {
    throw new HerdrError(`herdr answered ${method} with a line that is not JSON`, { phase: 'decode', delivery: 'possibly_sent', reason: 'refused', cause });
  }
  if (!isObject(reply)) throw new HerdrError(`herdr answered ${method} with a non-object`, { phase: 'decode', delivery: 'possibly_sent', reason: 'refused' });
  if (isObject(reply.error)) {
    const code = isString(reply.error.code) ? reply.error.code : 'unknown';
    const message = isString(reply.error.message) ? reply.error.message : code;
    throw new HerdrError(`herdr refused ${method}: ${code}: ${message}`, { phase: 'request', delivery: 'observed', reason: reasonForCode(code), code });
  }
  if (reply.id !== id) throw new HerdrError(`herdr answered request ${JSON.stringify(reply.id)} where ${id} was asked`, { phase: 'decode', delivery: 'possibly_sent', reason: 'refused' });
  if (!isObject(reply.result)) throw new HerdrError(`herdr answered ${method} without a result`, { phase: 'decode', delivery: 'possibly_sent', reason: 'refused' });
  return reply.result;
}

export class HerdrClient {
  readonly socketPath: string;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private requests = 0;

  constructor(options: HerdrClientOptions) {
    this.socketPath = options.socketPath;
    this.timeoutMs = options.timeoutMs ?? HERDR_DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = options.maxResponseBytes ?? HERDR_DEFAULT_MAX_RESPONSE_BYTES;
  }

  private nextId(): string {
    this.requests += 1;
    return `drover:${process.pid}:${this.requests}`;
  }

  /** One request on its own connection; resolves with herdr's result object. */
  request(method: string, params: Readonly<Record<string, unknown>> = {}, options: HerdrRequestOptions = {}): Promise<ResultObject> {
    const id = this.nextId();
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    if (options.signal?.aborted) return Promise.reject(new AbortedError(`${method} was aborted before it was sent`, { delivery: 'not_sent' }));
    return new Promise<ResultObject>((resolve, reject) => {
      const socket = createConnection(this.socketPath);
      const splitter = new LineSplitter(this.maxResponseBytes);
      let connected = false;
      let settled = false;
      const finish = (error: Error | undefined, result?: ResultObject): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        socket.destroy();
        if (error !== undefined) reject(error);
        else resolve(result!);
      };
      const onAbort = (): void => finish(new AbortedError(`${method} was aborted`, { delivery: connected ? 'possibly_sent' : 'not_sent' }));
      const timer = setTimeout(
        () => finish(unreachable(`herdr at ${this.socketPath} did not answer ${method} within ${timeoutMs} ms`, connected ? 'possibly_sent' : 'not_sent')),
        timeoutMs,
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('connect', () => {
        connected = true;
        socket.write(`${JSON.stringify({ id, method, params })}\n`);
      });
      socket.on('data', (chunk: Buffer) => {
        let lines: string[];
        try {
          lines = splitter.push(chunk);
        } catch (cause) {
          finish(new HerdrError(`herdr's answer to ${method} exceeded ${this.maxResponseBytes} bytes`, { phase: 'request', delivery: 'possibly_sent', reason: 'refused', cause }));
          return;
        }
        if (lines.length === 0) return;
        try {
          finish(undefined, decodeReply(lines[0]!, id, method));
        } catch (error) {
          finish(error as Error);
        }
      });
      socket.on('error', (cause: NodeJS.ErrnoException) => {
        finish(
          connected
            ? unreachable(`the connection to herdr at ${this.socketPath} failed during ${method}: ${cause.message}`, 'possibly_sent', cause)
            : unreachable(`cannot connect to herdr at ${this.socketPath}: ${cause.code ?? cause.message}`, 'not_sent', cause),
        );
      });
      socket.on('close', () => finish(unreachable(`herdr at ${this.socketPath} closed the connection before answering ${method}`, 'possibly_sent')));
    });
  }

  /**
   * Opens an events.subscribe stream; resolves once herdr acknowledges it. After that, events
   * arrive through handlers until close(), or until the stream ends (onClose, once).
   */
  subscribe(subscriptions: readonly HerdrSubscription[], handlers: HerdrStreamHandlers, options: { ackTimeoutMs?: number } = {}): Promise<HerdrStream> {
    const id = this.nextId();
    const method = 'events.subscribe';
    const ackTimeoutMs = options.ackTimeoutMs ?? this.timeoutMs;
    return new Promise<HerdrStream>((resolve, reject) => {
      const socket: Socket = createConnection(this.socketPath);
      const splitter = new LineSplitter(this.maxResponseBytes);
      let acknowledged = false;
      let ended = false;
      const end = (reason: string): void => {
        if (ended) return;
        ended = true;
        socket.destroy();
        handlers.onClose(reason);
      };
      const failStart = (error: Error): void => {
        if (acknowledged || ended) return;
        ended = true;
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      };
      const timer = setTimeout(() => failStart(unreachable(`herdr at ${this.socketPath} did not acknowledge ${method} within ${ackTimeoutMs} ms`, 'possibly_sent')), ackTimeoutMs);
      socket.once('connect', () => socket.write(`${JSON.stringify({ id, method, params: { subscriptions } })}\n`));
      socket.on('data', (chunk: Buffer) => {
        let lines: string[];
        try {
          lines = splitter.push(chunk);
        } catch (cause) {
          if (acknowledged) end((cause as Error).message);
          else failStart(unreachable((cause as Error).message, 'possibly_sent', cause));
          return;
        }
        for (const line of lines) {
          if (ended) return;
          if (!acknowledged) {
            try {
              expectResultType(decodeReply(line, id, method), 'subscription_started', method);
            } catch (error) {
              failStart(error as Error);
              return;
            }
            acknowledged = true;
            clearTimeout(timer);
            resolve({ close: () => { ended = true; socket.destroy(); } });
            continue;
          }
          let event: unknown;
          try {
            event = JSON.parse(line);
          } catch {
            end('herdr sent an event line that is not JSON');
            return;
          }
          if (isObject(event) && isObject(event.error)) {
            end(`herdr ended the event stream: ${String(event.error.code)}: ${String(event.error.message)}`);
            return;
          }
          if (!isObject(event) || !isString(event.event) || !isObject(event.data)) {
            end('herdr sent an event without an event name and data');
            return;
          }
          handlers.onEvent({ event: event.event, data: event.data });
        }
      });
      socket.on('error', (cause: NodeJS.ErrnoException) => {
        if (acknowledged) end(`the herdr event stream failed: ${cause.message}`);
        else failStart(unreachable(`cannot subscribe to herdr at ${this.socketPath}: ${cause.code ?? cause.message}`, 'not_sent', cause));
      });
      socket.on('close', () => {
        if (acknowledged) end('herdr closed the event stream');
        else failStart(unreachable(`herdr at ${this.socketPath} closed the connection before acknowledging ${method}`, 'possibly_sent'));
      });
    });
  }

  // ---- typed methods ---------------------------------------------------------------------

  async ping(options?: HerdrRequestOptions): Promise<{ version: string; protocol: number }> {
    const result = await this.request('ping', {}, options);
    expectResultType(result, 'pong', 'ping');
    return { version: String(result.version), protocol: Number(result.protocol) };
  }

  /**
   * The whole world in one round trip; an older herdr without session.snapshot is read with
   * three list calls. Every request of it ends within the one budget given.
   */
  async sessionSnapshot(options: HerdrRequestOptions = {}): Promise<HerdrSessionSnapshot> {
    const budgetMs = options.timeoutMs ?? this.timeoutMs;
    const until = performance.now() + budgetMs;
    const rest = (): HerdrRequestOptions => {
      const timeoutMs = Math.floor(until - performance.now());
      if (timeoutMs <= 0) throw unreachable(`herdr at ${this.socketPath} did not answer a snapshot within ${budgetMs} ms`, 'not_sent');
      return { timeoutMs, signal: options.signal };
    };
    let result: ResultObject;
    try {
      result = await this.request('session.snapshot', {}, rest());
    } catch (error) {
      if (error instanceof HerdrError && error.code === 'invalid_request' && /unknown variant/.test(error.message)) {
        return { version: 'unknown', protocol: 0, workspaces: await this.workspaceList(rest()), tabs: await this.tabList(undefined, rest()), panes: await this.paneList(undefined, rest()) };
      }
      throw error;
    }
    expectResultType(result, 'session_snapshot', 'session.snapshot');
    const snapshot = field<Record<string, unknown>>(result, 'snapshot', isObject, 'session.snapshot');
    for (const list of ['workspaces', 'tabs', 'panes']) field(snapshot, list, isArray, 'session.snapshot');
    return snapshot as unknown as HerdrSessionSnapshot;
  }

  async workspaceList(options?: HerdrRequestOptions): Promise<HerdrWorkspaceInfo[]> {
    const result = await this.request('workspace.list', {}, options);
    expectResultType(result, 'workspace_list', 'workspace.list');
    return field<unknown[]>(result, 'workspaces', isArray, 'workspace.list').map((value) => workspaceInfo(value, 'workspace.list'));
  }

  async workspaceGet(workspaceId: string, options?: HerdrRequestOptions): Promise<HerdrWorkspaceInfo> {
    const result = await this.request('workspace.get', { workspace_id: workspaceId }, options);
    expectResultType(result, 'workspace_info', 'workspace.get');
    return workspaceInfo(result.workspace, 'workspace.get');
  }

  async workspaceCreate(params: { label?: string; cwd?: string; focus?: boolean; env?: Record<string, string> }): Promise<{ workspace: HerdrWorkspaceInfo; tab: HerdrTabInfo; rootPane: HerdrPaneInfo }> {
    const result = await this.request('workspace.create', { focus: false, ...params });
    expectResultType(result, 'workspace_created', 'workspace.create');
    return { workspace: workspaceInfo(result.workspace, 'workspace.create'), tab: tabInfo(result.tab, 'workspace.create'), rootPane: paneInfo(result.root_pane, 'workspace.create') };
  }

  async tabList(workspaceId?: string, options?: HerdrRequestOptions): Promise<HerdrTabInfo[]> {
    const result = await this.request('tab.list', workspaceId === undefined ? {} : { workspace_id: workspaceId }, options);
    expectResultType(result, 'tab_list', 'tab.list');
    return field<unknown[]>(result, 'tabs', isArray, 'tab.list').map((value) => tabInfo(value, 'tab.list'));
  }

  async tabCreate(params: { workspace_id?: string; label?: string; cwd?: string; focus?: boolean; env?: Record<string, string> }): Promise<{ tab: HerdrTabInfo; rootPane: HerdrPaneInfo }> {
    const result = await this.request('tab.create', { focus: false, ...params });
    expectResultType(result, 'tab_created', 'tab.create');
    return { tab: tabInfo(result.tab, 'tab.create'), rootPane: paneInfo(result.root_pane, 'tab.create') };
  }

  async tabRename(tabId: string, label: string): Promise<HerdrTabInfo> {
    const result = await this.request('tab.rename', { tab_id: tabId, label });
    expectResultType(result, 'tab_info', 'tab.rename');
    return tabInfo(result.tab, 'tab.rename');
  }

  async tabClose(tabId: string): Promise<void> {
    expectResultType(await this.request('tab.close', { tab_id: tabId }), 'ok', 'tab.close');
  }

  async paneList(workspaceId?: string, options?: HerdrRequestOptions): Promise<HerdrPaneInfo[]> {
    const result = await this.request('pane.list', workspaceId === undefined ? {} : { workspace_id: workspaceId }, options);
    expectResultType(result, 'pane_list', 'pane.list');
    return field<unknown[]>(result, 'panes', isArray, 'pane.list').map((value) => paneInfo(value, 'pane.list'));
  }

  async paneGet(paneId: string): Promise<HerdrPaneInfo> {
    const result = await this.request('pane.get', { pane_id: paneId });
    expectResultType(result, 'pane_info', 'pane.get');
    return paneInfo(result.pane, 'pane.get');
  }

  /** Splits a pane (or the focused one) and returns the new pane; focus stays where it is unless asked. */
  async paneSplit(
    params: {
      target_pane_id?: string;
      workspace_id?: string;
      direction: HerdrSplitDirection;
      ratio?: number;
      cwd?: string;
      env?: Record<string, string>;
      focus?: boolean;
    },
    options?: HerdrRequestOptions,
  ): Promise<HerdrPaneInfo> {
    const result = await this.request('pane.split', { focus: false, ...params }, options);
    expectResultType(result, 'pane_info', 'pane.split');
    return paneInfo(result.pane, 'pane.split');
  }

  async paneSendText(paneId: string, text: string, options?: HerdrRequestOptions): Promise<void> {
    expectResultType(await this.request('pane.send_text', { pane_id: paneId, text }, options), 'ok', 'pane.send_text');
  }

  /** Keys in herdr's own spelling (keys.ts toHerdrKey). */
  async paneSendKeys(paneId: string, keys: readonly string[], options?: HerdrRequestOptions): Promise<void> {
    expectResultType(await this.request('pane.send_keys', { pane_id: paneId, keys }, options), 'ok', 'pane.send_keys');
  }

  /** Text then keys, in one request. */
  async paneSendInput(paneId: string, input: { text?: string; keys?: readonly string[] }, options?: HerdrRequestOptions): Promise<void> {
    expectResultType(await this.request('pane.send_input', { pane_id: paneId, ...input }, options), 'ok', 'pane.send_input');
  }

  /** Runs a shell command line in the pane: the text, then Enter. */
  paneRun(paneId: string, commandLine: string, options?: HerdrRequestOptions): Promise<void> {
    return this.paneSendInput(paneId, { text: commandLine, keys: ['enter'] }, options);
  }

  async paneRead(paneId: string, params: { source: HerdrReadSource; lines?: number; format?: HerdrReadFormat }, options?: HerdrRequestOptions): Promise<HerdrReadResult> {
    const result = await this.request(
      'pane.read',
      {
        pane_id: paneId,
        source: params.source,
        format: params.format ?? 'text',
        ...(params.lines === undefined ? {} : { lines: params.lines }),
      },
      options,
    );
    expectResultType(result, 'pane_read', 'pane.read');
    const read = field<Record<string, unknown>>(result, 'read', isObject, 'pane.read');
    field(read, 'text', isString, 'pane.read');
    return read as unknown as HerdrReadResult;
  }

  async paneRename(paneId: string, label: string | null): Promise<HerdrPaneInfo> {
    const result = await this.request('pane.rename', { pane_id: paneId, label });
    expectResultType(result, 'pane_info', 'pane.rename');
    return paneInfo(result.pane, 'pane.rename');
  }

  async paneFocus(paneId: string): Promise<HerdrPaneInfo> {
    const result = await this.request('pane.focus', { pane_id: paneId });
    expectResultType(result, 'pane_info', 'pane.focus');
    return paneInfo(result.pane, 'pane.focus');
  }

  async paneClose(paneId: string, options?: HerdrRequestOptions): Promise<void> {
    expectResultType(await this.request('pane.close', { pane_id: paneId }, options), 'ok', 'pane.close');
  }

  /** The layout of the tab holding this pane, whichever tab has focus. */
  async paneLayout(paneId: string, options?: HerdrRequestOptions): Promise<HerdrLayout> {
    const result = await this.request('pane.layout', { pane_id: paneId }, options);
    expectResultType(result, 'pane_layout', 'pane.layout');
    return field<HerdrLayout>(result, 'layout', isObject, 'pane.layout');
  }

  /** Moves the pane's edge in `direction` by `amount` (a fraction of the tab). */
  async paneResize(paneId: string, direction: HerdrDirection, amount: number, options?: HerdrRequestOptions): Promise<HerdrLayout> {
    const result = await this.request('pane.resize', { pane_id: paneId, direction, amount }, options);
    expectResultType(result, 'pane_resize', 'pane.resize');
    const resize = field<Record<string, unknown>>(result, 'resize', isObject, 'pane.resize');
    return field<HerdrLayout>(resize, 'layout', isObject, 'pane.resize');
  }

  async worktreeList(cwd: string): Promise<HerdrWorktreeInfo[]> {
    const result = await this.request('worktree.list', { cwd }, { timeoutMs: HERDR_WORKTREE_TIMEOUT_MS });
    expectResultType(result, 'worktree_list', 'worktree.list');
    return field<HerdrWorktreeInfo[]>(result, 'worktrees', isArray, 'worktree.list');
  }

  async worktreeCreate(cwd: string, branch: string): Promise<{ workspace: HerdrWorkspaceInfo; rootPane: HerdrPaneInfo }> {
    const result = await this.request('worktree.create', { cwd, branch, focus: false }, { timeoutMs: HERDR_WORKTREE_TIMEOUT_MS });
    expectResultType(result, 'worktree_created', 'worktree.create');
    return { workspace: workspaceInfo(result.workspace, 'worktree.create'), rootPane: paneInfo(result.root_pane, 'worktree.create') };
  }

  async worktreeOpen(cwd: string, path: string): Promise<{ workspace: HerdrWorkspaceInfo; rootPane: HerdrPaneInfo; alreadyOpen: boolean }> {
    const result = await this.request('worktree.open', { cwd, path, focus: false }, { timeoutMs: HERDR_WORKTREE_TIMEOUT_MS });
    expectResultType(result, 'worktree_opened', 'worktree.open');
    return {
      workspace: workspaceInfo(result.workspace, 'worktree.open'),
      rootPane: paneInfo(result.root_pane, 'worktree.open'),
      alreadyOpen: result.already_open === true,
    };
  }
}
