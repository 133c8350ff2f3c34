import { describe, expect, it } from 'vitest';
import { CONTENT_CHARS, inputContent, OutputCollector } from './content.js';

const body = (doc: unknown) => Buffer.from(JSON.stringify(doc));
const parsed = (text: string | undefined): unknown => JSON.parse(text!);

describe('inputContent: the conventions messages from a request', () => {
  it('turns chat messages into role and parts: system in the history, images, tool calls and their results', () => {
    const input = inputContent(
      body({
        model: 'm',
        messages: [
          { role: 'system', content: 'be brief' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"at":"cat"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'a cat' },
        ],
      }),
      [],
    )!;
    expect(parsed(input.messages)).toEqual([
      { role: 'system', parts: [{ type: 'text', content: 'be brief' }] },
      {
        role: 'user',
        parts: [
          { type: 'text', content: 'what is this?' },
          { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'AAAA' },
          { type: 'uri', modality: 'image', uri: 'https://example.com/cat.png' },
        ],
      },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'call_1', name: 'look', arguments: { at: 'cat' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: 'a cat' }] },
    ]);
    expect(input.systemInstructions).toBeUndefined();
  });

  it('takes Responses instructions apart as system instructions, and its input items in order', () => {
    expect(inputContent(body({ model: 'm', input: 'hi', instructions: 'be kind' }), [])).toEqual({
      messages: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'hi' }] }]),
      systemInstructions: JSON.stringify([{ type: 'text', content: 'be kind' }]),
    });
    const items = inputContent(
      body({
        model: 'm',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
          { type: 'function_call', call_id: 'c1', name: 'weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'c1', output: 'rain' },
        ],
      }),
      [],
    )!;
    expect(parsed(items.messages)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'weather?' }] },
      { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', parts: [{ type: 'tool_call_response', id: 'c1', response: 'rain' }] },
    ]);
  });

  it('gives nothing for a body without messages or input', () => {
    expect(inputContent(body({ model: 'm' }), [])).toBeUndefined();
    expect(inputContent(Buffer.from('not json'), [])).toBeUndefined();
  });

  it('stays valid JSON within CONTENT_CHARS: long contents are cut, a long history keeps its first messages', () => {
    const long = inputContent(body({ input: 'x'.repeat(CONTENT_CHARS * 2) }), [])!.messages!;
    expect(long.length).toBeLessThanOrEqual(CONTENT_CHARS);
    const [message] = parsed(long) as { parts: { content: string }[] }[];
    expect(message!.parts[0]!.content).toMatch(/^x+…\[truncated]$/);
    expect(message!.parts[0]!.content.length).toBeGreaterThan(CONTENT_CHARS - 100);

    const many = Array.from({ length: 2000 }, (_, i) => ({ role: 'user', content: `message ${i}` }));
    const history = inputContent(body({ messages: many }), [])!.messages!;
    expect(history.length).toBeLessThanOrEqual(CONTENT_CHARS);
    const kept = parsed(history) as { parts: { content: string }[] }[];
    expect(kept.length).toBeGreaterThan(10);
    expect(kept[0]!.parts[0]!.content).toMatch(/^(message 0|…\[truncated])/);
  });

  it('masks secrets before cutting, so no part of one is left at the cut', () => {
    const secret = 'sk-secret-0123456789abcdef';
    for (let at = CONTENT_CHARS - 200; at < CONTENT_CHARS; at += 7) {
      const out = inputContent(body({ input: `${'x'.repeat(at)}${secret}${'y'.repeat(CONTENT_CHARS)}` }), [secret])!.messages!;
      expect(out).not.toContain(secret.slice(0, 10));
    }
    expect(inputContent(body({ instructions: `use ${secret}`, input: secret }), [secret])).toEqual({
      messages: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: '*'.repeat(secret.length) }] }]),
      systemInstructions: JSON.stringify([{ type: 'text', content: `use ${'*'.repeat(secret.length)}` }]),
    });
  });
});

