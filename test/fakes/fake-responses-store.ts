// The stored-responses half of the fake upstream: Response objects, their input items and the streamed event
// sequence, shaped like OpenAI's so the SDK's strict responses.stream() accumulator accepts them.
import { randomBytes } from 'node:crypto';

const hex = (n = 16) => randomBytes(n).toString('hex');

interface InputItem {
  id: string;
  type: 'message';
  role: string;
  status: 'completed';
  content: { type: 'input_text'; text: string }[];
}

export interface StoredResponse {
  response: Record<string, unknown>;
  /** What the create asked for, and the text it answers with (a background response runs on later). */
  body: CreateBody;
  text: string;
  /** Retrieves of a background response so far (it completes after `backgroundSteps` of them). */
  retrieves: number;
  inputItems: InputItem[];
  /** The full event sequence (create with stream, or synthesized), replayed by GET ?stream=true. */
  events: Record<string, unknown>[];
}

export interface CreateBody {
  model?: string;
  input?: unknown;
  instructions?: string | null;
  previous_response_id?: string | null;
  background?: boolean;
  store?: boolean;
  metadata?: Record<string, string>;
}

function normalizeInput(input: unknown): InputItem[] {
  const list = typeof input === 'string' ? [{ role: 'user', content: input }] : Array.isArray(input) ? input : [];
  return list.map((raw) => {
    const it = raw as { role?: string; content?: unknown };
    const content =
      typeof it.content === 'string'
        ? [{ type: 'input_text' as const, text: it.content }]
        : Array.isArray(it.content)
          ? it.content.map((c) => ({ type: 'input_text' as const, text: String((c as { text?: unknown }).text ?? '') }))
          : [];
    return { id: `msg_${hex()}`, type: 'message', role: it.role ?? 'user', status: 'completed', content };
  });
}

/** The usage a completed response reports (input, cached and output tokens); default: 5 input, one output per word. */
export interface FakeUsage {
  input_tokens: number;
  cached_tokens?: number;
  output_tokens: number;
}

/** A complete Response object in the shape the API returns. */
function makeResponse(id: string, body: CreateBody, status: string, output: unknown[], usage?: FakeUsage): Record<string, unknown> {
  const text = output.length > 0 ? outputText(output) : '';
  const input = usage?.input_tokens ?? 5;
  const generated = usage?.output_tokens ?? text.split(' ').length;
  return {
    id,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status,
    background: body.background ?? false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: null,
    model: body.model ?? 'unknown',
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: body.store ?? true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'completed' ? usageObject({ input_tokens: input, cached_tokens: usage?.cached_tokens ?? 0, output_tokens: generated }) : null,
    user: null,
    metadata: body.metadata ?? {},
  };
}

function usageObject(u: FakeUsage): Record<string, unknown> {
  return {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cached_tokens ?? 0 },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
}

function outputText(output: unknown[]): string {
  const msg = output[0] as { content?: { text?: string }[] };
  return msg.content?.[0]?.text ?? '';
}

function message(id: string, text: string, status: 'in_progress' | 'completed') {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'completed' ? [{ type: 'output_text', annotations: [], logprobs: [], text }] : [],
  };
}

/**
 * The event sequence of one streamed text answer: created, in_progress, output_item.added,
 * content_part.added, one output_text.delta per word, output_text.done, content_part.done,
 * output_item.done, completed.
 */
function streamEvents(id: string, body: CreateBody, text: string, usage?: FakeUsage): { events: Record<string, unknown>[]; final: Record<string, unknown> } {
  const msgId = `msg_${hex()}`;
  const events: Record<string, unknown>[] = [];
  const push = (type: string, fields: Record<string, unknown>) => events.push({ type, sequence_number: events.length, ...fields });
  const inProgress = makeResponse(id, body, 'in_progress', []);
  // A background response is queued before it runs.
  if (body.background) push('response.queued', { response: makeResponse(id, body, 'queued', []) });
  push('response.created', { response: inProgress });
  push('response.in_progress', { response: inProgress });
  push('response.output_item.added', { output_index: 0, item: message(msgId, text, 'in_progress') });
  const part = (t: string) => ({ type: 'output_text', annotations: [], logprobs: [], text: t });
  push('response.content_part.added', { item_id: msgId, output_index: 0, content_index: 0, part: part('') });
  const words = text.split(/(?<= )/);
  for (const w of words) push('response.output_text.delta', { item_id: msgId, output_index: 0, content_index: 0, delta: w, logprobs: [] });
  push('response.output_text.done', { item_id: msgId, output_index: 0, content_index: 0, text, logprobs: [] });
  push('response.content_part.done', { item_id: msgId, output_index: 0, content_index: 0, part: part(text) });
  const done = message(msgId, text, 'completed');
  push('response.output_item.done', { output_index: 0, item: done });
  const final = makeResponse(id, body, 'completed', [done], usage);
  push('response.completed', { response: final });
  return { events, final };
}

