import { describe, expect, it } from 'vitest';
import type { StreamProgress } from '../../dataplane/exchange/transform.js';
import { testContext } from './test-context.js';
import { translatedResponse, translatedResponseStream } from './translated-response.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\r\n\r\n`;
const STREAM =
  ': keep-alive comment\n\n' +
  chunk({ role: 'assistant', content: '' }) +
  chunk({ content: 'Héllo' }) +
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin' } }] }) +
  chunk({ tool_calls: [{ index: 0, function: { arguments: ' Patch"}' } }] }) +
  chunk({}, 'tool_calls') +
  `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } } })}\n\n` +
  'data: [DONE]\n\n';

/** The handler fed `bytes` in pieces of `size` bytes (UTF-8 and CRLF split anywhere), as the relay does. */
function translate(bytes: Buffer, size: number) {
  const progress: StreamProgress = { lastSequenceNumber: undefined };
  const h = translatedResponseStream(testContext, progress);
  let out = '';
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) parts.push(h.onData(bytes.subarray(i, i + size)));
  parts.push(h.flush() ?? Buffer.alloc(0));
  out = Buffer.concat(parts).toString('utf8');
  return { out, usage: h.onEnd(), progress };
}

describe('translatedResponseStream', () => {
  it('gives the same events however the chat stream is cut into chunks, and returns the usage the backend reported', () => {
    const bytes = Buffer.from(STREAM);
    const whole = translate(bytes, bytes.length);
    const events = whole.out.split('\n\n').filter(Boolean);
    expect(events[0]).toMatch(/^event: response.created\n/);
    expect(events.at(-1)).toMatch(/^event: response.completed\n/);
    expect(whole.out).toContain('"type":"custom_tool_call"');
    expect(whole.out).toContain('Héllo');
    expect(whole.usage).toMatchObject({ inputTokens: 11, cachedInputTokens: 3, outputTokens: 7, estimated: false });
    expect(whole.progress.lastSequenceNumber).toBe(events.length - 1);
    for (const size of [1, 2, 3, 7, 64]) expect(translate(bytes, size).out, `chunks of ${size}`).toBe(whole.out);
  });

  it('tells the sequence so far in the progress while the stream runs, for an error event that may end it', () => {
    const progress: StreamProgress = { lastSequenceNumber: undefined };
    const h = translatedResponseStream(testContext, progress);
    const out = h.onData(Buffer.from(chunk({ role: 'assistant', content: '' }) + chunk({ content: 'Hi' }))).toString();
    const numbers = [...out.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]));
    expect(numbers.length).toBeGreaterThan(2);
    expect(progress.lastSequenceNumber).toBe(Math.max(...numbers));
  });
});

describe('translatedResponse', () => {
  it('makes a whole completion a Response and returns its usage', () => {
    const h = translatedResponse(testContext);
    const body = JSON.stringify({
      id: 'c1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 5, completion_tokens: 2, completion_tokens_details: { reasoning_tokens: 1 } },
    });
    expect(h.onData(Buffer.from(body.slice(0, 10)))).toHaveLength(0);
    h.onData(Buffer.from(body.slice(10)));
    const response = JSON.parse(h.flush()!.toString()) as Record<string, unknown>;
    expect(response).toMatchObject({ id: testContext.id, object: 'response', status: 'completed', model: 'public-model' });
    expect(response).not.toHaveProperty('output_text');
    expect(h.onEnd()).toMatchObject({ inputTokens: 5, outputTokens: 2, reasoningTokens: 1 });
  });

  it('fails a body that is no chat completion with a 502 the client is answered with', () => {
    const h = translatedResponse(testContext);
    h.onData(Buffer.from('<html>bad gateway</html>'));
    expect(() => h.flush()).toThrow(expect.objectContaining({ status: 502 }));
  });
});
