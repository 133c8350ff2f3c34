// Money limits through the real HTTP stack with the in-process store: the openai SDK as client (@anthropic-ai/sdk on
// the Messages API), a recording fake upstream that reports 11 input and 7 output tokens per chat answer. Prices of
// 100 and 200 per million tokens make each answer cost exactly 11 × 100 + 7 × 200 = 2,500 µ (0.0025); each request
// reserves its body's bytes at the input price plus max_tokens at the output price.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { type GatewayOptions, startGateway, type TestGateway } from '../helpers/gateway.js';
import { usageSnapshot } from '../../src/features/limits/usage-status.js';
import { waitUntil } from '../support/wait.js';
import { KEYS, limitsManifests, type LimitsSetup } from './manifests.js';

const PRICES = '{inputPerMTok: "100", outputPerMTok: "200"}';
const COST = 2_500;

let upstreams: RecordingUpstream[] = [];
let gw: TestGateway | undefined;

afterEach(async () => {
  await gw?.close();
  for (const u of upstreams) await u.close();
  gw = undefined;
  upstreams = [];
});

async function setup(s: Omit<LimitsSetup, 'upstream'>, options: GatewayOptions = {}, second = false) {
  const upstream = await startRecordingUpstream();
  const other = second ? await startRecordingUpstream() : undefined;
  upstreams = other ? [upstream, other] : [upstream];
  gw = await startGateway(limitsManifests({ upstream: upstream.baseURL, ...(other ? { secondUpstream: other.baseURL } : {}), ...s }), options);
  return { alice: gw.client(KEYS.alice), bob: gw.client(KEYS.bob), upstream, other };
}

/** The group's spend this month, in micro-units, as status.usage shows it. */
async function spendOf(g: TestGateway): Promise<number> {
  const group = (await usageSnapshot(g.limits, g.tables.get())).objects.find((u) => u.kind === 'Group');
  return Math.round(Number(group?.usage.costPerMonth?.used ?? 0) * 1e6);
}

const ask = (c: OpenAI) => c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }).withResponse();

