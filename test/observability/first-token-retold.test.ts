// Time to first token of a whole answer told as a stream's events: a stream request the upstream answers with a
// whole JSON answer reaches the client as events, and the moment those events go out is its first token, read from
// a live /metrics. A non-stream request answered whole records none.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { metricsHandler } from '../../src/dataplane/server/metrics-handler.js';
import { type Loopback, listenOnLoopback } from '../fakes/loopback.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

/** How long the fake upstream waits between the two halves of its whole answer. */
const HOLD_MS = 200;

const completion = JSON.stringify({
  id: 'chatcmpl-ttft',
  object: 'chat.completion',
  created: 1_700_000_000,
  model: 'upstream-chat',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Whole, then told.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
});

let upstream: Loopback;
let gw: TestGateway;
let metricsServer: Server;
let metricsUrl: string;
beforeAll(async () => {
  upstream = await listenOnLoopback(
    createServer(async (req, res) => {
      for await (const _ of req);
      // Whole JSON whatever `stream` says (a server that ignores it), its second half after a pause.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(completion.slice(0, 40));
      await sleep(HOLD_MS);
      res.end(completion.slice(40));
    }),
  );
  gw = await startGateway(standardManifests(`${upstream.origin}/v1`));
  metricsServer = createServer(metricsHandler({ metrics: () => gw.metrics.registry.metrics(), contentType: gw.metrics.registry.contentType }));
  metricsServer.listen(0, '127.0.0.1');
  await once(metricsServer, 'listening');
  metricsUrl = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`;
});
afterAll(async () => {
  metricsServer?.closeAllConnections();
  await new Promise<void>((r) => (metricsServer ? metricsServer.close(() => r()) : r()));
  await gw?.close();
  await upstream?.close();
});

/** The chat histogram's count and sum as /metrics serves them (0 before any observation). */
async function firstToken(): Promise<{ count: number; sum: number }> {
  const text = await (await fetch(metricsUrl)).text();
  const read = (series: string) =>
    Number(
      new RegExp(`^gen_ai_server_time_to_first_token_seconds_${series}\\{family="chat\\.completions",model="gpt-4o-mini"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0,
    );
  return { count: read('count'), sum: read('sum') };
}

it('a non-stream request answered whole records no time to first token', async () => {
  const before = await firstToken();
  const answer = await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'whole' }] });
  expect(answer.choices[0]!.message.content).toBe('Whole, then told.');
  // The histogram is observed before the body goes out, so the answer read means nothing more can come.
  expect(await firstToken()).toEqual(before);
});

it('a stream request answered whole records one, taken when the told events reach the client (after the whole body)', async () => {
  const before = await firstToken();
  const stream = await gw.client().chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'stream' }], stream: true });
  let text = '';
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
  expect(text).toBe('Whole, then told.');
  const after = await firstToken();
  expect(after.count).toBe(before.count + 1);
  // Not at the answer's head: the events exist only once the upstream's second half arrived.
  expect(after.sum - before.sum).toBeGreaterThanOrEqual(HOLD_MS / 1e3);
});
