// A chat completions stream as a Responses stream: a state machine fed the upstream's parsed `data:` payloads (the
// SSE framing is read elsewhere) that returns the Responses events as the exact text to send, each
// `event: <type>\ndata: <json>\n\n` with a `sequence_number` from 0. One item is open at a time and is closed (its
// .done events) before the next opens: reasoning, a message (text and refusal parts), a tool call. Tool calls are
// keyed by their chunk `index`; a call opens once its name is known and the open call's arguments are a whole JSON
// object, so interleaved calls are held and told in order of first appearance, each its own item. A custom tool's
// input is known only once its JSON arguments are whole: it goes out in one delta as its call closes.
// response.completed (or .incomplete) waits for the usage chunk that follows finish_reason, or the end.
// Rules: a stream that ends without a finish_reason, or carries an `error` member, ends with an error event and no
// response.completed, so a client retries rather than taking half an answer for a whole one. Pure, but for handing
// a finished answer's Response to `ctx.keep` (kept for later requests).
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { providerError } from '../../dataplane/upstream/provider-error.js';
import { sseErrorEvent } from '../../dataplane/upstream/sse-signals.js';
import { isRecord } from '../../model/translation.js';
import type { Usage } from '../../model/usage.js';
import { chatUsage } from '../messages/answer-parts.js';
import { callItemName } from './namespaced-tools.js';
import type { ResponseContext } from './response-context.js';
import {
  type CustomToolCallItem,
  customInput,
  type FunctionCallItem,
  type ItemStatus,
  incompleteReason,
  itemId,
  type MessageItem,
  type OutputItem,
  type ReasoningItem,
  responseObject,
} from './response-parts.js';

interface Call {
  id: string | undefined;
  name: string;
  args: string;
  closed: boolean;
}

type Open =
  | { kind: 'reasoning'; index: number; item: ReasoningItem }
  | { kind: 'message'; index: number; item: MessageItem }
  | { kind: 'call'; index: number; call: Call; item: FunctionCallItem | CustomToolCallItem };

export class ChatStreamToResponses {
  private seq = 0;
  private started = false;
  private done = false;
  private open: Open | undefined;
  private readonly output: OutputItem[] = [];
  private readonly calls = new Map<number, Call>();
  /** Calls seen and not yet opened, in order of first appearance. */
  private readonly pending: Call[] = [];
  private finish: string | undefined;
  private usage: Usage | undefined;

  /** `sent`: where each sequence_number sent is recorded (the data plane's, for an error event it may end the stream with). */
  constructor(
    private readonly ctx: ResponseContext,
    private readonly sent?: StreamProgress,
  ) {}

  /** The last sequence_number sent, for an error event the gateway itself may have to end the stream with. */
  get progress(): StreamProgress {
    return { lastSequenceNumber: this.seq === 0 ? undefined : this.seq - 1 };
  }

