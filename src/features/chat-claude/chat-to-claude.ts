// A chat completions request as a Messages API request, for a backend with `api: anthropic`. Pure.
// - system and developer messages → `system`, joined in order (one after the first turn too: Anthropic has system
//   prompts only before the conversation, so its text joins the others there, in order);
// - user and assistant content (text, images, a PDF), tool calls → tool_use, tool messages → tool_result in a user
//   turn; consecutive turns of one role merged (Anthropic wants them alternating);
// - tools, tool_choice (required → any), parallel_tool_calls: false → disable_parallel_tool_use;
// - max_completion_tokens ?? max_tokens → max_tokens, which Anthropic requires: the route's default otherwise;
// - temperature, top_p, stop → stop_sequences, json_schema response_format → output_config.format, user →
//   metadata.user_id, stream.
// Refused (400): n > 1, logprobs, audio output, prediction, web_search_options, legacy functions, custom tools.
// Dropped: frequency_penalty, presence_penalty, seed, logit_bias, store, metadata, service_tier, a json_object
// response_format (no schema to hold the answer to), and reasoning_effort (thinking blocks must be sent back on
// tool turns, which a chat message cannot carry).
import { invalid, ok, type Result } from '../../model/translation.js';
import { type ChatMessage, type ChatRequest, chatRequest, functionTool, type ToolChoice } from './chat-request-schema.js';
import { type ClaudeBlock, plainText, textBlocks, toolResultBlock, toolUseBlocks, userBlocks } from './claude-content.js';

interface ClaudeTurn {
  role: 'user' | 'assistant';
  content: ClaudeBlock[];
}

/** The Messages request (without `model`, set per backend). */
export interface ClaudeRequest {
  max_tokens: number;
  messages: ClaudeTurn[];
  system?: string;
  tools?: Record<string, unknown>[];
  tool_choice?: Record<string, unknown>;
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  output_config?: { format: { type: 'json_schema'; schema: Record<string, unknown> } };
  metadata?: { user_id: string };
  stream?: true;
}

export interface ClaudeTranslation {
  readonly request: ClaudeRequest;
  /** The client asked for a last chunk with the usage (stream_options.include_usage). */
  readonly includeUsage: boolean;
}

/** Anthropic's metadata.user_id is at most 256 characters: a longer `user` is not sent. */
const MAX_USER_ID = 256;

/** Members Anthropic has no counterpart for, refused rather than silently ignored: the client relies on them. */
function refusal(body: Record<string, unknown>, req: ChatRequest): Result<never> | undefined {
  if (typeof req.n === 'number' && req.n > 1) return invalid('n', "Only n=1 is supported by this model's backend.", 'unsupported_parameter');
  if (body['logprobs'] === true || (body['top_logprobs'] !== undefined && body['top_logprobs'] !== null))
    return invalid(body['logprobs'] === true ? 'logprobs' : 'top_logprobs', "logprobs are not supported by this model's backend.", 'unsupported_parameter');
  const modalities = body['modalities'];
  if ((body['audio'] !== undefined && body['audio'] !== null) || (Array.isArray(modalities) && modalities.includes('audio')))
    return invalid(body['audio'] ? 'audio' : 'modalities', "Audio output is not supported by this model's backend.", 'unsupported_parameter');
  for (const name of ['prediction', 'web_search_options', 'functions'])
    if (body[name] !== undefined && body[name] !== null) return invalid(name, `${name} is not supported by this model's backend.`, 'unsupported_parameter');
  return undefined;
}

