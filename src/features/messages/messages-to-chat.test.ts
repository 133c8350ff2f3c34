import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { judge } from '../../../test/support/anthropic-sdk-judge.js';
import type { ChatRequest } from '../../model/chat-request.js';
import { TOOL_IMAGE_PLACEHOLDER } from './content-to-chat.js';
import { messagesToChat } from './messages-to-chat.js';

/** The translation of a request typed by the SDK's own params, which must succeed. */
function chat(params: Anthropic.MessageCreateParams | Record<string, unknown>): ChatRequest {
  const r = messagesToChat(params, 'upstream-model');
  if (!r.ok) throw new Error(`refused: ${r.error.error.message}`);
  return r.value;
}

function refusal(params: unknown): string {
  const r = messagesToChat(params, 'upstream-model');
  if (r.ok) throw new Error('translated, expected a refusal');
  expect(r.status).toBe(400);
  expect(r.error.type).toBe('error');
  expect(r.error.error.type).toBe('invalid_request_error');
  return r.error.error.message;
}

const base = { model: 'claude-public', max_tokens: 1024 } as const;

describe('messagesToChat: system, turns and content', () => {
  it('sets the upstream model and max_tokens, and puts a string system prompt first', () => {
    const out = chat({ ...base, system: 'Be terse.', messages: [{ role: 'user', content: 'Hi' }] });
    expect(out).toEqual({
      model: 'upstream-model',
      max_tokens: 1024,
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
      ],
    });
  });

  it('joins system text blocks and drops their cache_control', () => {
    const out = chat({
      ...base,
      system: [
        { type: 'text', text: 'You are Claude Code.' },
        { type: 'text', text: 'Follow the rules.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(out.messages[0]).toEqual({ role: 'system', content: 'You are Claude Code.\n\nFollow the rules.' });
    expect(JSON.stringify(out)).not.toContain('cache_control');
  });

  it('keeps a multi-turn conversation in order; one text block is a string, several are text parts', () => {
    const out = chat({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'one' }] },
        { role: 'assistant', content: 'two' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<reminder>' },
            { type: 'text', text: 'three', cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'two' },
      {
        role: 'user',
        content: [
          { type: 'text', text: '<reminder>' },
          { type: 'text', text: 'three' },
        ],
      },
    ]);
  });

  it('puts a role "system" turn inside messages[] as a system message in place', () => {
    const out = chat({
      ...base,
      system: 'top',
      messages: [
        { role: 'user', content: 'a' },
        { role: 'system', content: [{ type: 'text', text: 'mid-conversation instruction' }] },
        { role: 'user', content: 'b' },
      ],
    });
    expect(out.messages.map((m) => [m.role, m.content])).toEqual([
      ['system', 'top'],
      ['user', 'a'],
      ['system', 'mid-conversation instruction'],
      ['user', 'b'],
    ]);
  });

  it('turns images into image_url parts: base64 as a data URL, url as is', () => {
    const out = chat({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'text', text: 'What are these?' },
          ],
        },
      ],
    });
    expect(out.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        { type: 'text', text: 'What are these?' },
      ],
    });
  });

  it('turns a base64 PDF into a file part and a text document into text; refuses a PDF by URL and Files API ids', () => {
    const out = chat({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', title: 'spec.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'document', title: 'Notes', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
          ],
        },
      ],
    });
    expect(out.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'file', file: { filename: 'spec.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
        { type: 'text', text: 'Notes\n\nplain words' },
      ],
    });
    expect(refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://x/y.pdf' } }] }] })).toMatch(
      /^messages\.0\.content\.0\.source: a document by URL/,
    );
    expect(refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] })).toContain('file_id');
  });
});

