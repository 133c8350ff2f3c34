// A backend's prices changed while a request is in flight: the request is priced at the prices it was routed with,
// and the next request at the new ones (docs/usage-and-limits.md, "A price change applies to the next request").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUsageUpstream, type UsageUpstream } from '../fakes/usage-upstream.js';
import { standardManifests, startGateway, type TestGateway } from '../helpers/gateway.js';

let upstream: UsageUpstream;
let gw: TestGateway;

/** The standard configuration with the chat route's backend priced: input and output per million tokens. */
const priced = (input: string, output: string) =>
  standardManifests(upstream.baseURL).replace(
    'model: upstream-chat\n',
    `model: upstream-chat\n    pricing: {inputPerMTok: "${input}", outputPerMTok: "${output}"}\n`,
  );

beforeAll(async () => {
  upstream = await startUsageUpstream();
  gw = await startGateway('', { empty: true });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const record = (reqId: string) => gw.record(reqId, 10_000);

/** Micro-units of tokens at prices per million, rounded half up once. */
const cost = (reqId: string, input: number, output: number) => {
  const u = upstream.reported.get(reqId)!;
  return Math.floor((u.inputTokens * input + u.outputTokens * output + 500_000) / 1_000_000);
};
const micros = (text: unknown) => {
  const [whole, fraction = ''] = String(text).split('.');
  return Number(whole) * 1_000_000 + Number(fraction.padEnd(6, '0'));
};

describe('a price change during a stream', () => {
  it('prices the stream in flight at its old prices and the next request at the new ones', async () => {
    const yaml = priced('1.00', '2.00');
    expect(yaml).toContain('pricing:');
    gw.load(yaml);
    const { data, response } = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'wait for it' }], stream: true })
      .withResponse();
    const chunks = data[Symbol.asyncIterator]();
    await chunks.next(); // the stream has started: routed, at the first prices
    gw.load(priced('10.00', '20.00'));
    upstream.release();
    for (let c = await chunks.next(); !c.done; c = await chunks.next());
    const first = response.headers.get('x-request-id')!;
    expect(micros((await record(first))['cost'])).toBe(cost(first, 1_000_000, 2_000_000));

    const next = await gw
      .client()
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const second = next.response.headers.get('x-request-id')!;
    expect(micros((await record(second))['cost'])).toBe(cost(second, 10_000_000, 20_000_000));
  });
});
