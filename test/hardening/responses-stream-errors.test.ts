// When a /v1/responses stream must end in an error the gateway writes itself (an upstream error after keep-alives
// committed the 200, an upstream cut mid-stream), the event is the Responses API's own error event: `type:
// "error"`, a `sequence_number` continuing the upstream's, `code`, `message`, `param`, and the nested `error` object
// the openai SDKs read. Real clients must see the error for what it is (status, retryable), not a parse failure.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createOpenAI } from '@ai-sdk/openai';
import { streamText } from 'ai';
import OpenAI, { APIError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, keepAliveRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { recordingFetch } from '../helpers/recording-fetch.js';

let upstream: RecordingUpstream;
let gw: TestGateway;
beforeAll(async () => {
  upstream = await startRecordingUpstream();
  gw = await startGateway(standardManifests(upstream.baseURL, keepAliveRoute(upstream.baseURL)));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
afterEach(() => {
  upstream.override('/v1/responses', undefined);
  upstream.override('/v1/chat/completions', undefined);
});

/** The data of the event stream's error event. */
function errorEvent(text: string): any {
  const m = /event: error\ndata: (.*)\n\n/.exec(text);
  expect(m, text).not.toBeNull();
  return JSON.parse(m![1]!);
}

/** An upstream that answers 429 only once told to (after the gateway has committed the stream). */
function rateLimitedWhen(ready: Promise<void>) {
  return async (_req: IncomingMessage, res: ServerResponse) => {
    await ready;
    const body = JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
    res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '1', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}

/**
 * An upstream Responses stream that sends three events (sequence 0..2), then `partial` (the start of a fourth one,
 * if any), and breaks its connection.
 */
const cutAfterThreeEvents = (req: IncomingMessage, res: ServerResponse) => cutMidStream('')(req, res);

const cutMidStream = (partial: string) => (_req: IncomingMessage, res: ServerResponse) => {
  const events = [
    {
      type: 'response.created',
      sequence_number: 0,
      response: { id: 'resp_cut', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [] },
    },
    {
      type: 'response.in_progress',
      sequence_number: 1,
      response: { id: 'resp_cut', object: 'response', created_at: 1, status: 'in_progress', model: 'm', output: [] },
    },
    {
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { id: 'msg_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    },
  ];
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('') + partial, () => res.socket?.destroy());
};

function keepAliveThen429() {
  let answer!: () => void;
  const ready = new Promise<void>((r) => (answer = r));
  upstream.override('/v1/responses', rateLimitedWhen(ready));
  return recordingFetch(answer);
}

describe('Responses stream errors written by the gateway', () => {
  it('after keep-alives, an upstream 429 is a Responses error event the openai SDK raises with its code', async () => {
    const rec = keepAliveThen429();
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: rec.fetch });
    const stream = await client.responses.create({ model: 'extra-keepalive', input: 'hi', stream: true });
    const err = await (async () => {
      for await (const _ of stream);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).code).toBe('rate_limit_exceeded');
    expect((err as APIError).message).toContain('Rate limit reached for requests');
    expect(errorEvent(rec.seen.text)).toEqual({
      type: 'error',
      sequence_number: 0,
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached for requests',
      param: null,
      error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    });
  });

  it('… and the Vercel AI SDK’s Responses provider sees a retryable 429, not a validation error', async () => {
    const rec = keepAliveThen429();
    const provider = createOpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, fetch: rec.fetch });
    const result = streamText({ model: provider.responses('extra-keepalive'), prompt: 'hi', maxRetries: 0, onError: () => {} });
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ statusCode: 429, isRetryable: true, message: 'Rate limit reached for requests' });
  });

  it('an upstream cut mid-stream ends with an error event continuing its sequence_number', async () => {
    upstream.override('/v1/responses', cutAfterThreeEvents);
    const rec = recordingFetch();
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: rec.fetch });
    const types: string[] = [];
    const err = await (async () => {
      for await (const e of await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) types.push(e.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).code).toBe('upstream_error');
    expect(errorEvent(rec.seen.text)).toMatchObject({
      type: 'error',
      sequence_number: 3,
      code: 'upstream_error',
      param: null,
      error: { type: 'server_error', code: 'upstream_error' },
    });
  });

  it('… which the Vercel AI SDK reports as the gateway’s error with its status, not a validation error', async () => {
    upstream.override('/v1/responses', cutAfterThreeEvents);
    const provider = createOpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL });
    const result = streamText({ model: provider.responses('gpt-4o-mini'), prompt: 'hi', maxRetries: 0, onError: () => {} });
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      statusCode: 500,
      isRetryable: true,
      code: 'upstream_error',
      message: 'The upstream connection failed in the middle of the stream.',
    });
  });

  it('an upstream cut inside an event: the half event is dropped, and the SDK raises the error event, not a JSON error', async () => {
    // Regression: the gateway closed the half event with a blank line, so the SDK parsed its cut JSON and threw a
    // SyntaxError before it reached the error event.
    const partial = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":3,"item_id":"msg_1","delta":"Hel';
    upstream.override('/v1/responses', cutMidStream(partial));
    const rec = recordingFetch();
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: rec.fetch });
    const types: string[] = [];
    const err = await (async () => {
      for await (const e of await client.responses.create({ model: 'gpt-4o-mini', input: 'hi', stream: true })) types.push(e.type);
    })().catch((e: unknown) => e);
    expect(types).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).code).toBe('upstream_error');
    expect(rec.seen.text).not.toContain('"Hel');
    expect(errorEvent(rec.seen.text)).toMatchObject({ type: 'error', sequence_number: 3, code: 'upstream_error' });
  });

  it('an upstream error retold after keep-alives quotes the client’s id, not the upstream’s', async () => {
    const { id: previous } = await gw.client().responses.create({ model: 'extra-keepalive', input: 'hi' });
    let answer!: () => void;
    const ready = new Promise<void>((r) => (answer = r));
    upstream.override('/v1/responses', async (_req, res) => {
      await ready;
      const body = JSON.stringify({
        error: {
          message: "Previous response with id 'resp_1' not found.",
          type: 'invalid_request_error',
          param: 'previous_response_id',
          code: 'previous_response_not_found',
        },
      });
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    const rec = recordingFetch(answer);
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: rec.fetch });
    const err = await (async () => {
      for await (const _ of await client.responses.create({ model: 'extra-keepalive', input: 'again', previous_response_id: previous, stream: true }));
    })().catch((e: unknown) => e);
    expect((err as APIError).message).toContain(`Previous response with id '${previous}' not found.`);
    expect(rec.seen.text).not.toContain("'resp_1'");
  });

  it('chat streams keep the chat error shape', async () => {
    upstream.override('/v1/chat/completions', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":null}]}\n\n',
        () => res.socket?.destroy(),
      );
    });
    const rec = recordingFetch();
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, fetch: rec.fetch });
    const err = await (async () => {
      for await (const _ of await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [], stream: true }));
    })().catch((e: unknown) => e);
    expect((err as APIError).code).toBe('upstream_error');
    expect(errorEvent(rec.seen.text)).toEqual({
      error: { message: 'The upstream connection failed in the middle of the stream.', type: 'server_error', param: null, code: 'upstream_error' },
    });
  });
});
