/**
 * The bridge's request model, free of node:http: a request is a few facts (method, path, query,
 * headers, the peer, a body read on demand), a route is a plain function from a call to a
 * response, and a middleware is a function that may answer a call itself or pass it on. The
 * node:http adapter (http.ts) turns a socket's request into these facts and a response back into
 * bytes, so routes and middleware are tested by calling them.
 */
import { ArgumentError, DroverError } from '../process/index.js';
import type { Device } from './devices.js';
import { BridgeError, muxFailure } from './errors.js';
import type { ApiError } from './protocol.js';

export interface ApiRequest {
  readonly method: string;
  /** The path as sent, still percent-encoded. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Header values by lower-case name. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** The peer's address. */
  readonly remote: string | null;
  /** The body as a JSON object; read (and checked) on the first call. */
  body(): Promise<Record<string, unknown>>;
}

/** One event-stream connection as a route drives it. */
export interface StreamSink {
  write(chunk: string): void;
  /** Bytes written but not yet taken by the peer. */
  readonly backlog: number;
  /** Ends the stream cleanly. */
  end(): void;
  /** Drops the connection (a peer too far behind). */
  destroy(): void;
  /** Called once when the connection closes, whoever closed it. */
  onClose(listener: () => void): void;
}

export type ApiResponse =
  | { readonly kind: 'json'; readonly status: number; readonly body: unknown; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'file'; readonly status: 200; readonly body: string | Buffer; readonly type: string }
  | { readonly kind: 'empty'; readonly status: number; readonly headers?: Readonly<Record<string, string>> }
  | { readonly kind: 'stream'; readonly status: 200; readonly headers: Readonly<Record<string, string>>; open(sink: StreamSink): void };

export function json(body: unknown, headers?: Readonly<Record<string, string>>): ApiResponse {
  return { kind: 'json', status: 200, body, headers };
}

/** What the audit log records about a call beyond its route. */
export interface AuditNote {
  /** The pane, tab, fleet member or message the call aims at. */
  target: string | null;
  detail: Record<string, unknown>;
}

/** One request on its way through the middleware to its route. */
export interface RouteCall {
  readonly request: ApiRequest;
  readonly route: Route;
  /** The route's path parameters, decoded. */
  readonly params: readonly string[];
  /** The paired device, once the device check passed; null on an open route. */
  device: Device | null;
  readonly audit: AuditNote;
}

export interface Route {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  /** The route's name in the audit log. */
  readonly action: string;
  /** Changes a pane, the layout or the fleet: audited, rate-limited, refused when read-only. */
  readonly write?: boolean;
  /** Audited though it is not a write (pairing). */
  readonly audited?: boolean;
  /** Answered without a device token: the page's own files and pairing. */
  readonly open?: boolean;
  /** A long-lived event stream: like a write, it must come from this page's Origin. */
  readonly stream?: boolean;
  handle(call: RouteCall): Promise<ApiResponse>;
}

/** Answers a call itself, or passes it on with `next`. */
export type Middleware = (call: RouteCall, next: () => Promise<ApiResponse>) => Promise<ApiResponse>;

/** A URL path segment a route captures. */
export const SEGMENT = '([^/]+)';

/** A route that answers every call with one refusal: what a path that matches nothing resolves to. */
function refusalRoute(method: string, error: BridgeError): Route {
  return { method: method === 'POST' ? 'POST' : 'GET', pattern: /$^/, action: error.code, open: true, handle: () => Promise.reject(error) };
}

/** Finds a request's route; never fails: a path no route takes resolves to a route that refuses it. */
export class Router {
  constructor(readonly routes: readonly Route[]) {}

  resolve(method: string, path: string): { route: Route; params: string[] } {
    const matching = this.routes.filter((candidate) => candidate.pattern.test(path));
    const route = matching.find((candidate) => candidate.method === method);
    if (route === undefined) {
      const refusal = matching.length > 0 ? new BridgeError('method_not_allowed', `${method} is not allowed on ${path}`) : new BridgeError('not_found', `drover web has no ${path}`);
      return { route: refusalRoute(method, refusal), params: [] };
    }
    const params: string[] = [];
    for (const part of route.pattern.exec(path)!.slice(1)) {
      try {
        params.push(decodeURIComponent(part));
      } catch {
        return { route: refusalRoute(method, new BridgeError('bad_request', `${JSON.stringify(part)} in ${path} is not a valid URL path segment`)), params: [] };
      }
    }
    return { route, params };
  }
}

/** Runs a call through the middleware, in order, and then its route. */
export function runChain(middleware: readonly Middleware[], call: RouteCall): Promise<ApiResponse> {
  const step = (index: number): Promise<ApiResponse> => {
    const layer = middleware[index];
    return layer === undefined ? call.route.handle(call) : layer(call, () => step(index + 1));
  };
  return step(0);
}

/** Any failure as the API answers it; the detail of an unexpected failure stays in the server's log. */
export function errorBody(error: unknown): { status: number; body: ApiError; headers: Readonly<Record<string, string>> } {
  const known = error instanceof BridgeError ? error : muxFailure(error);
  if (known !== undefined) return { status: known.status, body: { error: { code: known.code, message: known.message, ...known.details } }, headers: known.headers };
  if (error instanceof ArgumentError) return { status: 400, body: { error: { code: 'bad_request', message: error.message } }, headers: {} };
  if (error instanceof DroverError) return { status: 503, body: { error: { code: 'unreachable', message: error.message, delivery: error.delivery } }, headers: {} };
  return { status: 500, body: { error: { code: 'internal', message: 'drover web failed to answer this request; its log says why' } }, headers: {} };
}

export function errorResponse(error: unknown): ApiResponse {
  const { status, body, headers } = errorBody(error);
  return { kind: 'json', status, body, headers };
}

/** A string field of a JSON body, or a bad_request naming it. */
export function stringField(body: Record<string, unknown>, name: string, options: { optional?: boolean; nullable?: boolean } = {}): string | undefined | null {
  const value = body[name];
  if (value === undefined && options.optional) return undefined;
  if (value === null && options.nullable) return null;
  if (typeof value !== 'string') throw new BridgeError('bad_request', `"${name}" must be a string${options.nullable ? ' or null' : ''}`);
  return value;
}

export function integerField(body: Record<string, unknown>, name: string): number {
  const value = body[name];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new BridgeError('bad_request', `"${name}" must be a whole number`);
  return value;
}