describe('OutputCollector: the conventions output messages from an answer', () => {
  const streamed = (events: unknown[], chunk = 7, eol = '\n'): OutputCollector => {
    const c = new OutputCollector(true);
    const text = `${events.map((e) => `data: ${JSON.stringify(e)}${eol}${eol}`).join('')}data: [DONE]${eol}${eol}`;
    const bytes = Buffer.from(text); // cut in bytes: a character may be split across chunks
    for (let i = 0; i < bytes.length; i += chunk) c.push(bytes.subarray(i, i + chunk));
    return c;
  };

  it.each(['\r\n', '\r'])('reads a stream whose lines end in %j, a character split across chunks included', (eol) => {
    const events = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: 'héllo 模型' } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ];
    for (const chunk of [1, 2, 5, 1000]) {
      expect(parsed(streamed(events, chunk, eol).text([]))).toEqual([
        { role: 'assistant', parts: [{ type: 'text', content: 'héllo 模型' }], finish_reason: 'stop' },
      ]);
    }
  });

  it("joins a chat stream's deltas across chunk boundaries, tool call arguments included, with the finish reason", () => {
    const c = streamed([
      { choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
      { choices: [{ index: 0, delta: { content: 'lo' } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'call_9', function: { name: 'f', arguments: '{"a"' } }] } }] },
      { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }, finish_reason: 'tool_calls' }] },
    ]);
    expect(parsed(c.text([]))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Hello' },
          { type: 'tool_call', id: 'call_9', name: 'f', arguments: { a: 1 } },
        ],
        finish_reason: 'tool_call',
      },
    ]);
  });

  it('reads a Responses stream: text deltas, function calls, and the status it ended with', () => {
    const c = streamed([
      { type: 'response.output_text.delta', delta: 'Hi' },
      { type: 'response.output_item.done', item: { type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' } },
      { type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
    ]);
    expect(parsed(c.text([]))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Hi' },
          { type: 'tool_call', id: 'c2', name: 'g', arguments: {} },
        ],
        finish_reason: 'length',
      },
    ]);
  });

  it('says error for a stream that ended without a reason (cut)', () => {
    const c = streamed([{ choices: [{ index: 0, delta: { content: 'par' } }] }]);
    expect(parsed(c.text([]))).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'par' }], finish_reason: 'error' }]);
  });

  it("reads a JSON answer's choices, or a Responses answer's output, and masks the given secrets", () => {
    const chat = new OutputCollector(false);
    chat.push(Buffer.from('{"choices":[{"message":{"role":"assistant","content":"key sk-secret-123"},"finish_reason":"length"}]}'));
    expect(parsed(chat.text(['sk-secret-123']))).toEqual([
      { role: 'assistant', parts: [{ type: 'text', content: 'key *************' }], finish_reason: 'length' },
    ]);
    const responses = new OutputCollector(false);
    responses.push(
      body({
        object: 'response',
        status: 'completed',
        output: [
          { type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }] },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
        ],
      }),
    );
    expect(parsed(responses.text([]))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'reasoning', content: 'thinking' },
          { type: 'text', content: 'done' },
        ],
        finish_reason: 'stop',
      },
    ]);
  });

  it('gives nothing for an answer without content', () => {
    expect(new OutputCollector(true).text([])).toBeUndefined();
    const c = new OutputCollector(false);
    c.push(Buffer.from('{"data":[1]}'));
    expect(c.text([])).toBeUndefined();
  });

  it('keeps a long stream within CONTENT_CHARS, still reading how it ended', () => {
    const events = Array.from({ length: 2 * (CONTENT_CHARS / 5) }, () => ({ choices: [{ index: 0, delta: { content: 'word ' } }] }));
    const c = streamed([...events, { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }], 4096);
    const out = c.text([])!;
    expect(out.length).toBeLessThanOrEqual(CONTENT_CHARS);
    const [message] = parsed(out) as { parts: { content: string }[]; finish_reason: string }[];
    expect(message!.finish_reason).toBe('stop');
    expect(message!.parts[0]!.content.startsWith('word word')).toBe(true);
    expect(message!.parts[0]!.content.endsWith('…[truncated]')).toBe(true);
  });
});
