// Chat message content as Anthropic content blocks: text parts, images (a data URL as a base64 source, an http(s)
// URL as a url source), a PDF as a document, tool calls as tool_use blocks and tool messages as tool_result
// blocks. Pure; what Anthropic cannot carry is a 400 in OpenAI's shape, naming the message it is in.
import { invalid, ok, type Result } from '../../model/translation.js';
import type { UserPart } from './chat-request-schema.js';

export type ClaudeBlock = Record<string, unknown>;

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;
const IMAGE_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
/** Anthropic's tool_use ids: letters, digits, _ and -; another client's id is sent with the rest replaced, alike in both places. */
const NOT_ID = /[^a-zA-Z0-9_-]/g;

const claudeToolId = (id: string): string => id.replace(NOT_ID, '_');

type TextLike = { type: 'text'; text: string } | { type: 'refusal'; refusal: string };

/** Text content (a string, or text and refusal parts) as text blocks; empty text is left out (Anthropic refuses it). */
export function textBlocks(content: string | readonly TextLike[] | null | undefined): ClaudeBlock[] {
  if (content === null || content === undefined) return [];
  const texts = typeof content === 'string' ? [content] : content.map((p) => (p.type === 'text' ? p.text : p.refusal));
  return texts.filter((t) => t !== '').map((text) => ({ type: 'text', text }));
}

/** The plain text of text content (system prompts, tool results). */
export function plainText(content: string | readonly TextLike[]): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : p.refusal)).join('');
}

export function userBlocks(content: string | readonly UserPart[], at: string): Result<ClaudeBlock[]> {
  if (typeof content === 'string') return ok(textBlocks(content));
  const out: ClaudeBlock[] = [];
  for (const [i, part] of content.entries()) {
    const param = `${at}.content[${i}]`;
    switch (part.type) {
      case 'text':
        if (part.text !== '') out.push({ type: 'text', text: part.text });
        break;
      case 'image_url': {
        const image = imageBlock(part.image_url.url, param);
        if (!image.ok) return image;
        out.push(image.value);
        break;
      }
      case 'file': {
        const doc = documentBlock(part.file, param);
        if (!doc.ok) return doc;
        out.push(doc.value);
        break;
      }
      case 'input_audio':
        return invalid(param, "Audio input is not supported by this model's backend (Anthropic's Messages API takes no audio).", 'unsupported_content');
    }
  }
  return ok(out);
}

function imageBlock(url: string, param: string): Result<ClaudeBlock> {
  if (/^https?:\/\//i.test(url)) return ok({ type: 'image', source: { type: 'url', url } });
  const data = DATA_URL.exec(url);
  const mediaType = data?.[1]?.toLowerCase();
  if (!data || !mediaType || !IMAGE_TYPES.has(mediaType))
    return invalid(param, 'An image must be an http(s) URL or a base64 data URL of a JPEG, PNG, GIF or WebP image.', 'invalid_image_url');
  return ok({ type: 'image', source: { type: 'base64', media_type: mediaType, data: data[2] } });
}

function documentBlock(file: { file_data?: string | null | undefined; file_id?: string | null | undefined }, param: string): Result<ClaudeBlock> {
  const data = file.file_data ? DATA_URL.exec(file.file_data) : null;
  if (data?.[1]?.toLowerCase() !== 'application/pdf')
    return invalid(
      param,
      "Only a PDF sent inline as a base64 data URL (file_data) is supported by this model's backend; file ids are not.",
      'unsupported_content',
    );
  return ok({ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data[2] } });
}

/** An assistant's tool calls as tool_use blocks; arguments that are not a JSON object are refused. */
export function toolUseBlocks(calls: readonly { id: string; function: { name: string; arguments: string } }[], at: string): Result<ClaudeBlock[]> {
  const out: ClaudeBlock[] = [];
  for (const [i, call] of calls.entries()) {
    let input: unknown;
    try {
      input = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
    } catch {
      return invalid(`${at}.tool_calls[${i}].function.arguments`, 'Tool call arguments must be valid JSON.', 'invalid_tool_call_arguments');
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      return invalid(`${at}.tool_calls[${i}].function.arguments`, 'Tool call arguments must be a JSON object.', 'invalid_tool_call_arguments');
    out.push({ type: 'tool_use', id: claudeToolId(call.id), name: call.function.name, input });
  }
  return ok(out);
}

/** A tool message as a tool_result block. */
export function toolResultBlock(toolCallId: string, content: string | readonly TextLike[]): ClaudeBlock {
  const blocks = textBlocks(content);
  return {
    type: 'tool_result',
    tool_use_id: claudeToolId(toolCallId),
    content: typeof content === 'string' || blocks.length === 0 ? plainText(content) : blocks,
  };
}
