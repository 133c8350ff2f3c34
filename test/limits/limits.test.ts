// Limits through the real HTTP stack with the in-process store: the openai SDK as client, a recording fake
// upstream. Each test builds its own gateway, so counters start at zero.
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startRecordingUpstream, type RecordingUpstream } from '../fakes/recording-upstream.js';
import { startGateway, type TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { KEYS, limitsManifests, type LimitsSetup } from './manifests.js';
import { insideOneMinute } from './minute.js';

let upstream: RecordingUpstream | undefined;
let gw: TestGateway | undefined;

// Every test here counts within one minute's window: none starts in a minute's last 5 s.
beforeEach(() => insideOneMinute(5_000));

afterEach(async () => {
  await gw?.close();
  await upstream?.close();
  gw = undefined;
  upstream = undefined;
});

async function setup(s: Omit<LimitsSetup, 'upstream'>, second = false): Promise<{ alice: OpenAI; bob: OpenAI; secondUpstream?: RecordingUpstream }> {
  upstream = await startRecordingUpstream();
  const other = second ? await startRecordingUpstream() : undefined;
  // A short read-on bound: a held stream its client left is estimated soon after, not after the default 10 s.
  gw = await startGateway(limitsManifests({ upstream: upstream.baseURL, ...(other ? { secondUpstream: other.baseURL } : {}), ...s }), {
    usage: { readOn: { ms: 200, bytes: 1024 * 1024 } },
  });
  const close = gw.close;
  if (other) gw = { ...gw, close: async () => (await close(), await other.close()) };
  return { alice: gw.client(KEYS.alice), bob: gw.client(KEYS.bob), ...(other ? { secondUpstream: other } : {}) };
}

const ask = (c: OpenAI, extra: Record<string, unknown> = {}) =>
  c.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16, ...extra });

async function refusal(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.RateLimitError>> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OpenAI.RateLimitError);
  return err as InstanceType<typeof OpenAI.RateLimitError>;
}

