import { describe, expect, it } from 'vitest';
import { TOOL_IMAGE_PLACEHOLDER } from './input-to-chat.js';
import { responsesToChat } from './responses-to-chat.js';

function chat(body: Record<string, unknown>) {
  const r = responsesToChat({ model: 'm', ...body });
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
}

function refusal(body: Record<string, unknown>) {
  const r = responsesToChat({ model: 'm', ...body });
  if (r.ok) throw new Error('translated');
  return { status: r.error.status, ...r.error.toBody().error };
}

describe('responsesToChat', () => {
  it('puts instructions first, a string input as the user message, and maps the sampling members', () => {
    const { chat: c, echo } = chat({
      instructions: 'Be terse.',
      input: 'Hi',
      max_output_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'low', summary: 'auto' },
      user: 'u1',
      metadata: { a: 'b' },
      store: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: 'k',
      stream: true,
    });
    expect(c).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 50,
      temperature: 0.2,
      top_p: 0.9,
      reasoning_effort: 'low',
      user: 'u1',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(echo).toMatchObject({
      instructions: 'Be terse.',
      max_output_tokens: 50,
      metadata: { a: 'b' },
      store: true,
      reasoning: { effort: 'low', summary: 'auto' },
    });
    expect(echo).not.toHaveProperty('input');
  });

  it('maps the roles (developer to system) and content parts, one text part as a string', () => {
    const { chat: c } = chat({
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'dev rules' }] },
        { role: 'system', content: 'sys' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'low' },
          ],
        },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'only text' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hello', annotations: [] }] },
      ],
    });
    expect(c.messages).toEqual([
      { role: 'system', content: 'dev rules' },
      { role: 'system', content: 'sys' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
        ],
      },
      { role: 'user', content: 'only text' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  it('merges consecutive calls (and the text before them) into one assistant turn, drops reasoning, and answers each call with a tool message', () => {
    const { chat: c } = chat({
      input: [
        { role: 'user', content: 'run two' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'think' }], encrypted_content: 'gAAA' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Running.' }] },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"ls"}' },
        { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
        { type: 'custom_tool_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'Done' }] },
      ],
    });
    expect(c.messages).toEqual([
      { role: 'user', content: 'run two' },
      {
        role: 'assistant',
        content: 'Running.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'exec_command', arguments: '{"cmd":"ls"}' } },
          { id: 'call_2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
      { role: 'tool', tool_call_id: 'call_2', content: 'Done' },
    ]);
  });

  it('carries an image a tool returned in a user message after the tool messages', () => {
    const { chat: c } = chat({
      input: [
        { type: 'function_call', call_id: 'c1', name: 'view_image', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_image', image_url: 'https://x/i.png' }] },
        { role: 'user', content: 'what is it?' },
      ],
    });
    expect(c.messages.slice(1)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: TOOL_IMAGE_PLACEHOLDER },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/i.png' } }] },
      { role: 'user', content: 'what is it?' },
    ]);
  });

  it('makes function and custom tools chat functions, and names the custom ones', () => {
    const t = chat({
      input: 'x',
      tools: [
        { type: 'function', name: 'exec_command', description: 'Runs', strict: false, parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
        { type: 'function', name: 'strict_one', strict: true, parameters: { type: 'object', properties: {} } },
        { type: 'custom', name: 'apply_patch', description: 'Patches', format: { type: 'grammar', syntax: 'lark', definition: 'start: x' } },
      ],
      tool_choice: { type: 'custom', name: 'apply_patch' },
      parallel_tool_calls: false,
    });
    expect(t.chat.tools).toEqual([
      { type: 'function', function: { name: 'exec_command', description: 'Runs', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } },
      { type: 'function', function: { name: 'strict_one', parameters: { type: 'object', properties: {} }, strict: true } },
      {
        type: 'function',
        function: {
          name: 'apply_patch',
          description: 'Patches',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: 'The input follows this lark grammar:\nstart: x' } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect(t.chat.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    expect(t.chat.parallel_tool_calls).toBe(false);
    expect([...t.customTools]).toEqual(['apply_patch']);
  });

  it('sends tool_choice and parallel_tool_calls only with tools', () => {
    const { chat: c } = chat({ input: 'x', tool_choice: 'auto', parallel_tool_calls: true });
    expect(c).not.toHaveProperty('tool_choice');
    expect(c).not.toHaveProperty('parallel_tool_calls');
  });

  it('maps text.format to response_format', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(chat({ input: 'x', text: { format: { type: 'json_schema', name: 'out', schema, strict: true } } }).chat.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'out', schema, strict: true },
    });
    expect(chat({ input: 'x', text: { format: { type: 'json_object' } } }).chat.response_format).toEqual({ type: 'json_object' });
    expect(chat({ input: 'x', text: { format: { type: 'text' } } }).chat).not.toHaveProperty('response_format');
  });

  it('refuses built-in tools by their type', () => {
    for (const type of ['web_search', 'file_search', 'computer_use_preview', 'code_interpreter', 'mcp', 'image_generation', 'local_shell']) {
      const e = refusal({ input: 'x', tools: [{ type: 'function', name: 'f' }, { type }] });
      expect(e).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'tools[1].type' });
      expect(e.message).toContain(`\`${type}\``);
    }
  });

  it("flattens a namespace: each tool inside a chat function named namespace__name, the namespace's description before its own", () => {
    const spawn = {
      type: 'function',
      name: 'spawn_agent',
      description: 'Spawn one.',
      parameters: { type: 'object', properties: { task: { type: 'string' } } },
    };
    const patch = { type: 'custom', name: 'patch' };
    const t = chat({
      input: 'x',
      tools: [
        { type: 'function', name: 'exec_command' },
        { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [spawn, patch] },
      ],
    });
    expect(t.chat.tools).toEqual([
      { type: 'function', function: { name: 'exec_command', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'multi_agent_v1__spawn_agent', description: 'Sub-agents.\n\nSpawn one.', parameters: spawn.parameters } },
      {
        type: 'function',
        function: {
          name: 'multi_agent_v1__patch',
          description: 'Sub-agents.',
          parameters: {
            type: 'object',
            properties: { input: { type: 'string', description: 'The raw input of the tool.' } },
            required: ['input'],
            additionalProperties: false,
          },
        },
      },
    ]);
    expect([...t.customTools]).toEqual(['multi_agent_v1__patch']);
    expect([...t.namespaced]).toEqual([
      ['multi_agent_v1__spawn_agent', { namespace: 'multi_agent_v1', name: 'spawn_agent' }],
      ['multi_agent_v1__patch', { namespace: 'multi_agent_v1', name: 'patch' }],
    ]);
  });

  it('a call item with a namespace goes upstream under the namespaced name, whole or custom', () => {
    const messages = chat({
      input: [
        { type: 'function_call', call_id: 'c1', name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: '{"task":"t"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'spawned' },
        { type: 'custom_tool_call', call_id: 'c2', name: 'patch', namespace: 'tools', input: 'p' },
        { type: 'custom_tool_call_output', call_id: 'c2', output: 'done' },
        { type: 'function_call', call_id: 'c3', name: 'exec_command', namespace: null, arguments: '{}' },
      ],
    }).chat.messages;
    expect(messages.map((m) => (m.role === 'assistant' ? m.tool_calls?.map((c) => [c.function.name, c.function.arguments]) : m.role))).toEqual([
      [['multi_agent_v1__spawn_agent', '{"task":"t"}']],
      'tool',
      [['tools__patch', '{"input":"p"}']],
      'tool',
      [['exec_command', '{}']],
    ]);
  });

  it('refuses a namespaced name that is no chat function name or that two tools would share, naming the tool', () => {
    const long = refusal({
      input: 'x',
      tools: [{ type: 'namespace', name: 'n'.repeat(40), description: 'd', tools: [{ type: 'function', name: 'f'.repeat(30) }] }],
    });
    expect(long).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'tools[0].tools[0].name' });
    expect(long.message).toContain('not a valid function name');
    const dotted = refusal({ input: 'x', tools: [{ type: 'namespace', name: 'crm.v1', description: 'd', tools: [{ type: 'function', name: 'f' }] }] });
    expect(dotted.param).toBe('tools[0].tools[0].name');
    const shared = refusal({
      input: 'x',
      tools: [
        { type: 'function', name: 'crm__find' },
        { type: 'namespace', name: 'crm', description: 'd', tools: [{ type: 'function', name: 'find' }] },
      ],
    });
    expect(shared).toMatchObject({ status: 400, param: 'tools[1].tools[0].name' });
    expect(shared.message).toContain('`crm__find`');
    // A tool of another type inside a namespace is refused by its type, where it is.
    expect(refusal({ input: 'x', tools: [{ type: 'namespace', name: 'n', description: 'd', tools: [{ type: 'web_search' }] }] }).param).toBe(
      'tools[0].tools[0].type',
    );
  });

  it('refuses what needs state stored upstream, saying to send the whole conversation', () => {
    for (const [member, value] of [
      ['previous_response_id', 'resp_1'],
      ['conversation', 'conv_1'],
      ['prompt', { id: 'pmpt_1' }],
      ['background', true],
    ] as const) {
      const e = refusal({ input: 'x', [member]: value });
      expect(e).toMatchObject({ status: 400, type: 'invalid_request_error', param: member });
      expect(e.message).toContain('chat completions');
      expect(e.message).toContain('whole conversation');
    }
    expect(chat({ input: 'x', background: false, previous_response_id: null }).chat.messages).toHaveLength(1);
  });

  it('refuses item references, file ids, unknown items and content parts, and bad members, naming where', () => {
    expect(refusal({ input: [{ type: 'item_reference', id: 'msg_1' }] })).toMatchObject({ status: 400, param: 'input[0]' });
    // A reference to a reasoning item is dropped, as the item would be.
    expect(
      chat({
        input: [
          { role: 'user', content: 'x' },
          { type: 'item_reference', id: 'rs_1' },
        ],
      }).chat.messages,
    ).toEqual([{ role: 'user', content: 'x' }]);
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] })).toMatchObject({
      param: 'input[0].content[0].file_id',
    });
    expect(refusal({ input: [{ type: 'web_search_call', id: 'ws_1' }] }).message).toContain('`web_search_call`');
    expect(refusal({ input: [{ role: 'user', content: [{ type: 'input_audio', data: 'x' }] }] }).message).toContain('`input_audio`');
    expect(refusal({ input: [{ role: 'tutor', content: 'x' }] }).param).toBe('input[0].role');
    expect(refusal({ input: 'x', temperature: 'hot' }).param).toBe('temperature');
    expect(refusal({ input: [] }).param).toBe('input');
  });
});
