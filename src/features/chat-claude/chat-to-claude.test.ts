import { describe, expect, it } from 'vitest';
import { chatToClaude } from './chat-to-claude.js';

const ok = (body: Record<string, unknown>, max = 4096) => {
  const r = chatToClaude({ model: 'm', ...body }, max);
  if (!r.ok) throw new Error(`refused: ${r.error.message}`);
  return r.value;
};
const refused = (body: Record<string, unknown>) => {
  const r = chatToClaude({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }, 4096);
  if (r.ok) throw new Error('translated');
  return { status: r.error.status, ...r.error.toBody().error };
};

describe('chatToClaude', () => {
  it('joins system and developer messages in order, a late one too, and merges consecutive turns', () => {
    const { request } = ok({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'developer', content: [{ type: 'text', text: 'Speak French.' }] },
        { role: 'user', content: 'Hello' },
        { role: 'user', content: [{ type: 'text', text: 'Again' }] },
        { role: 'system', content: 'Late rule.' },
        { role: 'assistant', content: 'Bonjour' },
      ],
    });
    expect(request.system).toBe('Be brief.\n\nSpeak French.\n\nLate rule.');
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hello' },
          { type: 'text', text: 'Again' },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
    ]);
  });

  it('carries tool calls as tool_use and consecutive tool messages as one user turn of tool_result blocks', () => {
    const { request } = ok({
      messages: [
        { role: 'user', content: 'Weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call.2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
        { role: 'tool', tool_call_id: 'call.2', content: [{ type: 'text', text: '21C' }] },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
    });
    expect(request.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
      ],
    });
    expect(request.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_1', content: '18C' },
        { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '21C' }] },
      ],
    });
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } },
    ]);
    expect(request.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
  });

  it('maps tool_choice none, auto and a named function; drops tool_choice without tools', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const messages = [{ role: 'user', content: 'x' }];
    expect(ok({ messages, tools, tool_choice: 'none' }).request.tool_choice).toEqual({ type: 'none' });
    expect(ok({ messages, tools, tool_choice: 'auto' }).request.tool_choice).toEqual({ type: 'auto' });
    expect(ok({ messages, tools, tool_choice: { type: 'function', function: { name: 'f' } } }).request.tool_choice).toEqual({ type: 'tool', name: 'f' });
    expect(ok({ messages, tools, parallel_tool_calls: false }).request.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(ok({ messages, tools }).request.tools![0]).toEqual({ name: 'f', input_schema: { type: 'object', properties: {} } });
    expect(ok({ messages, tool_choice: 'required' }).request.tool_choice).toBeUndefined();
  });

  it('carries images (data URL → base64, https → url) and an inline PDF', () => {
    const { request } = ok({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
            { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          ],
        },
      ],
    });
    expect(request.messages[0]!.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
    ]);
  });

  it('takes max_completion_tokens, else max_tokens, else the route default; carries sampling, stop, format, user, stream', () => {
    const messages = [{ role: 'user', content: 'x' }];
    expect(ok({ messages, max_completion_tokens: 100, max_tokens: 50 }).request.max_tokens).toBe(100);
    expect(ok({ messages, max_tokens: 50 }).request.max_tokens).toBe(50);
    expect(ok({ messages }, 2048).request.max_tokens).toBe(2048);
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    const t = ok({
      messages,
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema, strict: true } },
      user: 'u-1',
      stream: true,
      stream_options: { include_usage: true },
      seed: 7,
      frequency_penalty: 1,
      presence_penalty: 1,
      logit_bias: { 1: 2 },
      store: true,
      metadata: { a: 'b' },
      service_tier: 'auto',
      reasoning_effort: 'high',
    });
    expect(t.request).toEqual({
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      output_config: { format: { type: 'json_schema', schema } },
      metadata: { user_id: 'u-1' },
      stream: true,
    });
    expect(t.includeUsage).toBe(true);
    expect(ok({ messages, stream: true }).includeUsage).toBe(false);
  });

  it('refuses what Anthropic cannot carry with a 400 naming the member', () => {
    expect(refused({ n: 2 })).toMatchObject({ status: 400, param: 'n', type: 'invalid_request_error' });
    expect(refused({ logprobs: true })).toMatchObject({ param: 'logprobs' });
    expect(refused({ top_logprobs: 2 })).toMatchObject({ param: 'top_logprobs' });
    expect(refused({ modalities: ['text', 'audio'] })).toMatchObject({ param: 'modalities' });
    expect(refused({ audio: { voice: 'alloy', format: 'mp3' } })).toMatchObject({ param: 'audio' });
    expect(refused({ prediction: { type: 'content', content: 'x' } })).toMatchObject({ param: 'prediction' });
    expect(refused({ web_search_options: {} })).toMatchObject({ param: 'web_search_options' });
    expect(refused({ tools: [{ type: 'custom', custom: { name: 'x' } }] })).toMatchObject({ param: 'tools[0]' });
    expect(refused({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] })).toMatchObject({
      param: 'messages[0].content[0]',
    });
    expect(refused({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_data: 'data:text/plain;base64,aGk=' } }] }] })).toMatchObject({
      param: 'messages[0].content[0]',
    });
    expect(refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] })).toMatchObject({
      param: 'messages[0].content[0]',
    });
    expect(
      refused({ messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] }] }),
    ).toMatchObject({ param: 'messages[0].tool_calls[0].function.arguments' });
    expect(refused({ messages: [{ role: 'system', content: 'only a system prompt' }] })).toMatchObject({ param: 'messages' });
    expect(refused({ messages: [] })).toMatchObject({ status: 400, param: 'messages' });
  });
});
