import type { ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';

/** Starts a Server-Sent-Events response. */
export function startEventStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  response.flushHeaders();
}

/** One SSE frame: an optional `event:` line and a JSON `data:` line. */
export function writeEvent(response: ServerResponse, data: unknown, event?: string): void {
  const head = event === undefined ? '' : `event: ${event}\n`;
  response.write(`${head}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/** Splits `text` into `count` pieces (at least one, none empty unless the text is). */
export function pieces(text: string, count: number): string[] {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / Math.max(1, count)));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out.length === 0 ? [''] : out;
}

/** Calls `emit` for each piece of the text, pausing between them; stops when the client went away. */
export async function streamPieces(response: ServerResponse, text: string, count: number, delayMs: number, emit: (piece: string, last: boolean) => void): Promise<void> {
  const all = pieces(text, count);
  for (const [index, piece] of all.entries()) {
    if (response.destroyed) return;
    emit(piece, index === all.length - 1);
    if (index < all.length - 1) await delay(delayMs);
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
