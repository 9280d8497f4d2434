/**
 * The answering side of drover-rpc, over any pair of streams: handshake first, then one reply
 * per request line, in whatever order the requests finish. What a method does is the caller's
 * (`drover rpc --stdio` runs the CLI's own commands); this module owns the framing, the bounds
 * and the subscriptions.
 */
import type { Readable, Writable } from 'node:stream';
import { FrameSplitter, messageOf } from '../process/index.js';
import {
  RPC_ERROR,
  RPC_MAX_LINE_BYTES,
  RPC_PING,
  RPC_UNWATCH,
  RPC_WATCH,
  type RpcErrorBody,
  type RpcEvent,
  type RpcHandshake,
  type RpcParams,
  type RpcReply,
  type RpcRequest,
} from './protocol.js';

/** A method's answer: the command's exit status and the JSON document it printed. */
export interface RpcAnswer {
  readonly exitStatus: number;
  readonly document: unknown;
}

/** A request the answering side refuses before running anything (unknown method, params that are not flags). */
export class RpcRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitStatus = 2,
  ) {
    super(message);
  }
}

export type RpcEventKind = RpcEvent['event']['kind'];

export interface RpcServeOptions {
  readonly input: Readable;
  readonly output: Writable;
  readonly handshake: RpcHandshake;
  /** Runs one method; throws RpcRequestError to refuse it. */
  call(method: string, params: RpcParams, signal: AbortSignal): Promise<RpcAnswer>;
  /**
   * Opens a subscription and reports through `emit` until `signal` aborts; resolves once the
   * subscription is established (its first `up`), rejects (RpcRequestError) when it cannot be.
   */
  watch?(params: RpcParams, emit: (kind: RpcEventKind, detail?: { paneId?: string; detail?: string }) => void, signal: AbortSignal): Promise<void>;
  /** Requests running at once; more wait. Default 8. */
  readonly maxActive?: number;
  /** Requests running or waiting; beyond it a request is refused as busy. Default 64. */
  readonly maxAdmitted?: number;
  /** Interrupts running requests (the serving process was asked to stop). */
  readonly signal?: AbortSignal;
}

const DEFAULT_MAX_ACTIVE = 8;
const DEFAULT_MAX_ADMITTED = 64;

function requestProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'a request is a JSON object';
  const request = value as Partial<RpcRequest>;
  if (typeof request.id !== 'string' && !(typeof request.id === 'number' && Number.isSafeInteger(request.id))) return 'a request needs an id (a string or a whole number)';
  if (typeof request.method !== 'string' || request.method === '') return 'a request needs a method';
  if (request.params !== undefined && (request.params === null || typeof request.params !== 'object' || Array.isArray(request.params))) return 'params are a JSON object';
  return undefined;
}

/** The reply for a command's answer: its error document when it printed one, else its result. */
export function replyOf(id: number | string, answer: RpcAnswer): RpcReply {
  const document = answer.document;
  if (document !== null && typeof document === 'object' && 'error' in document) {
    const error = (document as { error: RpcErrorBody }).error;
    return { id, error, exit_status: answer.exitStatus };
  }
  return { id, result: document, exit_status: answer.exitStatus };
}

function errorReply(id: number | string, code: string, message: string, exitStatus: number): RpcReply {
  return { id, error: { code, message }, exit_status: exitStatus };
}

/**
 * Serves drover-rpc until the input ends. Requests already running then finish within their own
 * budgets (a delivery cut off from its caller still completes and is remembered by its id), their
 * replies dropped, since nobody is left to read them; subscriptions end at once.
 */