describe('messagesToChat: tools', () => {
  const history: Anthropic.MessageParam[] = [
    { role: 'user', content: 'List the files, then read README.' },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should call two tools.', signature: 'c2lnbmF0dXJl' },
        { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
        { type: 'text', text: 'Looking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } },
        { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/r/README.md', limit: 10 } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md\nsrc' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: 'no such file' }], is_error: true },
        { type: 'text', text: 'Go on.' },
      ],
    },
  ];

  it('tool_use blocks become tool_calls with JSON arguments; thinking is dropped, never sent as text', () => {
    const out = chat({ ...base, messages: history });
    expect(out.messages[1]).toEqual({
      role: 'assistant',
      content: 'Looking.',
      tool_calls: [
        { id: 'toolu_1', type: 'function', function: { name: 'Bash', arguments: '{"command":"ls"}' } },
        { id: 'toolu_2', type: 'function', function: { name: 'Read', arguments: '{"file_path":"/r/README.md","limit":10}' } },
      ],
    });
    const wire = JSON.stringify(out);
    for (const hidden of ['I should call two tools', 'c2lnbmF0dXJl', 'ZW5jcnlwdGVk', 'thinking']) expect(wire).not.toContain(hidden);
  });

  it('a user turn of tool_results and text becomes tool messages in order, then the user message; is_error is said in the text', () => {
    const out = chat({ ...base, messages: history });
    expect(out.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: 'README.md\nsrc' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: no such file' },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('a turn of tool_results only is only tool messages; an assistant turn of tool_use only has content null', () => {
    const out = chat({
      ...base,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Noop', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
      ],
    });
    expect(out.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'Noop', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't', content: '' },
    ]);
  });

  it('an image in a tool result moves to the user message after the tool messages, leaving a placeholder', () => {
    const out = chat({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [
                { type: 'text', text: 'screenshot:' },
                { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
              ],
            },
          ],
        },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'tool', tool_call_id: 't', content: `screenshot:\n${TOOL_IMAGE_PLACEHOLDER}` },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/' } }] },
    ]);
  });

  it('an assistant turn of thinking only is left out', () => {
    const out = chat({
      ...base,
      messages: [
        { role: 'user', content: 'a' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] },
        { role: 'user', content: 'b' },
      ],
    });
    expect(out.messages).toEqual([
      { role: 'user', content: 'a' },
      { role: 'user', content: 'b' },
    ]);
  });

  it('tool definitions become functions (no input_schema: an empty object schema)', () => {
    const schema = { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] };
    const out = chat({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { name: 'Bash', description: 'Run a command', input_schema: schema as Anthropic.Tool.InputSchema, cache_control: { type: 'ephemeral' } },
        { type: 'custom', name: 'Noop', input_schema: { type: 'object' } },
      ],
    });
    expect(out.tools).toEqual([
      { type: 'function', function: { name: 'Bash', description: 'Run a command', parameters: schema } },
      { type: 'function', function: { name: 'Noop', parameters: { type: 'object' } } },
    ]);
    expect(chat({ ...base, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'Bare' }] }).tools?.[0]?.function.parameters).toEqual({
      type: 'object',
      properties: {},
    });
  });

  it('refuses tools Anthropic defines and runs, naming them', () => {
    const msg = refusal({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { name: 'Read', input_schema: { type: 'object' } },
        { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
      ],
    });
    expect(msg).toMatch(/^tools\.1: `web_search` \(type `web_search_20250305`\)/);
    expect(refusal({ ...base, messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'bash_20250124', name: 'bash' }] })).toContain('`bash_20250124`');
  });

  it.each([
    [{ type: 'auto' }, 'auto', undefined],
    [{ type: 'any' }, 'required', undefined],
    [{ type: 'none' }, 'none', undefined],
    [{ type: 'tool', name: 'Bash' }, { type: 'function', function: { name: 'Bash' } }, undefined],
    [{ type: 'auto', disable_parallel_tool_use: true }, 'auto', false],
    [{ type: 'any', disable_parallel_tool_use: true }, 'required', false],
    [{ type: 'tool', name: 'Bash', disable_parallel_tool_use: false }, { type: 'function', function: { name: 'Bash' } }, undefined],
  ] as const)('tool_choice %j → %j, parallel_tool_calls %s', (choice, expected, parallel) => {
    const out = chat({ ...base, messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'Bash', input_schema: { type: 'object' } }], tool_choice: choice });
    expect(out.tool_choice).toEqual(expected);
    expect(out.parallel_tool_calls).toBe(parallel);
  });

  it('sends no tool_choice or parallel_tool_calls without tools (chat refuses them)', () => {
    const out = chat({ ...base, messages: [{ role: 'user', content: 'x' }], tool_choice: { type: 'any', disable_parallel_tool_use: true } });
    expect(out).not.toHaveProperty('tool_choice');
    expect(out).not.toHaveProperty('parallel_tool_calls');
    expect(out).not.toHaveProperty('tools');
  });
});

