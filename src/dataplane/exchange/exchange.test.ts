import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { describe, expect, it } from 'vitest';
import type { CompiledBackend } from '../../model/routing-table.js';
import { BodyBudget } from '../request/body-budget.js';
import { Exchange } from './exchange.js';
import { type ExchangeTransform, membersFor } from './transform.js';

/** A response stand-in: an emitter with the one property the exchange reads. */
const response = () => Object.assign(new EventEmitter(), { writableFinished: false }) as unknown as Response & EventEmitter & { writableFinished: boolean };

describe('Exchange', () => {
  it('puts exactly one close listener on the response, whatever else hooks the end', () => {
    const res = response();
    const x = new Exchange('r1', res);
    new BodyBudget(100).open(x);
    x.onEnd(() => {});
    expect(res.listenerCount('close')).toBe(1);
  });

  it('a finished response: the end hooks run once, in order, and nothing is aborted', () => {
    const res = response();
    const x = new Exchange('r1', res);
    const seen: string[] = [];
    x.onEnd(() => seen.push(`a aborted=${x.aborted}`));
    x.onEnd(() => seen.push('b'));
    res.writableFinished = true;
    res.emit('close');
    res.emit('close');
    expect(seen).toEqual(['a aborted=false', 'b']);
    expect(x.aborted).toBe(false);
    expect(x.closed).toBe(true);
  });

  it('a cut response: aborted is set before the end hooks run', () => {
    const res = response();
    const x = new Exchange('r1', res);
    const seen: boolean[] = [];
    x.onEnd(() => seen.push(x.aborted));
    res.emit('close');
    expect(seen).toEqual([true]);
    expect(x.aborted).toBe(true);
  });

  it('after the end: a new hook runs at once, and sees the response as cut', () => {
    const res = response();
    const x = new Exchange('r1', res);
    res.emit('close');
    let ran = 0;
    x.onEnd(() => ran++);
    expect(ran).toBe(1);
    expect(x.aborted).toBe(true);
  });

  it('releases the body budget at the end, once', () => {
    const res = response();
    const x = new Exchange('r1', res);
    const budget = new BodyBudget(100);
    expect(budget.open(x).tryReserve(40)).toBe(true);
    expect(budget.used).toBe(40);
    res.emit('close');
    expect(budget.used).toBe(0);
  });

  const estimate = { inputTokens: 5, outputTokens: 6, cachedInputTokens: 0, reasoningTokens: 0, estimated: true };

  it('settles with the reported usage, once; settled hooks registered before or after get it', () => {
    const res = response();
    const x = new Exchange('r1', res);
    const seen: number[] = [];
    let asked = 0;
    x.estimateUsage({ unreported: () => (asked++, estimate) });
    x.onSettled((u) => seen.push(u?.inputTokens ?? -1));
    const u = { inputTokens: 3, outputTokens: 4, cachedInputTokens: 0, reasoningTokens: 0, estimated: false };
    x.reportUsage(u);
    x.reportUsage({ ...u, inputTokens: 99 });
    expect(seen).toEqual([]);
    res.emit('close');
    x.onSettled((later) => seen.push(later?.inputTokens ?? -1));
    expect(seen).toEqual([3, 3]);
    expect(asked).toBe(0);
  });

  it('an estimate that takes a while: the end hooks (the abort path) run at once, the settled hooks with the usage after it', async () => {
    const res = response();
    const x = new Exchange('r1', res);
    const order: string[] = [];
    let finish!: () => void;
    x.estimateUsage({ unreported: () => new Promise((resolve) => (finish = () => resolve(estimate))) });
    x.onEnd(() => order.push('end'));
    x.onSettled((u) => order.push(`settled usage=${u?.inputTokens}`));
    res.emit('close');
    expect(order).toEqual(['end']);
    finish();
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['end', 'settled usage=5']);
    x.onSettled(() => order.push('late'));
    expect(order.at(-1)).toBe('late');
  });

  it('settles with nothing when there is no estimate, or the estimator throws (the settled hooks still run)', () => {
    const res = response();
    const x = new Exchange('r1', res);
    const got: unknown[] = [];
    x.onSettled((u) => got.push(u));
    res.emit('close');
    const res2 = response();
    const y = new Exchange('r2', res2);
    y.estimateUsage({
      unreported: () => {
        throw new Error('bug');
      },
    });
    y.onSettled((u) => got.push(u));
    res2.emit('close');
    expect(got).toEqual([undefined, undefined]);
  });
});

describe('membersFor', () => {
  const backend = { name: 'b', model: 'up' } as CompiledBackend;
  it('merges the members of every transform in order, a later one winning', () => {
    const ts: ExchangeTransform[] = [{ members: () => ({ model: '"up"', a: '1' }) }, {}, { members: () => undefined }, { members: () => ({ a: '2' }) }];
    expect(membersFor(ts, backend)).toEqual({ model: '"up"', a: '2' });
  });
  it('undefined when no transform sets any', () => {
    expect(membersFor([{}, { members: () => undefined }], backend)).toBeUndefined();
  });
});