export async function serveRpc(options: RpcServeOptions): Promise<void> {
  const maxActive = options.maxActive ?? DEFAULT_MAX_ACTIVE;
  const maxAdmitted = options.maxAdmitted ?? DEFAULT_MAX_ADMITTED;
  const ended = new AbortController();
  const interrupt = options.signal ?? new AbortController().signal;
  const watches = new Map<number | string, AbortController>();
  const waiting: (() => void)[] = [];
  let active = 0;
  let admitted = 0;

  const send = (line: RpcReply | RpcEvent | RpcHandshake): void => {
    if (options.output.writableEnded || options.output.destroyed) return;
    options.output.write(`${JSON.stringify(line)}\n`);
  };

  const turn = async (): Promise<void> => {
    if (active < maxActive) {
      active += 1;
      return;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  };
  const release = (): void => {
    const next = waiting.shift();
    if (next === undefined) active -= 1;
    else next();
  };

  const startWatch = async (id: number | string, params: RpcParams): Promise<RpcReply> => {
    if (options.watch === undefined) return errorReply(id, RPC_ERROR.unknownMethod, 'this drover offers no watch', 2);
    if (watches.has(id)) return errorReply(id, RPC_ERROR.badRequest, `a watch with id ${JSON.stringify(id)} is already open`, 2);
    const stop = new AbortController();
    const onEnd = (): void => stop.abort();
    ended.signal.addEventListener('abort', onEnd, { once: true });
    stop.signal.addEventListener('abort', () => ended.signal.removeEventListener('abort', onEnd), { once: true });
    watches.set(id, stop);
    const emit = (kind: RpcEventKind, extra: { paneId?: string; detail?: string } = {}): void => {
      if (stop.signal.aborted) return;
      send({ event: { watch: id, kind, ...(extra.paneId === undefined ? {} : { pane_id: extra.paneId }), ...(extra.detail === undefined ? {} : { detail: extra.detail }) } });
      if (kind === 'down') {
        watches.delete(id);
        stop.abort();
      }
    };
    try {
      await options.watch(params, emit, stop.signal);
      return { id, result: { watch: id }, exit_status: 0 };
    } catch (error) {
      watches.delete(id);
      stop.abort();
      if (error instanceof RpcRequestError) return errorReply(id, error.code, error.message, error.exitStatus);
      return errorReply(id, 'failed', messageOf(error), 1);
    }
  };

  const answer = async (request: RpcRequest): Promise<RpcReply> => {
    const params = request.params ?? {};
    if (request.method === RPC_WATCH) return startWatch(request.id, params);
    if (request.method === RPC_UNWATCH) {
      const target = params.watch;
      const watch = typeof target === 'string' || typeof target === 'number' ? watches.get(target) : undefined;
      if (watch === undefined) return errorReply(request.id, RPC_ERROR.badParams, `no open watch ${JSON.stringify(target)}`, 2);
      watches.delete(target as number | string);
      watch.abort();
      return { id: request.id, result: {}, exit_status: 0 };
    }
    try {
      return replyOf(request.id, await options.call(request.method, params, interrupt));
    } catch (error) {
      if (error instanceof RpcRequestError) return errorReply(request.id, error.code, error.message, error.exitStatus);
      return errorReply(request.id, 'failed', messageOf(error), 1);
    }
  };

  const handle = async (frame: Buffer): Promise<void> => {
    let value: unknown;
    try {
      value = JSON.parse(frame.toString('utf8'));
    } catch {
      send(errorReply('', RPC_ERROR.badRequest, 'the line is not JSON', 2));
      return;
    }
    const problem = requestProblem(value);
    const id = (value as { id?: unknown })?.id;
    const replyId = typeof id === 'string' || typeof id === 'number' ? id : '';
    if (problem !== undefined) {
      send(errorReply(replyId, RPC_ERROR.badRequest, problem, 2));
      return;
    }
    // A ping measures the link, not the queue: it never waits behind running requests, so a
    // busy host is not taken for a stalled link.
    if ((value as RpcRequest).method === RPC_PING) {
      send({ id: replyId, result: {}, exit_status: 0 });
      return;
    }
    if (admitted >= maxAdmitted) {
      send(errorReply(replyId, RPC_ERROR.busy, `${maxAdmitted} requests are already running or waiting; try again when one is answered`, 1));
      return;
    }
    admitted += 1;
    await turn();
    try {
      send(await answer(value as RpcRequest));
    } finally {
      release();
      admitted -= 1;
    }
  };

  send(options.handshake);
  const splitter = new FrameSplitter(RPC_MAX_LINE_BYTES);
  const running = new Set<Promise<void>>();
  await new Promise<void>((resolve) => {
    const finish = (): void => {
      ended.abort();
      for (const watch of watches.values()) watch.abort();
      watches.clear();
      resolve();
    };
    options.input.on('data', (chunk: Buffer) => {
      for (const event of splitter.push(chunk)) {
        if (event.kind === 'oversize') {
          send(errorReply('', RPC_ERROR.badRequest, `a request line is longer than ${RPC_MAX_LINE_BYTES} bytes`, 2));
          continue;
        }
        const task = handle(event.frame);
        running.add(task);
        void task.finally(() => running.delete(task));
      }
    });
    options.input.once('end', finish);
    options.input.once('close', finish);
    options.input.once('error', finish);
  });
  await Promise.allSettled([...running]);
}
