import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Part = { type?: string; text?: string };
type Message = { role?: string; content?: string | Part[] | null };
type Body = { model?: string; stream?: boolean; tools?: unknown[]; messages?: Message[] };

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`), streamed as SSE: what opencode speaks
 * to an OpenAI-compatible provider. opencode's main conversation offers tools; its title
 * request (the first prompt of a session, under a title-generator system prompt) offers none.
 */
export const openAiChatHandler: ApiHandler = {
  api: 'openai-chat',
  owns: (method, path) => method === 'POST' && /\/chat\/completions$/.test(path),
  read(_path, raw): RequestReading {
    const body = (raw ?? {}) as Body;
    const last = body.messages?.at(-1);
    const afterToolResult = last?.role === 'tool';
    const parts: Part[] = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
    // The prompt is the first text part; opencode appends one part per attachment after it (an
    // accepted @file completion adds "Called the Read tool with the following input: …" and the
    // file's content), which the user did not type.
    const prompt = parts.find((part) => part.type === 'text');
    return {
      model: body.model ?? null,
      main: Array.isArray(body.tools) && body.tools.length > 0,
      userText: last?.role === 'user' && prompt !== undefined ? (prompt.text ?? '') : null,
      afterToolResult,
      stream: body.stream === true,
    };
  },
  async respond(_request, response, reading, reply) {
    const id = `chatcmpl-drover-${Date.now()}`;
    const model = reading.model ?? 'mock-model';
    const created = Math.floor(Date.now() / 1000);
    const usage = { prompt_tokens: 10, completion_tokens: 12, total_tokens: 22 };
    const toolCall = reply.kind === 'tool' ? { id: reply.callId, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: reply.command, description: 'Run the mock command' }) } } : undefined;
    if (!reading.stream) {
      const message = reply.kind === 'text' ? { role: 'assistant', content: reply.text } : { role: 'assistant', content: null, tool_calls: [toolCall] };
      sendJson(response, 200, { id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: reply.kind === 'text' ? 'stop' : 'tool_calls' }], usage });
      return;
    }
    const chunk = (delta: unknown, finish: string | null): unknown => ({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] });
    startEventStream(response);
    writeEvent(response, chunk({ role: 'assistant', content: '' }, null));
    if (reply.kind === 'text') {
      await streamPieces(response, reply.text, reply.chunks, reply.chunkDelayMs, (piece) => writeEvent(response, chunk({ content: piece }, null)));
      writeEvent(response, chunk({}, 'stop'));
    } else {
      writeEvent(response, chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null));
      writeEvent(response, chunk({}, 'tool_calls'));
    }
    writeEvent(response, { id, object: 'chat.completion.chunk', created, model, choices: [], usage });
    writeEvent(response, '[DONE]');
    response.end();
  },
};
