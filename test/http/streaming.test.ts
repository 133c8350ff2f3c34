// Streaming through the real stack: SSE arrives chunk by chunk (the first chunk reaches the client while the
// upstream is still holding back the rest), a client abort cancels the upstream request, and the usage in the
// final chunk is metered without buffering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordedRequest, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { waitUntil } from '../support/wait.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  const idle = extraRoute('extra-idle', [{ name: 'primary', baseURL: upstream.baseURL }], { streamIdle: '300ms' });
  // A short read-on bound: a stream the client left is read on for its usage this long, then cut (the default is 10 s).
  gw = await startGateway(standardManifests(upstream.baseURL, idle), { usage: { readOn: { ms: 200, bytes: 1024 * 1024 } } });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms))]);
}

function messageOf(r: RecordedRequest): unknown {
  try {
    return (JSON.parse(r.body.toString()) as { messages?: { content?: unknown }[] }).messages?.[0]?.content;
  } catch {
    return undefined;
  }
}

describe('SSE streaming', () => {
  it('delivers the first chunk before the upstream sends its last', async () => {
    const release = upstream.holdStreams();
    const stream = await gw.client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    });
    const it = stream[Symbol.asyncIterator]();
    const seen: string[] = [];
    // The upstream has written role + "Hello" and is now waiting for release(): both must already be here.
    while (!seen.includes('Hello')) {
      const next = await within(3000, it.next(), 'the first chunks while the upstream holds the rest');
      if (next.done) throw new Error('stream ended early');
      seen.push(next.value.choices[0]?.delta.content ?? '');
    }
    release();
    for (let next = await it.next(); !next.done; next = await it.next()) seen.push(next.value.choices[0]?.delta.content ?? '');
    expect(seen.join('')).toBe('Hello world');
    expect(JSON.parse(upstream.requests.at(-1)!.body.toString()).model).toBe('upstream-chat');
  });

  it('relays the event-stream content type and gateway headers', async () => {
    const { response } = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-model-gateway-backend')).toBe('primary');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    await response.text();
  });

  it('a client abort mid-stream: the upstream is read on for its usage within the read-on bound, then cut', async () => {
    const release = upstream.holdStreams();
    try {
      const stream = await gw.client().chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'abort me' }],
        stream: true,
      });
      const it = stream[Symbol.asyncIterator]();
      await within(3000, it.next(), 'the first chunk');
      stream.controller.abort();
      const closed = await within(
        3000,
        upstream.waitForEarlyClose('/v1/chat/completions', (r) => messageOf(r) === 'abort me'),
        'the upstream to see the close',
      );
      expect(closed.closedEarly).toBe(true);
    } finally {
      release();
    }
  });

  it('meters usage from the final chunk and time to first token', async () => {
    // Earlier streams in this file were metered too (the gateway asks every chat stream for usage): compare sums.
    const sum = async (type: string) =>
      Number(
        new RegExp(`gen_ai_client_token_usage_sum\\{family="chat.completions",model="gpt-4o-mini",group="team-a",type="${type}"\\} (\\d+)`).exec(
          await gw.metrics.registry.metrics(),
        )?.[1] ?? 0,
      );
    const [input, output] = [await sum('input'), await sum('output')];
    const stream = await gw.client().chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toMatchObject({ prompt_tokens: 9, completion_tokens: 2 });
    expect(await sum('output')).toBe(output + 2);
    expect(await sum('input')).toBe(input + 9);
    expect(await gw.metrics.registry.metrics()).toMatch(
      /gen_ai_server_time_to_first_token_seconds_count\{family="chat.completions",model="gpt-4o-mini"\} [1-9]/,
    );
  });
});

describe('stream idle timeout', () => {
  it('cuts a stream that stays silent longer than streamIdle, and the upstream request with it', async () => {
    const release = upstream.holdStreams();
    try {
      const stream = await gw.client().chat.completions.create({
        model: 'extra-idle',
        messages: [{ role: 'user', content: 'go quiet' }],
        stream: true,
      });
      const started = Date.now();
      const read = (async () => {
        for await (const _ of stream) {
          // drain until the gateway cuts the connection
        }
      })();
      await expect(within(5000, read, 'the cut')).rejects.toThrow();
      expect(Date.now() - started).toBeLessThan(4000);
      const closed = await within(
        3000,
        upstream.waitForEarlyClose('/v1/chat/completions', (r) => messageOf(r) === 'go quiet'),
        'the upstream close',
      );
      expect(closed.closedEarly).toBe(true);
    } finally {
      release();
    }
  });
});

describe('client disconnects and back-pressure', () => {
  it('a client abort while waiting for the upstream headers aborts the upstream request', async () => {
    upstream.override('/v1/chat/completions', () => new Promise(() => {})); // holds the request forever
    try {
      const ac = new AbortController();
      const pending = gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'wait' }] }, { signal: ac.signal });
      pending.catch(() => {});
      await waitUntil(() => upstream.requests.some((r) => messageOf(r) === 'wait'), 3000, 'the upstream to get the request');
      ac.abort();
      const closed = await within(
        3000,
        upstream.waitForEarlyClose('/v1/chat/completions', (r) => messageOf(r) === 'wait'),
        'the upstream to see the close',
      );
      expect(closed.closedEarly).toBe(true);
    } finally {
      upstream.override('/v1/chat/completions', undefined);
    }
  });

  it('a slow reader slows the upstream down instead of being buffered in the gateway', async () => {
    const total = 64 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let written = 0;
    let finished = false;
    upstream.override('/v1/chat/completions', async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      while (written < total && !res.destroyed) {
        written += chunk.length;
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
      res.end();
      finished = true;
    });
    try {
      const res = await fetch(`${gw.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [] }),
      });
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 500)); // the client does not read
      // Only socket and stream buffers' worth got out of the upstream, not the whole body.
      expect(finished).toBe(false);
      expect(written).toBeLessThan(total / 2);
      let received = 0;
      for await (const c of res.body!) received += (c as Uint8Array).length;
      expect(received).toBe(total);
    } finally {
      upstream.override('/v1/chat/completions', undefined);
    }
  });
});
