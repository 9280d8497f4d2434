/** The little HTTP plumbing the bridge needs from node:http: JSON in and out, cookies, errors. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ArgumentError, DroverError } from '../process/index.js';
import { BridgeError } from './errors.js';
import type { ApiError } from './protocol.js';

/** Largest JSON body accepted: a reply, a message, a rename. */
export const MAX_BODY_BYTES = 256 * 1024;

export async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new BridgeError('unsupported_media_type', 'a write carries a JSON body (Content-Type: application/json)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BridgeError('payload_too_large', `the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BridgeError('bad_request', 'the request body is not JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BridgeError('bad_request', 'the request body must be a JSON object');
  return parsed as Record<string, unknown>;
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  response.end(text);
}

/** Any failure as the API answers it; the detail of an unexpected failure stays in the server's log. */
export function errorBody(error: unknown): { status: number; body: ApiError } {
  if (error instanceof BridgeError) return { status: error.status, body: { error: { code: error.code, message: error.message, ...error.details } } };
  if (error instanceof ArgumentError) return { status: 400, body: { error: { code: 'bad_request', message: error.message } } };
  if (error instanceof DroverError) return { status: 503, body: { error: { code: 'unreachable', message: error.message, delivery: error.delivery } } };
  return { status: 500, body: { error: { code: 'internal', message: 'drover web failed to answer this request; its log says why' } } };
}

export function cookies(request: IncomingMessage): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0) jar.set(part.slice(0, at).trim(), part.slice(at + 1).trim());
  }
  return jar;
}

/** The bearer token of an `Authorization` header, for scripts that are not a browser. */
export function bearer(request: IncomingMessage): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

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
