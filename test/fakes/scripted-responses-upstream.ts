// A fake OpenAI Responses API on 127.0.0.1 that plays a scripted conversation for a coding agent: the n-th
// POST /v1/responses gets the n-th turn, streamed with `event:` lines as OpenAI sends them (a custom tool call's
// input arrives as deltas, a web or file search as its progress events), ending in response.completed with the
// turn's usage; a request without `stream` gets the whole Response as JSON. Every request is recorded.
import type { ServerResponse } from 'node:http';
import { type RecordingServer, startRecordingServer } from './recording-json-server.js';

type ScriptedItem =
  | { type: 'message'; text: string }
  | { type: 'custom_tool_call'; name: string; callId: string; input: string }
  | { type: 'function_call'; name: string; callId: string; arguments: string }
  // A reasoning item as OpenAI streams it when asked for `include: ["reasoning.encrypted_content"]` (store: false).
  | { type: 'reasoning'; summary: string; encryptedContent: string }
  | { type: 'web_search_call'; query: string }
  | { type: 'file_search_call'; query: string };

interface ResponsesUsage {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
}

export interface ScriptedTurn {
  output: ScriptedItem[];
  usage: ResponsesUsage;
  /** Answer this turn with an error status instead (OpenAI's error body), e.g. a 429 with retry-after. */
  refuse?: { status: number; retryAfter?: string; code: string; message: string };
  /** After the output items, end the stream with response.failed carrying this error (no response.completed). */
  failWith?: { code: string; message: string };
  /** After the output items, drop the connection (an upstream dying mid-stream). */
  cut?: boolean;
}

export type ScriptedResponsesUpstream = RecordingServer;

export function startScriptedResponsesUpstream(turns: ScriptedTurn[]): Promise<ScriptedResponsesUpstream> {
  return startRecordingServer((req, res, { body }, requests) => {
    const turn = req.method === 'POST' && req.url === '/v1/responses' ? turns[requests.length - 1] : undefined;
    if (!turn) {
      res.writeHead(404, { 'content-type': 'application/json' });
      return void res.end(
        JSON.stringify({ error: { message: `no scripted answer for ${req.method} ${req.url} (request ${requests.length})`, type: 'invalid_request_error' } }),
      );
    }
    if (turn.refuse) {
      const { status, retryAfter, code, message } = turn.refuse;
      res.writeHead(status, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}) });
      return void res.end(JSON.stringify({ error: { message, type: code === 'rate_limit_exceeded' ? 'requests' : 'server_error', param: null, code } }));
    }
    if (body['stream'] === true) return play(res, `resp_${requests.length}`, String(body['model']), turn);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(responseObject(`resp_${requests.length}`, String(body['model']), turn)));
  });
}

/** The finished output item for a scripted one. */
function itemOf(s: ScriptedItem, i: number): Record<string, unknown> {
  switch (s.type) {
    case 'message':
      return { type: 'message', id: `msg_${i}`, status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: s.text, annotations: [] }] };
    case 'custom_tool_call':
      return { type: 'custom_tool_call', id: `ctc_${i}`, status: 'completed', call_id: s.callId, name: s.name, input: s.input };
    case 'function_call':
      return { type: 'function_call', id: `fc_${i}`, status: 'completed', call_id: s.callId, name: s.name, arguments: s.arguments };
    case 'reasoning':
      return { type: 'reasoning', id: `rs_${i}`, summary: [{ type: 'summary_text', text: s.summary }], encrypted_content: s.encryptedContent };
    case 'web_search_call':
      return { type: 'web_search_call', id: `ws_${i}`, status: 'completed', action: { type: 'search', query: s.query } };
    case 'file_search_call':
      return { type: 'file_search_call', id: `fs_${i}`, status: 'completed', queries: [s.query], results: null };
  }
}

/** The whole completed Response, as a request without `stream` gets it. */
function responseObject(id: string, model: string, turn: ScriptedTurn): Record<string, unknown> {
  const output = turn.output.map(itemOf);
  return { ...responseOf(id, model), status: 'completed', output, usage: usageOf(turn.usage) };
}

function responseOf(id: string, model: string) {
  return { id, object: 'response', created_at: 1_700_000_000, status: 'in_progress', model, output: [] as unknown[], usage: null as unknown };
}

function usageOf(u: ResponsesUsage): Record<string, unknown> {
  return {
    input_tokens: u.inputTokens,
    input_tokens_details: { cached_tokens: u.cachedInputTokens },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

function play(res: ServerResponse, id: string, model: string, turn: ScriptedTurn): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`);
  const response = responseOf(id, model);
  event('response.created', { response });
  event('response.in_progress', { response });
  const output = turn.output.map((s, i) => {
    const item = itemOf(s, i);
    const at = { item_id: item['id'], output_index: i };
    switch (s.type) {
      case 'message':
        event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', content: [] } });
        event('response.content_part.added', { ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
        event('response.output_text.delta', { ...at, content_index: 0, delta: s.text, logprobs: [] });
        event('response.output_text.done', { ...at, content_index: 0, text: s.text, logprobs: [] });
        event('response.content_part.done', { ...at, content_index: 0, part: { type: 'output_text', text: s.text, annotations: [] } });
        break;
      case 'custom_tool_call':
        event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', input: '' } });
        event('response.custom_tool_call_input.delta', { ...at, delta: s.input });
        event('response.custom_tool_call_input.done', { ...at, input: s.input });
        break;
      case 'function_call':
        event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', arguments: '' } });
        event('response.function_call_arguments.delta', { ...at, delta: s.arguments });
        event('response.function_call_arguments.done', { ...at, arguments: s.arguments });
        break;
      case 'reasoning':
        event('response.output_item.added', { output_index: i, item: { type: 'reasoning', id: item['id'], summary: [] } });
        event('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
        event('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta: s.summary });
        event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: s.summary });
        event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: s.summary } });
        break;
      case 'web_search_call':
      case 'file_search_call':
        event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress' } });
        for (const stage of ['in_progress', 'searching', 'completed']) event(`response.${s.type}.${stage}`, at);
        break;
    }
    event('response.output_item.done', { output_index: i, item });
    return item;
  });
  if (turn.cut) return void res.write('', () => res.socket?.destroy());
  if (turn.failWith) {
    const error = turn.failWith;
    event('response.failed', { response: { ...response, status: 'failed', output, error, usage: null } });
    return void res.end();
  }
  event('response.completed', { response: { ...response, status: 'completed', output, usage: usageOf(turn.usage) } });
  res.end();
}
