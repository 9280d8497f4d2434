import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Block = { type?: string; text?: string };
type Message = { role?: string; content?: string | Block[] };
type Body = { model?: string; stream?: boolean; tools?: unknown[]; messages?: Message[] };

/** Anthropic Messages (`POST /v1/messages`), streamed as SSE: what Claude Code speaks. */
export const anthropicHandler: ApiHandler = {
  api: 'anthropic',
  owns: (method, path) => method === 'POST' && /\/v1\/messages$/.test(path),
  read(_path, raw): RequestReading {
    const body = (raw ?? {}) as Body;
    const last = body.messages?.at(-1);
    const blocks: Block[] = typeof last?.content === 'string' ? [{ type: 'text', text: last.content }] : (last?.content ?? []);
    const afterToolResult = blocks.some((block) => block.type === 'tool_result');
    // Claude Code adds its own context as separate text blocks wrapped in <system-reminder>.
    const texts = blocks.filter((block) => block.type === 'text' && !/^\s*<system-reminder>/.test(block.text ?? '')).map((block) => block.text ?? '');
    return {
      model: body.model ?? null,
      main: Array.isArray(body.tools) && body.tools.length > 0,
      userText: last?.role === 'user' && !afterToolResult && texts.length > 0 ? texts.join('\n') : null,
      afterToolResult,
      stream: body.stream === true,
    };
  },
  async respond(_request, response, reading, reply) {
    const model = reading.model ?? 'claude-mock';
    const id = `msg_drover_${Date.now()}`;
    const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    if (!reading.stream) {
      const content =
        reply.kind === 'text'
          ? [{ type: 'text', text: reply.text }]
          : [{ type: 'tool_use', id: reply.callId, name: 'Bash', input: { command: reply.command, description: 'Run the mock command' } }];
      sendJson(response, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null, usage });
      return;
    }
    startEventStream(response);
    writeEvent(response, { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }, 'message_start');
    if (reply.kind === 'text') {
      writeEvent(response, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start');
      await streamPieces(response, reply.text, reply.chunks, reply.chunkDelayMs, (piece) =>
        writeEvent(response, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }, 'content_block_delta'),
      );
    } else {
      writeEvent(response, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: reply.callId, name: 'Bash', input: {} } }, 'content_block_start');
      const input = JSON.stringify({ command: reply.command, description: 'Run the mock command' });
      writeEvent(response, { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: input } }, 'content_block_delta');
    }
    writeEvent(response, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
    writeEvent(response, { type: 'message_delta', delta: { stop_reason: reply.kind === 'text' ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } }, 'message_delta');
    writeEvent(response, { type: 'message_stop' }, 'message_stop');
    response.end();
  },
};
