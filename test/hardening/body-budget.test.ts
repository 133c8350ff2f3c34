// The process-wide budget of buffered request bodies: concurrent large uploads beyond it get 503 with retry-after
// (not a crash, not an OOM), the bodies within it are served, and every path gives its bytes back (success, client
// errors, aborted uploads, failover replays), so the gauge returns to 0.
import { createServer, type Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { expectOpenAIError, httpRequest, processTripwire } from './support.js';

const MiB = 1024 * 1024;
const BUDGET = 8 * MiB;

let upstream: RecordingUpstream;
let failing: Server;
let gw: TestGateway;
let tripwire: ReturnType<typeof processTripwire>;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  // A backend that always answers 503, so requests fail over (and replay their body) to the recording upstream.
  failing = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy","type":"server_error","param":null,"code":null}}'),
    );
  });
  await new Promise<void>((r) => failing.listen(0, '127.0.0.1', r));
  const failingURL = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/v1`;
  const extra = extraRoute('extra-failover', [
    { name: 'down', baseURL: failingURL, priority: 0 },
    { name: 'up', baseURL: upstream.baseURL, priority: 1 },
  ]);
  gw = await startGateway(standardManifests(upstream.baseURL, extra), {
    bodyLimits: { jsonBytes: 4 * MiB, multipartBytes: 32 * MiB },
    maxBufferedBytes: BUDGET,
  });
  tripwire = processTripwire();
});
afterAll(async () => {
  tripwire?.remove();
  await gw?.close();
  await upstream?.close();
  failing?.closeAllConnections();
  await new Promise<void>((r) => failing?.close(() => r()));
});
afterEach(() => {
  upstream.override('/v1/audio/transcriptions', undefined);
  expect(tripwire.escaped.splice(0)).toEqual([]);
});

async function buffered(): Promise<number> {
  const metric = await gw.metrics.registry.getSingleMetric('model_gateway_buffered_body_bytes')!.get();
  return metric.values[0]?.value ?? NaN;
}

/** Polls the gauge until it reads 0 (releases happen on the responses' 'close', a tick after the client's answer). */
async function expectDrained(): Promise<void> {
  await waitUntil(async () => (await buffered()) === 0, 5_000, 'the buffered-bytes gauge to return to 0');
}

function form(model: string, fileBytes: number): { body: Uint8Array; type: string } {
  const head = `--b\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`;
  return {
    body: new Uint8Array(Buffer.concat([Buffer.from(head), Buffer.alloc(fileBytes, 0x41), Buffer.from('\r\n--b--\r\n')])),
    type: 'multipart/form-data; boundary=b',
  };
}

async function upload(fileBytes: number) {
  const f = form('whisper-1', fileBytes);
  const res = await fetch(`${gw.baseURL}/audio/transcriptions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': f.type },
    body: f.body,
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
}

/** Holds every transcription answer until the returned function is called (bodies stay buffered meanwhile). */
function holdTranscriptions(): { release: () => void; arrived: () => number } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let arrived = 0;
  upstream.override('/v1/audio/transcriptions', async (_req, res) => {
    arrived++;
    await gate;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"held"}');
  });
  return { release, arrived: () => arrived };
}

