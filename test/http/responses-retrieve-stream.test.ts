// GET /v1/responses/{id}?stream=true (the openai SDK's `responses.retrieve(id, {stream: true})`) is a stream
// request, as a create with `"stream": true` is: on a route with `streaming.keepAliveInterval` it gets keep-alives
// while the upstream holds its first event, it is not bound by `timeouts.total` (a background response streamed
// back runs as long as it runs), `starting_after` reaches the upstream, and an upstream that answers it with the
// whole JSON response is told as the Responses events the SDK reads.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Loopback, listenOnLoopback } from '../fakes/loopback.js';
import { ALICE_KEY, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { recordingFetch } from '../helpers/recording-fetch.js';

const KEEP_ALIVE_MS = 50;
const TOTAL_MS = 300;
/** Keep-alives the client sees before the upstream answers: together longer than the route's total deadline. */
const HELD_KEEP_ALIVES = Math.ceil(TOTAL_MS / KEEP_ALIVE_MS) + 2;

// A route whose total deadline (for non-streaming requests) is far shorter than its first-byte timeout and budget.
const route = (baseURL: string) => `---
apiVersion: modelgateway.io/v1alpha1
kind: ModelRoute
metadata: {name: extra-retrieve}
spec:
  model: extra-retrieve
  backends:
  - {name: slow, baseURL: "${baseURL}", apiKeySecretRef: {name: upstream-credentials, key: apiKey}}
  timeouts: {firstByte: 10s, total: ${TOTAL_MS}ms}
  retry: {budget: 10s}
  streaming: {keepAliveInterval: ${KEEP_ALIVE_MS}ms}
`;

const response = {
  id: 'resp_stored',
  object: 'response',
  created_at: 1_700_000_000,
  status: 'completed',
  model: 'upstream-model',
  output: [{ id: 'msg_1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.', annotations: [] }] }],
  usage: { input_tokens: 5, output_tokens: 2, total_tokens: 7, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
};

type Answer = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
let upstream: Loopback;
let gw: TestGateway;
/** Paths of the GETs the upstream got. */
const gets: string[] = [];
let retrieveAnswer: Answer = (_req, res) => void res.end();

beforeAll(async () => {
  upstream = await listenOnLoopback(
    createServer(async (req, res) => {
      for await (const _ of req);
      if (req.method === 'POST') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
        return;
      }
      gets.push(req.url ?? '');
      await retrieveAnswer(req, res);
    }),
  );
  const baseURL = `${upstream.origin}/v1`;
  gw = await startGateway(standardManifests(baseURL, route(baseURL)));
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** A client whose fetch records the event-stream text, and a promise resolved once it has seen `n` keep-alives. */
function recordingClient(n: number) {
  let saw!: () => void;
  const sawKeepAlives = new Promise<void>((r) => (saw = r));
  const rec = recordingFetch(() => {
    if (rec.seen.text.split(': keep-alive').length - 1 >= n) saw();
  });
  const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 0, timeout: 10_000, fetch: rec.fetch });
  return { client, rec, sawKeepAlives };
}

/** Waits for `ready`, or gives up after 3 s (without keep-alives it never comes, and the test fails on what follows). */
const within = (ready: Promise<void>) => Promise.race([ready, new Promise((r) => setTimeout(r, 3_000))]);

const event = (e: Record<string, unknown>) => `event: ${String(e['type'])}\ndata: ${JSON.stringify(e)}\n\n`;

describe('GET /v1/responses/{id}?stream=true', () => {
  it('gets keep-alives while the upstream holds its first event, outlives timeouts.total, and passes starting_after on', async () => {
    const { client, rec, sawKeepAlives } = recordingClient(HELD_KEEP_ALIVES);
    const created = await client.responses.create({ model: 'extra-retrieve', input: 'weather?' });
    expect(created.id).not.toBe('resp_stored');
    rec.seen.text = '';
    retrieveAnswer = async (_req, res) => {
      await within(sawKeepAlives);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(event({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Sunny.', sequence_number: 3 }));
      res.end(event({ type: 'response.completed', response, sequence_number: 4 }));
    };
    const stream = await client.responses.retrieve(created.id, { stream: true, starting_after: 2 });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of stream) events.push(e);
    expect(events.map((e) => [e.type, e.sequence_number])).toEqual([
      ['response.output_text.delta', 3],
      ['response.completed', 4],
    ]);
    // The response's id in the events is the sealed one the client knows.
    expect((events[1] as OpenAI.Responses.ResponseCompletedEvent).response.id).toBe(created.id);
    expect(rec.seen.text.startsWith(': keep-alive')).toBe(true);
    expect(rec.seen.text.split(': keep-alive').length - 1).toBeGreaterThanOrEqual(HELD_KEEP_ALIVES);
    expect(gets.at(-1)).toBe('/v1/responses/resp_stored?stream=true&starting_after=2');
  });

  describe.each([
    ['after keep-alives committed the 200', 'extra-retrieve', 1],
    ['without keep-alives', 'gpt-4o-mini', 0],
  ])('answered with the whole JSON response, %s', (_name, model, keepAlives) => {
    it('reaches the SDK as Responses events, the sealed id in them', async () => {
      const { client, rec, sawKeepAlives } = recordingClient(keepAlives);
      const created = await client.responses.create({ model, input: 'weather?' });
      rec.seen.text = '';
      retrieveAnswer = async (_req, res) => {
        if (keepAlives > 0) await within(sawKeepAlives);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(response));
      };
      const { data: stream, response: http } = await client.responses.retrieve(created.id, { stream: true }).withResponse();
      expect(http.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const e of stream) events.push(e);
      expect(events[0]!.type).toBe('response.created');
      expect(events.map((e) => e.type)).toContain('response.output_text.delta');
      const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(done.type).toBe('response.completed');
      expect(done.response.id).toBe(created.id);
      expect(done.response.output).toEqual(response.output);
      expect(rec.seen.text.startsWith(': keep-alive')).toBe(keepAlives > 0);
      expect(gets.at(-1)).toBe('/v1/responses/resp_stored?stream=true');
    });
  });

  it('a HEAD with stream=true is answered as the upstream answers it (no body to stream)', async () => {
    const { client } = recordingClient(0);
    const created = await client.responses.create({ model: 'extra-retrieve', input: 'weather?' });
    retrieveAnswer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
    };
    const head = await fetch(`${gw.baseURL}/responses/${created.id}?stream=true`, { method: 'HEAD', headers: { authorization: `Bearer ${ALICE_KEY}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('without stream=true stays a plain JSON retrieve', async () => {
    const { client } = recordingClient(0);
    const created = await client.responses.create({ model: 'extra-retrieve', input: 'weather?' });
    retrieveAnswer = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response));
    };
    const { data, response: http } = await client.responses.retrieve(created.id).withResponse();
    expect(http.headers.get('content-type')).toMatch(/^application\/json/);
    expect(data.id).toBe(created.id);
    expect(data.output_text).toBe('Sunny.');
  });
});
