// Clients that ask for a large answer and never read it. Back-pressure runs end to end: the gateway holds no more
// than its stream buffers, so the upstream's writes stall instead of the answer piling up in memory; other clients
// are served at their usual latency meanwhile; when such a client leaves, the upstream request is aborted and nothing
// stays in flight.
import net from 'node:net';
import type { ServerResponse } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayHandle } from '../../src/gateway/main.js';
import { waitUntil } from '../support/wait.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, standardManifests } from '../helpers/gateway.js';
import { startServedGateway } from './served-gateway.js';
import { httpRequest, processTripwire } from './support.js';

const MiB = 1 << 20;
const ANSWER_BYTES = 200 * MiB;
/** What may sit between the upstream and a client that does not read: socket buffers on both sides, stream buffers. */
const IN_TRANSIT_LIMIT = 64 * MiB;

let upstream: RecordingUpstream;
let gw: GatewayHandle;
let tripwire: ReturnType<typeof processTripwire>;

/** One large answer being written by the upstream: bytes written so far, and whether it finished or was cut. */
interface Producer {
  written: number;
  state: 'writing' | 'finished' | 'cut';
}
const producers: Producer[] = [];

/** Writes head, `count` times chunk, then tail, with back-pressure, recording progress. */
async function produce(res: ServerResponse, head: string, chunk: Buffer, count: number, tail: string): Promise<void> {
  const p: Producer = { written: 0, state: 'writing' };
  producers.push(p);
  res.on('close', () => {
    if (p.state === 'writing') p.state = 'cut';
  });
  const write = (b: Buffer | string) => {
    p.written += Buffer.byteLength(b);
    return res.write(b) ? undefined : new Promise((r) => res.once('drain', r));
  };
  await write(head);
  for (let i = 0; i < count && !res.destroyed; i++) await write(chunk);
  if (res.destroyed) return;
  res.end(tail);
  p.state = 'finished';
}

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  const filler = Buffer.alloc(MiB, 0x61);
  upstream.override('/v1/chat/completions', (_req, res, body) => {
    if (!body.includes('"huge"')) return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"small","choices":[]}');
    if (body.includes('"stream":true')) {
      // An event stream of 1 MiB events, endless for all the reader cares.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const event = Buffer.from(`data: {"choices":[{"index":0,"delta":{"content":"${'b'.repeat(MiB - 64)}"}}]}\n\n`);
      return produce(res, '', event, ANSWER_BYTES / MiB, 'data: [DONE]\n\n');
    }
    const head = '{"id":"chatcmpl-huge","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"';
    const tail = '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}';
    const fillers = Math.floor((ANSWER_BYTES - head.length - tail.length) / MiB);
    const pad = 'a'.repeat(ANSWER_BYTES - head.length - tail.length - fillers * MiB);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ANSWER_BYTES) });
    return produce(res, head, filler, fillers, pad + tail);
  });
  gw = await startServedGateway(standardManifests(upstream.baseURL));
  tripwire = processTripwire();
});
afterAll(async () => {
  tripwire?.remove();
  await gw?.close({ timeoutMs: 0 });
  await upstream?.close();
});

/** Sends the request on a raw connection and never reads a byte of the answer. */
function neverReading(stream: boolean): Promise<net.Socket> {
  const body = JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'huge' }] });
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(gw.apiURL).port), '127.0.0.1', () => {
      socket.pause();
      socket.write(httpRequest('POST', '/v1/chat/completions', { Authorization: `Bearer ${ALICE_KEY}`, 'Content-Type': 'application/json' }, body), () =>
        resolve(socket),
      );
    });
    socket.on('error', () => undefined);
  });
}

/** Resolves once no producer has written a byte for `quietMs`: the writes have stalled. */
async function stalled(quietMs: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let since = Date.now();
  for (;;) {
    const now = producers.reduce((n, p) => n + p.written, 0);
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) return;
    if (Date.now() > deadline) throw new Error(`the upstream writes did not stall within ${timeoutMs} ms (${last} bytes written)`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function heapAndBuffers(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function latencies(client: OpenAI, n: number): Promise<{ p50: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'small' }] });
    ms.push(performance.now() - t);
    expect(r.id).toBe('small');
  }
  ms.sort((a, b) => a - b);
  return { p50: ms[Math.floor(n / 2)]!, max: ms[n - 1]! };
}

// The last step closes the gateway and finds nothing in flight: the steps run in this order even under
// --sequence.shuffle.
describe('clients that never read', { shuffle: false }, () => {
  it('a 200 MB answer and an endless stream, unread: the upstream stalls, memory stays flat, others are served as usual', async () => {
    const client = new OpenAI({ baseURL: `${gw.apiURL}/v1`, apiKey: ALICE_KEY, maxRetries: 0 });
    await latencies(client, 5); // warm-up
    const idle = await latencies(client, 30);
    const baseline = heapAndBuffers();

    const sockets = [await neverReading(false), await neverReading(true)];
    await stalled(300, 15_000);
    const grown = heapAndBuffers() - baseline;
    const busy = await latencies(client, 30);
    const written = producers.map((p) => p.written);
    console.log(
      `unread: upstream wrote ${written.map((w) => (w / MiB).toFixed(1)).join(' + ')} MiB before stalling; heap + buffers +${(grown / MiB).toFixed(1)} MiB; ` +
        `other clients p50 ${idle.p50.toFixed(1)} → ${busy.p50.toFixed(1)} ms, max ${idle.max.toFixed(1)} → ${busy.max.toFixed(1)} ms`,
    );
    expect(producers.map((p) => p.state)).toEqual(['writing', 'writing']);
    for (const w of written) expect(w).toBeLessThan(IN_TRANSIT_LIMIT);
    expect(grown).toBeLessThan(32 * MiB);
    expect(busy.p50).toBeLessThan(Math.max(50, 3 * idle.p50));

    // The clients leave: both upstream requests are aborted.
    for (const s of sockets) s.destroy();
    await waitUntil(() => producers.every((p) => p.state === 'cut'), 3_000, 'both upstream requests to be aborted');
  }, 40_000);

  it('after they left, nothing is in flight', async () => {
    expect(await gw.close({ timeoutMs: 2_000 })).toEqual({ completed: true, cut: 0 });
    expect(tripwire.escaped).toEqual([]);
  });
});
