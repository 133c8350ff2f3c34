// Passive health through the real stack: consecutive failures eject a backend, a 429 with retry-after ejects it
// for that long, success restores it, an ejected backend still serves when nothing else is left; the state and
// the attempts show in metrics; and the weighted split holds over many requests.
import type OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackendHealth } from '../../src/dataplane/policy/health.js';
import { startFaultyUpstream, type FaultyUpstream } from '../fakes/faulty-upstream.js';
import type { TestGateway } from '../helpers/gateway.js';
import { waitUntil } from '../support/wait.js';
import { chat, gatewayWith, metricValue, reload, route } from './harness.js';

let flaky: FaultyUpstream, stable: FaultyUpstream, heavy: FaultyUpstream, light: FaultyUpstream;
let gw: TestGateway;
let client: OpenAI;
const COOL_DOWN_MS = 400;

beforeAll(async () => {
  [flaky, stable, heavy, light] = await Promise.all([
    startFaultyUpstream('flaky'),
    startFaultyUpstream('stable'),
    startFaultyUpstream('heavy'),
    startFaultyUpstream('light'),
  ]);
  gw = await gatewayWith(
    [
      route('extra-eject', [
        { name: 'flaky', baseURL: flaky.baseURL },
        { name: 'stable', baseURL: stable.baseURL, priority: 1 },
      ]),
      route('extra-lonely', [{ name: 'flaky', baseURL: flaky.baseURL }]),
      route('extra-split', [
        { name: 'heavy', baseURL: heavy.baseURL, weight: 3 },
        { name: 'light', baseURL: light.baseURL, weight: 1 },
      ]),
    ],
    { health: new BackendHealth({ consecutiveFailures: 2, baseEjectionMs: COOL_DOWN_MS, maxEjectionMs: 5_000 }) },
  );
  client = gw.client();
});
afterAll(async () => {
  await gw?.close();
  await Promise.all([flaky, stable, heavy, light].map((u) => u?.close()));
});
beforeEach(() => {
  for (const u of [flaky, stable, heavy, light]) {
    u.requests.length = 0;
    u.setFault({ kind: 'ok' });
  }
});

const served = async (model: string) => {
  const { response } = await chat(client, model);
  return `${response.headers.get('x-model-gateway-backend')}/${response.headers.get('x-model-gateway-attempts')}`;
};
const state = (backend: string, s: string) => metricValue(gw, 'model_gateway_backend_state', { backend: `default/extra-eject/${backend}`, state: s });

describe('ejection and recovery', () => {
  it('consecutive failures eject a backend; after the cool-down a success restores it', async () => {
    flaky.setFault({ kind: 'status', status: 503 });
    expect(await served('extra-eject')).toBe('stable/2');
    expect(await served('extra-eject')).toBe('stable/2');
    expect(await state('flaky', 'ejected')).toBe(1);
    expect(await state('flaky', 'healthy')).toBe(0);
    expect(await state('stable', 'healthy')).toBe(1);
    // Ejected: the next requests go straight to the fallback.
    expect(await served('extra-eject')).toBe('stable/1');
    expect(await served('extra-eject')).toBe('stable/1');
    expect(flaky.requests).toHaveLength(2);
    expect(await metricValue(gw, 'model_gateway_upstream_attempts_total', { backend: 'default/extra-eject/flaky', outcome: '5xx' })).toBe(2);
    expect(gw.logs.some((l) => l.msg === 'backend ejected' && l.backend === 'default/extra-eject/flaky')).toBe(true);

    flaky.setFault({ kind: 'ok' });
    await new Promise((r) => setTimeout(r, COOL_DOWN_MS + 50));
    expect(await state('flaky', 'probation')).toBe(1);
    expect(await served('extra-eject')).toBe('flaky/1');
    expect(await state('flaky', 'healthy')).toBe(1);
    expect(await served('extra-eject')).toBe('flaky/1');
  });

  it('a 429 with retry-after ejects for that long', async () => {
    flaky.setFault({ kind: 'status', status: 429, retryAfter: '1' });
    expect(await served('extra-eject')).toBe('stable/2');
    // The ejection began when the 429 arrived, before this: it ends at the latest a second from now.
    const t0 = Date.now();
    expect(await state('flaky', 'ejected')).toBe(1);
    flaky.setFault({ kind: 'ok' });
    expect(await served('extra-eject')).toBe('stable/1');
    // The retry-after is a duration: waiting it out is the behaviour under test, not synchronisation.
    await new Promise((r) => setTimeout(r, Math.max(0, t0 + 1_050 - Date.now())));
    expect(await served('extra-eject')).toBe('flaky/1');
    expect(flaky.requests).toHaveLength(2);
  });

  it('an ejected backend still serves when nothing else is left, and a success restores it at once', async () => {
    flaky.setFault({ kind: 'status', status: 500 });
    for (let i = 0; i < 2; i++) await chat(client, 'extra-lonely').catch(() => {});
    expect(await metricValue(gw, 'model_gateway_backend_state', { backend: 'default/extra-lonely/flaky', state: 'ejected' })).toBe(1);
    // Health is per backend, not per origin: the same upstream in another route is not ejected with it.
    expect(await state('flaky', 'healthy')).toBe(1);
    flaky.setFault({ kind: 'ok' });
    expect(await served('extra-lonely')).toBe('flaky/1');
    expect(await metricValue(gw, 'model_gateway_backend_state', { backend: 'default/extra-lonely/flaky', state: 'healthy' })).toBe(1);
  });
});

