import { describe, expect, it } from 'vitest';
import { TrafficQuiet } from './traffic-quiet.js';

describe('TrafficQuiet', () => {
  /** A running count of requests, as the API server keeps it. */
  const counter = () => {
    let n = 0;
    return { received: () => n, request: () => void n++ };
  };

  it('tells once when a burst is followed by quietChecks intervals of at most a trickle, and not for a trickle', () => {
    let told = 0;
    const c = counter();
    const t = new TrafficQuiet(() => told++, c.received, { minRequests: 3, busyRequests: 3, quietChecks: 2 });
    c.request();
    t.check();
    t.check();
    t.check(); // one request, then quiet: a trickle
    expect(told).toBe(0);
    for (let i = 0; i < 5; i++) c.request();
    t.check(); // busy during this interval
    expect(told).toBe(0);
    t.check(); // one quiet interval after the burst: a lull, not yet its end
    expect(told).toBe(0);
    t.check(); // the second: the burst has ended
    expect(told).toBe(1);
    t.check(); // still quiet: nothing new
    expect(told).toBe(1);
    for (let i = 0; i < 3; i++) c.request();
    t.check(); // busy again
    t.check();
    t.check();
    expect(told).toBe(2);
  });

  it('counts a trickle as quiet and a busy interval as the burst going on', () => {
    let told = 0;
    const c = counter();
    const t = new TrafficQuiet(() => told++, c.received, { minRequests: 3, busyRequests: 3, quietChecks: 3 });
    for (let i = 0; i < 10; i++) c.request();
    t.check(); // the burst
    c.request(); // a probe
    t.check();
    c.request();
    c.request();
    t.check(); // two: still a trickle
    for (let i = 0; i < 3; i++) c.request();
    t.check(); // busy: the burst goes on, the quiet period starts again
    t.check();
    c.request();
    t.check();
    expect(told).toBe(0);
    t.check(); // three quiet intervals in a row since the last busy one
    expect(told).toBe(1);
  });

  it('is busy while an interval holds at least busyRequests requests, and not for a trickle', () => {
    const c = counter();
    const t = new TrafficQuiet(() => {}, c.received, { busyRequests: 3 });
    expect(t.busy()).toBe(false);
    c.request();
    c.request();
    expect(t.busy()).toBe(false); // two so far: a trickle
    c.request();
    expect(t.busy()).toBe(true); // three since the last check
    t.check();
    expect(t.busy()).toBe(true); // the last whole interval had three
    c.request();
    t.check();
    expect(t.busy()).toBe(false); // then one: quiet enough
  });
});