describe('client limits', () => {
  it("a token's requestsPerMinute admits that many, then 429 rate_limit_exceeded with OpenAI's headers; other tokens pass", async () => {
    const { alice, bob } = await setup({ alice: '{requestsPerMinute: 3}' });
    for (let i = 0; i < 3; i++) await ask(alice);
    const err = await refusal(ask(alice));
    expect(err.status).toBe(429);
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.type).toBe('requests');
    expect(err.message).toContain('token default/alice');
    expect(err.headers.get('content-type')).toContain('application/json');
    expect(err.headers.get('x-request-id')).toBeTruthy();
    expect(err.headers.get('x-ratelimit-limit-requests')).toBe('3');
    expect(err.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    // OpenAI's format ("59s", or "1m0s" when the refusal falls in the first second of a calendar minute): the time
    // to the end of this minute window, rounded up, so 1 to 60 s.
    const reset = /^(?:(\d+)m)?(\d+)s$/.exec(err.headers.get('x-ratelimit-reset-requests') ?? '');
    expect(reset).not.toBeNull();
    const resetSeconds = Number(reset![1] ?? 0) * 60 + Number(reset![2]);
    expect(resetSeconds).toBeGreaterThanOrEqual(1);
    expect(resetSeconds).toBeLessThanOrEqual(60);
    const retryAfter = Number(err.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(upstream!.requests).toHaveLength(3);
    await ask(bob); // bob has no own limits and the group none
  });

  it("a group's limit is shared by its tokens, and a token's own limit narrows it", async () => {
    const { alice, bob } = await setup({ group: '{requestsPerMinute: 3}', alice: '{requestsPerMinute: 1}' });
    await ask(alice);
    expect((await refusal(ask(alice))).message).toContain('token default/alice');
    await ask(bob);
    await ask(bob);
    const err = await refusal(ask(bob));
    expect(err.message).toContain('group default/team');
    expect(err.headers.get('x-ratelimit-limit-requests')).toBe('3');
  });

  it('per-model limits inside a group count that model only', async () => {
    const { alice } = await setup({ group: '{models: [{model: "gpt-4o*", requestsPerMinute: 2}]}' });
    await ask(alice);
    await ask(alice);
    expect((await refusal(ask(alice))).message).toContain('on model gpt-4o-mini');
  });

  it('token limits reserve input bound plus max output and settle to the usage the upstream reports', async () => {
    // The fake upstream reports 11 + 7 = 18 tokens per chat completion. A request reserves its body's bytes plus
    // max_tokens (~90 + 500), so two fit only because the first settled down to 18 before the second asked.
    const { alice } = await setup({ alice: '{tokensPerMinute: 700}' });
    await ask(alice, { max_tokens: 500 });
    await ask(alice, { max_tokens: 500 });
    // 36 used: a third whose reservation needs more than 700 - 36 is refused, with the tokens headers.
    const err = await refusal(ask(alice, { max_tokens: 600 }));
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.type).toBe('tokens');
    expect(err.headers.get('x-ratelimit-limit-tokens')).toBe('700');
    expect(err.headers.get('x-ratelimit-remaining-tokens')).toBe(String(700 - 36));
    expect(upstream!.requests).toHaveLength(2);
  });

  it('a request that can never fit gets 429 at once, without reaching the upstream, and is not to be retried', async () => {
    const { alice } = await setup({ alice: '{tokensPerDay: 1000}' });
    const err = await refusal(ask(alice, { max_tokens: 5000 }));
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.message).toContain('more than the limit of 1000 tokens per day');
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect(upstream!.requests).toHaveLength(0);
  });

  it('a limit of 0 on requests refuses every request as a requests limit, not as a token reservation', async () => {
    const { alice } = await setup({ alice: '{requestsPerMinute: 0}' });
    const err = await refusal(ask(alice));
    expect(err.type).toBe('requests');
    expect(err.message).toContain('limit of 0 requests per minute of token default/alice');
    expect(err.message).not.toContain('tokens');
    expect(err.headers.get('x-should-retry')).toBe('false');
    expect(upstream!.requests).toHaveLength(0);
  });

  it("the route's defaultMaxOutputTokens is reserved when the request names no maximum", async () => {
    const { alice } = await setup({ alice: '{tokensPerMinute: 3000}', defaultMaxOutputTokens: 5000 });
    const err = await refusal(alice.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }));
    expect(err.message).toContain('more than the limit of 3000 tokens per minute');
  });

  it('an exhausted monthly budget gets 429 insufficient_quota', async () => {
    const { alice } = await setup({ alice: '{tokensPerMonth: 1000}' });
    upstream!.override('/v1/chat/completions', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 400, completion_tokens: 400 } }),
      );
    });
    await ask(alice, { max_tokens: 500 }); // settles to 800
    const err = await refusal(ask(alice, { max_tokens: 300 })); // fits the budget, not what is left of it
    expect(err.code).toBe('insufficient_quota');
    expect(err.type).toBe('insufficient_quota');
    expect(err.headers.get('x-should-retry')).toBe('false');
  });

  it('concurrentRequests refuses a request beyond the in-flight limit and frees the slot when the response is over', async () => {
    const { alice } = await setup({ alice: '{concurrentRequests: 1}' });
    const release = upstream!.holdStreams();
    const stream = await alice.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const it = stream[Symbol.asyncIterator]();
    await it.next(); // the stream is in flight
    const err = await refusal(ask(alice));
    expect(err.message).toContain('concurrent requests');
    release();
    for (let r = await it.next(); !r.done; r = await it.next());
    await ask(alice); // the slot is free again
  });

  it('a streaming client that disconnects consumes what it used, estimated: its reservation settles to the estimate', async () => {
    const { alice } = await setup({ alice: '{tokensPerMinute: 2000}' });
    upstream!.holdStreams();
    const controller = new AbortController();
    const stream = await alice.chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, max_tokens: 1000 },
      { signal: controller.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    controller.abort();
    await upstream!.waitForEarlyClose('/v1/chat/completions');
    // The upstream never said: the usage record holds an estimate of the prompt and of what was streamed.
    const record = await waitUntil(() => gw!.logs.find((l) => l['msg'] === 'request' && l['aborted'] === true), 5_000, 'the usage record');
    expect(record).toMatchObject({ estimated: true, tokenRef: 'default/alice' });
    const used = Number(record['inputTokens']) + Number(record['outputTokens']);
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThan(100);
    // A request that can never fit reports the tokens still remaining in its headers: the reservation of 1000+
    // settled to the estimate.
    const err = await refusal(ask(alice, { max_tokens: 5000 }));
    expect(Number(err.headers.get('x-ratelimit-remaining-tokens'))).toBe(2000 - used);
  });
});

describe('backend limits', () => {
  it("a backend at its upstream account's limit is dropped from the plan: the request goes to the next backend", async () => {
    const { alice, secondUpstream } = await setup({ primaryLimits: '{requestsPerMinute: 2}' }, true);
    for (let i = 0; i < 4; i++) await ask(alice);
    expect(upstream!.requests).toHaveLength(2);
    expect(secondUpstream!.requests).toHaveLength(2);
  });

  it('when every backend is at its limit, the gateway sheds with 429 before any upstream answers 429', async () => {
    const { alice, secondUpstream } = await setup({ primaryLimits: '{requestsPerMinute: 1}', secondLimits: '{tokensPerMinute: 1000}' }, true);
    await ask(alice, { max_tokens: 100 });
    await ask(alice, { max_tokens: 100 });
    const err = await refusal(ask(alice, { max_tokens: 950 }));
    expect(err.code).toBe('rate_limit_exceeded');
    expect(err.message).toContain('upstream rate limit');
    expect(upstream!.requests.length + secondUpstream!.requests.length).toBe(2);
  });

  it('a failover reaches a fallback backend only within its own limits: one at its limit is skipped, not sent past it', async () => {
    const { alice, secondUpstream } = await setup({ primaryLimits: '{requestsPerMinute: 100}', secondLimits: '{requestsPerMinute: 1}' }, true);
    upstream!.override('/v1/chat/completions', (_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"error":{"message":"down","type":"server_error"}}');
    });
    await ask(alice); // the primary fails; the second serves it, its one request this minute
    for (let i = 0; i < 2; i++) {
      const err = await ask(alice).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OpenAI.InternalServerError); // the primary's own error: the second was not tried
    }
    expect(secondUpstream!.requests).toHaveLength(1);
  });
});
