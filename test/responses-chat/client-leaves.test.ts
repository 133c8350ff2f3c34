// A client that leaves a translated Responses stream (openai SDK, aborted after the first text delta) while its chat
// backend keeps the stream open: past the read-on bound the gateway cuts the upstream request (the backend sees its
// connection closed: no hung upstream) and records the request aborted, its usage estimated; when the backend had
// reported usage in its chunks (vLLM's continuous usage), the record keeps that input count, only the output estimated.
import type { ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordingServer, startRecordingServer } from '../fakes/recording-json-server.js';
import { deadBaseURL, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { responsesChatManifests } from './manifests.js';

const INPUT_TOKENS = 1234;

/** A chat stream that sends its first words and never ends; `closed` counts the requests whose connection closed. */
async function hangingChat(reportsUsage: boolean): Promise<RecordingServer & { closed: () => number }> {
  let closed = 0;
  const server = await startRecordingServer((_req, res: ServerResponse) => {
    res.on('close', () => closed++);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const [i, content] of ['It is', ' sunny', ' in Paris'].entries()) {
      const usage = reportsUsage ? { usage: { prompt_tokens: INPUT_TOKENS, completion_tokens: i + 1 } } : {};
      res.write(
        `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content }, finish_reason: null }], ...usage })}\n\n`,
      );
    }
  });
  return Object.assign(server, { closed: () => closed });
}

let plain: Awaited<ReturnType<typeof hangingChat>>;
let counting: Awaited<ReturnType<typeof hangingChat>>;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  plain = await hangingChat(false);
  counting = await hangingChat(true);
  gw = await startGateway(
    responsesChatManifests(await deadBaseURL(), {
      'extra-hang': [['chatCompletions', plain.baseURL]],
      'extra-hang-usage': [['chatCompletions', counting.baseURL]],
    }),
    { usage: { readOn: { ms: 300, bytes: 1 << 20 } } },
  );
  client = new OpenAI({ apiKey: 'sk-alice-client-key-0123456789', baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await gw?.close();
  await Promise.all([plain, counting].map((u) => u?.close()));
});

/** Streams, leaves after the first text delta, and returns the request id. */
async function leaveAfterFirstDelta(model: string): Promise<string> {
  const ac = new AbortController();
  const { data: stream, response } = await client.responses.create({ model, input: 'Weather in Paris?', stream: true }, { signal: ac.signal }).withResponse();
  for await (const e of stream) if (e.type === 'response.output_text.delta') break;
  ac.abort();
  return response.headers.get('x-request-id')!;
}

describe('a client that leaves a translated Responses stream', () => {
  it('the upstream request is cut at the read-on bound, and the request recorded aborted, its usage estimated', async () => {
    const id = await leaveAfterFirstDelta('extra-hang');
    await waitUntil(() => plain.closed() === 1, 5_000, 'the upstream connection closed');
    const line = await gw.record(id);
    expect(line).toMatchObject({ family: 'responses', status: 200, aborted: true, estimated: true });
    expect(line['inputTokens']).toBeGreaterThan(0);
    expect(line['outputTokens']).toBeGreaterThan(0);
  });

  it('usage the backend reported in its chunks keeps its input count; the output is estimated', async () => {
    const id = await leaveAfterFirstDelta('extra-hang-usage');
    await waitUntil(() => counting.closed() === 1, 5_000, 'the upstream connection closed');
    const line = await gw.record(id);
    expect(line).toMatchObject({ family: 'responses', aborted: true, estimated: true, inputTokens: INPUT_TOKENS });
    expect(line['outputTokens']).toBeGreaterThanOrEqual(3);
  });
});
