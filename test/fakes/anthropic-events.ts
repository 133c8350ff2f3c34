// The answers Anthropic's Messages API gives for a scripted turn, as data: the whole message (JSON answer) and the
// event sequence of a stream, so each fake frames them as its cloud does (Anthropic's and Vertex's SSE,
// Bedrock's event-stream messages). Tool input arrives as input_json_delta fragments, thinking as thinking_delta
// fragments then its signature_delta, as they do there; a turn with `streamError` stops after the first delta with an
// `error` event, as Anthropic reports an overload mid-stream.
import type { AnthropicTurn } from './anthropic-upstream.js';

export interface AnthropicEvent {
  readonly type: string;
  readonly [member: string]: unknown;
}

/**
 * Which scripted turn answers a request: turn k when its messages[] already hold k assistant turns, so a client's
 * retry of the same step gets the same answer.
 */
export function stepOf(body: Record<string, unknown> | undefined): number {
  const messages = body?.['messages'];
  return Array.isArray(messages) ? messages.filter((m: { role?: unknown } | null) => m?.role === 'assistant').length : 0;
}

export function messageJson(id: string, model: string, turn: AnthropicTurn): Record<string, unknown> {
  return { id, type: 'message', role: 'assistant', model, content: turn.content, stop_reason: turn.stop_reason, stop_sequence: null, usage: turn.usage };
}

export function messageEvents(id: string, model: string, turn: AnthropicTurn): AnthropicEvent[] {
  const u = turn.usage;
  const events: AnthropicEvent[] = [];
  const message = { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...u, output_tokens: 1 } };
  events.push({ type: 'message_start', message }, { type: 'ping' });
  for (const [index, block] of turn.content.entries()) {
    if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } });
    } else if (block.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const part of halves(block.thinking)) events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: part } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const part of halves(JSON.stringify(block.input)))
        events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } });
    }
    if (turn.streamError) {
      const first = events.findIndex((e) => e.type === 'content_block_delta');
      return [...events.slice(0, first + 1), { type: 'error', error: turn.streamError }];
    }
    events.push({ type: 'content_block_stop', index });
  }
  // message_delta's usage is cumulative: the final output count, with the input and cache counts repeated.
  events.push({ type: 'message_delta', delta: { stop_reason: turn.stop_reason, stop_sequence: null }, usage: u });
  events.push({ type: 'message_stop' });
  return events;
}

function halves(s: string): string[] {
  const half = Math.floor(s.length / 2);
  return [s.slice(0, half), s.slice(half)];
}

/** One event as Anthropic's (and Vertex's) SSE writes it. */
export function sseEvent(e: AnthropicEvent): string {
  return `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}
