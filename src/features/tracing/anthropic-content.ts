// Anthropic's Messages API shapes of prompts and answers turned into the GenAI conventions' messages, as
// content-conversions.ts does for OpenAI's: `system` apart (gen_ai.system_instructions, as Anthropic takes it), content
// blocks as parts (text; image and document as blob, uri or file; tool_use as tool_call; tool_result as
// tool_call_response; thinking as reasoning; a signature is never recorded), stop_reason as finish_reason, and a
// stream's answer assembled from its content_block_* events. Pure; a block it does not know is a part of its own type.
import { type Doc, docs, isDoc, joinedText, type Message, type Part, partsOf, reasoning, str, text, toolCall, toolResponse } from './content-parts.js';

/** A Messages API request's `system` and `messages` (a `role: "system"` turn among them stays in place). */
export function anthropicInput(doc: unknown): { messages: Message[]; system: Part[] } | undefined {
  if (!isDoc(doc) || !Array.isArray(doc.messages)) return undefined;
  return { messages: docs(doc.messages).map((m) => ({ role: str(m.role) ?? 'user', parts: partsOf(m.content, block) })), system: partsOf(doc.system, block) };
}

/** A whole Messages API answer (`type: "message"`) as one message; undefined when the body is not one. */
export function anthropicAnswer(doc: Doc): Message[] | undefined {
  if (doc.type !== 'message' || !Array.isArray(doc.content)) return undefined;
  return [{ role: str(doc.role) ?? 'assistant', parts: partsOf(doc.content, block), finish_reason: finishOf(doc.stop_reason) ?? 'stop' }];
}

/** True for the events of a Messages API stream (message_start, content_block_delta, …; not its ping or error). */
export function isMessageEvent(type: string): boolean {
  return type.startsWith('message_') || type.startsWith('content_block_');
}

interface StreamedBlock {
  readonly type: string;
  readonly id: string | undefined;
  readonly name: string;
  /** Text, thinking, or a tool's input JSON as it came. */
  content: string;
  /** A tool's input as content_block_start gave it, for a tool whose input came in no delta. */
  readonly input: unknown;
}

/** A Messages API stream's answer, gathered from its events; `take` bounds the characters kept. */
export class StreamedMessage {
  readonly #take: (s: unknown) => string;
  readonly #blocks = new Map<number, StreamedBlock>();
  #finish: string | undefined;

  constructor(take: (s: unknown) => string) {
    this.#take = take;
  }

  event(e: Doc): void {
    const index = typeof e.index === 'number' ? e.index : 0;
    if (e.type === 'content_block_start' && isDoc(e.content_block)) {
      const b = e.content_block;
      const type = str(b.type) ?? 'unknown';
      const content = this.#take(b.text ?? b.thinking);
      this.#blocks.set(index, { type, id: str(b.id), name: str(b.name) ?? '', content, input: b.input });
    } else if (e.type === 'content_block_delta' && isDoc(e.delta)) {
      const block = this.#blocks.get(index);
      const d = e.delta;
      if (block) block.content += this.#take(d.text ?? d.thinking ?? d.partial_json);
    } else if (e.type === 'message_delta' && isDoc(e.delta)) {
      this.#finish = finishOf(e.delta.stop_reason) ?? this.#finish;
    }
  }

  messages(): Message[] {
    const parts = [...this.#blocks.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, b]): Part => {
        if (b.type === 'text') return text(b.content);
        if (b.type === 'thinking') return reasoning(b.content);
        if (b.type === 'tool_use') return toolCall(b.id, b.name, b.content === '' ? b.input : b.content);
        return { type: b.type };
      });
    // A stream that ended without a stop reason was cut.
    return [{ role: 'assistant', parts, finish_reason: this.#finish ?? 'error' }];
  }
}

function block(b: Doc): Part {
  switch (b.type) {
    case 'text':
      return text(str(b.text) ?? '');
    case 'thinking':
      return reasoning(str(b.thinking) ?? '');
    case 'tool_use':
      return toolCall(str(b.id), str(b.name) ?? '', b.input);
    case 'tool_result':
      return toolResponse(str(b.tool_use_id), typeof b.content === 'string' ? b.content : joinedText(docs(b.content)));
    case 'image':
      return sourced(b.source, 'image');
    case 'document':
      return sourced(b.source, 'document');
    default:
      return { type: str(b.type) ?? 'unknown' };
  }
}

/** An image's or document's source: inline data (a blob), a URL (a uri), a Files API id (a file), or text. */
function sourced(source: unknown, modality: string): Part {
  const s = isDoc(source) ? source : {};
  const mime = str(s.media_type);
  switch (s.type) {
    case 'base64':
      return { type: 'blob', modality, ...(mime ? { mime_type: mime } : {}), content: str(s.data) ?? '' };
    case 'url':
      return { type: 'uri', modality, uri: str(s.url) ?? '' };
    case 'file':
      return { type: 'file', modality, file_id: str(s.file_id) ?? '' };
    case 'text':
      return text(str(s.data) ?? '');
    case 'content':
      return text(joinedText(docs(s.content)));
    default:
      return { type: modality };
  }
}

/** Anthropic's stop_reason in the conventions' words (a reason they have no word for is kept as it is). */
function finishOf(reason: unknown): string | undefined {
  switch (reason) {
    case 'end_turn':
    case 'stop_sequence':
      return 'stop';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_call';
    case 'refusal':
      return 'content_filter';
    default:
      return typeof reason === 'string' ? reason : undefined;
  }
}
