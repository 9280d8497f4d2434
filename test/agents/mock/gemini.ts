import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Part = { text?: string; functionResponse?: unknown; thought?: boolean };
type Content = { role?: string; parts?: Part[] };
type Body = { contents?: Content[]; tools?: unknown[] };

const MODEL_CALL = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/;

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
    const texts = parts.filter((part) => typeof part.text === 'string' && part.thought !== true).map((part) => part.text!);
    return {
      model: model ?? null,
      main: verb !== 'countTokens' && Array.isArray(body.tools) && body.tools.length > 0,
      userText: last?.role === 'user' && !afterToolResult && texts.length > 0 ? texts.join('\n') : null,
      afterToolResult,
      stream: verb === 'streamGenerateContent',
    };
  },
  async respond(request, response, reading, reply) {
    if ((request.url ?? '').includes(':countTokens')) {
      sendJson(response, 200, { totalTokens: 10 });
      return;
    }
    const usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 12, totalTokenCount: 22 };
    const candidate = (parts: unknown[], finishReason?: string): unknown => ({
      candidates: [{ content: { role: 'model', parts }, index: 0, ...(finishReason === undefined ? {} : { finishReason }) }],
      usageMetadata,
      modelVersion: reading.model ?? 'gemini-mock',
    });
    const toolParts = reply.kind === 'tool' ? [{ functionCall: { name: 'run_shell_command', args: { command: reply.command, description: 'Run the mock command' } } }] : [];
    if (!reading.stream) {
      sendJson(response, 200, candidate(reply.kind === 'text' ? [{ text: reply.text }] : toolParts, 'STOP'));
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
