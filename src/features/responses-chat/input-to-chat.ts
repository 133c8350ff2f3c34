// A Responses request's `input` items as chat completions messages. Pure. The rules for what chat has no room for,
// stated once each (docs/coding-agents.md, "Codex on a chat completions model" repeats them):
// - developer messages become system messages: many chat servers' templates know no developer role;
// - reasoning items are dropped: their encrypted content is readable only by the server that wrote it, and a
//   summary is the model's own note, which chat has no input field for;
// - function_call items become an assistant message's tool_calls (consecutive calls, and the assistant text before
//   them, in one message: chat wants one assistant turn per set of calls), their outputs tool messages;
// - custom_tool_call items (Codex's freeform tools) are calls of the function tool tools-to-chat.ts makes of the
//   custom tool, whose one parameter `input` holds the text; a call that names its `namespace` goes under the
//   namespaced name the tool was offered by (namespaced-tools.ts);
// - an image a tool returned, which a tool message cannot carry, goes in a user message right after the tool
//   messages, the tool's text saying where it went;
// - an item_reference still here names no item the gateway kept (item-references.ts replaced those of kept responses): refused,
//   but for one to a reasoning item, dropped as the item itself would be; items of tools the Responses API runs
//   itself are refused (the calls ran there).
import type { z } from 'zod';
import type { ChatContentPart, ChatMessage, ChatToolCall } from '../../model/chat-request.js';
import { callName } from './namespaced-tools.js';
import { type ContentPart, customToolCall, functionCall, message, toolCallOutput } from './responses-request-schema.js';
import { invalid, ok, type Result } from '../../model/translation.js';

/** Stands in a tool message for an image the tool returned, which goes in the next user message. */
export const TOOL_IMAGE_PLACEHOLDER = '[image: in the next user message]';

type Item = Record<string, unknown> & { type?: string };

/** The chat messages for `input` (a string is one user message). */
export function inputToChat(input: string | readonly Item[] | undefined): Result<ChatMessage[]> {
  if (input === undefined) return ok([]);
  if (typeof input === 'string') return ok([{ role: 'user', content: input }]);
  const out = new ChatTurns();
  for (const [i, item] of input.entries()) {
    const done = translateItem(item, `input[${i}]`, out);
    if (!done.ok) return done;
  }
  return ok(out.messages());
}

function translateItem(item: Item, at: string, out: ChatTurns): Result<void> {
  const type = item.type ?? (item['role'] !== undefined ? 'message' : undefined);
  switch (type) {
    case 'message': {
      const m = parse(message, item, at);
      if (!m.ok) return m;
      return out.message(m.value.role, m.value.content, at);
    }
    case 'function_call': {
      const c = parse(functionCall, item, at);
      if (!c.ok) return c;
      out.call({ id: c.value.call_id, type: 'function', function: { name: callName(c.value), arguments: c.value.arguments } });
      return ok(undefined);
    }
    case 'custom_tool_call': {
      const c = parse(customToolCall, item, at);
      if (!c.ok) return c;
      out.call({ id: c.value.call_id, type: 'function', function: { name: callName(c.value), arguments: JSON.stringify({ input: c.value.input }) } });
      return ok(undefined);
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
      const o = parse(toolCallOutput, item, at);
      if (!o.ok) return o;
      return out.toolResult(o.value.call_id, o.value.output, `${at}.output`);
    }
    case 'reasoning':
      return ok(undefined);
    case 'item_reference':
      // A reasoning item (rs_…) would be dropped if sent whole: its reference loses nothing (the Vercel AI SDK sends
      // one for each reasoning step unless told store: false).
      if (typeof item['id'] === 'string' && item['id'].startsWith('rs_')) return ok(undefined);
      return invalid(
        at,
        `${at}: item_reference names an item this gateway does not hold. This model is served through chat completions; the gateway keeps the responses it answered for an hour, for the key that got them, unless the request said store: false (in the process that answered, unless it keeps them in Redis). Send the item itself (store: false; the Vercel AI SDK: providerOptions.openai.store = false).`,
      );
    default:
      return invalid(
        `${at}.type`,
        `${at}: items of type \`${String(type)}\` cannot be passed to this model: it is served through chat completions, which carries messages, function calls and their outputs only.`,
      );
  }
}

function parse<T>(schema: z.ZodType<T>, item: Item, at: string): Result<T> {
  const r = schema.safeParse(item);
  if (r.success) return ok(r.data);
  const { path, message } = describeIssue(r.error.issues[0]!, item, []);
  const where = [at, ...path.map(String)].join('.');
  return invalid(where, `${where}: ${message}`);
}

/** One issue, where it is and what it says; a union's failure by its branch that got furthest, an unknown part by its type. */
function describeIssue(issue: z.core.$ZodIssue, item: Item, base: readonly PropertyKey[]): { path: PropertyKey[]; message: string } {
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union') {
    if (issue.errors.length === 0 && path.at(-1) === 'type') {
      return { path, message: `content parts of type \`${String(valueAt(item, path))}\` cannot be passed to this model.` };
    }
    const branch = [...issue.errors].sort((a, b) => (b[0]?.path.length ?? 0) - (a[0]?.path.length ?? 0))[0];
    if (branch?.[0]) return describeIssue(branch[0], item, path);
  }
  return { path, message: issue.message };
}

