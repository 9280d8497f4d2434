import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Part = { text?: string; functionResponse?: unknown; thought?: boolean };
type Content = { role?: string; parts?: Part[] };
type GenerationConfig = { responseMimeType?: string; responseJsonSchema?: unknown; responseSchema?: unknown };
type Body = { contents?: Content[]; tools?: unknown[]; generationConfig?: GenerationConfig };
type JsonSchema = { type?: string; enum?: unknown[]; properties?: Record<string, JsonSchema> };
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MODEL_CALL = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;
/**
 * Where an @-mention's file contents start: Gemini CLI appends them to the prompt as further
 * parts, the first starting with this.
 */
const REFERENCED_CONTENT = '--- Content from referenced ';

/**
 * The prompt among a user message's text parts. Gemini CLI sends the prompt as one part; around
 * it, the first turn carries a `<session_context>` part before it, @-mentions add their files'
 * contents after it, and a prompt sent after a cancelled turn shares the message with the
 * cancelled prompt (consecutive user turns are merged), which comes before it.
 */
function promptText(parts: readonly Part[]): string | null {
  const texts = parts.filter((part) => typeof part.text === 'string' && part.thought !== true).map((part) => part.text!);
  const references = texts.findIndex((text) => text.trimStart().startsWith(REFERENCED_CONTENT));
  return (references === -1 ? texts : texts.slice(0, references)).at(-1) ?? null;
}

/**
 * A value that fits a side request's response schema. Gemini CLI's utility calls (model
 * router, next-speaker check, loop detection) ask for JSON and retry for ~30 s on anything
 * else; the first enum value is the harmless one for each ("user" speaks next, the flash
 * model), and 0 says "no loop".
 */
function sampleOfSchema(schema: JsonSchema | undefined): Json {
  if (schema?.enum !== undefined && schema.enum.length > 0) return schema.enum[0] as Json;
  switch (schema?.type?.toLowerCase()) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, sampleOfSchema(property)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    default:
      return 'drover mock';
  }
}

/**
 * Gemini CLI runs commands of its known-safe list (echo, cat, ls…) without asking, even with
 * its permission checks on; `printf` is not on it. So `echo WORDS` is asked as the
 * `printf` that prints the same line, to get the permission prompt.
 */
function askedCommand(command: string): string {
  const echoed = /^echo ([\w-]+)$/.exec(command);
  return echoed === null ? command : `printf '%s\\n' ${echoed[1]}`;
}

/** Gemini (`POST /v1beta/models/M:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`): what Gemini CLI speaks. */
export const geminiHandler: ApiHandler = {
  api: 'gemini',
  owns: (method, path) => method === 'POST' && MODEL_CALL.test(path),
  read(path, raw): RequestReading {
    const [, model, verb] = MODEL_CALL.exec(path) ?? [];
    const body = (raw ?? {}) as Body;
    const last = body.contents?.at(-1);
    const parts = last?.parts ?? [];
    const afterToolResult = parts.some((part) => part.functionResponse !== undefined);
    const prompt = promptText(parts);
    return {
      model: model ?? null,
      main: verb !== 'countTokens' && Array.isArray(body.tools) && body.tools.length > 0,
      userText: last?.role === 'user' && !afterToolResult ? prompt : null,
      afterToolResult,
      stream: verb === 'streamGenerateContent',
    };
  },
  async respond(request, response, reading, reply, raw) {
    if ((request.url ?? '').includes(':countTokens')) {
      sendJson(response, 200, { totalTokens: 10 });
      return;
    }
    const config = ((raw ?? {}) as Body).generationConfig;
    const schema = (config?.responseJsonSchema ?? config?.responseSchema) as JsonSchema | undefined;
    const wantsJson = !reading.main && (schema !== undefined || config?.responseMimeType === 'application/json');
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 };
    const candidate = (parts: unknown[], finishReason?: string): unknown => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) }],
      usageMetadata,
      modelVersion: reading.model ?? 'gemini-mock',
    });
    const toolParts = reply.kind === 'tool' ? [{ functionCall: { name: 'run_shell_command', args: { command: askedCommand(reply.command), description: 'Run the mock command' } } }] : [];
    const textParts = (text: string): unknown[] => [{ text: wantsJson ? JSON.stringify(sampleOfSchema(schema)) : text }];
    if (!reading.stream) {
      sendJson(response, 200, candidate(reply.kind === 'text' ? textParts(reply.text) : toolParts, 'STOP'));
      return;
    }
    startEventStream(response);
    if (reply.kind === 'text') {
      await streamPieces(response, reply.text, reply.chunks, reply.chunkDelayMs, (piece, last) => writeEvent(response, candidate([{ text: piece }], last ? 'STOP' : undefined)));
    } else {
      writeEvent(response, candidate(toolParts, 'STOP'));
    }
    response.end();
  },
};
