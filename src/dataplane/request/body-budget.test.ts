import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { Exchange } from '../exchange/exchange.js';
import { describe, expect, it } from 'vitest';
import { BodyBudget, defaultBufferedBudget, MAX_DEFAULT_BUFFERED_BYTES, MIN_DEFAULT_BUFFERED_BYTES } from './body-budget.js';

const MiB = 1024 * 1024;
const response = () => Object.assign(new EventEmitter(), { writableFinished: true }) as unknown as Response & EventEmitter;
/** An exchange on a fake response; closed at once when asked (the client left before the handler ran). */
const exchange = (res = response(), closed = false) => {
  const x = new Exchange('id', res);
  if (closed) res.emit('close');
  return x;
};

describe('defaultBufferedBudget', () => {
  it.each([
    [512 * MiB, 128 * MiB], // the Helm chart's default memory limit
    [64 * MiB, MIN_DEFAULT_BUFFERED_BYTES],
    [16 * 1024 * MiB, MAX_DEFAULT_BUFFERED_BYTES],
  ])('%d bytes of memory → %d', (memory, budget) => expect(defaultBufferedBudget(memory)).toBe(budget));
});

describe('BodyBudget', () => {
  it('refuses what does not fit, lets a lone request through, releases once on close', () => {
    const budget = new BodyBudget(10);
    const resA = response();
    const a = budget.open(exchange(resA));
    expect(a.tryReserve(6)).toBe(true);
    const b = budget.open(exchange());
    expect(b.tryReserve(5)).toBe(false);
    expect(b.tryReserve(4)).toBe(true);
    a.add(7); // a derived copy may go over
    expect(budget.used).toBe(17);
    expect(b.fits(1)).toBe(false);
    resA.emit('close');
    resA.emit('close');
    expect(budget.used).toBe(4);
    expect(a.tryReserve(1)).toBe(false); // nothing after release
    // b is alone now: it may exceed the limit rather than be refused forever.
    expect(b.tryReserve(20)).toBe(true);
    b.release();
    expect(budget.used).toBe(0);
  });

  it('a response already closed (the client left before the handler ran) can reserve nothing', () => {
    const budget = new BodyBudget(10);
    const r = budget.open(exchange(response(), true));
    expect(r.tryReserve(1)).toBe(false);
    r.add(5);
    expect(budget.used).toBe(0);
  });
});
