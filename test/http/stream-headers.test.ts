// A stream's status and headers reach the client as soon as the upstream sends them, even when the first
// event is slow to come (time to first token: here held until the client has the headers); when the first event
// arrives with the headers, both go out together. Either way the client gets the same response.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

/** The late upstream holds its first event until the test releases it (or this long, so nothing hangs). */
const HOLD_CAP_MS = 5_000;
let release: () => void = () => {};
const EVENT = `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: null }] })}\n\n`;

let upstream: RecordingUpstream;
let gw: TestGateway;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  upstream.override('/late/v1/chat/completions', async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    await new Promise<void>((resolve) => {
      release = resolve;
      setTimeout(resolve, HOLD_CAP_MS);
    });
    res.end(`${EVENT}data: [DONE]\n\n`);
  });
  upstream.override('/eager/v1/chat/completions', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(EVENT);
    setTimeout(() => res.end('data: [DONE]\n\n'), 50);
  });
  gw = await startGateway(
    standardManifests(
      upstream.baseURL,
      extraRoute('extra-late', [{ name: 'late', baseURL: `${upstream.origin}/late/v1` }]) +
        extraRoute('extra-eager', [{ name: 'eager', baseURL: `${upstream.origin}/eager/v1` }]),
    ),
  );
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

/** Streams a chat; `onHeaders` runs once the status and headers are in, before the body is read. */
async function stream(model: string, onHeaders = () => {}): Promise<{ body: string; status: number }> {
  const res = await fetch(`${gw.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], stream: true }),
  });
  onHeaders();
  return { body: await res.text(), status: res.status };
}

describe('stream headers', () => {
  it('are sent before a slow first event', async () => {
    // The headers must arrive while the upstream still holds its first event: the test releases it only then.
    let heldWhenHeadersCame = false;
    const t0 = performance.now();
    const r = await stream('extra-late', () => {
      heldWhenHeadersCame = performance.now() - t0 < HOLD_CAP_MS;
      release();
    });
    expect(heldWhenHeadersCame).toBe(true);
    expect(r.status).toBe(200);
    expect(r.body).toBe(`${EVENT}data: [DONE]\n\n`);
  });

  it('go out with a first event that came with them, and nothing is lost', async () => {
    const r = await stream('extra-eager');
    expect(r.status).toBe(200);
    expect(r.body).toBe(`${EVENT}data: [DONE]\n\n`);
    // The SDK reads it like any stream.
    const chunks = [];
    for await (const c of await gw.client().chat.completions.create({ model: 'extra-eager', messages: [{ role: 'user', content: 'x' }], stream: true }))
      chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.delta.content)).toEqual(['hi']);
  });
});
