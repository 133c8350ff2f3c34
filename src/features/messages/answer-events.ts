// A whole Messages answer as the events of a Messages stream, for a backend that answered a stream request with a
// whole answer (a chat backend's completion translated, or a native backend's message): a client that asked for a
// stream parses only events (the SDKs fail on a JSON body with "request ended without sending any chunks"). Each
// block is one start, its content in one delta (text, tool input, thinking and its signature), one stop; a block
// without a delta of its own (redacted thinking, a server tool's result) starts whole. Pure.
import { sseEvent as sse } from './answer-parts.js';

type Block = { readonly type: string; readonly [member: string]: unknown };

/** A Messages answer: the translated one (chat-to-messages.ts) or a native backend's. */
export interface WholeMessage {
  readonly content: readonly Block[];
  readonly stop_reason: unknown;
  readonly stop_sequence: unknown;
  readonly usage: object;
}

/** Blocks whose input streams as input_json_delta. */
const TOOL_USES = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/** The `event: <type>\ndata: <json>\n\n` text of the stream that carries `answer`. */
export function answerEvents(answer: WholeMessage): string {
  const { content, stop_reason, stop_sequence, usage, ...head } = answer;
  let out = sse('message_start', {
    type: 'message_start',
    message: { ...head, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 0 } },
  });
  content.forEach((block, index) => {
    const [start, deltas] = blockParts(block);
    out += sse('content_block_start', { type: 'content_block_start', index, content_block: start });
    for (const delta of deltas) out += sse('content_block_delta', { type: 'content_block_delta', index, delta });
    out += sse('content_block_stop', { type: 'content_block_stop', index });
  });
  out += sse('message_delta', { type: 'message_delta', delta: { stop_reason, stop_sequence }, usage });
  return out + sse('message_stop', { type: 'message_stop' });
}

/** A block's content_block_start and the deltas that fill it. */
function blockParts(block: Block): [Block, object[]] {
  if (block.type === 'text' && typeof block['text'] === 'string') return [{ ...block, text: '' }, [{ type: 'text_delta', text: block['text'] }]];
  if (TOOL_USES.has(block.type)) return [{ ...block, input: {} }, [{ type: 'input_json_delta', partial_json: JSON.stringify(block['input'] ?? {}) }]];
  if (block.type === 'thinking' && typeof block['thinking'] === 'string') {
    const deltas: object[] = [{ type: 'thinking_delta', thinking: block['thinking'] }];
    if (typeof block['signature'] === 'string') deltas.push({ type: 'signature_delta', signature: block['signature'] });
    return [{ ...block, thinking: '', signature: '' }, deltas];
  }
  return [block, []];
}
