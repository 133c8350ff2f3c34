// The OpenAI shapes of prompts and answers (Chat Completions and Responses, JSON and streamed) turned into the GenAI
// conventions' messages: `{role, parts: [{type, …}], finish_reason}` with text, tool_call, tool_call_response,
// reasoning, uri, blob, file and server_tool_call parts (the schemas gen-ai-input-messages.json and
// gen-ai-output-messages.json; content-parts.ts). Pure; what the conversions do not know becomes a part of its own
// type, or is left out.
import { isMessageEvent, StreamedMessage } from './anthropic-content.js';
import { byUrl, type Doc, docs, isDoc, type Message, type Part, partsOf, reasoning, str, text, toolCall, toolResponse } from './content-parts.js';

/**
 * A request's messages: Chat Completions' `messages` (system messages among them, where the chat history holds
 * them), or Responses' `input` with its `instructions` apart (gen_ai.system_instructions). Undefined for a body
 * with neither.
 */
export function inputMessages(doc: unknown): { messages: Message[]; system: Part[] } | undefined {
  if (!isDoc(doc)) return undefined;
  if (Array.isArray(doc.messages)) return { messages: docs(doc.messages).map(chatMessage), system: [] };
  const instructions = str(doc.instructions);
  const system = instructions ? [text(instructions)] : [];
  if (typeof doc.input === 'string') return { messages: [{ role: 'user', parts: [text(doc.input)] }], system };
  if (Array.isArray(doc.input)) return { messages: docs(doc.input).flatMap(responsesItem), system };
  return instructions ? { messages: [], system } : undefined;
}

/** A Chat Completions answer's choices, one message each; undefined when the body is not one. */
export function chatAnswer(doc: Doc): Message[] | undefined {
  if (!Array.isArray(doc.choices)) return undefined;
  return docs(doc.choices).map((c) => {
    const m = isDoc(c.message) ? c.message : {};
    // A complete answer that names no reason ended normally.
    return { ...chatMessage({ role: 'assistant', ...m }), finish_reason: chatFinish(c.finish_reason) ?? 'stop' };
  });
}

/** A Responses answer (`object: "response"`): its output items as the parts of one message. */
export function responsesAnswer(doc: Doc): Message[] | undefined {
  if (!Array.isArray(doc.output)) return undefined;
  const parts = docs(doc.output).flatMap(outputItemParts);
  return [{ role: 'assistant', parts, finish_reason: responsesFinish(doc, parts) }];
}

/**
 * A streamed answer's events, Chat Completions chunks, Responses events or (anthropic-content.ts) the Messages API's
 * events, gathered up to `budget` characters.
 */
export class StreamedAnswer {
  readonly #choices = new Map<number, StreamedChoice>();
  #message: StreamedMessage | undefined;
  #response: { text: string; reasoning: string; tools: Part[]; finish: string | undefined } | undefined;
  #room: number;

  constructor(budget: number) {
    this.#room = budget;
  }

