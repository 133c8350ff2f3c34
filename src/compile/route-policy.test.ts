import { describe, expect, it } from 'vitest';
import { compile } from './compile.js';
import type { RawObject } from './resources.js';

const route = (spec: Record<string, unknown>): RawObject => ({
  apiVersion: 'modelgateway.io/v1alpha1',
  kind: 'ModelRoute',
  metadata: { name: 'm' },
  spec: { backends: [{ name: 'up', baseURL: 'http://127.0.0.1:9/v1' }], ...spec },
});
const compiled = (spec: Record<string, unknown>) => {
  const r = compile([{ object: route(spec) }]);
  return { route: r.table.routes.get('m'), accepted: r.statuses[0]?.conditions.find((c) => c.type === 'Accepted') };
};

describe('route failover policy', () => {
  const cases: {
    name: string;
    spec: Record<string, unknown>;
    want: { attempts: number; budgetMs: number; onConnectFailure: boolean; onTimeout: boolean; statuses: number[]; keepAliveMs: number };
  }[] = [
    {
      name: 'defaults',
      spec: {},
      want: { attempts: 3, budgetMs: 120_000, onConnectFailure: true, onTimeout: true, statuses: [429, 500, 502, 503, 504, 529], keepAliveMs: 0 },
    },
    {
      name: 'budget defaults to twice firstByte',
      spec: { timeouts: { firstByte: '10s' } },
      want: { attempts: 3, budgetMs: 20_000, onConnectFailure: true, onTimeout: true, statuses: [429, 500, 502, 503, 504, 529], keepAliveMs: 0 },
    },
    {
      name: 'budget default is capped by the total deadline',
      spec: { timeouts: { firstByte: '200s', total: '250s' } },
      want: { attempts: 3, budgetMs: 250_000, onConnectFailure: true, onTimeout: true, statuses: [429, 500, 502, 503, 504, 529], keepAliveMs: 0 },
    },
    {
      name: 'explicit policy',
      spec: { retry: { attempts: 5, budget: '1m30s', retryOn: ['connect-failure', '503'] }, streaming: { keepAliveInterval: '15s' } },
      want: { attempts: 5, budgetMs: 90_000, onConnectFailure: true, onTimeout: false, statuses: [503], keepAliveMs: 15_000 },
    },
    {
      name: 'empty retryOn disables failover',
      spec: { retry: { retryOn: [] } },
      want: { attempts: 3, budgetMs: 120_000, onConnectFailure: false, onTimeout: false, statuses: [], keepAliveMs: 0 },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const { route: r } = compiled(c.spec);
      expect(r).toBeDefined();
      expect({
        attempts: r!.retry.attempts,
        budgetMs: r!.retry.budgetMs,
        onConnectFailure: r!.retry.onConnectFailure,
        onTimeout: r!.retry.onTimeout,
        statuses: [...r!.retry.statuses].sort(),
        keepAliveMs: r!.keepAliveMs,
      }).toEqual(c.want);
    });
  }

  const invalid: { name: string; spec: Record<string, unknown>; message: RegExp }[] = [
    { name: 'a 4xx other than 408/429', spec: { retry: { retryOn: ['404'] } }, message: /retry\.retryOn\.0/ },
    { name: 'an unknown condition', spec: { retry: { retryOn: ['reset'] } }, message: /retry\.retryOn\.0/ },
    { name: 'zero attempts', spec: { retry: { attempts: 0 } }, message: /retry\.attempts/ },
    { name: 'a budget without unit', spec: { retry: { budget: '30' } }, message: /retry\.budget/ },
    { name: 'an unknown field', spec: { retry: { perTryTimeout: '5s' } }, message: /retry/ },
    { name: 'a bad keep-alive', spec: { streaming: { keepAliveInterval: 'soon' } }, message: /streaming\.keepAliveInterval/ },
  ];
  for (const c of invalid) {
    it(`rejects ${c.name}`, () => {
      const { route: r, accepted } = compiled(c.spec);
      expect(r).toBeUndefined();
      expect(accepted).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
      expect(accepted?.message).toMatch(c.message);
    });
  }
});
