// What a whole chat completion and a chat stream share on the way to a Response: the output item shapes and
// their ids, the status a finish_reason means, a custom tool call's input, the usage object, and the Response
// object itself, built in one place so that a streamed answer's final response equals the whole answer's. Pure.
import type { Usage } from '../../model/usage.js';
import type { ResponseContext } from './response-context.js';

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: never[];
}
interface RefusalPart {
  type: 'refusal';
  refusal: string;
}
export interface MessageItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: (OutputText | RefusalPart)[];
}
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: never[];
  content: { type: 'reasoning_text'; text: string }[];
}
export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  /** The namespace of a tool offered inside one (`name` is then the tool's own name). */
  namespace?: string;
  arguments: string;
  status: ItemStatus;
}
export interface CustomToolCallItem {
  type: 'custom_tool_call';
  id: string;
  call_id: string;
  name: string;
  namespace?: string;
  input: string;
  /** Not in the openai SDK's type, but the Vercel AI SDK's output_item.done schema requires `completed`. */
  status: 'in_progress' | 'completed';
}
export type OutputItem = MessageItem | ReasoningItem | FunctionCallItem | CustomToolCallItem;

interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

type ResponseStatus = 'in_progress' | 'completed' | 'incomplete';

/** The members the translation sets; the echoed request members (and their defaults) are beside them. */
export type ResponseObject = {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  error: null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: OutputItem[];
  usage: ResponseUsage | null;
} & { [member: string]: unknown };

/** What OpenAI answers for a request member the client did not send. */
const DEFAULTS: Readonly<Record<string, unknown>> = {
  instructions: null,
  max_output_tokens: null,
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  store: true,
  temperature: 1,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: 1,
  truncation: 'disabled',
  user: null,
  metadata: {},
};

/** How the answer ended: a finish_reason (undefined while streaming). */
export function responseObject(ctx: ResponseContext, finish: string | undefined, output: OutputItem[], usage: Usage | undefined): ResponseObject {
  const reason = incompleteReason(finish);
  const status: ResponseStatus = finish === undefined ? 'in_progress' : reason ? 'incomplete' : 'completed';
  const core = {
    id: ctx.id,
    object: 'response' as const,
    created_at: ctx.createdAt,
    status,
    error: null,
    incomplete_details: reason ? { reason } : null,
    model: ctx.model,
    output,
    usage: finish === undefined ? null : responseUsage(usage),
  };
  // Echoed members over the defaults, and the translation's own members over both, in OpenAI's order.
  return Object.assign({ ...core, ...DEFAULTS, ...ctx.echo }, core);
}

/** OpenAI's incomplete_details reason for a chat finish_reason that cut the answer short. */
export function incompleteReason(finish: string | undefined): 'max_output_tokens' | 'content_filter' | undefined {
  if (finish === 'length') return 'max_output_tokens';
  if (finish === 'content_filter') return 'content_filter';
  return undefined;
}

function responseUsage(u: Usage | undefined): ResponseUsage | null {
  if (!u) return null;
  return {
    input_tokens: u.inputTokens,
    // The SDK's type requires cache_write_tokens: a chat backend's (or Anthropic's, through chat), else 0.
    input_tokens_details: { cached_tokens: u.cachedInputTokens, cache_write_tokens: u.cacheWriteInputTokens ?? 0 },
    output_tokens: u.outputTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.inputTokens + u.outputTokens,
  };
}

/** An output item's id: unique per response, since it carries the response id's hex and the item's place. */
export function itemId(ctx: ResponseContext, prefix: 'rs' | 'msg' | 'fc' | 'ctc' | 'call', outputIndex: number): string {
  return `${prefix}_${ctx.id.replace(/^resp_/, '')}_${outputIndex}`;
}

const ITEM_ID = /^(?:rs|msg|fc|ctc|call)_([0-9a-f]{32})_\d+$/;
const RESPONSE_ID = /^resp_[0-9a-f]{32}$/;

/** An id of the shape the translation mints for a Response (sealed ids have another), so one the gateway may have kept. */
export function isMintedResponseId(id: string): boolean {
  return RESPONSE_ID.test(id);
}

/** The id of the response an output item id of itemId's came from; undefined for any other id. */
export function responseIdOfItem(id: string): string | undefined {
  const hex = ITEM_ID.exec(id)?.[1];
  return hex === undefined ? undefined : `resp_${hex}`;
}

/**
 * A custom tool's input: the string member `input` of the call's JSON arguments (the function tool the request
 * direction made of it has that one parameter), else the raw arguments text, so that nothing the model wrote is lost.
 */
export function customInput(args: string): string {
  try {
    const v: unknown = JSON.parse(args);
    if (v && typeof v === 'object' && typeof (v as Record<string, unknown>)['input'] === 'string') return (v as Record<string, string>)['input']!;
  } catch {
    // Not JSON: the raw text is the input.
  }
  return args;
}

/** The model's reasoning in a chat message or delta: `reasoning_content` (vLLM, DeepSeek) or `reasoning` (llama.cpp, OpenRouter). */
export function reasoningText(m: Record<string, unknown>): string {
  const r = m['reasoning_content'] ?? m['reasoning'];
  return typeof r === 'string' ? r : '';
}