export function chatToClaude(body: unknown, defaultMaxTokens: number): Result<ClaudeTranslation> {
  const parsed = chatRequest.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.length ? issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') : null;
    return invalid(param, `Invalid request${param ? ` at ${param}` : ''}: ${issue?.message ?? 'not a chat completions request'}.`);
  }
  const req = parsed.data;
  const refused = refusal(body as Record<string, unknown>, req);
  if (refused) return refused;

  const conversation = turns(req.messages);
  if (!conversation.ok) return conversation;
  const { system, messages } = conversation.value;
  if (messages.length === 0) return invalid('messages', 'The messages must hold at least one user or assistant message.');

  const out: ClaudeRequest = { max_tokens: req.max_completion_tokens ?? req.max_tokens ?? defaultMaxTokens, messages };
  if (out.max_tokens < 1) return invalid('max_completion_tokens', 'max_completion_tokens must be at least 1.');
  if (system.length > 0) out.system = system.join('\n\n');
  const tools = claudeTools(req);
  if (!tools.ok) return tools;
  if (tools.value.length > 0) {
    out.tools = tools.value;
    const choice = toolChoice(req.tool_choice ?? undefined, req.parallel_tool_calls === false);
    if (choice) out.tool_choice = choice;
  }
  if (req.temperature !== null && req.temperature !== undefined) out.temperature = req.temperature;
  if (req.top_p !== null && req.top_p !== undefined) out.top_p = req.top_p;
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  if (stop && stop.length > 0) out.stop_sequences = stop;
  const format = req.response_format;
  if (format?.type === 'json_schema' && format.json_schema.schema) out.output_config = { format: { type: 'json_schema', schema: format.json_schema.schema } };
  if (req.user && req.user.length <= MAX_USER_ID) out.metadata = { user_id: req.user };
  if (req.stream) out.stream = true;
  return ok({ request: out, includeUsage: req.stream === true && req.stream_options?.include_usage === true });
}

/** The conversation as Anthropic's alternating turns, and the system prompts in order. */
function turns(messages: readonly ChatMessage[]): Result<{ system: string[]; messages: ClaudeTurn[] }> {
  const system: string[] = [];
  const out: ClaudeTurn[] = [];
  const push = (role: ClaudeTurn['role'], blocks: ClaudeBlock[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const [i, m] of messages.entries()) {
    const at = `messages[${i}]`;
    switch (m.role) {
      case 'system':
      case 'developer': {
        const text = plainText(m.content);
        if (text !== '') system.push(text);
        break;
      }
      case 'user': {
        const blocks = userBlocks(m.content, at);
        if (!blocks.ok) return blocks;
        push('user', blocks.value);
        break;
      }
      case 'assistant': {
        if (m.function_call !== undefined && m.function_call !== null)
          return invalid(`${at}.function_call`, "The legacy function_call is not supported by this model's backend; use tool_calls.", 'unsupported_parameter');
        const calls = toolUseBlocks(m.tool_calls ?? [], at);
        if (!calls.ok) return calls;
        push('assistant', [...textBlocks(m.content), ...textBlocks(m.refusal), ...calls.value]);
        break;
      }
      case 'tool':
        push('user', [toolResultBlock(m.tool_call_id, m.content)]);
        break;
      case 'function':
        return invalid(
          `${at}.role`,
          "Messages of the legacy role 'function' are not supported by this model's backend; use tool messages.",
          'unsupported_parameter',
        );
    }
  }
  return ok({ system, messages: out });
}

function claudeTools(req: ChatRequest): Result<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const [i, t] of (req.tools ?? []).entries()) {
    const parsed = functionTool.safeParse(t);
    if (!parsed.success)
      return invalid(`tools[${i}]`, `Only function tools are supported by this model's backend (got ${JSON.stringify(t.type)}).`, 'unsupported_tool');
    const f = parsed.data.function;
    const tool: Record<string, unknown> = { name: f.name, input_schema: f.parameters ?? { type: 'object', properties: {} } };
    if (f.description) tool['description'] = f.description;
    if (f.strict === true) tool['strict'] = true;
    out.push(tool);
  }
  return ok(out);
}

function toolChoice(choice: ToolChoice | undefined, serial: boolean): Record<string, unknown> | undefined {
  if (choice === 'none') return { type: 'none' };
  const base: Record<string, unknown> | undefined =
    choice === undefined
      ? undefined
      : choice === 'auto'
        ? { type: 'auto' }
        : choice === 'required'
          ? { type: 'any' }
          : { type: 'tool', name: choice.function.name };
  if (!serial) return base;
  return { ...(base ?? { type: 'auto' }), disable_parallel_tool_use: true };
}
