import type { IncomingMessage, ServerResponse } from 'node:http';

/** The model APIs the four agents speak. */
export type ApiName = 'anthropic' | 'openai-responses' | 'openai-chat' | 'gemini';

/** What the mock answers to one request. */
export type Reply =
  /** Streamed text, `chunks` pieces `chunkDelayMs` apart: the busy phase an agent shows. */
  | { kind: 'text'; text: string; chunks: number; chunkDelayMs: number }
  /** A shell tool call, so an agent with permission checks on asks the user first. */
  | { kind: 'tool'; command: string; callId: string };

/**
 * What a handler reads out of a request body. A *turn* is a request an agent sent because
 * the user submitted a prompt: the main conversation (not a title, topic or summary side
 * request), whose last message is the user's text (not a tool result).
 */
export interface RequestReading {
  /** The model name the agent asked for, when the body names one. */
  model: string | null;
  /** The main conversation (with tools), as opposed to side requests an agent makes. */
  main: boolean;
  /** The text of the last user message exactly as the agent sent it, when that message is user text. */
  userText: string | null;
  /** The last message is a tool result (the agent runs a tool loop, not a new turn). */
  afterToolResult: boolean;
  /** Whether the agent asked for a streamed reply. */
  stream: boolean;
}

/** One protocol: which requests it owns, how to read them, how to answer them. */
export interface ApiHandler {
  readonly api: ApiName;
  /** Whether this handler serves `method path` (path without the query string). */
  owns(method: string, path: string): boolean;
  read(path: string, body: unknown): RequestReading;
  /** Writes the whole response (streamed or not, as the request asked) and ends it. */
  respond(request: IncomingMessage, response: ServerResponse, reading: RequestReading, reply: Reply, body: unknown): Promise<void>;
}

/** One request as the mock's log keeps it. */
export interface LoggedRequest {
  seq: number;
  /** Milliseconds since the epoch when the request's body was complete. */
  at: number;
  method: string;
  path: string;
  api: ApiName | null;
  reading: RequestReading | null;
  /** The reply chosen for it (null for requests no handler owns). */
  reply: Reply['kind'] | null;
  /** The request body as received (parsed JSON, or the raw text when it is not JSON). */
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/** A user turn as the model API received it: the oracle for "the prompt arrived". */
export interface Turn {
  seq: number;
  at: number;
  api: ApiName;
  text: string;
}
