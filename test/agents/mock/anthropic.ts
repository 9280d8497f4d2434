import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, RequestReading } from './types.js';

type Block = { type?: string; text?: string };
type Message = { role?: string; content?: string | Block[] };
type Body = { model?: string; stream?: boolean; tools?: unknown[]; messages?: Message[] };

const MESSAGES = /\/v1\/messages$/;
const COUNT_TOKENS = /\/v1\/messages\/count_tokens$/;

/**
 * Text blocks Claude Code adds to a user message beside the person's own text: its context
 * (git status, attribution, the contents of an @-mentioned file…) wrapped in
 * <system-reminder>, and the marker it puts first after an interrupted turn.
 */
const AGENT_BLOCK = /^(?:<system-reminder>|\[Request interrupted by user[^\]\n]*\]\n?$)/;

/**
 * A paste Claude Code folded into a `[Pasted text #N]` placeholder (over 800 characters or
 * 4 lines) goes out in place of the placeholder as
 * `\n\n<pasted_content id="X">\n{paste}\n</pasted_content id="X">\n\n`, trailing newlines of
 * the whole prompt trimmed.
 */
const FOLDED_PASTE = /\n\n<pasted_content id="([^"]+)">\n([\s\S]*?)\n<\/pasted_content id="\1">\n\n?/g;

/**
 * The message a request answers: the last one that is not `system`. Claude Code 2.1 sends its
 * environment description as a `system` message after the user's, so the user's turn is not
 * the last message of the list.
 */
function answeredMessage(messages: readonly Message[]): Message | undefined {
  return messages.findLast((message) => message.role !== 'system');
}

/**
 * Anthropic Messages (`POST /v1/messages`, streamed as SSE) and its token counter
 * (`POST /v1/messages/count_tokens`): what Claude Code speaks. Its side requests (session
 * title, compaction summaries) carry no tools, so only requests with tools are the main
 * conversation.
 */
export const anthropicHandler: ApiHandler = {
  api: 'anthropic',
  owns: (method, path) => method === 'POST' && (MESSAGES.test(path) || COUNT_TOKENS.test(path)),
  read(path, raw): RequestReading {
    const body = (raw ?? {}) as Body;
    const message = answeredMessage(body.messages ?? []);
    const blocks: Block[] = typeof message?.content === 'string' ? [{ type: 'text', text: message.content }] : (message?.content ?? []);
    const texts = blocks.filter((block) => block.type === 'text' && !AGENT_BLOCK.test(block.text ?? '')).map((block) => (block.text ?? '').replace(FOLDED_PASTE, '$2'));
    // The prompt after a rejected tool call carries the rejection as a tool result: still a turn.
    const afterToolResult = texts.length === 0 && blocks.some((block) => block.type === 'tool_result');
    return {
      model: body.model ?? null,
      main: !COUNT_TOKENS.test(path) && Array.isArray(body.tools) && body.tools.length > 0,
      userText: message?.role === 'user' && !afterToolResult && texts.length > 0 ? texts.join('\n') : null,
      afterToolResult,
      stream: body.stream === true,
    };
  },
  async respond(request, response, reading, reply) {
    if (COUNT_TOKENS.test((request.url ?? '').split('?')[0]!)) {
      sendJson(response, 200, { input_tokens: 10 });
      return;
    }
    const model = reading.model ?? 'claude-mock';
    const id = `msg_drover_${Date.now()}`;
    const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    const toolInput = reply.kind === 'tool' ? { command: reply.command, description: 'Run the mock command' } : undefined;
    const stopReason = reply.kind === 'text' ? 'end_turn' : 'tool_use';
    if (!reading.stream) {
      const content = reply.kind === 'text' ? [{ type: 'text', text: reply.text }] : [{ type: 'tool_use', id: reply.callId, name: 'Bash', input: toolInput }];
      sendJson(response, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage });
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
      writeEvent(response, { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(toolInput) } }, 'content_block_delta');
    }
    writeEvent(response, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
    writeEvent(response, { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 12 } }, 'message_delta');
    writeEvent(response, { type: 'message_stop' }, 'message_stop');
    response.end();
  },
};
