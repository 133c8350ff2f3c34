// A Responses API request as a chat completions request, for a backend that speaks chat only (api:
// chatCompletions). Pure. Input items: input-to-chat.ts; tools: tools-to-chat.ts. The top-level members:
// - instructions: a system message before the input;
// - max_output_tokens: max_tokens, which vLLM, llama.cpp, TGI, Ollama and OpenAI's non-reasoning models all read
//   (Ollama ignores max_completion_tokens);
// - reasoning.effort: reasoning_effort; text.format: response_format; user (else safety_identifier): user;
// - store is accepted and ignored (the backend stores nothing, and the client is not told otherwise: a stored
//   response's follow-ups answer 404); metadata, include, prompt_cache_key, truncation and the like are dropped;
// - conversation, prompt (stored prompts) and background: true need state the Responses API keeps upstream, which a
//   chat server has not: refused, so the client sends the whole conversation instead; so is previous_response_id,
//   which the transform has replaced by the conversation it names when the gateway kept it (kept-conversation.ts).
import type { ChatMessage, ChatRequest, ChatResponseFormat } from '../../model/chat-request.js';
import { inputToChat } from './input-to-chat.js';
import type { NamespacedName } from './namespaced-tools.js';
import { type ResponsesRequest, responsesRequest } from './responses-request-schema.js';
import { toolChoiceToChat, toolsToChat } from './tools-to-chat.js';
import { invalid, ok, type Result } from '../../model/translation.js';

export interface ChatTranslation {
  /** The chat request, its `model` the client's (set per backend when sent). */
  readonly chat: ChatRequest;
  /** Chat function names of the client's custom tools, whose calls are answered as custom_tool_call items. */
  readonly customTools: ReadonlySet<string>;
  /** Chat function names of the tools inside the client's namespaces, and the namespace and name each is. */
  readonly namespaced: ReadonlyMap<string, NamespacedName>;
  /** The request members a Response echoes, as the client sent them. */
  readonly echo: Readonly<Record<string, unknown>>;
}

/** Members a Response object repeats from its request (when the request had them). */
const ECHOED = [
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'max_output_tokens',
  'reasoning',
  'text',
  'store',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'service_tier',
  'truncation',
  'top_logprobs',
  'max_tool_calls',
] as const;

/** Members that need what the Responses API stores upstream. */
const STATEFUL = ['previous_response_id', 'conversation', 'prompt'] as const;

export function responsesToChat(body: unknown): Result<ChatTranslation> {
  const parsed = responsesRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.join('.');
    return invalid(where || null, `${where ? `${where}: ` : ''}${issue.message}`);
  }
  const req = parsed.data;
  const stateful = STATEFUL.find((m) => req[m] !== undefined && req[m] !== null);
  if (stateful) return needsState(stateful);
  if (req.background === true) return needsState('background');

  const messages: ChatMessage[] = [];
  if (req.instructions) messages.push({ role: 'system', content: req.instructions });
  const input = inputToChat(req.input as Parameters<typeof inputToChat>[0]);
  if (!input.ok) return input;
  messages.push(...input.value);
  if (messages.length === 0) return invalid('input', 'input: the request has no input to answer.');

  const tools = toolsToChat(req.tools);
  if (!tools.ok) return tools;
  const chat: ChatRequest = { model: req.model ?? '', messages };
  if (tools.value.tools.length > 0) {
    chat.tools = tools.value.tools;
    // Chat refuses tool_choice and parallel_tool_calls without tools, so they go only with them.
    const choice = toolChoiceToChat(req.tool_choice);
    if (!choice.ok) return choice;
    if (choice.value !== undefined) chat.tool_choice = choice.value;
    if (typeof req.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = req.parallel_tool_calls;
  }
  if (typeof req.max_output_tokens === 'number') chat.max_tokens = req.max_output_tokens;
  if (typeof req.temperature === 'number') chat.temperature = req.temperature;
  if (typeof req.top_p === 'number') chat.top_p = req.top_p;
  if (req.reasoning?.effort) chat.reasoning_effort = req.reasoning.effort;
  const format = responseFormat(req.text?.format);
  if (format) chat.response_format = format;
  const user = req.user ?? req.safety_identifier;
  if (user) chat.user = user;
  if (req.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true }; // the usage chunk is where response.completed's usage comes from
  }
  return ok({ chat, customTools: tools.value.customTools, namespaced: tools.value.namespaced, echo: echoOf(body as Record<string, unknown>) });
}

function responseFormat(f: NonNullable<ResponsesRequest['text']>['format']): ChatResponseFormat | undefined {
  if (!f || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  const { name, schema, strict, description } = f;
  return { type: 'json_schema', json_schema: { name, schema, ...(typeof strict === 'boolean' ? { strict } : {}), ...(description ? { description } : {}) } };
}

function echoOf(body: Record<string, unknown>): Record<string, unknown> {
  const echo: Record<string, unknown> = {};
  for (const m of ECHOED) if (body[m] !== undefined) echo[m] = body[m];
  return echo;
}

function needsState(member: string) {
  const what = member === 'background' ? 'background: true' : member;
  return invalid(
    member,
    `${what} needs a response stored by the Responses API; this model's backend speaks chat completions and stores nothing. Send the whole conversation in input (and store: false).`,
    'unsupported_parameter',
  );
}