async function failure(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('money limits', () => {
  it('a costPerMonth budget is spent to within one reservation and never past it; then 429 insufficient_quota until the month ends', async () => {
    const { alice, bob, upstream } = await setup({ group: '{costPerMonth: "0.05"}', primaryPricing: PRICES }, { usageLimits: { currency: 'USD' } });
    let ok = 0;
    let err: InstanceType<typeof OpenAI.APIError> | undefined;
    for (let i = 0; i < 100 && !err; i++) {
      try {
        await ask(i % 2 ? alice : bob);
        ok++;
      } catch (e) {
        err = e as InstanceType<typeof OpenAI.APIError>;
      }
    }
    // A request reserves about 100 bytes × 100 µ + 8 × 200 µ ≈ 11,600 µ: refused once less than that is left.
    expect(ok * COST).toBeLessThanOrEqual(50_000);
    expect(ok * COST).toBeGreaterThan(50_000 - 15_000);
    expect(upstream.requests).toHaveLength(ok);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(err!.status).toBe(429);
    expect(err!.code).toBe('insufficient_quota');
    expect(err!.type).toBe('insufficient_quota');
    expect(err!.message).toContain('The monthly budget of group default/team (0.05 USD) is spent until the month ends: this request may cost up to 0.0');
    expect(err!.headers?.get('x-should-retry')).toBe('false');
    const now = new Date();
    const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
    expect(Math.abs(Number(err!.headers?.get('retry-after')) - (monthEnd - Date.now()) / 1000)).toBeLessThan(5);
    const refused = await gw!.metrics.registry.getSingleMetric('model_gateway_limit_refusals_total')!.get();
    expect(refused.values.find((v) => v.labels.limit === 'costPerMonth')?.value).toBe(1);
  });

  it("a token's costPerDay narrows its group's budget; a request that could cost more than the whole limit is told so", async () => {
    const { alice, bob } = await setup({ group: '{costPerMonth: "10"}', alice: '{costPerDay: "0.01"}', primaryPricing: PRICES });
    const err = await failure(
      (async () => {
        for (let i = 0; i < 10; i++) await ask(alice);
      })(),
    );
    expect(err.code).toBe('insufficient_quota');
    expect(err.message).toContain('daily spend limit of token default/alice');
    await ask(bob);
    const big = await failure(bob.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100_000_000 }));
    expect(big.status).toBe(429);
    expect(big.message).toMatch(/This request may cost up to 20000\.0\d+, more than the whole monthly budget of group default\/team \(10\.00\)/);
  });

  it('a backend without prices is refused under a money limit (403 model_not_priced), and dropped as a fallback', async () => {
    const { alice, bob, upstream, other } = await setup({ alice: '{costPerMonth: "5"}' }, {}, true);
    const err = await failure(ask(alice));
    expect(err.status).toBe(403);
    expect(err.code).toBe('model_not_priced');
    expect(err.message).toContain('gpt-4o-mini');
    expect(upstream.requests.length + other!.requests.length).toBe(0);
    await ask(bob); // no money limit: served
    expect(upstream.requests).toHaveLength(1);

    // A priced primary that fails, an unpriced fallback: alice's request never reaches the fallback.
    gw!.load(limitsManifests({ upstream: upstream.baseURL, secondUpstream: other!.baseURL, alice: '{costPerMonth: "5"}', primaryPricing: PRICES }));
    upstream.override('/v1/chat/completions', (_req, res) => {
      res.writeHead(503).end('{}');
    });
    expect((await failure(ask(alice))).status).toBe(503);
    expect(other!.requests).toHaveLength(0);
    await ask(bob);
    expect(other!.requests).toHaveLength(1);
  });

  it('--allow-unpriced serves it, counted at what can be priced, and logs the backend once', async () => {
    const { alice } = await setup({ alice: '{costPerMonth: "0.000001"}' }, { usageLimits: { allowUnpriced: true } });
    for (let i = 0; i < 3; i++) await ask(alice);
    expect(gw!.logs.filter((l) => String(l.msg).startsWith('a request under a spend limit used a backend without'))).toHaveLength(1);
  });

  it('warnAt: every response once past it carries the warning header, and the crossing is counted once', async () => {
    const { alice, bob } = await setup({ group: '{costPerMonth: "0.10", warnAt: 10}', primaryPricing: PRICES });
    // 10% of 100,000 µ is four answers of 2,500 µ: the fifth request is the first to see the limit past it.
    for (let i = 0; i < 4; i++) expect((await ask(alice)).response.headers.get('x-model-gateway-budget-warning')).toBeNull();
    for (const c of [alice, bob])
      expect((await ask(c)).response.headers.get('x-model-gateway-budget-warning')).toMatch(/^group default\/team costPerMonth 1\d%$/);
    // The crossing is counted by the sync that pushes the spend across (every second).
    const warnings = await waitUntil(
      async () => {
        const m = await gw!.metrics.registry.getSingleMetric('model_gateway_budget_warnings_total')!.get();
        return m.values.length > 0 ? m : undefined;
      },
      5000,
      'the crossing to be counted',
    );
    expect(warnings.values).toEqual([expect.objectContaining({ value: 1, labels: { group: 'default/team', scope: 'group', limit: 'costPerMonth' } })]);
  });
  it('warnAt judges money spent, not money reserved: a request in flight holding a large reservation warns no one', async () => {
    const { alice, bob, upstream } = await setup({ group: '{costPerMonth: "0.10", warnAt: 10}', primaryPricing: PRICES });
    // A stream held before its usage chunk reserves its bytes at 100 µ and 40 output tokens at 200 µ: over 10,000 µ,
    // 10% of the budget, though it will cost 1,300 µ (the fake's streams report 9 input and 2 output tokens).
    const release = upstream.holdStreams();
    const held = alice.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40, stream: true });
    const stream = await held;
    await waitUntil(() => upstream.requests.length === 1, 5000, 'the held stream to reach the upstream');
    // Nothing is spent yet: no warning, though the reservation alone is past 10%.
    expect((await ask(bob)).response.headers.get('x-model-gateway-budget-warning')).toBeNull();
    release();
    for await (const _ of stream) {
      // read to the end: the held request settles to its 1,300 µ
    }
    await waitUntil(async () => (await spendOf(gw!)) === 1_300 + COST, 5000, 'both requests to settle');
    // 3,800 µ of 100,000 µ spent: still below warnAt, and no crossing was ever counted.
    expect((await ask(bob)).response.headers.get('x-model-gateway-budget-warning')).toBeNull();
    const warnings = await gw!.metrics.registry.getSingleMetric('model_gateway_budget_warnings_total')!.get();
    expect(warnings.values).toEqual([]);
  });

  it("on the Messages API (a translated route): the same budget, spent plain and streamed, then Anthropic's 429 that the SDK does not retry", async () => {
    await setup({ group: '{costPerMonth: "0.05"}', primaryPricing: PRICES }, { usageLimits: { currency: 'USD' } });
    const claude = new Anthropic({ apiKey: KEYS.alice, baseURL: gw!.origin, maxRetries: 2 });
    const body = { model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user' as const, content: 'hi' }] };
    // The fake's chat answers report 11 and 7 tokens (2,500 µ); its streams 9 and 2 (1,300 µ).
    expect((await claude.messages.create(body)).usage).toMatchObject({ input_tokens: 11, output_tokens: 7 });
    expect((await claude.messages.stream(body).finalMessage()).usage).toMatchObject({ output_tokens: 2 });
    await waitUntil(async () => (await spendOf(gw!)) === COST + 1_300, 5000, 'both requests in the spend');
    let ok = 2;
    let err: unknown;
    for (let i = 0; i < 100 && !err; i++) {
      try {
        await claude.messages.create(body);
        ok++;
      } catch (e) {
        err = e;
      }
    }
    expect(err).toBeInstanceOf(Anthropic.RateLimitError);
    const refused = err as InstanceType<typeof Anthropic.RateLimitError>;
    expect(refused.status).toBe(429);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(refused.message).toContain('The monthly budget of group default/team (0.05 USD) is spent until the month ends');
    expect(refused.headers?.get('x-should-retry')).toBe('false');
    // Not retried: the upstream saw exactly the requests that were served.
    expect(upstreams[0]!.requests).toHaveLength(ok);
    expect(await spendOf(gw!)).toBeLessThanOrEqual(50_000);
  });
});
