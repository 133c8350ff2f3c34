// One Messages turn's content blocks as chat completions messages. The rules for what has no chat equivalent
// are stated once each, where they apply; docs/coding-agents.md ("What is translated") repeats them.
import type { Translated } from '../../model/anthropic-errors.js';
import { invalidRequest } from './anthropic-errors.js';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../../model/chat-request.js';
import type { ContentBlock, DocumentBlock, ImageBlock, TextBlock } from './messages-request-schema.js';

type Ok<T> = { readonly ok: true; readonly value: T };
const ok = <T>(value: T): Ok<T> => ({ ok: true, value });

/** Stands in a tool message for an image of the tool result, which a tool message cannot carry. */
export const TOOL_IMAGE_PLACEHOLDER = '[image: in the next user message]';

/** Text blocks of system content, joined by a blank line (one system message is what every chat template reads). */
export function systemText(content: string | readonly TextBlock[]): string {
  return typeof content === 'string' ? content : content.map((b) => b.text).join('\n\n');
}

/** A `role: "system"` turn inside messages[] (Claude Code sends one): a system message in place. Text only. */
export function systemTurn(content: string | readonly ContentBlock[], at: string): Translated<ChatMessage[]> {
  if (typeof content === 'string') return ok([{ role: 'system', content }]);
  const texts: TextBlock[] = [];
  for (const [i, b] of content.entries()) {
    if (b.type !== 'text') return invalidRequest(`${at}.content.${i}: a system turn holds text blocks only, not \`${b.type}\`.`);
    texts.push(b);
  }
  return ok([{ role: 'system', content: systemText(texts) }]);
}

/**
 * A user turn: its tool_result blocks become `role: "tool"` messages, in order, and the rest one user message after
 * them (chat wants each tool answer right after the assistant's tool_calls). Images inside a tool result, which a
 * tool message cannot carry, move to the start of that user message and leave a placeholder in the tool's text.
 */
export function userTurn(content: string | readonly ContentBlock[], at: string): Translated<ChatMessage[]> {
  if (typeof content === 'string') return ok([{ role: 'user', content }]);
  const tools: ChatMessage[] = [];
  const carried: ChatContentPart[] = [];
  const parts: ChatContentPart[] = [];
  for (const [i, b] of content.entries()) {
    const where = `${at}.content.${i}`;
    if (b.type === 'tool_result') {
      let text = '';
      for (const [j, inner] of (typeof b.content === 'string' ? [{ type: 'text' as const, text: b.content }] : (b.content ?? [])).entries()) {
        if (inner.type === 'text') text += (text ? '\n' : '') + inner.text;
        else {
          const part = inner.type === 'image' ? imagePart(inner, `${where}.content.${j}`) : documentPart(inner, `${where}.content.${j}`);
          if (!part.ok) return part;
          carried.push(part.value);
          text += (text ? '\n' : '') + TOOL_IMAGE_PLACEHOLDER;
        }
      }
      // Chat has no is_error: the text says it, so the model still learns the call failed.
      tools.push({ role: 'tool', tool_call_id: b.tool_use_id, content: b.is_error ? `Error: ${text}` : text });
      continue;
    }
    const part = userPart(b, where);
    if (!part.ok) return part;
    if (part.value) parts.push(part.value);
  }
  const all = [...carried, ...parts];
  if (all.length === 0) return ok(tools);
  const only = all.length === 1 ? all[0] : undefined;
  return ok([...tools, { role: 'user', content: only?.type === 'text' ? only.text : all }]);
}

/**
 * An assistant turn: text becomes the content, tool_use blocks tool_calls with the input JSON-stringified.
 * Thinking and redacted_thinking blocks are dropped, never sent as text: their signature proves them only to the
 * Anthropic model that wrote them, and another model would read the reasoning as something said to the user.
 */
export function assistantTurn(content: string | readonly ContentBlock[], at: string): Translated<ChatMessage[]> {
  if (typeof content === 'string') return ok([{ role: 'assistant', content }]);
  let text = '';
  const calls: ChatToolCall[] = [];
  for (const [i, b] of content.entries()) {
    if (b.type === 'text') text += b.text;
    else if (b.type === 'tool_use') calls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } });
    else if (b.type !== 'thinking' && b.type !== 'redacted_thinking') {
      return invalidRequest(`${at}.content.${i}: an assistant turn cannot hold a \`${b.type}\` block.`);
    }
  }
  // A turn that held only thinking says nothing a chat model can read: it is left out.
  if (!text && calls.length === 0) return ok([]);
  return ok([{ role: 'assistant', content: text || null, ...(calls.length > 0 ? { tool_calls: calls } : {}) }]);
}

function userPart(b: ContentBlock, at: string): Translated<ChatContentPart | undefined> {
  switch (b.type) {
    case 'text':
      return ok({ type: 'text', text: b.text });
    case 'image':
      return imagePart(b, at);
    case 'document':
      return documentPart(b, at);
    case 'thinking':
    case 'redacted_thinking':
      return ok(undefined); // the thinking rule above: dropped wherever it appears
    default:
      return invalidRequest(`${at}: a user turn cannot hold a \`${b.type}\` block.`);
  }
}

/** base64 → a data URL, url → the URL; a Files API id means nothing to another provider. */
function imagePart(b: ImageBlock, at: string): Translated<ChatContentPart> {
  const s = b.source;
  if (s.type === 'base64') return ok({ type: 'image_url', image_url: { url: `data:${s.media_type};base64,${s.data}` } });
  if (s.type === 'url') return ok({ type: 'image_url', image_url: { url: s.url } });
  return invalidRequest(`${at}.source: an image from the Files API (file_id) cannot be passed to this model.`);
}

/**
 * A base64 PDF → OpenAI's `file` content part (a data URL in file_data; backends that do not read files refuse it
 * themselves); plain text and content sources → text. A PDF by URL or Files API id is refused: a `file` part takes
 * neither, and fetching it would make the gateway a fetcher of arbitrary URLs.
 */
function documentPart(b: DocumentBlock, at: string): Translated<ChatContentPart> {
  const s = b.source;
  const title = b.title ? `${b.title}\n\n` : '';
  switch (s.type) {
    case 'base64':
      return ok({ type: 'file', file: { filename: b.title || 'document.pdf', file_data: `data:${s.media_type};base64,${s.data}` } });
    case 'text':
      return ok({ type: 'text', text: title + s.data });
    case 'content': {
      const text = typeof s.content === 'string' ? s.content : s.content.map((c) => (typeof c['text'] === 'string' ? c['text'] : '')).join('\n');
      return ok({ type: 'text', text: title + text });
    }
    default:
      return invalidRequest(`${at}.source: a document by ${s.type === 'url' ? 'URL' : 'Files API id'} cannot be passed to this model; send it as base64.`);
  }
}
