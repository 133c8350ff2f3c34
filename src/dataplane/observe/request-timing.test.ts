import { describe, expect, it } from 'vitest';
import { RequestTiming, serverTiming } from './request-timing.js';

const ms = (n: number): number => n;

describe('RequestTiming', () => {
  it('sums the upstream wait over attempts and leaves the rest to the gateway', () => {
    const t = new RequestTiming(ms(1000));
    t.sent(ms(1000.2));
    t.answered(ms(1003.2)); // a failed attempt: 3 ms
    t.sent(ms(1003.5));
    t.answered(ms(1015.5)); // the answer's headers: 12 ms
    expect(t.upstreamMs()).toBeCloseTo(15, 6);
    expect(t.gatewayMs(ms(1016))).toBeCloseTo(1, 6);
  });

  it('ignores an answer without a send and never reports negative gateway time', () => {
    const t = new RequestTiming(ms(10));
    t.answered(ms(20));
    expect(t.upstreamMs()).toBe(0);
    t.sent(ms(10));
    t.answered(ms(30));
    expect(t.gatewayMs(ms(25))).toBe(0);
  });
});

describe('serverTiming', () => {
  it('formats both durations in milliseconds with microsecond precision', () => {
    expect(serverTiming(0.4, 12.1)).toBe('gateway;dur=0.400, upstream;dur=12.100');
  });
});