export function sseFrame(event: Record<string, unknown>): string {
  return `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`;
}

export class ResponsesStore {
  readonly items = new Map<string, StoredResponse>();

  /** Creates (and stores) a response; returns its events when `stream` so the server can pace them. */
  create(body: CreateBody): StoredResponse {
    const id = `resp_${hex(24)}`;
    const inputItems = normalizeInput(body.input);
    const last = inputItems.at(-1)?.content[0]?.text ?? '';
    const text = `echo: ${last}${body.previous_response_id ? ` (continuing ${body.previous_response_id})` : ''}`;
    let stored: StoredResponse;
    if (body.background) {
      const response = makeResponse(id, body, 'queued', []);
      stored = { response, body, text, retrieves: 0, inputItems, events: [{ type: 'response.queued', sequence_number: 0, response }] };
    } else {
      const { events, final } = streamEvents(id, body, text);
      stored = { response: final, body, text, retrieves: 0, inputItems, events };
    }
    this.items.set(id, stored);
    return stored;
  }

  /**
   * A retrieve of a background response that is still running: after `steps` of them it is in progress, after
   * 2 × steps it has completed (reporting `usage`, and its whole event sequence from response.queued on). Never, when
   * steps is undefined (it stays queued).
   */
  advance(stored: StoredResponse, steps: number | undefined, usage?: FakeUsage): void {
    const status = stored.response.status;
    if (steps === undefined || !stored.response.background || (status !== 'queued' && status !== 'in_progress')) return;
    stored.retrieves++;
    if (stored.retrieves >= 2 * steps) {
      const { events, final } = streamEvents(String(stored.response.id), stored.body, stored.text, usage);
      stored.response = final;
      stored.events = events;
    } else if (stored.retrieves >= steps) stored.response.status = 'in_progress';
  }

  /** Cancels a background response; one that was running reports what it generated until then (`usage`). */
  cancel(stored: StoredResponse, usage?: FakeUsage): void {
    const running = stored.response.status === 'in_progress';
    stored.response.status = 'cancelled';
    if (running && usage) stored.response.usage = usageObject(usage);
  }

  /** The answer of POST /responses/compact: one opaque compaction item standing for the conversation so far. */
  compaction(body: CreateBody): Record<string, unknown> {
    const items = [...(body.previous_response_id ? (this.items.get(body.previous_response_id)?.inputItems ?? []) : []), ...normalizeInput(body.input)];
    return {
      id: `resp_${hex(24)}`,
      object: 'response.compaction',
      created_at: Math.floor(Date.now() / 1000),
      output: [{ id: `cmp_${hex()}`, type: 'compaction', encrypted_content: Buffer.from(JSON.stringify(items)).toString('base64') }],
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 3,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 12,
      },
    };
  }

  /** input_items page: `after` is an item id cursor, order defaults to desc as in the API. */
  inputItemsPage(stored: StoredResponse, query: URLSearchParams): Record<string, unknown> {
    const order = query.get('order') === 'asc' ? 'asc' : 'desc';
    const limit = Math.min(Math.max(Number(query.get('limit') ?? 20) || 20, 1), 100);
    const ordered = order === 'asc' ? [...stored.inputItems] : [...stored.inputItems].reverse();
    const after = query.get('after');
    const start = after ? ordered.findIndex((i) => i.id === after) + 1 : 0;
    const data = start === 0 && after ? [] : ordered.slice(start, start + limit);
    return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: start + limit < ordered.length };
  }
}
