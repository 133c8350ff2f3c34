// A chat completions stream as Anthropic's Messages stream: a state machine fed the upstream's parsed `data:`
// payloads (the SSE framing is read elsewhere) that returns Anthropic's events as the exact text to send,
// `event: <type>\ndata: <json>\n\n` (clients need the event: line; Claude Code without it retries unstreamed).
// Blocks are sent one at a time, in order: text, then each tool call as a tool_use block whose arguments go out
// piecewise as input_json_delta. message_delta waits for the usage chunk that follows finish_reason (or [DONE]).
// Rules: a stream that ends without a finish_reason ends with an api_error event, not end_turn, so a cut answer
// (half a tool input) is never taken for a whole one; the client retries. Reasoning deltas are not carried
// (chat-to-messages.ts says why); refusal deltas are text, and the stop reason `refusal` (chat-to-messages.ts). Pure.
import type { Usage } from '../../model/usage.js';
import { type AnthropicErrorBody, type AnthropicErrorType, anthropicError, errorTypeForStatus } from '../../model/anthropic-errors.js';
import { upstreamMessage } from './anthropic-errors.js';
import { anthropicUsage, badToolInputMessage, chatUsage, messageId, sseEvent as sse, stopReason, toolInput, toolUseId } from './answer-parts.js';
import type { AnswerContext } from './chat-to-messages.js';

interface ToolCall {
  id: string | undefined;
  name: string;
  /** Arguments so far; held back until the name is known, since content_block_start must carry it. */
  args: string;
  block: number | undefined;
  closed: boolean;
}

type Open = { kind: 'text'; block: number } | { kind: 'tool'; block: number; call: ToolCall };

export class ChatStreamToMessages {
  private started = false;
  private done = false;
  private open: Open | undefined;
  private blocks = 0;
  private usedTools = false;
  private refused = false;
  private readonly calls = new Map<number, ToolCall>();
  private finish: string | undefined;
  private matched: unknown;
  private tail = '';
  private usage: Usage | undefined;
  private readonly tailLength: number;

  constructor(private readonly ctx: AnswerContext) {
    this.tailLength = Math.max(0, ...(ctx.stopSequences ?? []).map((s) => s.length));
  }

  /** One parsed `data:` payload of the upstream stream, or the string `[DONE]`: the events it makes. */
  push(chunk: unknown): string {
    if (this.done) return '';
    if (chunk === '[DONE]') return this.finish === undefined ? this.fail('api_error', UNFINISHED) : this.complete();
    if (!chunk || typeof chunk !== 'object') return '';
    const c = chunk as Record<string, unknown>;
    if (c['error'] !== undefined && c['error'] !== null)
      return this.fail(midStreamErrorType(c['error']), upstreamMessage(c) ?? 'The upstream failed mid-stream.');

    let out = this.started ? '' : this.start(c['id']);
    const usage = chatUsage(c['usage']);
    if (usage) this.usage = usage;
    const choice = Array.isArray(c['choices']) ? (c['choices'][0] as Record<string, unknown> | undefined) : undefined;
    const delta = choice?.['delta'] as Record<string, unknown> | undefined;
    if (delta && typeof delta['content'] === 'string' && delta['content']) out += this.text(delta['content']);
    if (delta && typeof delta['refusal'] === 'string' && delta['refusal']) {
      this.refused = true;
      out += this.text(delta['refusal']);
    }
    if (delta && Array.isArray(delta['tool_calls'])) {
      for (const tc of delta['tool_calls']) {
        out += this.toolCall(tc);
        if (this.done) return out;
      }
    }
    if (typeof choice?.['finish_reason'] === 'string' && this.finish === undefined) {
      this.finish = choice['finish_reason'];
      this.matched = choice['stop_reason'];
      out += this.closeOpen();
      if (!this.done) out += this.unnamedCall();
    }
    // The usage chunk follows the finish chunk; a backend that sends usage with the finish is complete at once.
    if (this.finish !== undefined && this.usage && !this.done) out += this.complete();
    return out;
  }

  /** The upstream is over: the events still owed (an error when it never finished) and the usage it reported. */
  end(): { events: string; usage: Usage | undefined } {
    const events = this.done ? '' : this.finish === undefined ? this.fail('api_error', UNFINISHED) : this.complete();
    return { events, usage: this.usage };
  }

  private start(upstreamId: unknown): string {
    this.started = true;
    const usage = { ...anthropicUsage(this.usage), output_tokens: 0 };
    const message = {
      id: messageId(upstreamId),
      type: 'message',
      role: 'assistant',
      model: this.ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    };
    return sse('message_start', { type: 'message_start', message });
  }