function valueAt(v: unknown, path: readonly PropertyKey[]): unknown {
  for (const key of path) v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}

/** The messages being built: where the next tool call goes (the assistant turn it extends) and images held for a user turn. */
class ChatTurns {
  readonly #out: ChatMessage[] = [];
  /** Images tool outputs returned, for the user message after the tool messages. */
  #carried: ChatContentPart[] = [];

  messages(): ChatMessage[] {
    this.#release();
    return this.#out;
  }

  message(role: 'user' | 'assistant' | 'system' | 'developer', content: string | readonly ContentPart[], at: string): Result<void> {
    this.#release();
    if (role === 'user') {
      const parts = userContent(content, `${at}.content`);
      if (!parts.ok) return parts;
      this.#out.push({ role: 'user', content: parts.value });
      return ok(undefined);
    }
    const text = textOnly(content, `${at}.content`, role);
    if (!text.ok) return text;
    if (role !== 'assistant') this.#out.push({ role: 'system', content: text.value.text });
    else this.#out.push({ role: 'assistant', content: text.value.text, ...(text.value.refusal ? { refusal: text.value.refusal } : {}) });
    return ok(undefined);
  }

  /** A call joins the assistant message just before it (its text, or the calls before it), else starts one. */
  call(c: ChatToolCall): void {
    this.#release();
    const last = this.#out.at(-1);
    if (last?.role === 'assistant') (last.tool_calls ??= []).push(c);
    else this.#out.push({ role: 'assistant', content: null, tool_calls: [c] });
  }

  toolResult(callId: string, output: string | readonly ContentPart[], at: string): Result<void> {
    if (typeof output === 'string') {
      this.#out.push({ role: 'tool', tool_call_id: callId, content: output });
      return ok(undefined);
    }
    const texts: string[] = [];
    for (const [i, p] of output.entries()) {
      if (p.type === 'input_text' || p.type === 'output_text') texts.push(p.text);
      else if (p.type === 'refusal') texts.push(p.refusal);
      else {
        const part = mediaPart(p, `${at}[${i}]`);
        if (!part.ok) return part;
        this.#carried.push(part.value);
        texts.push(TOOL_IMAGE_PLACEHOLDER);
      }
    }
    this.#out.push({ role: 'tool', tool_call_id: callId, content: texts.join('\n') });
    return ok(undefined);
  }

  /** The images tool outputs returned, as a user message once the tool messages are over. */
  #release(): void {
    if (this.#carried.length === 0) return;
    this.#out.push({ role: 'user', content: this.#carried });
    this.#carried = [];
  }
}

/** A user message's content: a string as it came, parts as chat parts (one text part as a string, which every server reads). */
function userContent(content: string | readonly ContentPart[], at: string): Result<string | ChatContentPart[]> {
  if (typeof content === 'string') return ok(content);
  const parts: ChatContentPart[] = [];
  for (const [i, p] of content.entries()) {
    if (p.type === 'input_text' || p.type === 'output_text') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'refusal') parts.push({ type: 'text', text: p.refusal });
    else {
      const part = mediaPart(p, `${at}[${i}]`);
      if (!part.ok) return part;
      parts.push(part.value);
    }
  }
  const only = parts.length === 1 ? parts[0] : undefined;
  return ok(only?.type === 'text' ? only.text : parts);
}

/** Text of an assistant, system or developer message: chat carries text only there (a refusal apart, for the assistant). */
function textOnly(content: string | readonly ContentPart[], at: string, role: string): Result<{ text: string; refusal?: string }> {
  if (typeof content === 'string') return ok({ text: content });
  const texts: string[] = [];
  let refusal: string | undefined;
  for (const [i, p] of content.entries()) {
    if (p.type === 'input_text' || p.type === 'output_text') texts.push(p.text);
    else if (p.type === 'refusal' && role === 'assistant') refusal = p.refusal;
    else return invalid(`${at}[${i}]`, `${at}[${i}]: a ${role} message passed to this model holds text only, not \`${p.type}\`.`);
  }
  return ok({ text: texts.join(''), ...(refusal !== undefined ? { refusal } : {}) });
}

/** An image or file part: by URL or inline data; a file_id names a file stored by OpenAI, which the backend cannot read. */
function mediaPart(p: Extract<ContentPart, { type: 'input_image' | 'input_file' }>, at: string): Result<ChatContentPart> {
  if (p.type === 'input_image') {
    if (p.image_url) return ok({ type: 'image_url', image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } });
    return invalid(
      `${at}.file_id`,
      `${at}: an image by file_id is stored by OpenAI's Files API; this model is served through chat completions. Send it as image_url (a URL or a data: URL).`,
    );
  }
  if (p.file_data) return ok({ type: 'file', file: { file_data: p.file_data, ...(p.filename ? { filename: p.filename } : {}) } });
  return invalid(at, `${at}: a file passed to this model must be inline (file_data); a file_id or file_url is not read by chat completions.`);
}
