import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import { planAttempts } from './plan.js';

const b = (name: string, priority: number, weight: number): CompiledBackend => ({
  id: `ns/r/${name}`,
  name,
  baseURL: 'http://x/v1',
  origin: 'http://x',
  basePath: '/v1',
  auth: { kind: 'none' },
  headers: [],
  query: [],
  pathStyle: 'openai',
  api: 'openai',
  account: 'a',
  model: 'm',
  priority,
  weight,
  limits: [],
});
const names = (bs: CompiledBackend[]) => bs.map((x) => x.name);

/** A deterministic random source for reproducible orders. */
function seeded(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

describe('planAttempts', () => {
  it('puts lower priority tiers first and plans every backend once', () => {
    const plan = planAttempts([b('fallback', 1, 1), b('a', 0, 1), b('b', 0, 1)], seeded(1));
    expect(names(plan).slice(2)).toEqual(['fallback']);
    expect(new Set(names(plan)).size).toBe(3);
  });

  it('splits first attempts by weight within a tier', () => {
    const random = seeded(42);
    const counts = { a: 0, b: 0 };
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[planAttempts([b('a', 0, 3), b('b', 0, 1)], random)[0]!.name as 'a' | 'b']++;
    // Binomial(n, 0.75): sd ≈ 61; 5 sd is far outside chance.
    expect(Math.abs(counts.a - 0.75 * n)).toBeLessThan(5 * Math.sqrt(n * 0.75 * 0.25));
  });

  it('plans ejected backends after healthy ones, but still plans them', () => {
    const health = { isEjected: (id: string) => id === 'ns/r/a' };
    expect(names(planAttempts([b('a', 0, 1), b('c', 1, 1)], seeded(3), health))).toEqual(['c', 'a']);
  });

  it('plans a lone backend whatever its weight or health, without consulting the random source', () => {
    const never = () => {
      throw new Error('random source used');
    };
    const ejected = { isEjected: () => true };
    expect(names(planAttempts([b('only', 3, 0)], never, ejected))).toEqual(['only']);
  });

  it('puts weight-0 backends last in their tier', () => {
    expect(names(planAttempts([b('z', 0, 0), b('a', 0, 5)], seeded(9)))).toEqual(['a', 'z']);
  });
});