  /** One parsed `data:` payload of the upstream stream (the string `[DONE]` ends it): the events it makes. */
  push(chunk: unknown): string {
    if (this.done) return '';
    if (chunk === '[DONE]') return this.end().events;
    if (!isRecord(chunk)) return '';
    if (chunk['error'] !== undefined && chunk['error'] !== null) {
      const e = providerError(500, chunk);
      return this.fail(e?.message ?? 'The upstream failed mid-stream.', e?.code ?? 'upstream_error', e?.type ?? 'server_error');
    }
    let out = this.started ? '' : this.start();
    const usage = chatUsage(chunk['usage']);
    if (usage) this.usage = usage;
    const choice = Array.isArray(chunk['choices']) ? chunk['choices'][0] : undefined;
    if (this.finish === undefined && isRecord(choice)) {
      const delta = isRecord(choice['delta']) ? choice['delta'] : {};
      const reasoning = delta['reasoning_content'] ?? delta['reasoning'];
      if (typeof reasoning === 'string' && reasoning) out += this.reasoning(reasoning);
      if (typeof delta['content'] === 'string' && delta['content']) out += this.text('output_text', delta['content']);
      if (typeof delta['refusal'] === 'string' && delta['refusal']) out += this.text('refusal', delta['refusal']);
      for (const tc of Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as unknown[]) : []) {
        if (this.done) return out;
        out += this.toolCall(tc);
      }
      if (this.done) return out;
      if (typeof choice['finish_reason'] === 'string') {
        this.finish = choice['finish_reason'];
        out += this.closeAll();
      }
    }
    // Usage follows the finish chunk (include_usage); a backend that sends it with the finish is complete at once.
    if (this.finish !== undefined && usage && !this.done) out += this.complete();
    return out;
  }

  /** The usage a chunk reported so far (a server that reports it in every chunk, as vLLM's continuous usage does). */
  get usageSoFar(): Usage | undefined {
    return this.usage;
  }

  /** The upstream is over: the events still owed (an error when it never finished) and the usage it reported. */
  end(): { events: string; usage: Usage | undefined } {
    const events = this.done ? '' : this.finish === undefined ? this.fail(UNFINISHED, 'upstream_error') : this.complete();
    return { events, usage: this.usage };
  }

  private event(type: string, fields: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: this.next() })}\n\n`;
  }

  private next(): number {
    const n = this.seq++;
    if (this.sent) this.sent.lastSequenceNumber = n;
    return n;
  }

  private start(): string {
    this.started = true;
    const response = responseObject(this.ctx, undefined, [], undefined);
    return this.event('response.created', { response }) + this.event('response.in_progress', { response });
  }

  private reasoning(text: string): string {
    let out = '';
    if (this.open?.kind !== 'reasoning') {
      out += this.closeAll();
      if (this.done) return out;
      const index = this.output.length;
      const item: ReasoningItem = { type: 'reasoning', id: itemId(this.ctx, 'rs', index), summary: [], content: [] };
      this.output.push(item);
      this.open = { kind: 'reasoning', index, item };
      out += this.event('response.output_item.added', { output_index: index, item });
      item.content.push({ type: 'reasoning_text', text: '' });
      out += this.event('response.content_part.added', { ...this.at(0), part: { type: 'reasoning_text', text: '' } });
    }
    this.open.item.content[0]!.text += text;
    return out + this.event('response.reasoning_text.delta', { ...this.at(0), delta: text });
  }

  private text(kind: 'output_text' | 'refusal', text: string): string {
    let out = '';
    if (this.open?.kind !== 'message') {
      out += this.closeAll();
      if (this.done) return out;
      const index = this.output.length;
      const item: MessageItem = { type: 'message', id: itemId(this.ctx, 'msg', index), status: 'in_progress', role: 'assistant', content: [] };
      this.output.push(item);
      this.open = { kind: 'message', index, item };
      out += this.event('response.output_item.added', { output_index: index, item });
    }
    const { content } = this.open.item;
    if (content.at(-1)?.type !== kind) {
      out += this.closePart();
      content.push(kind === 'output_text' ? { type: 'output_text', text: '', annotations: [], logprobs: [] } : { type: 'refusal', refusal: '' });
      out += this.event('response.content_part.added', { ...this.at(content.length - 1), part: content.at(-1) });
    }
    const part = content.at(-1)!;
    const at = this.at(content.length - 1);
    if (part.type === 'output_text') {
      part.text += text;
      return out + this.event('response.output_text.delta', { ...at, delta: text, logprobs: [] });
    }
    part.refusal += text;
    return out + this.event('response.refusal.delta', { ...at, delta: text });
  }

  private toolCall(tc: unknown): string {
    if (!isRecord(tc)) return '';
    const index = typeof tc['index'] === 'number' ? tc['index'] : 0;
    const id = typeof tc['id'] === 'string' && tc['id'] ? tc['id'] : undefined;
    const fn = isRecord(tc['function']) ? tc['function'] : {};
    const name = typeof fn['name'] === 'string' ? fn['name'] : '';
    const piece = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
    let call = this.calls.get(index);
    // A new id at a known index is a new call (Ollama numbers every call 0).
    if (!call || (id && call.id && id !== call.id)) {
      call = { id, name: '', args: '', closed: false };
      this.calls.set(index, call);
      this.pending.push(call);
    }
    if (call.closed) {
      if (!piece.trim()) return '';
      return this.fail(`The upstream sent more arguments for the tool call \`${call.name}\` after they were whole.`, 'upstream_error');
    }
    call.id ??= id;
    if (!call.name && name) call.name = name;
    call.args += piece;
    const open = this.open;
    if (open?.kind === 'call' && open.call === call && open.item.type === 'function_call' && piece) {
      open.item.arguments += piece;
      // Once the open call is whole, a call held behind it opens.
      return this.event('response.function_call_arguments.delta', { item_id: open.item.id, output_index: open.index, delta: piece }) + this.openCalls();
    }
    return this.openCalls();
  }

  /** Opens the held calls in order, each once its name is known and the call before it is whole. */
  private openCalls(): string {
    let out = '';
    for (let next = this.pending[0]; next?.name; next = this.pending[0]) {
      if (this.open?.kind === 'call' && !wholeObject(this.open.call.args)) break;
      out += this.closeOpen('completed');
      this.pending.shift();
      out += this.openCall(next);
    }
    return out;
  }

  private openCall(call: Call): string {
    const index = this.output.length;
    const callId = call.id ?? itemId(this.ctx, 'call', index);
    const named = callItemName(call.name, this.ctx.namespaced);
    const item: FunctionCallItem | CustomToolCallItem = this.ctx.customTools.has(call.name)
      ? { type: 'custom_tool_call', id: itemId(this.ctx, 'ctc', index), call_id: callId, ...named, input: '', status: 'in_progress' }
      : { type: 'function_call', id: itemId(this.ctx, 'fc', index), call_id: callId, ...named, arguments: '', status: 'in_progress' };
    this.output.push(item);
    this.open = { kind: 'call', index, call, item };
    let out = this.event('response.output_item.added', { output_index: index, item });
    if (item.type === 'function_call' && call.args) {
      item.arguments = call.args;
      out += this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: index, delta: call.args });
    }
    return out;
  }

  /** Closes the open item and tells every held call; at the finish, the last item takes the response's status. */
  private closeAll(): string {
    const unnamed = this.pending.find((c) => !c.name);
    if (unnamed) return this.fail('The upstream sent a tool call without a name.', 'upstream_error');
    const cut = this.finish !== undefined && incompleteReason(this.finish) !== undefined;
    let out = '';
    while (this.pending.length > 0) {
      out += this.closeOpen('completed');
      out += this.openCall(this.pending.shift()!);
    }
    return out + this.closeOpen(cut ? 'incomplete' : 'completed');
  }

  private closeOpen(status: ItemStatus): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    let out = '';
    const output_index = open.index;
    if (open.kind === 'reasoning') {
      const part = open.item.content[0]!;
      out += this.event('response.reasoning_text.done', { ...this.atItem(open, 0), text: part.text });
      out += this.event('response.content_part.done', { ...this.atItem(open, 0), part });
    } else if (open.kind === 'message') {
      this.open = open;
      out += this.closePart();
      this.open = undefined;
      open.item.status = status;
    } else {
      open.call.closed = true;
      const { item } = open;
      if (item.type === 'function_call') {
        item.status = status;
        out += this.event('response.function_call_arguments.done', { item_id: item.id, output_index, name: item.name, arguments: item.arguments });
      } else {
        item.input = customInput(open.call.args);
        item.status = 'completed';
        out += this.event('response.custom_tool_call_input.delta', { item_id: item.id, output_index, delta: item.input });
        out += this.event('response.custom_tool_call_input.done', { item_id: item.id, output_index, input: item.input });
      }
    }
    return out + this.event('response.output_item.done', { output_index, item: open.item });
  }

  /** The .done events of the open message's last content part. */
  private closePart(): string {
    if (this.open?.kind !== 'message') return '';
    const content = this.open.item.content;
    const part = content.at(-1);
    if (!part) return '';
    const at = this.at(content.length - 1);
    const done =
      part.type === 'output_text'
        ? this.event('response.output_text.done', { ...at, text: part.text, logprobs: [] })
        : this.event('response.refusal.done', { ...at, refusal: part.refusal });
    return done + this.event('response.content_part.done', { ...at, part });
  }

  private at(content_index: number): { item_id: string; output_index: number; content_index: number } {
    return this.atItem(this.open!, content_index);
  }

  private atItem(open: Open, content_index: number): { item_id: string; output_index: number; content_index: number } {
    return { item_id: open.item.id, output_index: open.index, content_index };
  }

  private complete(): string {
    this.done = true;
    const response = responseObject(this.ctx, this.finish, this.output, this.usage);
    this.ctx.keep?.(response);
    return this.event(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response });
  }

  private fail(message: string, code: string | null, type = 'server_error'): string {
    this.done = true;
    const text = sseErrorEvent({ message, type, code }, this.progress);
    this.next();
    return text;
  }
}

const UNFINISHED = 'The upstream stream ended before the answer was finished.';

/** Arguments that are a whole JSON object: the call they belong to is over. */
function wholeObject(args: string): boolean {
  try {
    return isRecord(JSON.parse(args));
  } catch {
    return false;
  }
}
