// The worked example of docs/usage-and-limits.md ("Costs and budgets", "A worked example"), run on exactly the
// manifests the docs quote (examples/budgets/team-budgets.yaml), with only the providers' base URLs pointed at a fake
// upstream on loopback. The fake reports the usage the example states: 20,000 input and 1,000 output tokens per
// Claude answer, 100,000 and 2,000 per gpt-4o-mini answer. Each prompt's bytes are 4 per token, so reservations
// (a byte per input token) hold what the answer uses.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatMoney } from '../../src/model/money.js';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';

const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'budgets', 'team-budgets.yaml');
const USAGE: Record<string, { prompt_tokens: number; completion_tokens: number }> = {
  'claude-sonnet-4-5': { prompt_tokens: 20_000, completion_tokens: 1_000 },
  'gpt-4o-mini': { prompt_tokens: 100_000, completion_tokens: 2_000 },
};

let upstream: RecordingUpstream;
let gw: TestGateway;
let alice: OpenAI;
let bob: OpenAI;

beforeAll(async () => {
  upstream = await startRecordingUpstream();
  upstream.override('/v1/chat/completions', (_req, res, body) => {
    const model = (JSON.parse(body.toString()) as { model: string }).model;
    const usage = USAGE[model]!;
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop', logprobs: null }],
        usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
      }),
    );
  });
  const yaml = readFileSync(EXAMPLE, 'utf8').replaceAll(/https:\/\/api\.(openai|anthropic)\.com\/v1/g, upstream.baseURL);
  gw = await startGateway(yaml, { usageLimits: { currency: 'USD' } });
  alice = gw.client('sk-alice-example-0123456789');
  bob = gw.client('sk-bob-example-0123456789');
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

const ask = (c: OpenAI, model: string) =>
  c.chat.completions
    .create({ model, messages: [{ role: 'user', content: 'word '.repeat(USAGE[model]!.prompt_tokens * 0.8) }], max_tokens: 1_000 })
    .withResponse();

/** Spend of the group's month and alice's day, as the gateway counts them, once every request has settled. */
function spent(): { team: string; alice: string } {
  const token = [...gw.tables.get()!.tokensByDigest.values()].find((t) => t.name === 'alice')!;
  const [aliceDay, teamMonth] = token.moneyLimits;
  return { team: formatMoney(gw.limits.limiter.spent(teamMonth!)), alice: formatMoney(gw.limits.limiter.spent(aliceDay!)) };
}

// Steps of one story, each building on the last: they run in this order even under --sequence.shuffle.
describe('the Costs and budgets worked example', { shuffle: false }, () => {
  it('alice: ten Claude requests at 0.075 each, then 429 insufficient_quota with 0.25 of her 1.00 left', async () => {
    for (let i = 0; i < 10; i++) await ask(alice, 'claude-sonnet-4-5');
    await waitUntil(() => spent().alice === '0.75', 5000, "alice's spend to settle");
    const err = await ask(alice, 'claude-sonnet-4-5').then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    );
    expect(err?.status).toBe(429);
    expect(err?.code).toBe('insufficient_quota');
    expect(err?.error).toMatchObject({
      message: 'The daily spend limit of token ai/alice (1.00 USD) is spent until the UTC day ends: this request may cost up to 0.315334 USD.',
    });
    // A cheaper request still fits what is left.
    await ask(alice, 'gpt-4o-mini');
    await waitUntil(() => spent().alice === '0.7662', 5000, "alice's spend to settle");
  });

  it('bob: a hundred Claude requests take the team past 80%: every later response carries the warning', async () => {
    const headers: (string | null)[] = [];
    for (let i = 0; i < 100; i++) {
      const { response } = await ask(bob, 'claude-sonnet-4-5');
      headers.push(response.headers.get('x-model-gateway-budget-warning'));
      await waitUntil(() => spent().team === formatMoney(766_200 + (i + 1) * 75_000), 5000, `request ${i} to settle (${spent().team})`);
    }
    // 0.7662 + 97 × 0.075 = 8.0412 is the first spend past 8.00: the 98th request is the first told.
    expect(headers.slice(0, 97)).toEqual(Array(97).fill(null));
    expect(headers.slice(97)).toEqual(['group ai/team-a costPerMonth 80%', 'group ai/team-a costPerMonth 81%', 'group ai/team-a costPerMonth 81%']);
    await waitUntil(() => spent().team === '8.2662', 5000, "the team's spend to settle");
    const { response } = await ask(bob, 'gpt-4o-mini');
    expect(response.headers.get('x-model-gateway-budget-warning')).toBe('group ai/team-a costPerMonth 82%');
    // The crossing is counted by the sync that pushes the spend across (every second).
    const warnings = await waitUntil(
      async () => {
        const m = await gw.metrics.registry.getSingleMetric('model_gateway_budget_warnings_total')!.get();
        return m.values.length > 0 ? m : undefined;
      },
      5000,
      'the crossing to be counted',
    );
    expect(warnings.values).toEqual([expect.objectContaining({ value: 1, labels: { group: 'ai/team-a', scope: 'group', limit: 'costPerMonth' } })]);
  });
});
