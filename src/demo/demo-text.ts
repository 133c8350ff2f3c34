// Deterministic text for the demo backend: chat completions and responses that echo the prompt, as whole
// objects or as the SSE event sequences the OpenAI SDKs parse. Pure: request body in, objects out.
import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;

export function shortHash(text: string, length = 24): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** Rough token count (words); good enough for usage fields and stable across runs. */
export function countTokens(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

/** Text of a message content: a string, or an array of parts with `text`. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(partText).join(' ');
  return '';
}

/** The `text` of one content part; '' for a part without one (an image, a tool result). */
function partText(part: unknown): string {
  return part && typeof part === 'object' && typeof (part as Json).text === 'string' ? ((part as Json).text as string) : '';
}

/**
 * What the user said last: the last text part of the last user message. Coding agents put reminders and context
 * in parts before the prompt, so joining the parts would echo those instead.
 */
function lastUserText(items: unknown): string {
  if (typeof items === 'string') return items;
  if (!Array.isArray(items)) return '';
  for (let i = items.length - 1; i >= 0; i--) {
    const m = items[i] as Json | undefined;
    if (!m || (m.role !== 'user' && m.role !== undefined)) continue;
    if (!Array.isArray(m.content)) return contentText(m.content);
    const texts = m.content.map(partText).filter((t) => t.trim() !== '');
    return texts.at(-1) ?? '';
  }
  return '';
}

function allText(items: unknown): string {
  if (typeof items === 'string') return items;
  if (!Array.isArray(items)) return '';
  return items.map((m) => (m && typeof m === 'object' ? contentText((m as Json).content) : '')).join(' ');
}

/** The demo's answer: names itself and echoes the prompt, so a caller can see its request went through. */
function demoReply(model: string, prompt: string): string {
  const echo = prompt.replace(/\s+/g, ' ').trim().slice(0, 200);
  return `Hello from the model-gateway demo backend (${model}). You said: ${echo === '' ? '(nothing)' : echo}`;
}

/** Splits a reply into stream pieces (one word with its leading space each), honouring a token limit. */
function replyPieces(reply: string, maxTokens: number | undefined): { pieces: string[]; truncated: boolean } {
  const pieces = reply.match(/\s*\S+/g) ?? [];
  if (maxTokens !== undefined && maxTokens > 0 && pieces.length > maxTokens) return { pieces: pieces.slice(0, maxTokens), truncated: true };
  return { pieces, truncated: false };
}

function maxTokensOf(body: Json, ...keys: string[]): number | undefined {
  for (const k of keys) if (typeof body[k] === 'number') return body[k] as number;
  return undefined;
}

// ---- chat completions -------------------------------------------------------------------------------------

export interface ChatPlan {
  readonly id: string;
  readonly created: number;
  readonly model: string;
  readonly pieces: string[];
  readonly finishReason: 'stop' | 'length';
  readonly usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

export function planChat(body: Json, rawBody: string, now: number): ChatPlan {
  const model = String(body.model ?? 'demo');
  const { pieces, truncated } = replyPieces(demoReply(model, lastUserText(body.messages)), maxTokensOf(body, 'max_completion_tokens', 'max_tokens'));
  const prompt = countTokens(allText(body.messages));
  return {
    id: `chatcmpl-demo${shortHash(rawBody)}`,
    created: Math.floor(now / 1000),
    model,
    pieces,
    finishReason: truncated ? 'length' : 'stop',
    usage: { prompt_tokens: prompt, completion_tokens: pieces.length, total_tokens: prompt + pieces.length },
  };
}

export function chatCompletion(p: ChatPlan): Json {
  return {
    id: p.id,
    object: 'chat.completion',
    created: p.created,
    model: p.model,
    choices: [{ index: 0, message: { role: 'assistant', content: p.pieces.join(''), refusal: null }, logprobs: null, finish_reason: p.finishReason }],
    usage: p.usage,
    system_fingerprint: 'demo',
  };
}

/** The `data:` payloads of a streamed chat completion, `[DONE]` included. */
export function chatChunks(p: ChatPlan, includeUsage: boolean): string[] {
  const chunk = (delta: Json, finish: string | null): string =>
    JSON.stringify({
      id: p.id,
      object: 'chat.completion.chunk',
      created: p.created,
      model: p.model,
      system_fingerprint: 'demo',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(includeUsage ? { usage: null } : {}),
    });
  const out = [chunk({ role: 'assistant', content: '' }, null)];
  for (const piece of p.pieces) out.push(chunk({ content: piece }, null));
  out.push(chunk({}, p.finishReason));
  if (includeUsage) {
    out.push(
      JSON.stringify({
        id: p.id,
        object: 'chat.completion.chunk',
        created: p.created,
        model: p.model,
        system_fingerprint: 'demo',
        choices: [],
        usage: p.usage,
      }),
    );
  }
  out.push('[DONE]');
  return out;
}

// ---- responses --------------------------------------------------------------------------------------------

export interface ResponsePlan {
  readonly id: string;
  readonly itemId: string;
  readonly createdAt: number;
  readonly model: string;
  readonly pieces: string[];
  readonly truncated: boolean;
  readonly body: Json;
  readonly usage: Json;
}

export function planResponse(body: Json, rawBody: string, now: number): ResponsePlan {
  const model = String(body.model ?? 'demo');
  const { pieces, truncated } = replyPieces(demoReply(model, lastUserText(body.input)), maxTokensOf(body, 'max_output_tokens'));
  const hash = shortHash(`${rawBody}\0${now}`, 32);
  const input = countTokens(`${typeof body.instructions === 'string' ? body.instructions : ''} ${allText(body.input)}`);
  return {
    id: `resp_demo${hash}`,
    itemId: `msg_demo${hash}`,
    createdAt: Math.floor(now / 1000),
    model,
    pieces,
    truncated,
    body,
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: pieces.length,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + pieces.length,
    },
  };
}

function outputPart(text: string): Json {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function messageItem(p: ResponsePlan, done: boolean): Json {
  return {
    id: p.itemId,
    type: 'message',
    status: done ? 'completed' : 'in_progress',
    role: 'assistant',
    content: done ? [outputPart(p.pieces.join(''))] : [],
  };
}

/** The response object; `state` is where it is in its lifecycle. */
export function responseObject(p: ResponsePlan, state: 'in_progress' | 'completed' | 'cancelled'): Json {
  const done = state !== 'in_progress';
  const status = state === 'completed' && p.truncated ? 'incomplete' : state;
  return {
    id: p.id,
    object: 'response',
    created_at: p.createdAt,
    status,
    background: p.body.background === true,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: p.body.instructions ?? null,
    max_output_tokens: p.body.max_output_tokens ?? null,
    model: p.model,
    output: done ? [messageItem(p, true)] : [],
    parallel_tool_calls: true,
    previous_response_id: p.body.previous_response_id ?? null,
    store: p.body.store !== false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: done ? p.usage : null,
    metadata: p.body.metadata ?? {},
  };
}

/** The streamed event sequence of a response, as [event type, payload] pairs, each with its sequence number. */
export function responseEvents(p: ResponsePlan): Array<[string, Json]> {
  const text = p.pieces.join('');
  const at = { item_id: p.itemId, output_index: 0, content_index: 0 };
  const events: Array<[string, Json]> = [
    ['response.created', { response: responseObject(p, 'in_progress') }],
    ['response.in_progress', { response: responseObject(p, 'in_progress') }],
    ['response.output_item.added', { output_index: 0, item: messageItem(p, false) }],
    ['response.content_part.added', { ...at, part: outputPart('') }],
    ...p.pieces.map((delta): [string, Json] => ['response.output_text.delta', { ...at, delta, logprobs: [] }]),
    ['response.output_text.done', { ...at, text, logprobs: [] }],
    ['response.content_part.done', { ...at, part: outputPart(text) }],
    ['response.output_item.done', { output_index: 0, item: messageItem(p, true) }],
    [p.truncated ? 'response.incomplete' : 'response.completed', { response: responseObject(p, 'completed') }],
  ];
  return events.map(([type, payload], i) => [type, { type, sequence_number: i, ...payload }]);
}

/** input_items listing of a stored response (its input as message items). */
export function inputItems(p: ResponsePlan): Json {
  const input = p.body.input;
  const items: Json[] = (typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? (input as Json[]) : []).map((m, i) => ({
    id: `msg_in${i}_${p.id.slice(9, 25)}`,
    type: 'message',
    status: 'completed',
    role: m.role ?? 'user',
    content: typeof m.content === 'string' ? [{ type: 'input_text', text: m.content }] : (m.content ?? []),
  }));
  return { object: 'list', data: items, first_id: items[0]?.id ?? null, last_id: items.at(-1)?.id ?? null, has_more: false };
}
