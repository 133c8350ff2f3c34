// A fake OpenAI chat completions API on 127.0.0.1 that plays a scripted conversation for a coding agent, the
// translated side of the Messages tests: a request whose messages[] already hold k assistant turns gets turn k (so a
// client's retry of a step gets the same answer). Streams are OpenAI's: role chunk, content deltas, each tool call's
// arguments in two pieces (each call in turn, or `packed` in the same chunks), the finish chunk, then (when asked with stream_options.include_usage) the usage chunk and
// [DONE]. A turn marked `cut` stops after its first delta and drops the connection. Every request is recorded, and
// what each reported, by the x-request-id the gateway sent. POST /v1/embeddings answers a vector per input, 3 tokens each.
import type { ServerResponse } from 'node:http';
import { type RecordingServer, startRecordingServer } from './recording-json-server.js';

interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** Part of completion_tokens spent reasoning (completion_tokens_details); absent: not reported. */
  reasoning_tokens?: number;
}

export interface ChatTurn {
  text?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
  finish: 'stop' | 'tool_calls' | 'length';
  usage: ChatUsage;
  /** The model's reasoning, streamed as `reasoning_content` deltas before the text (as vLLM and llama.cpp send it). */
  reasoning?: string;
  /** Stream every tool call's pieces in the same chunks (several calls in one chunk, by index), not one call after another. */
  packed?: boolean;
  /** Stream the first delta, then drop the connection. */
  cut?: boolean;
  /** Answer this status with an OpenAI-shaped error instead. */
  error?: { status: number; message: string };
}

export type ScriptedChatUpstream = RecordingServer;

export function startScriptedChatUpstream(turns: ChatTurn[]): Promise<ScriptedChatUpstream> {
  return startRecordingServer((req, res, { body }) => {
    if (req.method === 'POST' && req.url === '/v1/embeddings') return embeddings(res, body);
    const step = Array.isArray(body['messages']) ? (body['messages'] as { role: string }[]).filter((m) => m.role === 'assistant').length : 0;
    const turn = req.method === 'POST' && req.url === '/v1/chat/completions' ? turns[step] : undefined;
    if (!turn)
      return sendJson(res, 404, { error: { message: `no scripted answer for ${req.method} ${req.url} (step ${step})`, type: 'invalid_request_error' } });
    if (turn.error) return sendJson(res, turn.error.status, { error: { message: turn.error.message, type: 'invalid_request_error', code: null } });
    const id = `chatcmpl-fake${step + 1}`;
    if (body['stream'] === true) return stream(res, id, String(body['model']), turn, body['stream_options']?.['include_usage'] === true);
    const toolCalls = turn.toolCalls?.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: body['model'],
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: turn.text ?? null,
            ...(turn.reasoning ? { reasoning_content: turn.reasoning } : {}),
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: turn.finish,
        },
      ],
      usage: usageObject(turn.usage),
    });
  });
}

function embeddings(res: ServerResponse, body: Record<string, any>): void {
  const inputs: unknown[] = Array.isArray(body['input']) ? body['input'] : [body['input']];
  const data = inputs.map((_, index) => ({ object: 'embedding', index, embedding: [index / 10, 0.5, 1] }));
  sendJson(res, 200, { object: 'list', data, model: body['model'], usage: { prompt_tokens: 3 * inputs.length, total_tokens: 3 * inputs.length } });
}

function usageObject(u: ChatUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens },
    ...(u.reasoning_tokens !== undefined ? { completion_tokens_details: { reasoning_tokens: u.reasoning_tokens } } : {}),
  };
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function stream(res: ServerResponse, id: string, model: string, turn: ChatTurn, includeUsage: boolean): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' }, null);
  if (turn.reasoning) for (const piece of halves(turn.reasoning)) chunk({ reasoning_content: piece }, null);
  if (turn.text) chunk({ content: turn.text }, null);
  if (turn.cut) {
    // Dropped once what was written has gone out, so the client has seen the stream start.
    res.write('', () => res.socket?.destroy());
    return;
  }
  const calls = turn.toolCalls ?? [];
  const first = calls.map((c, index) => ({ index, id: c.id, type: 'function', function: { name: c.name, arguments: halves(c.arguments)[0] } }));
  const second = calls.map((c, index) => ({ index, function: { arguments: halves(c.arguments)[1] } }));
  if (turn.packed && calls.length > 0) {
    chunk({ tool_calls: first }, null);
    chunk({ tool_calls: second }, null);
  } else
    calls.forEach((_, index) => {
      chunk({ tool_calls: [first[index]] }, null);
      chunk({ tool_calls: [second[index]] }, null);
    });
  chunk({}, turn.finish);
  if (includeUsage)
    res.write(
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: usageObject(turn.usage) })}\n\n`,
    );
  res.end('data: [DONE]\n\n');
}

function halves(text: string): [string, string] {
  const half = Math.floor(text.length / 2);
  return [text.slice(0, half), text.slice(half)];
}