describe('messagesToChat: parameters', () => {
  it('maps stop_sequences, temperature, top_p, a short user id and stream; drops top_k and the Anthropic-only members', () => {
    const out = chat({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      stop_sequences: ['\n\nHuman:', 'END'],
      temperature: 0.2,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: 'user-42' },
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 2000 },
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      output_config: { effort: 'high' },
      service_tier: 'auto',
      some_future_member: { x: 1 },
    });
    expect(out).toEqual({
      model: 'upstream-model',
      messages: [{ role: 'user', content: 'x' }],
      max_tokens: 1024,
      stop: ['\n\nHuman:', 'END'],
      temperature: 0.2,
      top_p: 0.9,
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('structured outputs (output_config.format, or the beta output_format) become a strict json_schema response_format; effort is dropped', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const expected = { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } };
    const ga = chat({ ...base, messages: [{ role: 'user', content: 'x' }], output_config: { effort: 'low', format: { type: 'json_schema', schema } } });
    expect(ga).toEqual({ model: 'upstream-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 1024, response_format: expected });
    const beta = chat({ ...base, messages: [{ role: 'user', content: 'x' }], output_format: { type: 'json_schema', schema } });
    expect(beta).toMatchObject({ response_format: expected });
    expect(refusal({ ...base, messages: [{ role: 'user', content: 'x' }], output_config: { format: { type: 'xml' } } })).toMatch(
      /^output_config\.format\.type: /,
    );
  });

  it("a schema OpenAI's strict mode would refuse (an optional property) goes as a non-strict json_schema, and its tool as a plain function", () => {
    const schema = { type: 'object', properties: { city: { type: 'string' }, note: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const out = chat({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      output_config: { format: { type: 'json_schema', schema } },
      tools: [{ name: 'loose_by_schema', input_schema: schema, strict: true }],
    });
    expect(out.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema, strict: false } });
    expect(out.tools).toEqual([{ type: 'function', function: { name: 'loose_by_schema', parameters: schema } }]);
  });

  it('a strict tool (inputs guaranteed to match its schema) is a strict function; other tools say nothing of it', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const out = chat({
      ...base,
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        { name: 'strict_one', input_schema: schema, strict: true },
        { name: 'loose_one', input_schema: schema, strict: false },
      ],
    });
    expect(out.tools).toEqual([
      { type: 'function', function: { name: 'strict_one', parameters: schema, strict: true } },
      { type: 'function', function: { name: 'loose_one', parameters: schema } },
    ]);
  });

  it("leaves out a user id longer than OpenAI's 64 characters (Claude Code's is)", () => {
    const user_id = `user_${'a'.repeat(64)}_account__session_0b1c`;
    expect(chat({ ...base, messages: [{ role: 'user', content: 'x' }], metadata: { user_id } })).not.toHaveProperty('user');
  });

  it('translates the body @anthropic-ai/sdk itself sends', async () => {
    const { client, sent } = judge(
      JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: 'end_turn', usage: {} }),
    );
    await client.messages.create({
      model: 'claude-public',
      max_tokens: 300,
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: { city: 'Oslo' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: '3°C' }] },
      ],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      tool_choice: { type: 'auto' },
    });
    expect(chat(sent[0] as Record<string, unknown>)).toEqual({
      model: 'upstream-model',
      max_tokens: 300,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
        },
        { role: 'tool', tool_call_id: 'toolu_9', content: '3°C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      tool_choice: 'auto',
    });
  });
});

describe('messagesToChat: invalid requests', () => {
  it.each([
    ['missing max_tokens', { model: 'm', messages: [{ role: 'user', content: 'x' }] }, /^max_tokens: /],
    ['zero max_tokens', { ...base, max_tokens: 0, messages: [{ role: 'user', content: 'x' }] }, /^max_tokens: /],
    ['empty messages', { ...base, messages: [] }, /^messages: /],
    ['a bad role', { ...base, messages: [{ role: 'tool', content: 'x' }] }, /^messages\.0\.role: /],
    ['no model', { max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, /^model: /],
    ['a text block without text', { ...base, messages: [{ role: 'user', content: [{ type: 'text' }] }] }, /^messages\.0\.content\.0\.text: /],
    ['a body that is not an object', 'hello', /./],
  ])('%s', (_name, body, message) => {
    expect(refusal(body)).toMatch(message);
  });

  it('names a content block type it cannot translate', () => {
    const msg = refusal({
      ...base,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'server_tool_use', id: 'x', name: 'web_search', input: {} },
          ],
        },
      ],
    });
    expect(msg).toBe('messages.0.content.1: content blocks of type `server_tool_use` cannot be passed to this model.');
  });

  it('refuses an empty turn, as Anthropic does, but for a final assistant turn', () => {
    for (const content of ['', []]) {
      expect(
        refusal({
          ...base,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'user', content },
          ],
        }),
      ).toBe('messages.1: all messages must have non-empty content except for the optional final assistant message');
    }
    expect(
      messagesToChat(
        {
          ...base,
          messages: [
            { role: 'user', content: 'a' },
            { role: 'assistant', content: [] },
          ],
        },
        'm',
      ).ok,
    ).toBe(true);
  });

  it('names a block type it cannot translate inside a tool_result too', () => {
    const searchResult = { type: 'search_result', source: 'https://example.com', title: 'T', content: [{ type: 'text', text: 'x' }] };
    const msg = refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [searchResult] }] }] });
    expect(msg).toBe('messages.0.content.0.content.0: content blocks of type `search_result` cannot be passed to this model.');
  });

  it('refuses blocks in the wrong turn', () => {
    expect(refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] })).toMatch(
      /user turn cannot hold a `tool_use`/,
    );
    expect(refusal({ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }] })).toMatch(/assistant turn cannot hold/);
    expect(refusal({ ...base, messages: [{ role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }] })).toMatch(
      /system turn holds text/,
    );
  });
});