describe('what is not a backend failure', () => {
  it('clients that leave mid-stream, or before the answer, never eject the backend', async () => {
    const left = () => gw.logs.filter((l) => l.msg === 'request' && l.model === 'extra-lonely' && l.aborted === true).length;
    const ejections = () => gw.logs.filter((l) => l.msg === 'backend ejected' && l.backend === 'default/extra-lonely/flaky').length;
    const before = { ejections: ejections(), left: left() };
    flaky.setFault({ kind: 'ok', delayMs: 100, chunkDelayMs: 100 });
    for (let i = 0; i < 3; i++) {
      const mid = new AbortController();
      const stream = await client.chat.completions.create(
        { model: 'extra-lonely', stream: true, messages: [{ role: 'user', content: 'hi' }] },
        { signal: mid.signal },
      );
      for await (const _ of stream) break;
      mid.abort();
      const early = new AbortController();
      setTimeout(() => early.abort(), 20);
      await chat(client, 'extra-lonely', { signal: early.signal }).catch(() => {});
    }
    // Every exchange has settled (its access line is written) before health is read.
    await waitUntil(() => left() >= before.left + 6, 5_000, 'the six exchanges to settle');
    expect(await metricValue(gw, 'model_gateway_backend_state', { backend: 'default/extra-lonely/flaky', state: 'healthy' })).toBe(1);
    expect(ejections()).toBe(before.ejections);
  });
});

describe('weighted split', () => {
  it('follows the weights within a statistical bound', async () => {
    const n = 400;
    const counts: Record<string, number> = { heavy: 0, light: 0 };
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < n) {
          next++;
          const { response } = await chat(client, 'extra-split');
          counts[response.headers.get('x-model-gateway-backend')!]!++;
        }
      }),
    );
    expect(counts.heavy! + counts.light!).toBe(n);
    // Binomial(400, 0.75): sd ≈ 8.7; 5 sd leaves chance out.
    expect(Math.abs(counts.heavy! - 0.75 * n)).toBeLessThan(5 * Math.sqrt(n * 0.75 * 0.25));
    expect(heavy.requests.length).toBe(counts.heavy);
  });
});

describe('config reloads', () => {
  const REFUSED = 'http://127.0.0.1:9/v1';
  // extra-moved's first backend gets a new URL from the reload, extra-kept's does not; both fall back to `stable`.
  const routes = (movedURL: string) => [
    route('extra-moved', [
      { name: 'moved', baseURL: movedURL },
      { name: 'stable', baseURL: stable.baseURL, priority: 1 },
    ]),
    route('extra-kept', [
      { name: 'kept', baseURL: REFUSED },
      { name: 'stable', baseURL: stable.baseURL, priority: 1 },
    ]),
  ];

  it('a backend whose URL changed starts healthy; one whose URL did not stays ejected', async () => {
    // A cool-down no test outlives, so "still ejected" cannot turn into probation on a slow machine.
    const reloaded = await gatewayWith(routes(REFUSED), { health: new BackendHealth({ consecutiveFailures: 1, baseEjectionMs: 600_000 }) });
    try {
      const c = reloaded.client();
      const servedBy = async (model: string) => (await chat(c, model)).response.headers.get('x-model-gateway-backend');
      expect(await servedBy('extra-moved')).toBe('stable');
      expect(await servedBy('extra-kept')).toBe('stable');
      // The operator fixes the typo: the new URL owes nothing to the old one's failures.
      reload(reloaded, routes(light.baseURL));
      expect(await servedBy('extra-moved')).toBe('moved');
      expect(light.requests).toHaveLength(1);
      expect(await servedBy('extra-kept')).toBe('stable');
      expect(await metricValue(reloaded, 'model_gateway_backend_state', { backend: 'default/extra-kept/kept', state: 'ejected' })).toBe(1);
    } finally {
      await reloaded.close();
    }
  });
});
