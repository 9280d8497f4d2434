import type { ServerResponse } from 'node:http';
import { startEventStream, streamPieces, writeEvent, sendJson } from './sse.js';
import type { ApiHandler, Reply, RequestReading } from './types.js';

type Part = { type?: string; text?: string };
type Item = { type?: string; role?: string; content?: string | Part[] };
type Tool = { name?: string };
type JsonSchema = { properties?: Record<string, { type?: string }>; required?: string[] };
type Body = {
  model?: string;
  stream?: boolean;
  tools?: Tool[];
  input?: string | Item[];
  text?: { format?: { type?: string; schema?: JsonSchema } };
};

/**
 * Codex's shell tool (0.171 offers `exec_command`, not `shell` or `local_shell`), with
 * the arguments that make it ask the person: a command that asks to run outside the sandbox
 * (`require_escalated`) needs approval under the default `on-request` policy, whatever it is.
 */
const SHELL_TOOL = 'exec_command';

/**
 * Side requests that ask for structured output (Codex's thread title) get a JSON object with
 * each required string field set to the reply text, so the agent can use it.
 */
function shapedText(body: Body, text: string): string {
  const format = body.text?.format;
  if (format?.type !== 'json_schema') return text;
  const properties = format.schema?.properties ?? {};
  const fields = (format.schema?.required ?? Object.keys(properties)).filter((name) => properties[name]?.type === 'string');
  return JSON.stringify(Object.fromEntries(fields.map((name) => [name, text])));
}

type OutputItem = Record<string, unknown> & { id: string };

function toolCallItem(body: Body, command: string, callId: string, id: string): OutputItem {
  if (!(body.tools ?? []).some((tool) => tool.name === SHELL_TOOL)) throw new Error(`the request does not offer the ${SHELL_TOOL} tool`);
  const args = { cmd: command, sandbox_permissions: 'require_escalated', justification: 'Run the drover mock command?' };
  return { type: 'function_call', id: `fc_${id}`, call_id: callId, name: SHELL_TOOL, arguments: JSON.stringify(args), status: 'completed' };
}

function messageItem(text: string, id: string): OutputItem {
  return { type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] };
}

/** The events between `response.created` and the item's `response.output_item.done`. */
async function streamItem(response: ServerResponse, item: OutputItem, reply: Reply, text: string): Promise<void> {
  if (reply.kind === 'tool') {
    writeEvent(response, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', arguments: '' } }, 'response.output_item.added');
    writeEvent(response, { type: 'response.function_call_arguments.done', output_index: 0, item_id: item.id, arguments: item.arguments }, 'response.function_call_arguments.done');
    return;
  }
  const where = { item_id: item.id, output_index: 0, content_index: 0 };
  writeEvent(response, { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } }, 'response.output_item.added');
  writeEvent(response, { type: 'response.content_part.added', ...where, part: { type: 'output_text', text: '', annotations: [] } }, 'response.content_part.added');
  await streamPieces(response, text, reply.chunks, reply.chunkDelayMs, (piece) => writeEvent(response, { type: 'response.output_text.delta', ...where, delta: piece }, 'response.output_text.delta'));
  writeEvent(response, { type: 'response.output_text.done', ...where, text }, 'response.output_text.done');
  writeEvent(response, { type: 'response.content_part.done', ...where, part: { type: 'output_text', text, annotations: [] } }, 'response.content_part.done');
}

/**
 * OpenAI Responses (`POST /v1/responses`), streamed as SSE: what Codex speaks. Codex sends the
 * prompt as the last `user` message, one `input_text` part holding what was typed (Codex
 * trims leading and trailing whitespace before sending); its own context (`<environment_context>`, AGENTS.md, skills) travels in earlier messages.
 * Its thread-title request has no tools, so it is not the main conversation.
 */
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
  async respond(_request, response, reading, reply, raw) {
    const body = (raw ?? {}) as Body;
    const id = `resp_drover_${Date.now()}`;
    const model = reading.model ?? 'gpt-mock';
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 22 };
    const text = reply.kind === 'text' ? shapedText(body, reply.text) : '';
    const item = reply.kind === 'text' ? messageItem(text, id) : toolCallItem(body, reply.command, reply.callId, id);
    const completed = { id, object: 'response', model, status: 'completed', output: [item], usage };
    if (!reading.stream) {
      sendJson(response, 200, completed);
      return;
    }
    startEventStream(response);
    writeEvent(response, { type: 'response.created', response: { id, object: 'response', model, status: 'in_progress', output: [] } }, 'response.created');
    await streamItem(response, item, reply, text);
    if (response.destroyed) return;
    writeEvent(response, { type: 'response.output_item.done', output_index: 0, item }, 'response.output_item.done');
    writeEvent(response, { type: 'response.completed', response: completed }, 'response.completed');
    response.end();
  },
};