  /** One event's data (the JSON after `data:`). */
  event(data: string): void {
    // Once the budget is spent, only the events that say how the answer ended are read.
    if (this.#room <= 0 && !/"(finish_reason|stop_reason)"|"response\.(completed|incomplete|failed)"/.test(data)) return;
    let e: unknown;
    try {
      e = JSON.parse(data);
    } catch {
      return; // not an event the gateway can read
    }
    if (!isDoc(e)) return;
    if (Array.isArray(e.choices)) for (const c of docs(e.choices)) this.#chunk(c);
    else if (typeof e.type === 'string' && isMessageEvent(e.type)) (this.#message ??= new StreamedMessage((s) => this.#take(s))).event(e);
    else if (typeof e.type === 'string') this.#responsesEvent(e.type, e);
  }

  messages(): Message[] {
    if (this.#message) return this.#message.messages();
    if (this.#response) {
      const r = this.#response;
      const parts = [...(r.reasoning ? [reasoning(r.reasoning)] : []), ...(r.text ? [text(r.text)] : []), ...r.tools];
      return [{ role: 'assistant', parts, finish_reason: r.finish ?? 'error' }];
    }
    return [...this.#choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({
        role: c.role,
        parts: [
          ...(c.reasoning ? [reasoning(c.reasoning)] : []),
          ...(c.text ? [text(c.text)] : []),
          ...[...c.tools.values()].map((t) => toolCall(t.id, t.name, t.args)),
        ],
        // A stream that ended without a reason was cut.
        finish_reason: c.finish ?? 'error',
      }));
  }

  #take(s: unknown): string {
    if (typeof s !== 'string' || this.#room <= 0) return '';
    const t = s.length > this.#room ? s.slice(0, this.#room) : s;
    this.#room -= t.length;
    return t;
  }

  #chunk(c: Doc): void {
    const index = typeof c.index === 'number' ? c.index : 0;
    let choice = this.#choices.get(index);
    if (!choice) this.#choices.set(index, (choice = { role: 'assistant', text: '', reasoning: '', tools: new Map(), finish: undefined }));
    const d = isDoc(c.delta) ? c.delta : {};
    if (typeof d.role === 'string') choice.role = d.role;
    choice.text += this.#take(d.content);
    choice.reasoning += this.#take(d.reasoning_content ?? d.reasoning);
    for (const t of docs(d.tool_calls)) {
      const at = typeof t.index === 'number' ? t.index : choice.tools.size;
      let tool = choice.tools.get(at);
      if (!tool) choice.tools.set(at, (tool = { id: undefined, name: '', args: '' }));
      if (typeof t.id === 'string') tool.id = t.id;
      const f = isDoc(t.function) ? t.function : {};
      if (typeof f.name === 'string') tool.name += f.name;
      tool.args += this.#take(f.arguments);
    }
    const finish = chatFinish(c.finish_reason);
    if (finish) choice.finish = finish;
  }

