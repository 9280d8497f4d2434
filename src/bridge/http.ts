/**
 * The node:http side of the bridge: a socket's request becomes an ApiRequest (its JSON body
 * read only when a route asks), and an ApiResponse becomes status, headers and bytes, or an
 * event stream. Every response carries the security headers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BridgeError } from './errors.js';
import type { ApiRequest, ApiResponse, StreamSink } from './routing.js';
import { SECURITY_HEADERS } from './security.js';

/** Largest JSON body accepted: a reply, a message, a rename. */
export const MAX_BODY_BYTES = 256 * 1024;

async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new BridgeError('unsupported_media_type', 'a write carries a JSON body (Content-Type: application/json)');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BridgeError('payload_too_large', `the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  return parseJsonObject(Buffer.concat(chunks).toString('utf8'));
}

/** A body's text as the JSON object a write carries; an empty body is an empty object. */
export function parseJsonObject(text: string): Record<string, unknown> {
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

export function apiRequest(request: IncomingMessage): ApiRequest {
  const url = new URL(request.url ?? '/', 'http://drover.invalid');
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  let body: Promise<Record<string, unknown>> | undefined;
  return {
    method: request.method ?? 'GET',
    path: url.pathname,
    query: url.searchParams,
    headers,
    remote: request.socket.remoteAddress ?? null,
    body: () => (body ??= readJsonBody(request)),
  };
}

function streamSink(response: ServerResponse): StreamSink {
  return {
    write: (chunk) => void response.write(chunk),
    get backlog() {
      return response.writableLength;
    },
    end: () => response.end(),
    destroy: () => response.destroy(),
    onClose: (listener) => void response.once('close', listener),
  };
}

/** Writes a response; one that can no longer be answered (its headers went out) drops the connection. */
export function writeResponse(response: ServerResponse, answer: ApiResponse): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
  switch (answer.kind) {
    case 'json':
      response.writeHead(answer.status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...answer.headers });
      response.end(JSON.stringify(answer.body));
      return;
    case 'file':
      response.writeHead(200, { 'Content-Type': answer.type, 'Cache-Control': 'no-cache' });
      response.end(answer.body);
      return;
    case 'empty':
      response.writeHead(answer.status, answer.headers);
      response.end();
      return;
    case 'stream':
      response.writeHead(200, answer.headers);
      answer.open(streamSink(response));
      return;
  }
}