describe('buffered body budget', () => {
  it('12 concurrent 3 MiB uploads against an 8 MiB budget: some get 503 + retry-after, the rest are served, the gauge returns to 0', async () => {
    const hold = holdTranscriptions();
    const before = upstream.requests.length;
    let answered = 0;
    const pending = Array.from({ length: 12 }, () => upload(3 * MiB).finally(() => answered++));
    // Wait until every upload is either held at the upstream (admitted: its body and rewritten copy are held
    // now) or already answered (refused).
    await waitUntil(() => hold.arrived() + answered === 12, 10_000, 'every upload to be held or refused');
    const held = await buffered();
    expect(held).toBeGreaterThan(0);
    // Over the budget only through copies of bodies already admitted (each re-encoded form is about its raw size).
    expect(held).toBeLessThanOrEqual(2 * BUDGET + MiB);
    hold.release();
    const results = await Promise.all(pending);
    const refused = results.filter((r) => r.status === 503);
    const served = results.filter((r) => r.status === 200);
    expect(refused.length).toBeGreaterThan(0);
    expect(served.length).toBeGreaterThan(0);
    expect(refused.length + served.length).toBe(12);
    for (const r of refused) {
      expectOpenAIError(r, 503, 'server_overloaded');
      expect(r.json.error.type).toBe('server_error');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    // Refused bodies never reach an upstream.
    expect(upstream.requests.length - before).toBe(served.length);
    await expectDrained();
    // And a request within the budget is served once the storm is over.
    expect((await upload(3 * MiB)).status).toBe(200);
    await expectDrained();
  });

  it('a declared Content-Length that cannot fit is refused before its body is read', async () => {
    const hold = holdTranscriptions();
    const first = upload(6 * MiB);
    await waitUntil(() => hold.arrived() > 0, 5_000, 'the first upload to reach the upstream');
    const started = Date.now();
    const r = await upload(7 * MiB);
    expectOpenAIError(r, 503, 'server_overloaded');
    expect(Date.now() - started).toBeLessThan(2_000);
    hold.release();
    expect((await first).status).toBe(200);
    await expectDrained();
  });

  it('the openai SDK retries a 503 after its retry-after and then succeeds', async () => {
    const hold = holdTranscriptions();
    const first = upload(7 * MiB);
    await waitUntil(() => hold.arrived() > 0, 5_000, 'the first upload to reach the upstream');
    // Free the budget while the SDK is waiting out the retry-after of its first (refused) attempt.
    setTimeout(() => hold.release(), 300);
    const client = new OpenAI({ apiKey: ALICE_KEY, baseURL: gw.baseURL, maxRetries: 2, timeout: 20_000 });
    const started = Date.now();
    const out = await client.audio.transcriptions.create({
      model: 'whisper-1',
      file: await toFile(Buffer.alloc(3 * MiB, 0x41), 'a.wav', { type: 'audio/wav' }),
    });
    expect(out.text).toBe('held');
    // It waited for the retry-after (2 s) rather than hammering the gateway.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);
    expect((await first).status).toBe(200);
    await expectDrained();
  }, 20_000);

  it('uploads abandoned mid-body give their bytes back', async () => {
    const port = Number(new URL(gw.origin).port);
    const head = httpRequest('POST', '/v1/audio/transcriptions', {
      Authorization: `Bearer ${ALICE_KEY}`,
      'Content-Type': 'multipart/form-data; boundary=b',
      'Content-Length': String(2 * MiB),
    });
    const sockets = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<net.Socket>((resolve) => {
            const s = net.connect(port, '127.0.0.1', () => s.write(Buffer.concat([head, Buffer.alloc(MiB, 0x41)]), () => resolve(s)));
            s.on('error', () => undefined);
          }),
      ),
    );
    await waitUntil(async () => (await buffered()) >= 3 * MiB, 5_000, 'the three half-uploads to be buffered');
    for (const s of sockets) s.destroy();
    await expectDrained();
  });

  it('client errors and failover replays give their bytes back', async () => {
    // 400: a form that does not parse; 404: a model nobody serves; 413: over the JSON limit mid-body.
    const bad = await fetch(`${gw.baseURL}/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'multipart/form-data; boundary=b' },
      body: new Uint8Array(Buffer.alloc(MiB, 0x41)),
    });
    expect(bad.status).toBe(400);
    const client = gw.client();
    await expect(client.chat.completions.create({ model: 'nobody-serves-this', messages: [{ role: 'user', content: 'x'.repeat(MiB) }] })).rejects.toMatchObject(
      { status: 404 },
    );
    const tooLarge = await fetch(`${gw.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json' },
      body: new Blob([`{"model":"gpt-4o-mini","pad":"${'x'.repeat(5 * MiB)}"}`]),
    });
    expect(tooLarge.status).toBe(413);
    // Fails over from the 503 backend to the next one: the body (and its rewritten copy) is sent twice.
    const replayed = await client.chat.completions.create({ model: 'extra-failover', messages: [{ role: 'user', content: 'y'.repeat(MiB) }] }).withResponse();
    expect(replayed.response.headers.get('x-model-gateway-attempts')).toBe('2');
    await expectDrained();
  });
});
