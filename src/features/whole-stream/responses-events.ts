// A whole Responses answer as the events of a Responses stream, for an upstream that answered a stream request
// whole: response.created and response.in_progress (the response with no output yet), each output item added, its
// text, refusal or arguments told in one delta each, done; then response.completed (or .incomplete / .failed) with
// the whole response, every event numbered by `sequence_number`. What the openai SDK's ResponseStream needs to
// rebuild the response. A response not finished (a background one still queued or running) is told as
// response.created and its status's event (response.queued / .in_progress), and no terminal event: the client knows
// to come back. A resumed retrieve (`starting_after`) gets only the events after the one it names. Pure.

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The terminal event of each final status. */
const FINAL: Readonly<Record<string, string>> = { completed: 'response.completed', incomplete: 'response.incomplete', failed: 'response.failed' };
/** The event of each status still running, after response.created; another (cancelled) has none. */
const RUNNING: Readonly<Record<string, string>> = { queued: 'response.queued', in_progress: 'response.in_progress' };

class Events {
  text = '';
  #seq = 0;
  readonly #after: number;

  /** `after`: the sequence number of the last event the client has (its `starting_after`); -1: none. */
  constructor(after: number) {
    this.#after = after;
  }

  add(type: string, fields: Json): void {
    const seq = this.#seq++;
    if (seq > this.#after) this.text += `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: seq })}\n\n`;
  }
}

/**
 * The events of `response` after the one numbered `startingAfter` (all of them when undefined), or undefined when
 * it is not a Responses answer (an object "response" with an output list).
 */
export function responseEvents(response: unknown, startingAfter?: number): string | undefined {
  if (!isObject(response) || response['object'] !== 'response' || !Array.isArray(response['output'])) return undefined;
  const output = response['output'] as unknown[];
  if (!output.every(isObject)) return undefined;
  const status = typeof response['status'] === 'string' ? response['status'] : 'completed';
  const final = FINAL[status];
  const e = new Events(startingAfter ?? -1);
  if (!final) {
    e.add('response.created', { response });
    const running = RUNNING[status];
    if (running) e.add(running, { response });
    return e.text;
  }
  const started = { ...response, status: 'in_progress', output: [], usage: null };
  e.add('response.created', { response: started });
  e.add('response.in_progress', { response: started });
  for (const [i, item] of (output as Json[]).entries()) outputItem(e, item, i);
  e.add(final, { response });
  return e.text;
}

function outputItem(e: Events, item: Json, output_index: number): void {
  const item_id = item['id'];
  if (item['type'] === 'message' && Array.isArray(item['content'])) {
    e.add('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
    (item['content'] as unknown[]).forEach((part, content_index) => {
      if (isObject(part)) contentPart(e, part, { item_id, output_index, content_index });
    });
  } else if (item['type'] === 'function_call' && typeof item['arguments'] === 'string') {
    e.add('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
    e.add('response.function_call_arguments.delta', { item_id, output_index, delta: item['arguments'] });
    e.add('response.function_call_arguments.done', { item_id, output_index, name: item['name'], arguments: item['arguments'] });
  } else {
    // Reasoning, tool calls the upstream ran itself and the like: added and done whole, which is all the SDK keeps.
    e.add('response.output_item.added', { output_index, item });
  }
  e.add('response.output_item.done', { output_index, item });
}

interface PartAt {
  readonly item_id: unknown;
  readonly output_index: number;
  readonly content_index: number;
}

function contentPart(e: Events, part: Json, at: PartAt): void {
  if (part['type'] === 'output_text' && typeof part['text'] === 'string') {
    const annotations = Array.isArray(part['annotations']) ? part['annotations'] : [];
    const logprobs = Array.isArray(part['logprobs']) ? part['logprobs'] : [];
    e.add('response.content_part.added', { ...at, part: { ...part, text: '', annotations: [], ...(part['logprobs'] ? { logprobs: [] } : {}) } });
    e.add('response.output_text.delta', { ...at, delta: part['text'], logprobs });
    for (const [annotation_index, annotation] of annotations.entries()) e.add('response.output_text.annotation.added', { ...at, annotation_index, annotation });
    e.add('response.output_text.done', { ...at, text: part['text'], logprobs });
  } else if (part['type'] === 'refusal' && typeof part['refusal'] === 'string') {
    e.add('response.content_part.added', { ...at, part: { ...part, refusal: '' } });
    e.add('response.refusal.delta', { ...at, delta: part['refusal'] });
    e.add('response.refusal.done', { ...at, refusal: part['refusal'] });
  } else {
    e.add('response.content_part.added', { ...at, part });
  }
  e.add('response.content_part.done', { ...at, part });
}