  private text(text: string): string {
    let out = '';
    if (this.open?.kind !== 'text') {
      out += this.closeOpen();
      if (this.done) return out;
      this.open = { kind: 'text', block: this.blocks++ };
      out += sse('content_block_start', { type: 'content_block_start', index: this.open.block, content_block: { type: 'text', text: '' } });
    }
    if (this.tailLength > 0) this.tail = (this.tail + text).slice(-this.tailLength);
    return out + sse('content_block_delta', { type: 'content_block_delta', index: this.open.block, delta: { type: 'text_delta', text } });
  }

  private toolCall(tc: unknown): string {
    if (!tc || typeof tc !== 'object') return '';
    const t = tc as { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const index = typeof t.index === 'number' ? t.index : 0;
    const id = typeof t.id === 'string' && t.id ? t.id : undefined;
    const name = typeof t.function?.name === 'string' ? t.function.name : '';
    const piece = typeof t.function?.arguments === 'string' ? t.function.arguments : '';
    let call = this.calls.get(index);
    // A new id at a known index is a new call (Ollama numbers every call 0).
    if (!call || (id && call.id && id !== call.id)) {
      call = { id, name: '', args: '', block: undefined, closed: false };
      this.calls.set(index, call);
    }
    if (call.closed) return this.fail('api_error', 'The upstream interleaved the arguments of its tool calls.');
    call.id ??= id;
    if (!call.name && name) call.name = name;
    if (call.block === undefined) {
      call.args += piece;
      return call.name ? this.startTool(call) : '';
    }
    call.args += piece;
    return piece ? this.inputDelta(call.block, piece) : '';
  }

  private startTool(call: ToolCall): string {
    let out = this.closeOpen();
    if (this.done) return out;
    call.block = this.blocks++;
    this.usedTools = true;
    this.open = { kind: 'tool', block: call.block, call };
    const block = { type: 'tool_use', id: toolUseId(call.id), name: call.name, input: {} };
    out += sse('content_block_start', { type: 'content_block_start', index: call.block, content_block: block });
    return call.args ? out + this.inputDelta(call.block, call.args) : out;
  }

  private inputDelta(block: number, partial: string): string {
    return sse('content_block_delta', { type: 'content_block_delta', index: block, delta: { type: 'input_json_delta', partial_json: partial } });
  }

  /** Closes the open block; a tool call's arguments must be a JSON object by then (answer-parts.ts, toolInput). */
  private closeOpen(): string {
    const open = this.open;
    if (!open) return '';
    this.open = undefined;
    if (open.kind === 'tool') {
      open.call.closed = true;
      if (!toolInput(open.call.args)) return this.fail('api_error', badToolInputMessage(open.call.name));
    }
    return sse('content_block_stop', { type: 'content_block_stop', index: open.block });
  }

  /** A tool call whose name never came cannot be a tool_use block. */
  private unnamedCall(): string {
    for (const call of this.calls.values()) if (call.block === undefined) return this.fail('api_error', 'The upstream sent a tool call without a name.');
    return '';
  }

  private complete(): string {
    let out = this.closeOpen();
    if (this.done) return out;
    this.done = true;
    const stop = stopReason(this.finish ?? 'stop', this.ctx, {
      usedTools: this.usedTools,
      refused: this.refused,
      matched: this.matched,
      textTail: this.tail,
    });
    const usage = anthropicUsage(this.usage);
    out += sse('message_delta', { type: 'message_delta', delta: { stop_reason: stop.reason, stop_sequence: stop.sequence }, usage });
    return out + sse('message_stop', { type: 'message_stop' });
  }

  private fail(type: AnthropicErrorType, message: string): string {
    this.done = true;
    return sse('error', anthropicError(type, message) satisfies AnthropicErrorBody);
  }
}

const UNFINISHED = 'The upstream stream ended before the answer was finished.';

/** Anthropic's type for an OpenAI error object sent inside a stream: by its status code when it has one. */
function midStreamErrorType(error: unknown): AnthropicErrorType {
  const e = error && typeof error === 'object' ? (error as Record<string, unknown>) : {};
  const status = Number(e['status'] ?? e['code']);
  if (Number.isInteger(status) && status >= 400) return errorTypeForStatus(status);
  const kind = `${e['type'] ?? ''} ${e['code'] ?? ''}`;
  if (/rate_limit|tokens|requests/.test(kind)) return 'rate_limit_error';
  if (/invalid_request/.test(kind)) return 'invalid_request_error';
  if (/overloaded/.test(kind)) return 'overloaded_error';
  return 'api_error';
}
