// A chat completions answer (not streamed) as a Response object. Pure. Output order: the model's reasoning
// (`reasoning_content` / `reasoning`) as a reasoning item, its text and refusal as one message item, then one item
// per tool call: a function_call, or a custom_tool_call for a name among the client's custom tools (a tool inside
// a namespace under its own name, with `namespace`). A length or
// content_filter finish makes the response `incomplete`, and the item being written when it stopped (the last) too.
// A body that is not a chat completion (no choices, no message) throws NotAChatCompletion, a GatewayError: the
// wiring answers it as it answers any GatewayError, a 502 in OpenAI's shape (`err.status`, `err.toBody()`). The
// Response is handed to `ctx.keep` (kept for later requests), the one thing done besides translating.
import { providerError } from '../../dataplane/upstream/provider-error.js';
import { GatewayError } from '../../model/errors.js';
import type { Usage } from '../../model/usage.js';
import { chatUsage } from '../messages/answer-parts.js';
import { callItemName } from './namespaced-tools.js';
import type { ResponseContext } from './response-context.js';
import { isRecord } from '../../model/translation.js';
import { customInput, itemId, type OutputItem, type ResponseObject, reasoningText, responseObject } from './response-parts.js';

export class NotAChatCompletion extends GatewayError {
  constructor(body: unknown) {
    const upstream = providerError(502, body)?.message;
    super(502, upstream ? `The upstream answered with an error: ${upstream}` : 'The upstream answer is not a chat completion.', { code: 'upstream_error' });
    this.name = 'NotAChatCompletion';
  }
}

/** The Response for a whole chat completion, and the usage it reported (undefined when it reported none). */
export function chatToResponse(completion: unknown, ctx: ResponseContext): { response: ResponseObject; usage: Usage | undefined } {
  const c = isRecord(completion) ? completion : {};
  const choice = Array.isArray(c['choices']) ? c['choices'][0] : undefined;
  const message = isRecord(choice) ? choice['message'] : undefined;
  if (!isRecord(choice) || !isRecord(message)) throw new NotAChatCompletion(completion);

  const output: OutputItem[] = [];
  const reasoning = reasoningText(message);
  if (reasoning) output.push({ type: 'reasoning', id: itemId(ctx, 'rs', output.length), summary: [], content: [{ type: 'reasoning_text', text: reasoning }] });
  const text = typeof message['content'] === 'string' ? message['content'] : '';
  const refusal = typeof message['refusal'] === 'string' ? message['refusal'] : '';
  if (text || refusal) {
    output.push({
      type: 'message',
      id: itemId(ctx, 'msg', output.length),
      status: 'completed',
      role: 'assistant',
      content: [
        ...(text ? [{ type: 'output_text' as const, text, annotations: [], logprobs: [] }] : []),
        ...(refusal ? [{ type: 'refusal' as const, refusal }] : []),
      ],
    });
  }
  for (const call of Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : []) {
    if (!isRecord(call)) continue;
    const fn = isRecord(call['function']) ? call['function'] : {};
    const name = typeof fn['name'] === 'string' ? fn['name'] : '';
    const args = typeof fn['arguments'] === 'string' ? fn['arguments'] : '';
    const index = output.length;
    const callId = typeof call['id'] === 'string' && call['id'] ? call['id'] : itemId(ctx, 'call', index);
    output.push(
      ctx.customTools.has(name)
        ? {
            type: 'custom_tool_call',
            id: itemId(ctx, 'ctc', index),
            call_id: callId,
            ...callItemName(name, ctx.namespaced),
            input: customInput(args),
            status: 'completed',
          }
        : { type: 'function_call', id: itemId(ctx, 'fc', index), call_id: callId, ...callItemName(name, ctx.namespaced), arguments: args, status: 'completed' },
    );
  }

  // A backend that leaves finish_reason out has still finished: the answer is whole.
  const finish = typeof choice['finish_reason'] === 'string' ? choice['finish_reason'] : 'stop';
  const usage = chatUsage(c['usage']);
  const response = responseObject(ctx, finish, output, usage);
  const last = output.at(-1);
  if (response.status === 'incomplete' && last && (last.type === 'message' || last.type === 'function_call')) last.status = 'incomplete';
  ctx.keep?.(response);
  return { response, usage };
}
