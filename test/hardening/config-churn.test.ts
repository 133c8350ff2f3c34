// Config churn under load: a request keeps the table it started with, a stream on a route that a reload
// removes finishes, the removed route's upstream pool is dropped, and a token disabled mid-stream does not
// cut the stream it already opened (only new requests are refused).
import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeApp, createApp } from '../../src/gateway/app.js';
import { compile } from '../../src/compile/compile.js';
import { parseManifests } from '../../src/compile/manifests.js';
import { TableHolder } from '../../src/model/routing-table.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { UpstreamClient } from '../../src/dataplane/upstream/upstream-client.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { ALICE_KEY, extraRoute, standardManifests } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

let main: RecordingUpstream;
let other: RecordingUpstream; // a second origin, used only by the route that reloads remove
let server: Server;
let app: ReturnType<typeof createApp>;
const tables = new TableHolder();
const pools = new UpstreamClient();
let origin: string;
let version = 0;

const load = (yaml: string) => tables.set(compile(parseManifests(yaml, 'inline.yaml').objects, { version: ++version }).table);
const withChurn = () => standardManifests(main.baseURL, extraRoute('extra-churn', [{ name: 'other', baseURL: other.baseURL }]));
const withoutChurn = () => standardManifests(main.baseURL);
const disabling = (yaml: string) =>
  yaml.replace('metadata: {name: alice}\nspec: {group: team-a,', 'metadata: {name: alice}\nspec: {disabled: true, group: team-a,');

beforeAll(async () => {
  main = await startRecordingUpstream();
  other = await startRecordingUpstream();
  load(withChurn());
  app = createApp({ tables, logger: pino({ level: 'silent' }), metrics: createMetrics({ defaultMetrics: false }), isReady: () => true, upstream: pools });
  server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
  await closeApp(app);
  await pools.destroy();
  await main?.close();
  await other?.close();
});

const client = (key = ALICE_KEY) => new OpenAI({ apiKey: key, baseURL: `${origin}/v1`, maxRetries: 0, timeout: 10_000 });

/** Opens a held stream and returns once its first content arrived; `rest` reads the remainder. */
async function openHeldStream(model: string, key?: string) {
  const stream = await client(key).chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], stream: true });
  const it = stream[Symbol.asyncIterator]();
  const seen: string[] = [];
  while (!seen.includes('Hello')) {
    const next = await it.next();
    if (next.done) throw new Error('stream ended early');
    seen.push(next.value.choices[0]?.delta.content ?? '');
  }
  return async () => {
    for (let next = await it.next(); !next.done; next = await it.next()) seen.push(next.value.choices[0]?.delta.content ?? '');
    return seen.join('');
  };
}

describe('table swaps during in-flight requests', () => {
  it('a stream on a route a reload removes finishes; its pool is dropped; the route is gone for new requests', async () => {
    load(withChurn());
    const release = other.holdStreams();
    const rest = await openHeldStream('extra-churn');
    const before = pools.poolCount;
    load(withoutChurn()); // the route and its origin leave the table mid-stream
    expect(pools.poolCount).toBe(before - 1); // dropped at once, closed gracefully once its request ends
    release();
    expect(await rest()).toBe('Hello world');
    await expect(client().chat.completions.create({ model: 'extra-churn', messages: [] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('a request authenticated before a reload is served by the table it started with', async () => {
    load(withChurn());
    // Headers now (authenticated against the table with extra-churn), body after the reload removed it.
    const { request } = await import('node:http');
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        `${origin}/v1/chat/completions`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${ALICE_KEY}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      req.write('{"model":"extra-churn",');
      setTimeout(() => {
        load(withoutChurn());
        req.end('"messages":[]}');
      }, 100);
    });
    const r = await answer;
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body).model).toBe('upstream-extra');
  });

  it('a token disabled mid-stream: the open stream finishes, the next request is refused', async () => {
    load(withoutChurn());
    const release = main.holdStreams();
    const rest = await openHeldStream('gpt-4o-mini');
    load(disabling(withoutChurn()));
    release();
    expect(await rest()).toBe('Hello world');
    await expect(client().models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    load(withoutChurn());
  });

  it('100 requests while the table is swapped every few milliseconds all succeed', async () => {
    // Compiled once, swapped often: the churn is in the swaps (and the pool retirement each one triggers).
    const compiled = [withChurn(), withoutChurn()].map((y) => compile(parseManifests(y, 'inline.yaml').objects, { version: ++version }).table);
    let swaps = 0;
    const churn = setInterval(() => tables.set(compiled[swaps++ % 2]!), 2);
    try {
      const results = await Promise.all(
        Array.from({ length: 100 }, () => client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })),
      );
      expect(results.every((r) => r.choices[0]?.message.content === 'Hello from upstream')).toBe(true);
      expect(swaps).toBeGreaterThan(5);
    } finally {
      clearInterval(churn);
    }
  });
});

describe('pool retirement failures', () => {
  it('a pool that fails to close on a reload is logged, not an unhandled rejection', async () => {
    // Regression: createApp fired retainOrigins with `void`; a rejection would have ended the process.
    const escaped: unknown[] = [];
    const onRejection = (err: unknown) => escaped.push(err);
    process.on('unhandledRejection', onRejection);
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const failing = new UpstreamClient();
    failing.retainOrigins = () => Promise.reject(new Error('pool close failed'));
    const holder = new TableHolder();
    const failingApp = createApp({ tables: holder, logger, metrics: createMetrics({ defaultMetrics: false }), isReady: () => true, upstream: failing });
    try {
      holder.set(compile(parseManifests(withoutChurn(), 'inline.yaml').objects, { version: ++version }).table);
      await waitUntil(() => warnings.join('').includes('closing a retired upstream pool failed'), 5_000, 'the pool-close warning');
      // Node reports an unhandled rejection once the microtasks of the turn that rejected have run.
      await new Promise((r) => setImmediate(r));
      expect(escaped).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      await closeApp(failingApp);
    }
  });
});
