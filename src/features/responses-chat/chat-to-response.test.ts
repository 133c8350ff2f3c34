import type { Response, ResponseUsage } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../model/errors.js';
import { chatToResponse, NotAChatCompletion } from './chat-to-response.js';
import { expectedResponse, HEX, testContext as ctx } from './test-context.js';

const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 100 },
  completion_tokens_details: { reasoning_tokens: 12 },
};

function completion(message: Record<string, unknown>, finish: string | null, usage: unknown = USAGE): Record<string, unknown> {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
    ...(usage === null ? {} : { usage }),
  };
}

const RESPONSE_USAGE = {
  input_tokens: 120,
  input_tokens_details: { cached_tokens: 100, cache_write_tokens: 0 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 150,
};

/** The Response for these members, with the usage of USAGE unless given. */
function expected(status: string, incomplete: unknown, output: unknown[], usage: unknown = RESPONSE_USAGE): Record<string, unknown> {
  return expectedResponse(status, output, usage, incomplete);
}

const message = (text: string, n: number, status = 'completed') => ({
  type: 'message',
  id: `msg_${HEX}_${n}`,
  status,
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

describe('chatToResponse', () => {
  it('a text answer: one completed message item, usage in the Responses shape, and the gateway Usage', () => {
    const { response, usage } = chatToResponse(completion({ content: 'Hello.' }, 'stop'), ctx);
    expect(response).toEqual(expected('completed', null, [message('Hello.', 0)]));
    expect(usage).toEqual({ inputTokens: 120, outputTokens: 30, cachedInputTokens: 100, reasoningTokens: 12, estimated: false });
  });

  it('has the shape of the openai SDK Response type (tsc checks the assignment)', () => {
    const { response } = chatToResponse(
      completion({ content: 'Hi', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] }, 'tool_calls'),
      ctx,
    );
    type Core = Pick<Response, 'id' | 'object' | 'created_at' | 'status' | 'error' | 'incomplete_details' | 'model' | 'output'>;
    const typed: Core & { usage: ResponseUsage | null } = response;
    expect(typed.output).toHaveLength(2);
  });

  it('reasoning (reasoning_content, or reasoning as llama.cpp spells it) comes first, as a reasoning item', () => {
    for (const key of ['reasoning_content', 'reasoning']) {
      const { response } = chatToResponse(completion({ [key]: 'Think.', content: 'Answer.' }, 'stop'), ctx);
      expect(response.output).toEqual([
        { type: 'reasoning', id: `rs_${HEX}_0`, summary: [], content: [{ type: 'reasoning_text', text: 'Think.' }] },
        message('Answer.', 1),
      ]);
    }
  });

  it('tool calls: one function_call item each after the text, call ids kept, a missing one minted', () => {
    const calls = [
      { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ];
    const { response } = chatToResponse(completion({ content: 'Checking.', tool_calls: calls }, 'tool_calls'), ctx);
    expect(response).toEqual(
      expected('completed', null, [
        message('Checking.', 0),
        { type: 'function_call', id: `fc_${HEX}_1`, call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' },
        { type: 'function_call', id: `fc_${HEX}_2`, call_id: `call_${HEX}_2`, name: 'get_time', arguments: '{}', status: 'completed' },
      ]),
    );
  });

  it("a custom tool's call is a custom_tool_call with the `input` string, or the raw arguments when there is none", () => {
    const calls = [
      { id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch\\n*** End Patch"}' } },
      { id: 'call_q', type: 'function', function: { name: 'apply_patch', arguments: 'not json' } },
      { id: 'call_r', type: 'function', function: { name: 'apply_patch', arguments: '{"input":3}' } },
    ];
    const { response } = chatToResponse(completion({ content: null, tool_calls: calls }, 'tool_calls'), ctx);
    expect(response.output).toEqual([
      { type: 'custom_tool_call', id: `ctc_${HEX}_0`, call_id: 'call_p', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch', status: 'completed' },
      { type: 'custom_tool_call', id: `ctc_${HEX}_1`, call_id: 'call_q', name: 'apply_patch', input: 'not json', status: 'completed' },
      { type: 'custom_tool_call', id: `ctc_${HEX}_2`, call_id: 'call_r', name: 'apply_patch', input: '{"input":3}', status: 'completed' },
    ]);
  });

  it('a call of a tool inside a namespace: its own name and `namespace`, as a function_call or a custom_tool_call', () => {
    const { response } = chatToResponse(
      completion(
        {
          content: null,
          tool_calls: [
            { id: 'call_s', type: 'function', function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"t"}' } },
            { id: 'call_p', type: 'function', function: { name: 'tools__patch', arguments: '{"input":"p"}' } },
          ],
        },
        'tool_calls',
      ),
      ctx,
    );
    expect(response.output).toEqual([
      {
        type: 'function_call',
        id: `fc_${HEX}_0`,
        call_id: 'call_s',
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"task":"t"}',
        status: 'completed',
      },
      { type: 'custom_tool_call', id: `ctc_${HEX}_1`, call_id: 'call_p', name: 'patch', namespace: 'tools', input: 'p', status: 'completed' },
    ]);
  });

  it('a refusal is a refusal content part', () => {
    const { response } = chatToResponse(completion({ content: null, refusal: 'I cannot help with that.' }, 'stop'), ctx);
    expect(response.output).toEqual([
      { type: 'message', id: `msg_${HEX}_0`, status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
    ]);
  });

  it('a length cut: incomplete, reason max_output_tokens, the last item incomplete', () => {
    const { response } = chatToResponse(completion({ content: 'Half a sen' }, 'length'), ctx);
    expect(response).toEqual(expected('incomplete', { reason: 'max_output_tokens' }, [message('Half a sen', 0, 'incomplete')]));
  });

  it('a content_filter finish: incomplete, reason content_filter', () => {
    const { response } = chatToResponse(completion({ content: '' }, 'content_filter'), ctx);
    expect(response).toEqual(expected('incomplete', { reason: 'content_filter' }, []));
  });

  it('no usage in the completion: usage null and no gateway Usage; a missing finish_reason is a whole answer', () => {
    const { response, usage } = chatToResponse(completion({ content: 'Hi' }, null, null), ctx);
    expect(response).toEqual(expected('completed', null, [message('Hi', 0)], null));
    expect(usage).toBeUndefined();
  });

  it("echoes the request's members over the defaults, never over the translation's own", () => {
    const echo = {
      instructions: 'Be brief.',
      store: false,
      tools: [{ type: 'function', name: 'f' }],
      temperature: 0.2,
      id: 'resp_evil',
      output: [],
      status: 'x',
    };
    const { response } = chatToResponse(completion({ content: 'Hi' }, 'stop'), { ...ctx, echo });
    expect(response).toEqual({
      ...expected('completed', null, [message('Hi', 0)]),
      instructions: 'Be brief.',
      store: false,
      tools: echo.tools,
      temperature: 0.2,
    });
  });

  it('a body that is not a chat completion throws NotAChatCompletion, a 502 in OpenAI shape, keeping the upstream message', () => {
    for (const body of [{ object: 'list', data: [] }, 'text', null, { choices: [] }, { choices: [{ index: 0 }] }]) {
      expect(() => chatToResponse(body, ctx)).toThrow(NotAChatCompletion);
    }
    try {
      chatToResponse({ error: { message: 'model overloaded', type: 'server_error' } }, ctx);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(GatewayError);
      const e = err as GatewayError;
      expect(e.status).toBe(502);
      expect(e.toBody()).toEqual({
        error: { message: 'The upstream answered with an error: model overloaded', type: 'server_error', param: null, code: 'upstream_error' },
      });
    }
  });
});