  #responsesEvent(type: string, e: Doc): void {
    const r = (this.#response ??= { text: '', reasoning: '', tools: [], finish: undefined });
    if (type === 'response.output_text.delta' || type === 'response.refusal.delta') r.text += this.#take(e.delta);
    // A reasoning summary (OpenAI's models), or the reasoning itself (vLLM's Responses API, the chat translation).
    else if (type === 'response.reasoning_summary_text.delta' || type === 'response.reasoning_text.delta') r.reasoning += this.#take(e.delta);
    else if (type === 'response.output_item.done' && isDoc(e.item) && e.item.type === 'function_call') {
      const item = e.item;
      r.tools.push(toolCall(str(item.call_id), str(item.name) ?? '', this.#take(item.arguments)));
    } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      r.finish = responsesFinish(isDoc(e.response) ? e.response : {}, r.tools);
    }
  }
}

interface StreamedChoice {
  role: string;
  text: string;
  reasoning: string;
  tools: Map<number, { id: string | undefined; name: string; args: string }>;
  finish: string | undefined;
}

/** A Chat Completions message (request or answer). */
function chatMessage(m: Doc): Message {
  const role = m.role === 'function' ? 'tool' : (str(m.role) ?? 'user');
  const name = str(m.name);
  let parts: Part[];
  if (role === 'tool') parts = [toolResponse(str(m.tool_call_id), m.content)];
  else {
    const think = str(m.reasoning_content) ?? str(m.reasoning);
    parts = [...(think ? [reasoning(think)] : []), ...partsOf(m.content, contentPart)];
    const refusal = str(m.refusal);
    if (refusal) parts.push(text(refusal));
    for (const t of docs(m.tool_calls)) {
      const f = isDoc(t.function) ? t.function : {};
      parts.push(toolCall(str(t.id), str(f.name) ?? '', f.arguments));
    }
    if (isDoc(m.function_call)) parts.push(toolCall(undefined, str(m.function_call.name) ?? '', m.function_call.arguments));
  }
  return { role, parts, ...(name !== undefined && role !== 'tool' ? { name } : {}) };
}

/** A Responses input item: a message, a function call or its output, reasoning; other items are left out. */
function responsesItem(item: Doc): Message[] {
  switch (item.type) {
    case undefined:
    case 'message':
      return [{ role: str(item.role) ?? 'user', parts: partsOf(item.content, contentPart) }];
    case 'function_call':
      return [{ role: 'assistant', parts: [toolCall(str(item.call_id), str(item.name) ?? '', item.arguments)] }];
    case 'custom_tool_call':
      return [{ role: 'assistant', parts: [toolCall(str(item.call_id), str(item.name) ?? '', item.input)] }];
    case 'function_call_output':
    case 'custom_tool_call_output':
      return [{ role: 'tool', parts: [toolResponse(str(item.call_id), item.output)] }];
    case 'reasoning': {
      const parts = reasoningParts(item);
      return parts.length > 0 ? [{ role: 'assistant', parts }] : [];
    }
    default:
      return [];
  }
}

/** The parts of a Responses output item. */
function outputItemParts(item: Doc): Part[] {
  switch (item.type) {
    case 'message':
      return partsOf(item.content, contentPart);
    case 'function_call':
      return [toolCall(str(item.call_id), str(item.name) ?? '', item.arguments)];
    case 'custom_tool_call':
      return [toolCall(str(item.call_id), str(item.name) ?? '', item.input)];
    case 'reasoning':
      return reasoningParts(item);
    default:
      // A tool the provider ran itself (web search, file search, code interpreter, …).
      return typeof item.type === 'string'
        ? [{ type: 'server_tool_call', ...(str(item.id) ? { id: item.id } : {}), name: item.type, server_tool_call: { type: item.type } }]
        : [];
  }
}

function reasoningParts(item: Doc): Part[] {
  return [...docs(item.summary), ...docs(item.content)].flatMap((s) => (typeof s.text === 'string' ? [reasoning(s.text)] : []));
}

function contentPart(p: Doc): Part {
  switch (p.type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      return text(str(p.text) ?? '');
    case 'refusal':
      return text(str(p.refusal) ?? '');
    case 'image_url':
      return byUrl(str(isDoc(p.image_url) ? p.image_url.url : p.image_url), 'image');
    case 'input_image':
      return typeof p.file_id === 'string' ? { type: 'file', modality: 'image', file_id: p.file_id } : byUrl(str(p.image_url), 'image');
    case 'input_audio': {
      const a = isDoc(p.input_audio) ? p.input_audio : p;
      const format = str(a.format);
      return { type: 'blob', modality: 'audio', ...(format ? { mime_type: `audio/${format}` } : {}), content: str(a.data) ?? '' };
    }
    case 'file':
    case 'input_file': {
      const f = isDoc(p.file) ? p.file : p;
      if (typeof f.file_id === 'string') return { type: 'file', modality: 'document', file_id: f.file_id };
      if (typeof f.file_url === 'string') return byUrl(f.file_url, 'document');
      return byUrl(str(f.file_data), 'document');
    }
    default:
      return { type: str(p.type) ?? 'unknown' };
  }
}

/** Chat Completions' finish_reason in the schema's words. */
function chatFinish(reason: unknown): string | undefined {
  if (typeof reason !== 'string') return undefined;
  return reason === 'tool_calls' || reason === 'function_call' ? 'tool_call' : reason;
}

/** A Responses answer's status (and why it is incomplete) as a finish_reason. */
function responsesFinish(response: Doc, parts: readonly Part[]): string {
  const status = str(response.status);
  if (status === 'completed') return parts.some((p) => p.type === 'tool_call') ? 'tool_call' : 'stop';
  if (status === 'incomplete') {
    const why = isDoc(response.incomplete_details) ? str(response.incomplete_details.reason) : undefined;
    return why === 'max_output_tokens' ? 'length' : (why ?? 'length');
  }
  if (status === 'failed' || status === 'cancelled') return 'error';
  return status ?? 'stop';
}
