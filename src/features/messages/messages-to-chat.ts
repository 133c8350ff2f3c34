// An Anthropic Messages request as an OpenAI chat completions request, for a backend that speaks only chat.
// Pure. What has no chat equivalent follows one rule each (docs/coding-agents.md, "What is translated"):
// - thinking / redacted_thinking blocks: dropped (content-to-chat.ts says why);
// - tools Anthropic defines and runs (a `type` such as bash_20250124 or web_search_20250305): refused, naming
//   the tool — dropping one would let the model answer as if the client had not asked for it;
// - top_k, thinking, context_management, output_config's effort, cache_control, service_tier and any unknown member:
//   dropped, since each only tunes how Anthropic serves the request and chat has no field that means the same;
// - structured outputs (output_config.format, output_format; a tool's strict): a json_schema response_format (a
//   function), strict when OpenAI's strict mode takes the schema (strict-schema.ts), since dropping them would let
//   the model answer what the client's schema does not allow.
import type { z } from 'zod';
import type { Translated } from '../../model/anthropic-errors.js';
import { invalidRequest } from './anthropic-errors.js';
import { strictCompatible } from './strict-schema.js';
import type { ChatMessage, ChatRequest, ChatTool, ChatToolChoice } from '../../model/chat-request.js';
import { assistantTurn, systemText, systemTurn, userTurn } from './content-to-chat.js';
import { type MessagesRequest, messagesRequest } from './messages-request-schema.js';

/** OpenAI refuses a longer `user`; Claude Code's metadata.user_id is longer, and is then left out. */
const MAX_USER_LENGTH = 64;

/**
 * The chat completions request for a Messages request body. `upstreamModel` is the backend's name for the model.
 * `max_tokens` stays `max_tokens`: vLLM, Ollama and OpenAI's non-reasoning models all read it, while Ollama
 * ignores `max_completion_tokens` (OpenAI's reasoning models want the latter; such a backend needs its own rule).
 */
export function messagesToChat(body: unknown, upstreamModel: string): Translated<ChatRequest> {
  const parsed = messagesRequest.safeParse(body);
  if (!parsed.success) return invalidRequest(describeIssue(parsed.error.issues[0], body));
  const req = parsed.data;

  const messages: ChatMessage[] = [];
  const system = req.system === undefined ? '' : systemText(req.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const [i, m] of req.messages.entries()) {
    const at = `messages.${i}`;
    // Anthropic refuses an empty turn; left out, it would change whose turn the backend sees next.
    if (m.content.length === 0 && !(m.role === 'assistant' && i === req.messages.length - 1)) {
      return invalidRequest(`${at}: all messages must have non-empty content except for the optional final assistant message`);
    }
    const turn = m.role === 'user' ? userTurn(m.content, at) : m.role === 'assistant' ? assistantTurn(m.content, at) : systemTurn(m.content, at);
    if (!turn.ok) return turn;
    messages.push(...turn.value);
  }

  const tools = chatTools(req);
  if (!tools.ok) return tools;
  const out: ChatRequest = { model: upstreamModel, messages, max_tokens: req.max_tokens };
  if (tools.value.length > 0) {
    out.tools = tools.value;
    // Chat refuses tool_choice and parallel_tool_calls without tools, so they go only with them.
    const choice = req.tool_choice;
    if (choice) out.tool_choice = chatToolChoice(choice);
    if (choice && choice.type !== 'none' && choice.disable_parallel_tool_use) out.parallel_tool_calls = false;
  }
  if (req.stop_sequences && req.stop_sequences.length > 0) out.stop = req.stop_sequences;
  if (req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== undefined) out.top_p = req.top_p;
  const format = req.output_config?.format ?? req.output_format;
  if (format) out.response_format = { type: 'json_schema', json_schema: { name: 'output', schema: format.schema, strict: strictCompatible(format.schema) } };
  const user = req.metadata?.user_id;
  if (user && user.length <= MAX_USER_LENGTH) out.user = user;
  if (req.stream) {
    out.stream = true;
    out.stream_options = { include_usage: true }; // the usage chunk is where message_delta's counts come from
  }
  return { ok: true, value: out };
}

/** A count_tokens request: a Messages request without max_tokens. */
const countTokensRequest = messagesRequest.omit({ max_tokens: true });

/**
 * Why a count_tokens body is not a Messages request the translation takes (as messagesToChat would refuse it,
 * max_tokens aside); undefined when it is. Counting one that create would refuse would tell the client nothing true.
 */
export function countTokensRefusal(body: unknown): string | undefined {
  const parsed = countTokensRequest.safeParse(body);
  return parsed.success ? undefined : describeIssue(parsed.error.issues[0], body);
}

function chatTools(req: MessagesRequest): Translated<ChatTool[]> {
  const tools: ChatTool[] = [];
  for (const [i, t] of (req.tools ?? []).entries()) {
    if (t.type && t.type !== 'custom') {
      return invalidRequest(
        `tools.${i}: \`${t.name}\` (type \`${t.type}\`) is a tool Anthropic defines; this model is served through chat completions, which has no equivalent. Define it as a custom tool with an input_schema.`,
      );
    }
    const parameters = t.input_schema ?? { type: 'object', properties: {} };
    // strict: the input must match the schema, which chat's strict function calling holds a backend to as well.
    const strict = t.strict === true && strictCompatible(parameters);
    const fn = { name: t.name, ...(t.description ? { description: t.description } : {}), parameters, ...(strict ? { strict: true as const } : {}) };
    tools.push({ type: 'function', function: fn });
  }
  return { ok: true, value: tools };
}

function chatToolChoice(c: NonNullable<MessagesRequest['tool_choice']>): ChatToolChoice {
  switch (c.type) {
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool':
      return { type: 'function', function: { name: c.name } };
  }
}

/**
 * One validation issue as a sentence in Anthropic's style (`messages.0.role: …`). A union's failure is described
 * by its branch that got furthest, and an unknown content block by its type.
 */
function describeIssue(issue: z.core.$ZodIssue | undefined, body: unknown, base: readonly PropertyKey[] = []): string {
  if (!issue) return 'The request body is not a valid Messages request.';
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union') {
    if (issue.errors.length === 0 && path.at(-1) === 'type') {
      const value = valueAt(body, path);
      const where = path.slice(0, -1).join('.');
      if (path.includes('content') && typeof value === 'string') return `${where}: content blocks of type \`${value}\` cannot be passed to this model.`;
    }
    const branch = [...issue.errors].sort((a, b) => depth(b) - depth(a))[0];
    if (branch?.[0]) return describeIssue(branch[0], body, path);
  }
  return `${path.length > 0 ? `${path.join('.')}: ` : ''}${issue.message}`;
}

function depth(issues: readonly z.core.$ZodIssue[]): number {
  return issues[0]?.path.length ?? 0;
}

function valueAt(body: unknown, path: readonly PropertyKey[]): unknown {
  let v = body;
  for (const key of path) v = v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[key] : undefined;
  return v;
}
