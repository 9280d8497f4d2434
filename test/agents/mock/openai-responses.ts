import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Part = { type?: string; text?: string };
type Item = { type?: string; role?: string; content?: string | Part[] };
type Body = { model?: string; stream?: boolean; tools?: unknown[]; input?: string | Item[] };

/** OpenAI Responses (`POST /v1/responses`), streamed as SSE: what Codex speaks. */
export const openAiResponsesHandler: ApiHandler = {
  api: 'openai-responses',
  owns: (method, path) => method === 'POST' && /\/responses$/.test(path),
  read(_path, raw): RequestReading {
    const body = (raw ?? {}) as Body;
    const items: Item[] = typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : (body.input ?? []);
    const last = items.at(-1);
    const afterToolResult = last !== undefined && /_output$/.test(last.type ?? '');
    const parts: Part[] = typeof last?.content === 'string' ? [{ type: 'input_text', text: last.content }] : (last?.content ?? []);
    const texts = parts.filter((part) => part.type === 'input_text').map((part) => part.text ?? '');
    return {
      model: body.model ?? null,
      main: Array.isArray(body.tools) && body.tools.length > 0,
      userText: last?.role === 'user' && texts.length > 0 ? texts.join('\n') : null,
      afterToolResult,
      stream: body.stream === true,
    };
  },
  async respond(_request, response, reading, reply) {
    const id = `resp_drover_${Date.now()}`;
    const model = reading.model ?? 'gpt-mock';
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 22 };
    const item =
      reply.kind === 'text'
        ? { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] }
        : { type: 'function_call', id: `fc_${id}`, call_id: reply.callId, name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', reply.command] }), status: 'completed' };
    const completed = { id, object: 'response', model, status: 'completed', output: [item], usage };
    if (!reading.stream) {
      sendJson(response, 200, completed);
      return;
    }
    startEventStream(response);
    writeEvent(response, { type: 'response.created', response: { id, object: 'response', model, status: 'in_progress', output: [] } }, 'response.created');
    if (reply.kind === 'text') {
      writeEvent(response, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } }, 'response.output_item.added');
      await streamPieces(response, reply.text, reply.chunks, reply.chunkDelayMs, (piece) =>
        writeEvent(response, { type: 'response.output_text.delta', item_id: item.id, output_index: 0, content_index: 0, delta: piece }, 'response.output_text.delta'),
      );
    }
    writeEvent(response, { type: 'response.output_item.done', output_index: 0, item }, 'response.output_item.done');
    writeEvent(response, { type: 'response.completed', response: completed }, 'response.completed');
    response.end();
  },
};
