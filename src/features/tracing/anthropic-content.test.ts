// Anthropic's Messages API prompts and answers as recorded content (--trace-content), through content.ts as the
// tracing transform uses it: the request as a native backend gets it, the answer as a client gets it (JSON, or SSE
// events with their `event:` lines, cut at every few bytes).
import { describe, expect, it } from 'vitest';
import { CONTENT_CHARS, inputContent, OutputCollector } from './content.js';

const body = (doc: unknown) => Buffer.from(JSON.stringify(doc));
const parsed = (text: string | undefined): unknown => JSON.parse(text!);

/** The collector after an Anthropic stream of these events, pushed `chunk` bytes at a time. */
function streamed(events: { type: string }[], chunk = 7): OutputCollector {
  const c = new OutputCollector(true);
  const bytes = Buffer.from(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
  for (let i = 0; i < bytes.length; i += chunk) c.push(bytes.subarray(i, i + chunk));
  return c;
}

const start = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null, usage: {} } };
const blockStart = (index: number, content_block: object) => ({ type: 'content_block_start', index, content_block });
const delta = (index: number, d: object) => ({ type: 'content_block_delta', index, delta: d });
const stop = (reason: string) => ({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 9 } });

describe('a Messages API request as recorded content', () => {
  it('system apart as system instructions; text, images, documents, thinking, tool calls and results as parts', () => {
    const input = inputContent(
      body({
        model: 'm',
        max_tokens: 64,
        system: [{ type: 'text', text: 'You forecast weather.', cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Paris?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Call the tool.', signature: 'EqQBsig==' },
              { type: 'tool_use', id: 'toolu_1', name: 'now', input: { city: 'Paris' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'rain' }] }] },
          { role: 'system', content: 'Be brief.' },
        ],
      }),
      [],
      true,
    )!;
    expect(parsed(input.systemInstructions)).toEqual([{ type: 'text', content: 'You forecast weather.' }]);
    expect(parsed(input.messages)).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'Paris?' },
          { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'iVBOR' },
          { type: 'uri', modality: 'document', uri: 'https://example.com/a.pdf' },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'Call the tool.' },
          { type: 'tool_call', id: 'toolu_1', name: 'now', arguments: { city: 'Paris' } },
        ],
      },
      { role: 'user', parts: [{ type: 'tool_call_response', id: 'toolu_1', response: 'rain' }] },
      { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
    ]);
    expect(input.messages).not.toContain('EqQBsig==');
  });

  it('a string system prompt, masked like every other content', () => {
    const secret = 'sk-ant-secret-0123456789';
    expect(inputContent(body({ system: `key ${secret}`, messages: [{ role: 'user', content: secret }] }), [secret], true)).toEqual({
      messages: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: '*'.repeat(secret.length) }] }]),
      systemInstructions: JSON.stringify([{ type: 'text', content: `key ${'*'.repeat(secret.length)}` }]),
    });
  });
});

describe('a Messages API answer as recorded content', () => {
  it('a whole answer: its blocks as parts, its stop reason in the conventions’ words, masked', () => {
    const c = new OutputCollector(false);
    c.push(
      body({
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'text', text: 'key sk-x-123' },
          { type: 'tool_use', id: 'toolu_2', name: 'forecast', input: { days: 2 } },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 1, output_tokens: 2 },
      }),
    );
    expect(parsed(c.text(['sk-x-123']))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'key ********' },
          { type: 'tool_call', id: 'toolu_2', name: 'forecast', arguments: { days: 2 } },
        ],
        finish_reason: 'tool_call',
      },
    ]);
  });

  it('a stream: text, thinking and tool input joined from their deltas whatever the chunking; no signature', () => {
    const events = [
      start,
      { type: 'ping' },
      blockStart(0, { type: 'thinking', thinking: '' }),
      delta(0, { type: 'thinking_delta', thinking: 'Look it ' }),
      delta(0, { type: 'thinking_delta', thinking: 'up.' }),
      delta(0, { type: 'signature_delta', signature: 'EqQBsig==' }),
      { type: 'content_block_stop', index: 0 },
      blockStart(1, { type: 'text', text: '' }),
      delta(1, { type: 'text_delta', text: 'Checking ' }),
      delta(1, { type: 'text_delta', text: 'Oslo 模型.' }),
      blockStart(2, { type: 'tool_use', id: 'toolu_3', name: 'now', input: {} }),
      delta(2, { type: 'input_json_delta', partial_json: '{"city":' }),
      delta(2, { type: 'input_json_delta', partial_json: '"Oslo"}' }),
      blockStart(3, { type: 'tool_use', id: 'toolu_4', name: 'clock', input: {} }),
      stop('tool_use'),
      { type: 'message_stop' },
    ];
    for (const chunk of [1, 3, 7, 10_000]) {
      const text = streamed(events, chunk).text([])!;
      expect(text).not.toContain('EqQBsig');
      expect(parsed(text), `chunks of ${chunk}`).toEqual([
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', content: 'Look it up.' },
            { type: 'text', content: 'Checking Oslo 模型.' },
            { type: 'tool_call', id: 'toolu_3', name: 'now', arguments: { city: 'Oslo' } },
            { type: 'tool_call', id: 'toolu_4', name: 'clock', arguments: {} },
          ],
          finish_reason: 'tool_call',
        },
      ]);
    }
  });

  it('a stream cut before its message_delta (or ended by an error event) finished with error', () => {
    const events = [start, blockStart(0, { type: 'text', text: '' }), delta(0, { type: 'text_delta', text: 'par' })];
    const error = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    for (const c of [streamed(events), streamed([...events, error])])
      expect(parsed(c.text([]))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'par' }], finish_reason: 'error' }]);
  });

  it('max_tokens is length; a long stream stays within CONTENT_CHARS and still reads how it ended', () => {
    const words = Array.from({ length: 2 * (CONTENT_CHARS / 5) }, () => delta(0, { type: 'text_delta', text: 'word ' }));
    const out = streamed([start, blockStart(0, { type: 'text', text: '' }), ...words, stop('max_tokens')], 4096).text([])!;
    expect(out.length).toBeLessThanOrEqual(CONTENT_CHARS);
    const [message] = parsed(out) as { parts: { content: string }[]; finish_reason: string }[];
    expect(message!.finish_reason).toBe('length');
    expect(message!.parts[0]!.content).toMatch(/^word word.*…\[truncated]$/);
  });
});
