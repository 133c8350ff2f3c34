// A whole Messages answer as the events of a Messages stream, for a chat backend that answered a stream request
// with a whole completion: a client that asked for a stream parses only events (the SDKs fail on a JSON body with
// "request ended without sending any chunks"). Each block is one start, one delta with all of it, one stop. Pure.
import { sseEvent as sse } from './answer-parts.js';
import type { MessagesAnswer } from './chat-to-messages.js';

/** The `event: <type>\ndata: <json>\n\n` text of the stream that carries `answer`. */
export function answerEvents(answer: MessagesAnswer): string {
  const { content, stop_reason, stop_sequence, usage, ...head } = answer;
  let out = sse('message_start', {
    type: 'message_start',
    message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
  });
  content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    const delta = block.type === 'text' ? { type: 'text_delta', text: block.text } : { type: 'input_json_delta', partial_json: JSON.stringify(block.input) };
    out += sse('content_block_start', { type: 'content_block_start', index, content_block: start });
    out += sse('content_block_delta', { type: 'content_block_delta', index, delta });
    out += sse('content_block_stop', { type: 'content_block_stop', index });
  });
  out += sse('message_delta', { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage });
  return out + sse('message_stop', { type: 'message_stop' });
}
