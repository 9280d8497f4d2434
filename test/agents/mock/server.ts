import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { anthropicHandler } from './anthropic.js';
import { geminiHandler } from './gemini.js';
import { openAiChatHandler } from './openai-chat.js';
import { openAiResponsesHandler } from './openai-responses.js';
import { sendJson } from './sse.js';
import type { ApiHandler, LoggedRequest, Reply, RequestReading, Turn } from './types.js';

export type { ApiName, LoggedRequest, Reply, Turn } from './types.js';

/** A prompt containing this word gets a shell tool call back, so the agent asks permission. */
export const TOOL_MARKER = 'DROVER-TOOL';
/** A prompt containing this word gets a reply streamed over SLOW_REPLY_MS: a long busy phase. */
export const SLOW_MARKER = 'DROVER-SLOW';
export const SLOW_REPLY_MS = 20_000;
/** The command the tool call asks to run. */
export const TOOL_COMMAND = 'echo drover-tool-ran';

const HANDLERS: readonly ApiHandler[] = [anthropicHandler, openAiResponsesHandler, openAiChatHandler, geminiHandler];

/** Request bodies above this are refused: a 100 KB prompt resent with its history stays far below. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

export interface ModelMockOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Also append every request as one JSON line to this file. */
  logFile?: string;
  /** Pieces and pause of an ordinary reply: the busy phase lasts about chunks × delay. */
  chunks?: number;
  chunkDelayMs?: number;
}

/** A model-API mock on 127.0.0.1 that records every request it receives. */
export interface ModelMock {
  readonly url: string;
  readonly port: number;
  /** Every request, in arrival order. */
  readonly requests: readonly LoggedRequest[];
  /** The user turns received, in arrival order. */
  turns(): Turn[];
  /** Resolves with the turns once `done(turns)` holds; rejects after `timeoutMs` naming `what`. */
  waitForTurns(what: string, done: (turns: Turn[]) => boolean, timeoutMs?: number): Promise<Turn[]>;
  close(): Promise<void>;
}

/** The reply a request gets: side requests and tool results are answered at once, turns by their marker words. */
export function chooseReply(reading: RequestReading, options: Required<Pick<ModelMockOptions, 'chunks' | 'chunkDelayMs'>>, seq: number): Reply {
  const quick = (text: string): Reply => ({ kind: 'text', text, chunks: 1, chunkDelayMs: 0 });
  if (!reading.main) return quick('drover mock');
  if (reading.afterToolResult) return quick('The command ran.');
  const text = reading.userText ?? '';
  if (text.includes(TOOL_MARKER)) return { kind: 'tool', command: TOOL_COMMAND, callId: `call_drover_${seq}` };
  const answer = `Received ${Array.from(text).length} characters. Done.`;
  if (text.includes(SLOW_MARKER)) return { kind: 'text', text: answer, chunks: 40, chunkDelayMs: SLOW_REPLY_MS / 40 };
  return { kind: 'text', text: answer, chunks: options.chunks, chunkDelayMs: options.chunkDelayMs };
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    parts.push(chunk as Buffer);
  }
  const raw = Buffer.concat(parts);
  switch (request.headers['content-encoding']) {
    case 'gzip':
      return promisify(gunzip)(raw);
    case 'deflate':
      return promisify(inflate)(raw);
    case 'br':
      return promisify(brotliDecompress)(raw);
    case undefined:
    case 'identity':
      return raw;
    default:
      throw new Error(`unsupported content-encoding ${String(request.headers['content-encoding'])}`);
  }
}

function parseBody(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export async function startModelMock(options: ModelMockOptions = {}): Promise<ModelMock> {
  const pace = { chunks: options.chunks ?? 6, chunkDelayMs: options.chunkDelayMs ?? 250 };
  const requests: LoggedRequest[] = [];
  const listeners = new Set<() => void>();
  const turnsOf = (): Turn[] =>
    requests.flatMap((entry) =>
      entry.api !== null && entry.reading?.main && !entry.reading.afterToolResult && entry.reading.userText !== null
        ? [{ seq: entry.seq, at: entry.at, api: entry.api, text: entry.reading.userText }]
        : [],
    );

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const method = request.method ?? 'GET';
    const path = (request.url ?? '/').split('?')[0]!;
    let body: unknown;
    try {
      body = parseBody(await readBody(request));
    } catch (error) {
      sendJson(response, 400, { error: { message: (error as Error).message } });
      return;
    }
    const handler = HANDLERS.find((candidate) => candidate.owns(method, path));
    const seq = requests.length + 1;
    const reading = handler === undefined ? null : handler.read(path, body);
    const reply = handler === undefined || reading === null ? null : chooseReply(reading, pace, seq);
    const entry: LoggedRequest = { seq, at: Date.now(), method, path, api: handler?.api ?? null, reading, reply: reply?.kind ?? null, body, headers: request.headers };
    requests.push(entry);
    if (options.logFile !== undefined) appendFileSync(options.logFile, `${JSON.stringify(entry)}\n`);
    for (const listener of listeners) listener();
    if (handler === undefined || reading === null || reply === null) {
      sendJson(response, 404, { error: { type: 'not_found', message: `the drover model mock does not serve ${method} ${path}` } });
      return;
    }
    await handler.respond(request, response, reading, reply, body);
  };

  const server: HttpServer = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: (error as Error).message } });
      else response.destroy();
    });
  });
  // Streams stay open for the whole slow reply; never let Node's defaults cut them.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    turns: turnsOf,
    waitForTurns(what, done, timeoutMs = 60_000) {
      return new Promise<Turn[]>((resolve, reject) => {
        const check = (): void => {
          const turns = turnsOf();
          if (!done(turns)) return;
          cleanup();
          resolve(turns);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; the mock received ${turnsOf().length} turns of ${requests.length} requests`));
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          listeners.delete(check);
        };
        listeners.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
